"""Generated message modules (see ferroflow.core)."""
