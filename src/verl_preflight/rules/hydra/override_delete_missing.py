"""`~key` on a key that does not exist (or is null)."""

from __future__ import annotations

from ...hydra_stage.problems import HydraKind
from .. import Rule


class OverrideDeleteMissing(Rule):
    id = "override-delete-missing"
    severity = "error"
    stage = "hydra"
    problem = HydraKind.DELETE_MISSING  # the Hydra stage problem it reports
    summary = "`~key` on a key that does not exist (or is null)"
    why = "Hydra refuses to delete what is not there."
    ground_truth = (
        "hydra-core 1.3.8 hydra/_internal/config_loader_impl.py:348-359 "
        "(_apply_overrides_to_config: 'Could not delete from config')"
    )
    bad = "~trainer.no_such_key"
    good = "~trainer.val_before_train"
