"""An argument whose text is not known statically."""

from __future__ import annotations

from ...hydra_stage.problems import HydraKind
from .. import Rule


class UnknownArgument(Rule):
    id = "unknown-argument"
    severity = "info"
    stage = "hydra"
    problem = HydraKind.UNKNOWN_ARGUMENT  # the Hydra stage problem it reports
    summary = "an argument whose text is not known statically"
    why = "It comes from the environment or a command substitution; it is not checked."
    bad = "python3 -m verl.trainer.main_ppo $EXTRA_ARGS"
    good = 'python3 -m verl.trainer.main_ppo "$@"'
