"""Diagnostics about the run itself: limits, suppressions, our own failures."""
