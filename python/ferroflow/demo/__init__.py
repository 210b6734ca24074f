"""Runnable examples written against the public TF1-style API; ``ferroflow demo`` runs ``digits``."""
