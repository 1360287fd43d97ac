"""The evaluator cannot follow the script past this point."""

from __future__ import annotations

from ...shell import limits
from ...shell.notes import NoteKind
from .. import Rule


class Incomplete(Rule):
    id = "incomplete"
    severity = "info"
    stage = "bash"
    note = NoteKind.INCOMPLETE  # the shell note it reports
    summary = "the evaluator cannot follow the script past this point"
    why = (
        "A note about the tool, not the script: nothing is ever executed, so eval of text known only at run "
        "time, sourcing a path that is not known or not here (CANN's set_env.sh on a machine without Ascend, "
        '`eval "$(conda shell.bash hook)"`) and the like are not followed; what they would set stays unknown.'
        f" So is what goes past a bound of one operation (a value of more than {limits.MAX_VALUE_CHARS:,}"
        f" characters, an array or a command of more than {limits.MAX_ELEMENTS:,} elements, a pattern or"
        " regular expression match too costly): that value or test is unknown from there on."
    )
    bad = "source <(curl -s http://host/env.sh)"
    good = "source ./env.sh"
