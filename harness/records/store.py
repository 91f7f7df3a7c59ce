"""The results folder: the one module that writes it and reads it back.

``harness run`` hands the results to tracking and the report in memory
(:class:`SavedResults`); ``harness track DIR``, ``harness report DIR`` and a baseline
taken from an earlier run read the same value back with :func:`read_results`.

Layout (every table as Parquet and CSV): ``per_query``, ``summary``, ``diagnostics``,
``comparisons`` and ``anova`` (with two and three systems or more), ``long_tail`` (with
beyond-accuracy measures: each system's recommendations per item, by item rank), ``groups`` (with
fairness measures that have groups: each system's value per item or user group), then
``config.resolved.yaml``, ``provenance.json``, ``gate.json`` (with a release gate),
``tracking.json`` (once logged), ``report.html`` and ``summary.md``. The folder is
written under a temporary name and renamed when complete.

A ``per_query.parquet`` that is a folder of Parquet files (a table written in parts, as
Spark writes one) is read as one table.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from harness._atomic import atomic_write
from harness._text import for_csv
from harness.comparison.rows import Comparisons
from harness.decision.verdict import Decision
from harness.errors import HarnessError, ResultsNotWritten
from harness.records.recorded import Recorded

if TYPE_CHECKING:
    import pandas as pd

DIGEST_KEYS = ("dataset", "seed", "query_id", "segment", "measure")  # a values digest's keys, in its sort order
TABLES = ("per_query", "summary", "diagnostics", "comparisons", "anova", "long_tail", "groups", "per_query_people")
REQUIRED = ("config.resolved.yaml", "provenance.json", "per_query.parquet", "summary.parquet", "diagnostics.parquet")


@dataclass(frozen=True)
class SavedResults:
    """Everything a results folder holds, as values."""

    folder: Path
    config: dict[str, Any]  # the resolved config
    provenance: dict[str, Any]
    per_query: pd.DataFrame
    summary: pd.DataFrame
    diagnostics: pd.DataFrame
    comparisons: pd.DataFrame | None = None
    anova: pd.DataFrame | None = None
    long_tail: pd.DataFrame | None = None  # recommendations per item, by rank (beyond accuracy)
    groups: pd.DataFrame | None = None  # the value of each group behind a fairness measure (REO's P_g, ...)
    verdict: Decision | None = None
    tracking: dict[str, Any] | None = None
    per_query_people: pd.DataFrame | None = None  # a judged dataset's people's values (per_query: the judge's)
    agreement: dict[str, Any] | None = None  # each judged dataset's audit of its judge (harness agree's JSON)

    def with_tracking(self, tracking: dict[str, Any]) -> SavedResults:
        """The same results, logged where ``tracking`` says; what was derived from them kept (none of it reads
        ``tracking``): the report does not find the per-query table's groups again after the logging did."""
        logged = replace(self, tracking=tracking)
        own = {f.name for f in fields(self)}
        logged.__dict__.update({name: value for name, value in self.__dict__.items() if name not in own})
        return logged

    @cached_property
    def recorded(self) -> Recorded:
        """The experiment as this folder records it, as typed fields (:mod:`harness.records.recorded`)."""
        return Recorded.of(self.config)

    @cached_property
    def system_summary(self) -> pd.DataFrame:
        """summary's rows of each system: with several runs (seeds) of a system, its version over them (``seed:
        all``), not each run's."""
        if "seed" not in self.summary.columns:
            return self.summary
        return self.summary[self.summary["seed"] == "all"].reset_index(drop=True)

    @cached_property
    def seed_summary(self) -> pd.DataFrame | None:
        """summary's rows of each run of a system with several (its seeds); None without seeds."""
        if "seed" not in self.summary.columns:
            return None
        return self.summary[self.summary["seed"] != "all"].reset_index(drop=True)

    @cached_property
    def comparison_rows(self) -> Comparisons:
        """The comparisons (and ANOVAs) as typed rows (:mod:`harness.comparison.rows`): what the report reads."""
        return Comparisons.from_frames(self.comparisons, self.anova)

    def per_query_of(self, dataset: str | None = None, system: str | None = None, measure: str | None = None) -> pd.DataFrame:
        """The per-query rows of a dataset (and system, and measure), or all of them, in the table's order."""
        import numpy as np

        asked = (dataset, system, measure)
        parts = [
            rows
            for key, rows in self._per_query_rows.items()
            if all(want is None or part == want for part, want in zip(key, asked, strict=True))
        ]
        # each part is in order already: a stable sort merges them (3 ms for 1M rows where quicksort took 50)
        return self.per_query.iloc[np.sort(np.concatenate(parts), kind="stable") if parts else np.zeros(0, dtype=np.int64)]

    def wide_per_query(
        self, dataset: str, by: Literal["system", "measure"], of: str, keys: Sequence[str] = ("seed", "query_id", "segment")
    ) -> pd.DataFrame:
        """One dataset's per-query values with a column for each system of the measure ``of`` (``by="system"``) or
        each measure of the system ``of`` (``by="measure"``): ``pivot_table(index=keys, columns=by, values="value",
        sort=False).reset_index()`` of those rows (the ``keys`` the table has; without ``seed``, a cell is the mean
        of a system's runs).

        Where the columns' rows line up (each run's rows the same keys in the same order, distinct, every value
        finite: as harness writes them) the cells are read off them, bit for bit the pivot's, whose mean is then its
        one value, or pandas' compensated sum over the runs in the table's order over their number; the pivot took
        0.1-0.2 s a table at 200,000 users, and 1.3 s for the demo's report.
        """
        import numpy as np
        import pandas as pd

        at = 1 if by == "system" else 2  # where ``by`` is in a (dataset, system, measure) key; ``of`` is in the other
        rows = {key[at]: found for key, found in self._per_query_rows.items() if (key[0], key[3 - at]) == (dataset, of)}
        names = sorted(rows, key=lambda name: int(rows[name][0]) if len(rows[name]) else -1)  # the pivot's: first seen
        index = [column for column in keys if column in self.per_query.columns]
        seeds = "seed" in self.per_query.columns and "seed" not in index  # a cell is the mean of a system's runs
        table, codes = self.per_query, self._key_codes
        if names and all(c in codes for c in (*index, *(["seed"] if seeds else []))):
            found = [part for part in (_lined_up(table, codes, rows[name], index, seeds) for name in names) if part is not None]
            if len(found) == len(names) and all(
                np.array_equal(codes[c][first], codes[c][found[0][0]]) for first, _ in found[1:] for c in index
            ):
                labels: pd.DataFrame = table[index].iloc[found[0][0]].reset_index(drop=True)
                means = pd.DataFrame({name: mean for name, (_, mean) in zip(names, found, strict=True)})
                wide = pd.concat([labels, means], axis=1)
                wide.columns.name = by
                return wide
        mine = self.per_query_of(dataset, measure=of) if by == "system" else self.per_query_of(dataset, system=of)
        return mine.pivot_table(index=index, columns=by, values="value", sort=False).reset_index()

    @cached_property
    def _key_codes(self) -> dict[str, Any]:
        """The per-query table's seed, query and segment columns as integer codes (equal texts, equal codes), those
        without a missing value (a key the pivot would drop): found once, for the report's and the records' wide
        tables (and the values digests: :meth:`_text_key`)."""
        return {
            column: self._text_key(column)[1]
            for column in ("seed", "query_id", "segment")
            if column in self.per_query.columns and not self.per_query[column].isna().any()
        }

    def _text_key(self, column: str) -> tuple[Any, Any]:
        """A key column of the per-query table as (its distinct texts in the order of their UTF-8 bytes, each followed
        by a NUL, as an Arrow array; each row's rank among them): equal texts have equal ranks, and ranks are ordered
        as the texts are, which is how Python's sorted() orders str (by code point). A missing value is the text
        "nan" (:func:`_as_text`). Found once per column, for the values digests and the wide tables.

        >>> import pandas as pd
        >>> table = pd.DataFrame({"query_id": ["q2", "q10", "é", "q2"], "value": [1.0, 2.0, 3.0, 4.0]})
        >>> texts, ranks = SavedResults(Path("."), {}, {}, table, table, table)._text_key("query_id")
        >>> texts.to_pylist(), ranks.tolist()
        (['q10\\x00', 'q2\\x00', 'é\\x00'], [1, 0, 2, 1])
        """
        if column not in self._texts:
            import numpy as np
            import pyarrow as pa
            import pyarrow.compute as pc

            encoded = pc.dictionary_encode(_one_chunk(_as_text(self.per_query[column])))
            by_text = pc.sort_indices(encoded.dictionary).to_numpy()  # distinct texts: no ties to order
            rank = np.empty(len(by_text), dtype=np.int32)  # as many as the dictionary's int32 indices can tell apart
            rank[by_text] = np.arange(len(by_text), dtype=np.int32)
            nul, empty = pa.scalar("\0", pa.large_string()), pa.scalar("", pa.large_string())
            ended = pc.binary_join_element_wise(encoded.dictionary.take(by_text), empty, nul)
            self._texts[column] = (ended, rank[encoded.indices.to_numpy()])
        return self._texts[column]

    @cached_property
    def _texts(self) -> dict[str, tuple[Any, Any]]:
        return {}

    def __getstate__(self) -> dict[str, Any]:
        """What pickling sends (to the process that logs the records): all but the key columns' texts and ranks, which
        the values digests, found before, were the ones to need (:attr:`_key_codes` shares the ranks it uses)."""
        return {name: value for name, value in self.__dict__.items() if name != "_texts"}

    def values_digest(self, system: str) -> str:
        """The sha256 of a system's per-query values in this folder, whatever the rows' order or the file's format:
        of each row's dataset, seed, query, segment and measure, then of the values' bits in that order. Two
        evaluations of a model agree on its values exactly when their digests are equal; a reused evaluation's
        values are checked against the digest recorded when it was logged. Computed once per system (every child
        run of the system and its promotion record the same digest)."""
        if system not in self._digests:
            self._digests[system] = self._values_digest(system)
        return self._digests[system]

    def find_values_digests(self) -> None:
        """Find every system's :meth:`values_digest` now: kept with the results, and handed over with them to the
        process that logs them (``harness run`` finds them while that process is still importing MLflow)."""
        for system in dict.fromkeys(key[1] for key in self._per_query_rows):
            self.values_digest(system)

    @cached_property
    def _digests(self) -> dict[str, str]:
        return {}

    def _values_digest(self, system: str) -> str:
        import hashlib

        import numpy as np

        keys = [c for c in DIGEST_KEYS if c in self.per_query.columns]
        order = self._digest_order(system)
        if order is None:  # a stable sort of the rows by the keys' ranks, as by their texts' UTF-8 bytes
            found = [at for key, at in self._per_query_rows.items() if key[1] == system]
            rows = np.sort(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)
            order = rows[np.lexsort([self._text_key(column)[1][rows] for column in reversed(keys)])] if keys else rows
        digest = hashlib.sha256()
        for column in keys:
            # each row's text and a NUL, taken from the column's distinct texts: the buffer is the texts joined by
            # NULs, and one NUL more (0.1 s for three systems of the demo, where a sort and a join of the text took
            # 0.4 s)
            texts, ranks = self._text_key(column)
            ended = texts.take(ranks[order])
            offsets = np.frombuffer(ended.buffers()[1], dtype=np.int64)
            start, stop = int(offsets[ended.offset]), int(offsets[ended.offset + len(ended)])
            digest.update(memoryview(ended.buffers()[2])[start : max(start, stop - 1)] if len(ended) else b"")
            digest.update(b"\1")
        values = self.per_query["value"].to_numpy(dtype=np.float64)[order]
        digest.update(np.where(np.isnan(values), np.nan, values).tobytes())  # one NaN, whatever its payload
        return digest.hexdigest()

    def _digest_order(self, system: str) -> Any:
        """The rows of a system in its digest's order (by dataset, query, segment and measure), found from the table's
        groups where they line up: each measure of a dataset over the same queries in ascending order, with the same
        segments (the same :attr:`_key_codes`), no seeds (one run of the system, as harness writes it). The order is
        then each dataset's queries, a query's measures by name, without a sort of a million rows (0.1 s a system at
        200,000 users). None where they do not."""
        import numpy as np

        codes = self._key_codes
        if "seed" in self.per_query.columns or not {"query_id", "segment"} <= codes.keys():
            return None
        pieces = []
        for dataset in sorted({key[0] for key in self._per_query_rows if key[1] == system}):
            measures = sorted(key[2] for key in self._per_query_rows if key[:2] == (dataset, system))
            parts = [self._per_query_rows[(dataset, system, measure)] for measure in measures]
            ids = codes["query_id"][parts[0]]  # ranks: ascending as the texts are
            if not bool(np.all(ids[1:] > ids[:-1])) or any(
                len(at) != len(parts[0]) or not np.array_equal(codes[c][at], codes[c][parts[0]])
                for at in parts[1:]
                for c in ("query_id", "segment")
            ):
                return None
            pieces.append(np.stack(parts, axis=1).reshape(-1))
        return np.concatenate(pieces) if pieces else None

    @cached_property
    def _per_query_rows(self) -> dict[tuple[str, str, str], Any]:
        """Where each (dataset, system, measure)'s rows are in the per-query table in memory, found in one pass: the
        report and tracking ask for dozens of slices of it (a filter each took a pass over every row)."""
        groups = self.per_query.groupby(["dataset", "system", "measure"], sort=False, observed=True).indices
        return {key: rows for key, rows in groups.items()}  # type: ignore[misc]


