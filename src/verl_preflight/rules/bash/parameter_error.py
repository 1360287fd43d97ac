"""`${VAR:?msg}` on an unset variable: bash stops here."""

from __future__ import annotations

from .. import Rule


class ParameterError(Rule):
    id = "parameter-error"
    severity = "warning"
    stage = "bash"
    summary = "`${VAR:?msg}` on an unset variable: bash stops here"
    why = "The profile leaves the variable unset."
    bad = "MODEL=${MODEL_PATH:?set MODEL_PATH}"
    good = "MODEL=${MODEL_PATH:-Qwen/Qwen3-8B}"
