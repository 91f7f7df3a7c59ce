"""Experiment configs: YAML parsed once into frozen, validated objects."""
