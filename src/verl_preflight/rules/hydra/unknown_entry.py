"""A verl module that is not a Hydra entry point here."""

from __future__ import annotations

from ...hydra_stage.problems import HydraKind
from .. import Rule


class UnknownEntry(Rule):
    id = "unknown-entry"
    severity = "warning"
    stage = "hydra"
    problem = HydraKind.UNKNOWN_ENTRY  # the Hydra stage problem it reports
    summary = "a verl module that is not a Hydra entry point here"
    why = (
        "The module exists but its arguments cannot be checked against a config: it has no @hydra.main (it "
        "parses its own options), or its source is not next to the config tree given (--verl-config), so the "
        "validator cannot tell which root config it composes. Hydra option checks (hydra-argument) are skipped "
        "with it. A module that does not exist at all is unknown-module, an error."
    )
    bad = "python3 -m verl.trainer.ppo.ray_trainer"
    good = "python3 -m verl.trainer.main_ppo"
