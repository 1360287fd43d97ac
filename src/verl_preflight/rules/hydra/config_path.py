"""The launch's config folders are not here (or known only at run time): not checked past its root config."""

from __future__ import annotations

from ...hydra_stage.problems import HydraKind
from .. import Rule


class ConfigPath(Rule):
    id = "config-path"
    severity = "info"
    stage = "hydra"
    problem = HydraKind.CONFIG_PATH  # the Hydra stage problem it reports
    summary = "the launch's config folders are not here, or known only at run time: not checked past the root config"
    why = (
        "A note, not a finding about the script: Hydra reads the root config from the entry point's folder or "
        '--config-path, and the groups from hydra.searchpath (docs/checks.md, "The target"). Where one of those '
        "folders is not on this machine (a package not installed, a checkout that is not here) or is known only "
        "at run time, the validator cannot compose the launch and says so instead of guessing."
    )
    ground_truth = (
        "hydra-core 1.3.8 hydra/_internal/utils.py:321-322 (--config-path replaces the entry point's "
        "config_path, relative to its file) and hydra/_internal/config_loader_impl.py:152-215 (hydra.searchpath)"
    )
    bad = "--config-path=/opt/other/configs"
    good = "--config-path=config"
