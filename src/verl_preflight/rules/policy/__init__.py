"""Policy rules: what composes in Hydra but fails (or silently misbehaves) when verl starts."""
