"""The one exception family of harness.

Every user mistake is raised as a ``HarnessError`` carrying where it happened
(``path``, ``line``) and how to fix it (``hint``); ``cli.main`` is the only place
that prints it, as one line, and picks the exit code.

::

    HarnessError
    ├── InputFormatError   a qrels or run file that cannot be read as declared
    ├── MeasureError       an unknown measure name or an invalid parameter
    ├── ConventionError    an option value that does not exist, or a measure
    │                      that is undefined under the chosen conventions
    ├── ConfigError        a config file mistake (issue 3)
    ├── ComparisonError    per-query values that cannot be compared (NaN)
    ├── TrackingError      the tracking server failed (issue 5)
    └── ReportError        the report could not be rendered (issue 6)
"""

from __future__ import annotations

from pathlib import Path


class HarnessError(Exception):
    """Base class: ``path: line N: message. Fix: hint``."""

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = None if path is None else str(path)
        self.line = line
        self.hint = hint

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = f"{self.path}: "
            if self.line is not None:
                where += f"line {self.line}: "
        fix = f" Fix: {self.hint}" if self.hint else ""
        return f"{where}{self.message}.{fix}" if not self.message.endswith(".") else f"{where}{self.message}{fix}"


class InputFormatError(HarnessError):
    """A qrels or run file does not parse as its declared format.

    ``row`` (0-based) or ``header``: where in a table the mistake is, for the table's reader, which knows the file's
    format, to name the line (the checks that find it know rows and columns, not lines)."""

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        hint: str | None = None,
        row: int | None = None,
        header: bool = False,
    ) -> None:
        super().__init__(message, path=path, line=line, hint=hint)
        self.row = row
        self.header = header


class DataWarning(UserWarning):
    """Input that evaluates, but not as a user may think: judged queries the run misses, scored 0."""


class MeasureError(HarnessError):
    """An unknown measure, or a parameter it does not accept."""


class ConventionError(HarnessError):
    """An unknown convention value, or a measure undefined under the conventions."""


class ConfigError(HarnessError):
    """A mistake in an experiment config."""


class GuardSpecError(ConfigError):
    """A guard that cannot be decided as written; ``key`` is the key at fault (for the config's line)."""

    def __init__(self, key: str, message: str, hint: str) -> None:
        super().__init__(message, hint=hint)
        self.key = key


class ComparisonError(HarnessError):
    """Per-query values that a paired test cannot use (NaN)."""


class TrackingError(HarnessError):
    """The tracking server refused or failed."""


class ReportError(HarnessError):
    """The report could not be rendered."""


class ResultsNotWritten(HarnessError):
    """The results folder could not be written (a full disk, a folder removed meanwhile): nothing of it is left."""


class NotStreamable(Exception):
    """A file not plain enough for the streaming reader (not a user's error): it is read whole instead, which names
    any error's line."""
