"""--config-path points away from verl's config tree; not checked."""

from __future__ import annotations

from .. import Rule


class ConfigPath(Rule):
    id = "config-path"
    severity = "warning"
    stage = "hydra"
    summary = "--config-path points away from verl's config tree; not checked"
    why = "The validator checks against verl's tree only; a --config-path known only at run time is not checked either."
    bad = "--config-path=/my/configs"
    good = "--config-path=config"
