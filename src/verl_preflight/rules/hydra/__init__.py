"""Diagnostics of the Hydra stage: what Hydra refuses when main_ppo parses and composes its arguments."""
