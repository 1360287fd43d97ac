"""In this profile bash stops here: the variable is unset under `set -u`."""

from __future__ import annotations

from .. import Rule


class UnboundVariable(Rule):
    id = "unbound-variable"
    severity = "warning"
    stage = "bash"
    summary = "in this profile bash stops here: the variable is unset under `set -u`"
    why = "The profile leaves it unset and `set -u` makes bash exit."
    bad = 'set -u\n[ -n "$CKPT" ]'
    good = 'set -u\n[ -n "${CKPT:-}" ]'
