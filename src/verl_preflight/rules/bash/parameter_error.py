"""`${VAR:?msg}` on an unset variable: the script needs VAR (bash stops here without it)."""

from __future__ import annotations

from ...shell.notes import NoteKind
from .. import Rule


class ParameterError(Rule):
    id = "parameter-error"
    severity = "info"
    stage = "bash"
    note = NoteKind.PARAMETER_ERROR  # the shell note it reports
    summary = "`${VAR:?msg}` on a variable a profile leaves unset: the script needs it (a note)"
    why = (
        "`${VAR:?msg}` is the script's own guard: a run without VAR stops there with msg, as its author meant. "
        "A note, not a fault of the script; the launch after it is checked as a correct use runs it, with VAR "
        "set to a value known only at run time (the profile says `VAR set`)."
    )
    bad = "MODEL=${MODEL_PATH:?set MODEL_PATH}"
    good = "MODEL=${MODEL_PATH:-Qwen/Qwen3-8B}"