def _lined_up(table: Any, codes: dict[str, Any], at: Any, index: list[str], seeds: bool) -> tuple[Any, Any] | None:
    """(the rows of the keys, each key's mean value) of the rows ``at`` of ``table`` (``codes``: its key and seed columns as
    integer codes), split into runs by the seed column (``seeds``), where the runs line up: the same distinct keys in
    the same order, each key's rows in the runs' order in the table, every value finite. The mean is pandas' group
    mean: a key's one value, or the compensated (Kahan) sum of its values in the table's order, from 0, over their
    number. None where they do not line up."""
    from itertools import pairwise

    import numpy as np

    parts = [at]
    if seeds:  # the runs in the order of their first row
        seed = codes["seed"][at]
        _, first = np.unique(seed, return_index=True)
        parts = [at[seed == seed[i]] for i in np.sort(first)]
    if not all(len(part) == len(parts[0]) for part in parts):
        return None
    values = table["value"].to_numpy(dtype=np.float64)
    runs = [values[part] for part in parts]
    if (
        not all(np.isfinite(run).all() for run in runs)
        or not all(np.all(earlier < later) for earlier, later in pairwise(parts))  # each key's rows in run order
        or not all(np.array_equal(codes[c][part], codes[c][parts[0]]) for part in parts[1:] for c in index)
        or (parts[0].size and np.bincount(_query_keys(codes, parts[0], "seed" in index)).max() > 1)  # a query twice
    ):
        return None
    if len(runs) == 1:
        mean = runs[0]
    else:
        total, carried = np.zeros(len(parts[0])), np.zeros(len(parts[0]))
        for run in runs:  # pandas' group_mean: the same additions in the same order
            step = run - carried
            after = total + step
            carried = (after - total) - step
            total = after
        mean = total / len(runs)
    return parts[0], mean


