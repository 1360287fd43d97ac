"""In this profile bash stops here: the variable is unset under `set -u`."""

from __future__ import annotations

from ...shell.notes import NoteKind
from .. import Rule


class UnboundVariable(Rule):
    id = "unbound-variable"
    severity = "warning"
    stage = "bash"
    note = NoteKind.UNBOUND_VARIABLE  # the shell note it reports
    summary = "in this profile bash stops here: the variable is unset under `set -u`"
    why = (
        "The profile leaves it unset and `set -u` makes bash exit. A positional parameter ($1, ...) is the "
        "caller's input, not a mistake of the script: that one is a note (info) saying the script needs it, "
        "and the launch after it is not checked in that profile."
    )
    bad = 'set -u\n[ -n "$CKPT" ]'
    good = 'set -u\n[ -n "${CKPT:-}" ]'

    @classmethod
    def from_note(cls, note):
        if note.key and note.key.isdigit():
            message = f"the script needs argument {note.key} (bash stops here without it under `set -u`)"
            return cls.emit(note.loc, message, note.key, at_most="info")
        return cls.emit(note.loc, note.message, note.key)
