"""--config-name names a root config verl does not have."""

from __future__ import annotations

from .. import Rule


class ConfigName(Rule):
    id = "config-name"
    severity = "error"
    stage = "hydra"
    summary = "--config-name names a root config verl does not have"
    why = "Hydra cannot find the primary config and stops."
    bad = "--config-name=ppo_megatron"
    good = "--config-name=ppo_megatron_trainer"
