"""An argument that Hydra's override grammar rejects."""

from __future__ import annotations

from ...hydra_stage.problems import HydraKind
from .. import Rule


class OverrideSyntax(Rule):
    id = "override-syntax"
    severity = "error"
    stage = "hydra"
    problem = HydraKind.SYNTAX  # the Hydra stage problem it reports
    summary = "an argument that Hydra's override grammar rejects"
    why = "main_ppo parses every override before it composes; one bad one stops the job at start."
    ground_truth = (
        "hydra-core 1.3.8 hydra/core/override_parser/overrides_parser.py:78-99 (parse_overrides "
        "raises OverrideParseException)"
    )
    bad = "trainer.logger=[console,wandb"
    good = "trainer.logger='[console,wandb]'"
