"""A config-group selection that does not compose."""

from __future__ import annotations

from ...hydra_stage.problems import HydraKind
from .. import Rule


class ConfigGroup(Rule):
    id = "config-group"
    severity = "error"
    stage = "hydra"
    problem = HydraKind.CONFIG_GROUP  # the Hydra stage problem it reports
    summary = "a config-group selection that does not compose"
    why = (
        "The option must exist in the group's folder of verl's config tree. An option known only at run time "
        "(`optim=${BACKEND}`) is reported only when no option of the folder can match what the script wrote; "
        "the other overrides are then checked under each option it could be, and reported when all fail."
    )
    ground_truth = "hydra-core 1.3.8 hydra/_internal/defaults_list.py:779 (Could not find 'group/option')"
    bad = "model_engine=megatorn"
    good = "model_engine=megatron"
