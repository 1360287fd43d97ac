"""OmegaConf refused the override."""

from __future__ import annotations

from ...hydra_stage.problems import HydraKind
from .. import Rule


class OverrideError(Rule):
    id = "override-error"
    severity = "error"
    stage = "hydra"
    problem = HydraKind.OVERRIDE_ERROR  # the Hydra stage problem it reports
    summary = "OmegaConf refused the override"
    why = "Typed nodes (such as Hydra's own) validate values; the message is OmegaConf's."
    ground_truth = (
        "hydra-core 1.3.8 hydra/_internal/config_loader_impl.py:396-399 ('Error merging override', "
        "OmegaConf's validation)"
    )
    bad = "hydra.job.chdir=maybe"
    good = "hydra.job.chdir=True"
