"""The evaluator cannot follow the script past this point."""

from __future__ import annotations

from .. import Rule


class Incomplete(Rule):
    id = "incomplete"
    severity = "warning"
    stage = "bash"
    summary = "the evaluator cannot follow the script past this point"
    why = "Nothing is ever executed: eval, sourcing unknown paths and the like are not followed."
    bad = "source <(curl -s http://host/env.sh)"
    good = "source ./env.sh"
