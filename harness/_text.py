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
# CommonMark's backslash-escapable punctuation that can start or shape markup inside a line or table cell: always,
# but "_" only outside a word (GFM never emphasises inside one: item_knn stays readable) and "-", "+" only first
_MARKDOWN_SPECIAL = re.compile(r"[\\`*{}\[\]<>()#!|~&]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|^[-+]")
# what GitHub-flavoured Markdown autolinks without any markup: a scheme or www. ("extended autolinks")
_AUTOLINK = re.compile(r"(?i)\b(https?|ftp|mailto|file)(:)|\b(www)(\.)")
# OWASP's CSV injection guidance: a cell starting with one of these may be run as a formula by a spreadsheet
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|nan)", re.IGNORECASE)


def for_terminal(text: str) -> str:
    """``text`` with every control character shown as its Python escape, so that it prints as one inert line."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def for_markdown(text: str) -> str:
    """``text`` as literal inline Markdown (a table cell, a list item, a heading's words): line breaks become spaces,
    markup characters are backslash-escaped, and bare URLs are broken so that no renderer links them.

    >>> for_markdown("see https://x.io | [y](z) item_knn")
    'see https&#58;//x.io \\\\| \\\\[y\\\\]\\\\(z\\\\) item_knn'
    """
    flat = " ".join(_CONTROL.sub(" ", text).split(" ")) if text else text
    escaped = _MARKDOWN_SPECIAL.sub(lambda m: "\\" + m.group(), flat)
    return _AUTOLINK.sub(lambda m: f"{m.group(1)}&#58;" if m.group(1) else f"{m.group(3)}&#46;", escaped)


def for_csv_cell(value: Any) -> Any:
    """A CSV cell a spreadsheet will not run: text starting with ``= + - @``, a tab or a carriage return gets a
    leading ``'`` (as OWASP recommends), unless it is a number (``-0.5`` stays a number). Non-text values are kept."""
    if not isinstance(value, str) or not value.startswith(_FORMULA_START) or _NUMBER.fullmatch(value):
        return value
    return "'" + value


def clipped(value: object, limit: int = 120) -> str:
    """``repr(value)`` cut to ``limit`` characters: a value quoted in an error message, never unbounded.

    >>> clipped("x" * 1000, 12)
    "'xxxxxxx...(1002 characters)"
    """
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 4]}...({len(text)} characters)"