def _query_keys(codes: dict[str, Any], at: Any, by_seed: bool) -> Any:
    """The rows ``at``'s queries as integers, equal for the same query (and the same seed, ``by_seed``: a query is
    once in each of a system's runs, where the seed is one of the keys)."""
    import numpy as np

    query = codes["query_id"][at].astype(np.int64)
    if not by_seed:
        return query
    return codes["seed"][at].astype(np.int64) * (int(codes["query_id"].max(initial=0)) + 1) + query


def _one_chunk(array: Any) -> Any:
    """An Arrow array in one piece (a chunked one's chunks combined)."""
    import pyarrow as pa

    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


def _as_text(column: Any) -> Any:
    """A key column as Arrow large strings, each value as ``astype(str)`` writes it, a missing one as "nan".

    >>> import pandas as pd
    >>> [_as_text(pd.Series(v, dtype=t)).to_pylist() for v, t in ((["a", "b"], "str"), ([1, 2], "int64"), (["x", None], object))]
    [['a', 'b'], ['1', '2'], ['x', 'nan']]
    """
    import pandas as pd
    import pyarrow as pa

    if isinstance(column.dtype, pd.StringDtype) and not column.hasnans:
        return pa.array(column).cast(pa.large_string())
    return pa.array(column.astype(str).fillna("nan").to_numpy(dtype=object), pa.large_string())


