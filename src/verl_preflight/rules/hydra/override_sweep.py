"""A comma list in a value: Hydra reads it as a sweep and refuses it in a run."""

from __future__ import annotations

from ...hydra_stage.problems import HydraKind
from .. import Rule


class OverrideSweep(Rule):
    id = "override-sweep"
    severity = "error"
    stage = "hydra"
    problem = HydraKind.SWEEP  # the Hydra stage problem it reports
    summary = "a comma list in a value: Hydra reads it as a sweep and refuses it in a run"
    why = "Without --multirun Hydra stops with 'Ambiguous value'."
    ground_truth = (
        "hydra-core 1.3.8 hydra/_internal/config_loader_impl.py:70-76 ('Ambiguous value for "
        "argument' without --multirun)"
    )
    bad = "trainer.logger=console,wandb"
    good = "trainer.logger='[console,wandb]'"
