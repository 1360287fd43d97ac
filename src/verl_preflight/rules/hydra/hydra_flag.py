"""A Hydra flag that changes what the launch does (--cfg, --multirun, --help, ...)."""

from __future__ import annotations

from ...hydra_stage.problems import HydraKind
from .. import Rule


class HydraFlag(Rule):
    id = "hydra-flag"
    severity = "warning"
    stage = "hydra"
    problem = HydraKind.FLAG  # the Hydra stage problem it reports
    summary = "a Hydra flag that changes what the launch does; the config is not checked past it"
    why = (
        "Flags such as --cfg job print the config instead of training, --multirun sweeps, --help exits: "
        "the launch does not train as written."
    )
    ground_truth = "hydra-core 1.3.8 hydra/_internal/utils.py get_args_parser"
    bad = "python3 -m verl.trainer.main_ppo --cfg job trainer.nnodes=2"
    good = "python3 -m verl.trainer.main_ppo trainer.nnodes=2"