def _csv_bytes(frame: Any) -> bytes:
    """A large table as CSV by Arrow's writer: every float in its shortest form that reads back to the same bits, text
    quoted; 13x pandas' ``to_csv`` on 2M per-query rows (0.22 s against 2.8 s).

    >>> import pandas as pd
    >>> _csv_bytes(pd.DataFrame({"query_id": ["q1", "q,2"], "value": [0.1, 1.0]})).decode().splitlines()
    ['"query_id","value"', '"q1",0.1', '"q,2",1']
    """
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    buffer = io.BytesIO()
    pa_csv.write_csv(pa.Table.from_pandas(frame, preserve_index=False), buffer)
    return buffer.getvalue()


def _table_bytes(frame: Any) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def recorded_path(path: str | Path, base: Path, absolute: bool = False) -> str:
    """A local path as a record others may read shows it: relative to ``base`` (the config's folder), or as it is
    when ``absolute`` (``tracking.record_paths: true``). A store others share learns no one's home directory.

    >>> recorded_path("/home/ann/exp/runs/a.run", Path("/home/ann/exp/configs"))
    '../runs/a.run'
    >>> recorded_path("/home/ann/exp/runs/a.run", Path("/home/ann/exp/configs"), absolute=True)
    '/home/ann/exp/runs/a.run'
    """
    if absolute:
        return str(path)
    try:
        return os.path.relpath(path, base)
    except ValueError:  # another drive (Windows): no relative path joins them
        return Path(path).name


