"""--config-name names a root config verl does not have."""

from __future__ import annotations

from ...hydra_stage.problems import HydraKind
from .. import Rule


class ConfigName(Rule):
    id = "config-name"
    severity = "error"
    stage = "hydra"
    problem = HydraKind.CONFIG_NAME  # the Hydra stage problem it reports
    summary = "--config-name names a root config the launch's config folders do not have"
    why = (
        "Hydra cannot find the primary config and stops. Checked in the folders Hydra searches for the launch: "
        "the entry point's own, a --config-path (a `$(pwd)/...` path taken from the folder the launch starts "
        'in, docs/checks.md "The target"), and hydra.searchpath; where one of those is not here it is a note instead.'
    )
    ground_truth = "hydra-core 1.3.8 hydra/_internal/defaults_list.py:773 (Cannot find primary config)"
    bad = "--config-name=ppo_megatron"
    good = "--config-name=ppo_megatron_trainer"
