"""The Hydra stage: what main_ppo's Hydra does with the arguments a launch receives.

- tree.py: find verl's config tree (installed, --verl-config, --verl), its entry
  points, compose once per (config name, group selection) with Hydra, the cache;
- grammar.py: Hydra's own override grammar over each argument;
- check.py: one launch's overrides checked the way hydra.compose applies them.
"""
