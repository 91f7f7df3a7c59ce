"""Engines: who computes the per-query values and the comparisons (this process, or a Dask cluster)."""
