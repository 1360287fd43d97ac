"""An option main_ppo's Hydra command line does not accept."""

from __future__ import annotations

from ...hydra_stage.problems import HydraKind
from .. import Rule


class HydraArgument(Rule):
    id = "hydra-argument"
    severity = "error"
    stage = "hydra"
    problem = HydraKind.ARGUMENT  # the Hydra stage problem it reports
    summary = "an option main_ppo's Hydra command line does not accept"
    why = (
        "Hydra's argparse refuses unknown options (`unrecognized arguments`) and the launch stops at once. Only "
        "Hydra entry points are checked: a verl module without @hydra.main (e.g. verl.model_merger) parses its "
        "own options."
    )
    ground_truth = "hydra-core 1.3.8 hydra/_internal/utils.py:501 get_args_parser; hydra/main.py:86 parse_args"
    bad = "python3 -m verl.trainer.main_ppo --nnodes 2"
    good = "python3 -m verl.trainer.main_ppo trainer.nnodes=2"
