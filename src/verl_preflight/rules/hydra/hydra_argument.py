"""An option main_ppo's Hydra command line does not accept."""

from __future__ import annotations

from .. import Rule


class HydraArgument(Rule):
    id = "hydra-argument"
    severity = "error"
    stage = "hydra"
    summary = "an option main_ppo's Hydra command line does not accept"
    why = "Hydra's argparse refuses unknown options (`unrecognized arguments`) and the launch stops at once."
    ground_truth = "hydra-core 1.3.8 hydra/_internal/utils.py get_args_parser; hydra/main.py parse_args"
    bad = "python3 -m verl.trainer.main_ppo --nnodes 2"
    good = "python3 -m verl.trainer.main_ppo trainer.nnodes=2"
