"""A comma list in a value: Hydra reads it as a sweep and refuses it in a run."""

from __future__ import annotations

from .. import Rule


class OverrideSweep(Rule):
    id = "override-sweep"
    severity = "error"
    stage = "hydra"
    summary = "a comma list in a value: Hydra reads it as a sweep and refuses it in a run"
    why = "Without --multirun Hydra stops with 'Ambiguous value'."
    ground_truth = (
        "hydra-core 1.3.8 hydra/_internal/config_loader_impl.py:70-76 ('Ambiguous value for "
        "argument' without --multirun)"
    )
    bad = "trainer.logger=console,wandb"
    good = "trainer.logger='[console,wandb]'"
