"""A config-group selection that does not compose."""

from __future__ import annotations

from .. import Rule


class ConfigGroup(Rule):
    id = "config-group"
    severity = "error"
    stage = "hydra"
    summary = "a config-group selection that does not compose"
    why = "The option must exist in the group's folder of verl's config tree."
    bad = "model_engine=megatorn"
    good = "model_engine=megatron"
