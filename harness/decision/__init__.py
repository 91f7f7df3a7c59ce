"""Decide: comparisons and per-query values -> a release verdict with the error rates it controls."""
