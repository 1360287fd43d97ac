"""verl-preflight: static validation of verl launch scripts."""

__version__ = "0.1.0"
