"""OmegaConf refused the override."""

from __future__ import annotations

from .. import Rule


class OverrideError(Rule):
    id = "override-error"
    severity = "error"
    stage = "hydra"
    summary = "OmegaConf refused the override"
    why = "Typed nodes (such as Hydra's own) validate values; the message is OmegaConf's."
    bad = "hydra.job.chdir=maybe"
    good = "hydra.job.chdir=True"
