"""A griffe extension for the API reference: docstring examples (``>>>`` sessions) become code blocks.

Markdown reads ``>>>`` as three levels of block quote, so without it every example renders as nested quotes. Each
session, from its first ``>>>`` line to the blank line that ends it, is fenced as ``pycon`` (highlighted as a Python
console), the rest of the docstring left as it is.
"""

from __future__ import annotations

from typing import Any

import griffe


def fence_examples(text: str) -> str:
    """Fence every ``>>>`` session of a docstring.

    >>> fence_examples("Adds.\\n\\n>>> 1 + 1\\n2\\n\\nDone.").splitlines()
    ['Adds.', '', '```pycon', '>>> 1 + 1', '2', '```', '', 'Done.']
    """
    out: list[str] = []
    inside = False
    for line in text.splitlines():
        starts = line.lstrip().startswith(">>>")
        if starts and not inside:
            out.append("```pycon")
            inside = True
        elif inside and not line.strip():
            out.append("```")
            inside = False
        out.append(line)
    if inside:
        out.append("```")
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    """Fence the examples of every object's docstring as griffe loads it."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and ">>>" in obj.docstring.value:
            obj.docstring.value = fence_examples(obj.docstring.value)
