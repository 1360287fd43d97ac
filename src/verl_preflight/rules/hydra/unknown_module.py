"""`python3 -m verl.<module>` names a module verl does not have: Python stops at once."""

from __future__ import annotations

from ...hydra_stage.problems import HydraKind
from .. import Rule


class UnknownModule(Rule):
    id = "unknown-module"
    severity = "error"
    stage = "hydra"
    problem = HydraKind.UNKNOWN_MODULE  # the Hydra stage problem it reports
    summary = "python3 -m names a verl module that does not exist"
    why = (
        "Python cannot find the module and exits before verl starts (No module named ...); "
        "nothing of the launch runs. A real module that is not a Hydra entry point is unknown-entry."
    )
    ground_truth = "CPython runpy._get_module_details: 'No module named ...' for a module it cannot find"
    bad = "python3 -m verl.trainer.mainppo trainer.total_epochs=1"
    good = "python3 -m verl.trainer.main_ppo trainer.total_epochs=1"
