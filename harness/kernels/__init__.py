"""Pure numpy metric kernels over all queries at once.

Every kernel takes a :class:`~harness.kernels._segments.RankedLists` (documents of all
queries in one flat array, sorted by query then rank) and returns one float64 per
query. No I/O, no config objects, no Python loop per query or per document; each
query's value depends only on that query's rows, so the same kernels run on any
partition of the queries.
"""
