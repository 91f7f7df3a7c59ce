"""Training interactions and the item catalogue: what beyond-accuracy measures read besides qrels and runs.

Ids stay strings ("007" and "7" are different items). The catalogue's columns other
than the id are numeric item features, or group columns (text labels, or columns named as groups).

>>> train = Interactions.from_records([("u1", "i1"), ("u1", "i2"), ("u2", "i1")])
>>> context = ItemContext(train, None, Qrels.from_records([("u1", "i3", 1)]))
>>> context.known.to_pylist(), context.count.tolist(), context.n_recbole_items
(['i1', 'i2'], [2.0, 1.0], 4)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from harness.config.formats import table_format_of
from harness.data._arrow import contiguous, float_values, from_numpy, positions_in, same_strings, string_array, to_numpy
from harness.data.model import Qrels, table_column, table_ids
from harness.data.tables import read_table, rows_located, table_line
from harness.errors import InputFormatError
from harness.kernels._lookup_compiled import distinct_pairs, gather_segments
from harness.kernels._parallel import concurrently
from harness.kernels._segments import ItemData


@dataclass(frozen=True, eq=False)
class Interactions:
    """Training interactions: one (user, item) row each; repeats count as rows (popularity) once per user (history).

    Made by :func:`harness.read_train` from a file, or by ``from_records``; the beyond-accuracy measures read them
    (popularity, novelty, a user's history).

    Attributes
    ----------
    user_id, item_id : pyarrow array of str
        Each interaction's user and item.
    source : str
        Where the rows came from, for messages.

    Examples
    --------
    >>> train = Interactions.from_records([("u1", "i1"), ("u1", "i2"), ("u2", "i1")])
    >>> len(train), train.item_id.to_pylist()
    (3, ['i1', 'i2', 'i1'])
    """

    user_id: pa.Array
    item_id: pa.Array
    source: str = "<train>"

    def __len__(self) -> int:
        return len(self.user_id)

    def __repr__(self) -> str:
        return f"Interactions({len(self)} rows from {self.source})"

    @classmethod
    def from_records(cls, rows: Iterable[tuple[str, str]], source: str = "<train>") -> Interactions:
        rows = list(rows)
        return cls(pa.array([str(r[0]) for r in rows], pa.string()), pa.array([str(r[1]) for r in rows], pa.string()), source)

    @classmethod
    def from_frame(cls, frame: Any, user: str = "user", item: str = "item", source: str = "<DataFrame>") -> Interactions:
        table = pa.Table.from_pandas(frame, preserve_index=False)
        path = Path(source)
        return cls(
            table_ids(table_column(table, user, "user", path), "user", path),
            table_ids(table_column(table, item, "item", path), "item", path),
            source,
        )


@dataclass(frozen=True, eq=False)
class Catalog:
    """The item catalogue: its ids, per item the numeric feature columns (None when it has none), and its group
    columns: text labels (a provider's name, a genre) that group items for the fairness measures, never features.

    Attributes
    ----------
    item_id : pyarrow array of str
        The items.
    features : numpy array of float64, optional
        Items x numeric feature columns (None when there are none): what ILD's feature similarity reads.
    feature_names : tuple of str
        The feature columns' names.
    source : str
        Where the rows came from, for messages.
    groups : mapping
        ``groups[name]`` is (each item's label as an index into ``names``, NaN for an empty cell; ``names`` sorted).

    Examples
    --------
    >>> import pandas as pd
    >>> catalog = Catalog.from_frame(pd.DataFrame({"item": ["a", "b", "c"], "provider": ["zeta", "acme", "zeta"],
    ...                                            "year": [1999, 2004, 2011]}))
    >>> catalog.feature_names, catalog.groups["provider"][1], catalog.groups["provider"][0].tolist()
    (('year',), ('acme', 'zeta'), [1.0, 0.0, 1.0])
    """

    item_id: pa.Array
    features: np.ndarray | None
    feature_names: tuple[str, ...]
    source: str = "<items>"
    groups: Mapping[str, tuple[np.ndarray, tuple[str, ...]]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.item_id)

    def __repr__(self) -> str:
        return (
            f"Catalog({len(self)} items, {len(self.feature_names)} features, {len(self.groups)} group columns, "
            f"from {self.source})"
        )

    @classmethod
    def from_frame(cls, frame: Any, id: str = "item", source: str = "<DataFrame>", groups: Iterable[str] = ()) -> Catalog:
        """``groups``: columns that group items (read as text labels, never features), besides the all-text ones."""
        return _catalog(pa.Table.from_pandas(frame, preserve_index=False), id, source, "parquet", tuple(groups))


def read_train(path: str | Path, user: str = "user", item: str = "item", fmt: str | None = None) -> Interactions:
    """Training interactions from a table file (CSV, TSV, Parquet, JSONL).

    Parameters
    ----------
    path : str or Path
        The table.
    user, item : str
        Its user and item columns.
    fmt : {"csv", "tsv", "parquet", "jsonl"}, optional
        The format, over the file's name.

    Returns
    -------
    Interactions
        One row per (user, item) interaction.

    Raises
    ------
    InputFormatError
        The file, the line and what is wrong there (an empty file too).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "train.csv"
    >>> _ = path.write_text("uid,iid\\nu1,i1\\nu2,i1\\n")
    >>> read_train(path, user="uid", item="iid").user_id.to_pylist()
    ['u1', 'u2']
    """
    path = Path(path)
    fmt = fmt or table_format_of(path) or "csv"
    table = read_table(path, fmt, [user, item])
    if table.num_rows == 0:
        raise InputFormatError("the training file has no rows", path=path, hint="give at least one (user, item) row")
    with rows_located(path, fmt):
        return Interactions(
            table_ids(table_column(table, user, "user", path), "user", path),
            table_ids(table_column(table, item, "item", path), "item", path),
            str(path),
        )


def read_items(path: str | Path, id: str = "item", fmt: str | None = None, groups: Iterable[str] = ()) -> Catalog:
    """The catalogue from a table file: the ``id`` column; every other column a numeric feature, or a group column
    (``groups`` names them; a column of text only is one too).

    Parameters
    ----------
    path : str or Path
        The table.
    id : str
        Its item id column.
    fmt : {"csv", "tsv", "parquet", "jsonl"}, optional
        The format, over the file's name.
    groups : iterable of str
        Columns read as labels that group items (a provider, a genre), even when they hold numbers.

    Returns
    -------
    Catalog
        The items, their numeric features and their groups.

    Raises
    ------
    InputFormatError
        The file, the line and what is wrong there.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "items.csv"
    >>> _ = path.write_text("item,provider,year\\ni1,acme,1999\\ni2,zeta,2004\\n")
    >>> catalog = read_items(path)
    >>> catalog.feature_names, catalog.groups["provider"][1]
    (('year',), ('acme', 'zeta'))
    """
    path = Path(path)
    fmt = fmt or table_format_of(path) or "csv"
    table = read_table(path, fmt, [id, *groups])
    with rows_located(path, fmt):
        return _catalog(table, id, str(path), fmt, tuple(groups))


def _labels(column: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, tuple[str, ...]]:
    """A group column: each item's label as an index into the sorted distinct labels (NaN for an empty cell)."""
    texts = [None if t is None or not t.strip() else t.strip() for t in column.cast(pa.string()).to_pylist()]
    names = tuple(sorted({t for t in texts if t is not None}))
    index = {name: i for i, name in enumerate(names)}
    return np.array([np.nan if t is None else index[t] for t in texts], dtype=np.float64), names


def _catalog(table: pa.Table, id: str, source: str, fmt: str, groups: tuple[str, ...] = ()) -> Catalog:
    path = Path(source)
    ids = table_ids(table_column(table, id, "item id", path), "item", path)
    if table.num_rows == 0:
        raise InputFormatError("the items file has no rows", path=path, hint="list the catalogue's items, one per row")
    if pc.count_distinct(ids).as_py() != len(ids):
        codes = to_numpy(pc.dictionary_encode(ids).indices)
        repeated = np.ones(len(ids), dtype=bool)
        repeated[np.unique(codes, return_index=True)[1]] = False  # each id's first row is not a repeat
        first_repeat = int(np.flatnonzero(repeated)[0])
        raise InputFormatError(
            f"item {ids[first_repeat].as_py()!r} is listed twice",
            path=path,
            line=table_line(path, fmt, first_repeat),
            hint="give each catalogue item one row",
        )
    for name in groups:
        if name == id or name not in table.column_names:
            raise InputFormatError(
                f"the group column {name!r} is {'the id column' if name == id else 'not in the items file'}",
                path=path,
                hint=f"its columns: {', '.join(c for c in table.column_names if c != id) or 'only the id'}",
            )
    labels = {name: _labels(table[name]) for name in groups}
    names = tuple(c for c in table.column_names if c != id and c not in labels)
    columns, feature_names = [], []
    for name in names:
        column = table[name]
        try:
            values = float_values(pc.cast(column, pa.float64()))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            texts = column.cast(pa.string()).to_pylist()
            if not any(_is_number(t) for t in texts):  # text only: labels that group items (a provider, a genre)
                labels[name] = _labels(column)
                continue
            row = next(i for i, t in enumerate(texts) if not _is_number(t))
            raise InputFormatError(
                f"feature {name!r} of item {ids[row].as_py()!r} is not a number: {texts[row]!r}",
                path=path,
                line=table_line(path, fmt, row),
                hint="a column of the items file is a numeric feature, or text labels that group items; to group by "
                f"a column of mixed labels, name it a group column (items: {{groups: [{name}]}} in a config, "
                f"--items-groups {name} with harness eval)",
            ) from None
        bad = np.flatnonzero(np.isnan(values))
        if bad.size:
            row = int(bad[0])
            raise InputFormatError(
                f"feature {name!r} of item {ids[row].as_py()!r} is missing",
                path=path,
                line=table_line(path, fmt, row),
                hint="give every item a value for every feature column",
            )
        columns.append(values)
        feature_names.append(name)
    features = np.stack(columns, axis=1) if columns else None
    return Catalog(ids, features, tuple(feature_names), source, labels)


def _int32(indices: pa.Array) -> np.ndarray:
    """A dictionary's indices as contiguous int32 (what Arrow gives: a view)."""
    return np.ascontiguousarray(to_numpy(indices), dtype=np.int32)


def _is_number(text: str | None) -> bool:
    try:
        return text is not None and float(text) == float(text)
    except ValueError:
        return False


class ItemContext:
    """A dataset's items, prepared once: codes (train and catalogue ids, sorted), popularity, features, histories.

    ``for_run`` gives the kernels' :class:`ItemData` for one aligned run; items the run
    recommends that neither the training data nor the catalogue knows get codes after the known ones.
    """

    def __init__(
        self, train: Interactions | None, catalog: Catalog | None, qrels: Qrels, user_groups: Mapping[str, str] | None = None
    ) -> None:
        # whether there are training data; not the rows themselves: what the measures read of them is summarised
        # below, and the table (4M rows: 100 MB) is freed for the run's read once the caller lets go of it
        self.has_train = train is not None
        self.catalog = catalog
        self.user_groups = user_groups  # query (user) -> group, e.g. the dataset's segments: UserMAD's groups
        # three hash passes over millions of ids (judged documents, training items and users), independent: side by
        # side on the cores
        judged, *train_ids = concurrently(
            *(
                partial(pc.dictionary_encode, contiguous(ids))
                for ids in (qrels.doc_id, *(() if train is None else (train.item_id, train.user_id)))
            )
        )
        # the training items' dictionary (first appearance: RecBole numbers them so, its tail's tie order) also gives
        # their distinct ids: the known items are the sorted union of tens of thousands of ids, not of every row
        items_seen = train_ids[0] if train_ids else None
        parts = [
            ids
            for ids in (None if items_seen is None else items_seen.dictionary, None if catalog is None else catalog.item_id)
            if ids is not None
        ]
        known = contiguous(pc.unique(same_strings(parts))) if parts else string_array([])
        self.known: pa.Array = known.take(pc.sort_indices(known))
        n = len(self.known)
        self.count = np.zeros(n)
        self.users = np.zeros(n)
        self.in_train = np.zeros(n, dtype=bool)
        self.in_catalog = np.zeros(n, dtype=bool)
        self.n_train_rows = 0 if train is None else len(train)
        self.train_first: np.ndarray | None = None
        # each training user's distinct items (codes ascending) as CSR: (indptr by user code, item codes)
        self._histories: tuple[np.ndarray, np.ndarray] | None = None
        self._train_users: pa.Array | None = None
        if train is not None:
            assert items_seen is not None
            in_order = self.codes(items_seen.dictionary)
            users = train_ids[1]
            self._train_users = users.dictionary
            # counting passes by user code, then a small sort per user: no sort of 4M (user, item) keys
            indptr, history, self.count, self.users = distinct_pairs(
                _int32(users.indices), _int32(items_seen.indices), in_order, len(users.dictionary), n
            )
            self._histories = (indptr, history)
            self.train_first = np.full(n, np.inf)
            self.train_first[in_order] = np.arange(in_order.size)
            self.in_train = self.count > 0
        self.n_train_users = 0 if self._train_users is None else len(self._train_users)
        self.features: np.ndarray | None = None
        self.columns: dict[str, np.ndarray] = {}  # each catalogue column as read, per code (NaN: not listed)
        self.labels: dict[str, tuple[str, ...]] = {}  # a group column's labels: its column holds indexes into them
        if catalog is not None:
            listed = self.codes(catalog.item_id)
            self.in_catalog[listed] = True
            for j, name in enumerate(catalog.feature_names):
                assert catalog.features is not None
                self.columns[name] = np.full(n, np.nan)
                self.columns[name][listed] = catalog.features[:, j]
            for name, (values, labels) in catalog.groups.items():
                self.columns[name] = np.full(n, np.nan)
                self.columns[name][listed] = values
                self.labels[name] = labels
            if catalog.features is not None:
                features = np.zeros((n, catalog.features.shape[1]))
                norms = np.linalg.norm(catalog.features, axis=1, keepdims=True)
                # unit vectors: cosine is a dot product; an all-zero vector stays zero (similarity 0, where msrec divides by 0)
                features[listed] = np.divide(catalog.features, norms, out=np.zeros_like(catalog.features), where=norms > 0)
                self.features = features
        # the judged documents, each judgment's by its index into their dictionary: one pass gives RecBole's extra
        # tokens and every judgment's item code (judged_codes)
        judged_docs = judged.dictionary
        self._judgments = (qrels.doc_id, judged.indices)
        self._judged_doc_codes = positions_in(judged_docs, self.known)
        # a mask of numpy's, not pc.less(..., 0): a Python scalar argument makes pyarrow import pandas (0.2 s)
        self._qrels_only = judged_docs.take(from_numpy(np.flatnonzero(self._judged_doc_codes < 0)))
        self.n_recbole_items = n + len(self._qrels_only) + 1  # RecBole's num_items: every item token, + [PAD]
        self._item_users: Any = None
        self._user_items: Any = None

    def codes(self, ids: pa.Array | pa.ChunkedArray) -> np.ndarray:
        """Known code of each id (all must be known)."""
        found = pc.index_in(ids, value_set=self.known)
        return to_numpy(found.cast(pa.int64())).astype(np.int64)

    def require(self, needs: frozenset[str], measure: str, columns: frozenset[str] = frozenset()) -> None:
        """A clear error when a measure asks for an input the dataset lacks."""
        if "train" in needs and not self.has_train:
            raise InputFormatError(
                f"{measure} needs training interactions",
                hint="give them: train: {path: ..., columns: {...}} in the dataset, or --train PATH",
            )
        if "items" in needs and self.catalog is None:
            raise InputFormatError(
                f"{measure} needs the item catalogue", hint="give it: items: {path: ..., id: ...} in the dataset, or --items PATH"
            )
        for column in sorted(columns):
            if column not in self.columns:
                assert self.catalog is not None  # "items" is checked first
                named = ", ".join([*self.catalog.feature_names, *self.catalog.groups]) or "none besides the id"
                raise InputFormatError(
                    f"{measure} groups items by the column {column!r}, which {self.catalog.source} does not have",
                    path=self.catalog.source,
                    hint=f"its columns: {named}; name one of them as group=...",
                )
        if "user_groups" in needs and self.user_groups is None:
            raise InputFormatError(
                f"{measure} compares groups of users, and the dataset has none",
                hint="give the dataset segments: {path: users.csv, query: user, segment: group} (--segments PATH with "
                "harness eval): each user's group",
            )
        if "features" in needs and (self.catalog is None or self.catalog.features is None):
            source = "the dataset has no items file" if self.catalog is None else f"{self.catalog.source} has only the id column"
            raise InputFormatError(
                f"{measure} compares item features, but {source}",
                path=None if self.catalog is None else self.catalog.source,
                hint="give the items file numeric feature columns besides the id, or use sim=cooccurrence",
            )

    def _pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct training (user code, item code) pairs, by user then item, as two int64 columns."""
        assert self._histories is not None
        indptr, item = self._histories
        return np.repeat(np.arange(indptr.size - 1, dtype=np.int64), np.diff(indptr)), item.astype(np.int64)

    @cached_property
    def _group_training(self) -> tuple[tuple[str, ...], np.ndarray | None]:
        """(the user groups' sorted names, each group's distinct training (user, item) pairs per known code): the
        same for every run, so computed once. Every training user counts, evaluated or not."""
        assert self.user_groups is not None
        names = tuple(sorted(set(self.user_groups.values())))
        if self._histories is None or self._train_users is None:
            return names, None
        index = {name: i for i, name in enumerate(names)}
        user, item = self._pairs()
        of_user = np.array([index.get(self.user_groups.get(u, ""), -1) for u in self._train_users.to_pylist()], dtype=np.int64)[
            user
        ]
        keep = of_user >= 0
        n = len(self.known)
        return names, np.bincount(of_user[keep] * n + item[keep], minlength=len(names) * n).reshape(len(names), n)

    def _user_groups_of(self, query_ids: np.ndarray) -> dict[str, Any]:
        """Each query's user group as an index into the groups' sorted names (-1: in none)."""
        if self.user_groups is None:
            return {}
        names, training = self._group_training
        index = {name: i for i, name in enumerate(names)}
        group = np.array([index.get(self.user_groups.get(str(q), ""), -1) for q in query_ids], dtype=np.int64)
        return {"user_group": group, "user_group_names": names, "group_training": training}

    def item_users(self) -> Any:
        """Binary (known items x training users) CSR matrix: the items' user vectors, for co-occurrence."""
        if self._item_users is None:
            from scipy import sparse

            user, item = self._pairs()
            self._item_users = sparse.csr_matrix(
                (np.ones(user.size, dtype=np.int32), (item, user)), shape=(len(self.known), self.n_train_users)
            )
        return self._item_users

    def user_items(self) -> Any:
        """Binary (training users x known items) CSR matrix: each training user's items (the pairs are sorted by user,
        then item, so this is their CSR as they are)."""
        if self._user_items is None:
            from scipy import sparse

            assert self._histories is not None
            indptr, item = self._histories
            self._user_items = sparse.csr_matrix(
                (np.ones(item.size, dtype=np.int32), item, indptr), shape=(self.n_train_users, len(self.known))
            )
        return self._user_items

    def judged_codes(self, docs: pa.Array, rows: np.ndarray) -> np.ndarray:
        """The item code of the judgments ``docs[rows]`` (-1 for an item nothing else knows). The judgments this
        context was built from (the same array) are coded already; others (a partition's) are looked up."""
        source, index = self._judgments
        if docs is source:
            return self._judged_doc_codes[to_numpy(index)[rows]]  # type: ignore[no-any-return]
        return positions_in(docs, self.known)[rows]

    def for_run(
        self,
        item_ids: pa.Array,
        query_ids: np.ndarray,
        cooccurrence: bool = False,
        pair_depth: int | None = None,
        cold_order: pa.Array | None = None,
        judged_code: np.ndarray | None = None,
        score: np.ndarray | None = None,
        query_id_array: pa.Array | None = None,
        item_rows: np.ndarray | None = None,
    ) -> ItemData:
        """The kernels' view of one run: each row's item code, and statistics padded for the run's cold items.

        The rows' items are ``item_ids``, or ``item_ids[item_rows]`` (a run's document column
        and its aligned rows: read in place, not taken). Cold items are numbered by first
        appearance in the rows, or by their place in ``cold_order`` (every cold item of the
        run, in order of first appearance) when only part of the run's rows is given (the
        dask engine's cut lists). ``judged_code``: the item code of each of the lists'
        judgments (:meth:`judged_codes`); ``score``: each row's score, for the measures that
        read it; ``query_id_array``: ``query_ids`` as Arrow.
        """
        from harness.data._align_compiled import positions_of  # compiled kernels: loaded only when items are read

        code = positions_of(item_ids, self.known, item_rows)
        n = len(self.known)
        n_cold, n_recbole, cold_ids = 0, self.n_recbole_items, string_array([])
        extra = self._qrels_only
        rows = np.flatnonzero(code < 0)
        if cold_order is not None or rows.size:
            # in row order, as first appearance numbers them
            cold_items = contiguous(item_ids).take(from_numpy(rows if item_rows is None else item_rows[rows]))
            if cold_order is None:
                cold = pc.dictionary_encode(cold_items)
                code[rows] = n + to_numpy(cold.indices).astype(np.int64)
                cold_ids = cold.dictionary
            else:
                code[rows] = n + to_numpy(pc.index_in(cold_items, value_set=cold_order)).astype(np.int64)
                cold_ids = cold_order
            n_cold = len(cold_ids)
            if n_cold:
                extra = same_strings([self._qrels_only, cold_ids]).unique()
                n_recbole = n + len(extra) + 1

        def pad(values: np.ndarray) -> np.ndarray:
            return np.concatenate([values, np.zeros((n_cold, *values.shape[1:]), dtype=values.dtype)]) if n_cold else values

        def pad_nan(values: np.ndarray) -> np.ndarray:
            return np.concatenate([values, np.full(n_cold, np.nan)]) if n_cold else values

        history_offsets = history_codes = None
        if self._histories is not None and self._train_users is not None:
            ids = string_array(query_ids.tolist()) if query_id_array is None else query_id_array
            history_offsets, history_codes = gather_segments(*self._histories, positions_in(ids, self._train_users))
        return ItemData(
            code=code,
            count=pad(self.count),
            users=pad(self.users),
            in_train=pad(self.in_train),
            in_catalog=pad(self.in_catalog),
            n_train_rows=self.n_train_rows,
            n_train_users=self.n_train_users,
            n_recbole_items=n_recbole,
            cold_ids=cold_ids,
            recbole_extra=extra,
            features=None if self.features is None else pad(self.features),
            history_offsets=history_offsets,
            history_codes=history_codes,
            item_users=self.item_users() if cooccurrence and self._histories is not None else None,
            pair_depth=pair_depth,
            user_items=self.user_items() if cooccurrence and self._histories is not None else None,
            judged_code=judged_code,
            columns={name: pad_nan(values) for name, values in self.columns.items()},
            labels=self.labels,
            score=score,
            train_first=None if self.train_first is None else np.concatenate([self.train_first, np.full(n_cold, np.inf)]),
            **self._user_groups_of(query_ids),
        )
