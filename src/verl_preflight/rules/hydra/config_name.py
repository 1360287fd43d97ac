"""--config-name names a root config verl does not have."""

from __future__ import annotations

from .. import Rule


class ConfigName(Rule):
    id = "config-name"
    severity = "error"
    stage = "hydra"
    summary = "--config-name names a root config verl does not have"
    why = (
        "Hydra cannot find the primary config and stops. Checked only where Hydra looks in verl's own tree: a "
        "--config-path elsewhere, or one known only at run time (`$(pwd)/examples/.../config`), is not checked."
    )
    ground_truth = "hydra-core 1.3.8 hydra/_internal/defaults_list.py:773 (Cannot find primary config)"
    bad = "--config-name=ppo_megatron"
    good = "--config-name=ppo_megatron_trainer"