def prepare_output(root: Path) -> None:
    """Prove, before any work, that the experiment's output folder can be made and written: its nearest existing
    folder must be a folder and writable (a file is created there and removed). Nothing is left behind, so a later
    user error still writes nothing; a mistake here is a user error naming the path and the fix (exit 2).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as scratch:
    ...     prepare_output(Path(scratch) / "out" / "demo")
    ...     sorted(p.name for p in Path(scratch).iterdir())
    []
    """
    existing = next(p for p in (root, *root.parents) if p.exists())
    if not existing.is_dir():
        raise HarnessError(
            f"the output {existing} is a file, not a folder", path=existing, hint="point output: (or --output) at a folder"
        )
    try:
        with tempfile.NamedTemporaryFile(dir=existing, prefix=".harness-probe-"):
            pass
    except OSError as exc:
        raise HarnessError(
            f"cannot write in the output folder: {exc.strerror or exc}",
            path=existing,
            hint="make it writable, or point output: (or --output) at a writable folder",
        ) from None


def write_results(results: SavedResults, root: Path, stamp: str, per_query_csv: bool = False) -> SavedResults:
    """Write ``results`` as ``root/<stamp>-<id>/`` (atomically, as a whole) and point ``root/latest`` at it. Every table
    is Parquet (the record) with a CSV twin, but the per-query table, whose CSV is written when ``per_query_csv``."""
    import yaml

    final = root / f"{stamp}-{secrets.token_hex(3)}"
    staging = root / f".incomplete-{final.name}.{os.getpid()}"  # the writer's process: a dead one's is stale
    _remove_stale_staging(root)
    try:
        staging.mkdir(parents=True, exist_ok=False)
        for stem in TABLES:
            frame = getattr(results, stem)
            if frame is None:
                continue
            atomic_write(staging / f"{stem}.parquet", _table_bytes(frame))  # the raw values
            if not stem.startswith("per_query"):
                atomic_write(staging / f"{stem}.csv", for_csv(frame).to_csv(index=False))
            elif per_query_csv:
                atomic_write(staging / f"{stem}.csv", _csv_bytes(for_csv(frame)))
        atomic_write(staging / "config.resolved.yaml", yaml.safe_dump(results.config, sort_keys=False))
        atomic_write(staging / "provenance.json", json.dumps(results.provenance, indent=2))
        if results.verdict is not None:
            atomic_write(staging / "gate.json", json.dumps(results.verdict.to_dict(), indent=2))
        if results.agreement is not None:
            atomic_write(staging / "agreement.json", json.dumps(results.agreement, indent=2))
        os.replace(staging, final)
    except OSError as exc:  # the environment, not harness: one line, and no half-written folder left
        shutil.rmtree(staging, ignore_errors=True)
        raise ResultsNotWritten(
            f"cannot write the results: {exc.strerror or exc}",
            path=exc.filename or root,
            hint="free space or make the output folder writable, then run again",
        ) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _point_latest(root, final)
    return replace(results, folder=final)


