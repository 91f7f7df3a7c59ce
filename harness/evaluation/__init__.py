"""Evaluate: aligned runs -> per-query values of every measure, their aggregates and diagnostics."""
