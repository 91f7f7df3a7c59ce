"""Record: results folders written atomically, read back, and logged to MLflow exactly once."""
