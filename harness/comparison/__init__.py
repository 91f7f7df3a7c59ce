"""Compare: per-query values of several systems -> paired tests, intervals and ANOVA, as typed rows."""
