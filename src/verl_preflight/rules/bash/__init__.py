"""Diagnostics of the bash stage: what bash itself would refuse or stop on, and where the evaluator stops."""
