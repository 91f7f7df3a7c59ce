"""Loading qrels and runs, and aligning them into ranked lists."""
