"""Command-line tools (``python -m ferroflow.tools.<name>``)."""
