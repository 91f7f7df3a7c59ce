"""The measure vocabulary: names <-> frozen values, and the registry of definitions."""