def _remove_stale_staging(root: Path) -> None:
    """Staging folders left by a writer that died (kill -9, a crash) on this machine: removed on the next write.
    A folder whose writer still runs (a concurrent run) is kept."""
    for staging in root.glob(".incomplete-*.*") if root.is_dir() else ():
        pid = staging.name.rsplit(".", 1)[-1]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(staging, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # somebody else's process: alive
        return True
    return True


def write_tracking(results: SavedResults, tracking: dict[str, Any]) -> SavedResults:
    """Record where the results were logged (``tracking.json``)."""
    atomic_write(results.folder / "tracking.json", json.dumps(tracking, indent=2))
    return results.with_tracking(tracking)


def write_promotion(results: SavedResults, line: str) -> SavedResults:
    """Record what ``release.promote`` did in the folder's gate.json (its ``promotion``), once it is done: the
    promotion follows the logging of the results it rests on."""
    assert results.verdict is not None
    verdict = replace(results.verdict, promotion=line)
    atomic_write(results.folder / "gate.json", json.dumps(verdict.to_dict(), indent=2))
    return replace(results, verdict=verdict)


def _point_latest(root: Path, final: Path) -> None:
    link = root / "latest"
    tmp = root / f".latest-{secrets.token_hex(3)}"
    try:
        os.symlink(final.name, tmp)
        os.replace(tmp, link)
    except OSError:  # symlinks may be unavailable (some filesystems): the folder name suffices
        Path(tmp).unlink(missing_ok=True)


def read_results(folder: str | Path) -> SavedResults:
    """A results folder as written by :func:`write_results`; a HarnessError naming the file otherwise.

    A folder may come from anywhere (a colleague, an artifact store, a download): it is checked before anything
    reads it. Every entry must be a file or folder of its own (a symbolic link could make ``harness track`` upload
    a file from outside it), the records must be the size and shape harness writes, and a file that cannot be read
    is named, with exit 2, rather than failing inside pandas or yaml.
    """
    import pandas as pd

    folder = Path(folder)
    if not folder.is_dir():
        raise HarnessError("not a results folder", path=folder, hint="give the folder harness run printed")
    missing = [name for name in REQUIRED if not (folder / name).exists()]
    if missing:
        raise HarnessError(
            f"not a complete results folder: {missing[0]} is missing", path=folder, hint="give the folder harness run printed"
        )
    _refuse_links(folder)

    def table(stem: str, columns: tuple[str, ...] = ()) -> Any:
        path = folder / f"{stem}.parquet"
        if not path.exists():
            return None
        frame = _read(path, pd.read_parquet)
        absent = [c for c in columns if c not in frame.columns]
        if absent:
            raise HarnessError(
                f"{path.name} is not a table harness wrote: it has no column {absent[0]!r}", path=path, hint=_UNCHANGED
            )
        return frame

    config = _read(folder / "config.resolved.yaml", _yaml_record)
    provenance = _read(folder / "provenance.json", _json_record)
    _check_shape(folder / "config.resolved.yaml", config, {"name": str, "measures": list, "datasets": list, "systems": list})
    _check_shape(folder / "provenance.json", provenance, {"versions": dict, "inputs": list})
    gate = folder / "gate.json"
    tracking = folder / "tracking.json"
    agreement = folder / "agreement.json"
    return SavedResults(
        folder=folder.resolve(),
        config=config,
        provenance=provenance,
        per_query=table("per_query", ("dataset", "system", "query_id", "segment", "measure", "value")),
        summary=table("summary", ("dataset", "system", "segment", "measure", "value")),
        diagnostics=table("diagnostics", ("dataset", "system")),
        comparisons=_with_generic_ci(table("comparisons")),
        anova=table("anova"),
        long_tail=table("long_tail"),
        groups=table("groups"),
        per_query_people=table("per_query_people", ("dataset", "system", "query_id", "segment", "measure", "value")),
        verdict=_read(gate, lambda p: Decision.from_dict(_json_record(p))) if gate.exists() else None,
        tracking=_read(tracking, _json_record) if tracking.exists() else None,
        agreement=_read(agreement, _json_record) if agreement.exists() else None,
    )


_UNCHANGED = "give the folder harness run wrote, as it wrote it"
MAX_RECORD_BYTES = 16 * 2**20  # config.resolved.yaml, provenance.json, gate.json, tracking.json: far above any real one


def _refuse_links(folder: Path) -> None:
    entries = list(folder.iterdir())
    parts = folder / "per_query.parquet"  # a table written in parts: its files too
    if parts.is_dir() and not parts.is_symlink():
        entries += parts.iterdir()
    for entry in entries:
        if entry.is_symlink():
            raise HarnessError(
                f"{entry.relative_to(folder)} is a symbolic link: a results folder holds only its own "
                "files, and harness reads or uploads nothing from outside it",
                path=folder,
                hint=f"{_UNCHANGED} (copy it with the files themselves, not links)",
            )


def _read(path: Path, read: Callable[[Path], Any]) -> Any:
    """``read(path)``, a user error naming the file if it is too large or malformed."""
    if path.is_file() and path.suffix in (".json", ".yaml") and path.stat().st_size > MAX_RECORD_BYTES:
        raise HarnessError(
            f"{path.name} is {path.stat().st_size} bytes, more than a results folder's records hold ({MAX_RECORD_BYTES})",
            path=path,
            hint=_UNCHANGED,
        )
    try:
        return read(path)
    except HarnessError:
        raise
    except Exception as exc:  # whatever the library says about a malformed file: one line, with the file
        reason = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise HarnessError(f"{path.name} cannot be read ({reason})", path=path, hint=_UNCHANGED) from None


def _json_record(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _yaml_record(path: Path) -> Any:
    from harness.config.yaml_limits import load_bounded

    return load_bounded(path.read_text(encoding="utf-8"), path)


def _check_shape(path: Path, record: Any, fields: dict[str, type]) -> None:
    if not isinstance(record, dict):
        raise HarnessError(f"{path.name} is not a mapping, as harness writes it", path=path, hint=_UNCHANGED)
    for name, kind in fields.items():
        if not isinstance(record.get(name), kind):
            raise HarnessError(f"{path.name} has no {name} ({kind.__name__}), as harness writes it", path=path, hint=_UNCHANGED)


def _with_generic_ci(comparisons: Any) -> Any:
    """Folders written before system measures had no ci_low/ci_high: there, they are the t interval."""
    if comparisons is not None and "ci_low" not in comparisons.columns:
        comparisons = comparisons.assign(ci_low=comparisons["ci_low_t"], ci_high=comparisons["ci_high_t"])
    return comparisons


def previous_folders(root: Path) -> list[Path]:
    """The complete results folders of an experiment, oldest first (their names start with the time stamp)."""
    if not root.is_dir():
        return []
    return sorted(
        p
        for p in root.iterdir()
        if p.is_dir() and not p.is_symlink() and not p.name.startswith(".") and (p / "summary.parquet").exists()
    )
