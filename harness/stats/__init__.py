"""Paired significance tests, multiple-comparison corrections, ANOVA with randomised Tukey HSD."""
