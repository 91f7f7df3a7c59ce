"""User strings (system, dataset and segment names, titles, query ids) made safe for the medium they are written to.

A name is data: whatever it holds, it must not become a heading in Markdown, a colour or a cursor move in a
terminal, or a formula in a spreadsheet. One function per medium; every writer of that medium calls it.

>>> for_terminal("prod\\x1b[2J\\nrelease gate PASS:")
'prod\\\\x1b[2J\\\\nrelease gate PASS:'
>>> for_markdown("a\\n## PASS")
'a \\\\#\\\\# PASS'
>>> for_csv_cell("=HYPERLINK(1)"), for_csv_cell("-0.5"), for_csv_cell("bm25")
("'=HYPERLINK(1)", '-0.5', 'bm25')
"""

from __future__ import annotations

import re
from typing import Any

# C0 and C1 control characters and DEL: what a terminal reads as commands (escape sequences, carriage returns that
# overwrite a line, newlines that start a forged one); also the Unicode line and paragraph separators
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# The punctuation that makes markup inside a line or a table cell (code, emphasis, links and images, HTML, entities,
# table pipes, strikethrough, a heading's closing #s), backslash-escaped; "_" only outside a word (GFM never
# emphasises inside one: item_knn stays readable). A line's start is always the writer's own ("- ", "| ", "## "), so
# what starts a block (-, +, 1.) needs no escape.
_MARKDOWN_SPECIAL = re.compile(r"[\\`*\[\]<>#|~&]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
# what GitHub-flavoured Markdown links without any markup ("extended autolinks"): a scheme, www., an e-mail address
_AUTOLINK = re.compile(r"(?i)\b(https?|ftp|mailto|file|www)([:.])|@(?=[\w-]+\.[\w-])")
# OWASP's CSV injection guidance: a cell starting with one of these may be run as a formula by a spreadsheet
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|nan)", re.IGNORECASE)


def for_terminal(text: str) -> str:
    """``text`` with every control character shown as its Python escape, so that it prints as one inert line."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def for_markdown(text: str) -> str:
    """``text`` as literal inline Markdown (a table cell, a list item, a heading's words): line breaks become spaces,
    markup characters are backslash-escaped, and bare URLs are broken so that no renderer links them.

    >>> for_markdown("see https://x.io | [y](z) item_knn www.a.b a@b.io nDCG@10")
    'see https&#58;//x.io \\\\| \\\\[y\\\\](z) item_knn www&#46;a.b a&#64;b.io nDCG@10'
    """
    flat = " ".join(_CONTROL.sub(" ", text).split(" ")) if text else text
    escaped = _MARKDOWN_SPECIAL.sub(lambda m: "\\" + m.group(), flat)
    entity = {":": "&#58;", ".": "&#46;", "@": "&#64;"}
    return _AUTOLINK.sub(lambda m: f"{m.group(1) or ''}{entity[m.group(2) or '@']}", escaped)


def for_csv_cell(value: Any) -> Any:
    """A CSV cell a spreadsheet will not run: text starting with ``= + - @``, a tab or a carriage return gets a
    leading ``'`` (as OWASP recommends), unless it is a number (``-0.5`` stays a number). Non-text values are kept."""
    if not isinstance(value, str) or not value.startswith(_FORMULA_START) or _NUMBER.fullmatch(value):
        return value
    return "'" + value


def for_csv(frame: Any) -> Any:
    """A pandas DataFrame whose text cells are :func:`for_csv_cell`: what every CSV harness writes holds. Cheap where
    nothing needs it (one vectorised test per text column); the Parquet copy of each table keeps the raw values.

    >>> import pandas as pd
    >>> for_csv(pd.DataFrame({"system": ["bm25", "=cmd|' /C calc'!A0", "-1.5"], "value": [1.0, 2.0, 3.0]}))["system"].tolist()
    ['bm25', "'=cmd|' /C calc'!A0", '-1.5']
    """
    import pandas as pd

    changed = {}
    for column in frame.columns:
        values = frame[column]
        if values.dtype != object and not isinstance(values.dtype, pd.StringDtype):
            continue
        risky = values.str.startswith(_FORMULA_START, na=False)
        if risky.any():
            changed[column] = values.where(~risky, values[risky].map(for_csv_cell))
    return frame.assign(**changed) if changed else frame


def clipped(value: object, limit: int = 120) -> str:
    """``repr(value)`` cut to ``limit`` characters: a value quoted in an error message, never unbounded.

    >>> clipped("x" * 1000, 12)
    "'xxxxxxx...(1002 characters)"
    """
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 4]}...({len(text)} characters)"
