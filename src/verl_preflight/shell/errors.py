"""How the abstract interpreter stops a path: bash would exit here."""

from __future__ import annotations

from .arith import ArithError
from .notes import Note, NoteKind


class ShellExit(Exception):
    """The shell stops here (bash would exit): `${V:?}`, `set -u`, a fatal expansion error."""

    def __init__(self, code: int, note=None):
        super().__init__(code)
        self.code = code
        self.note = note


class ArithFailure(ShellExit):
    """An arithmetic error bash reports. In an expansion the script stops (the default:
    it is a ShellExit); an arithmetic command (`(( ))`, `let`, `for ((;;))`, `shift N`)
    catches it and fails with status 1."""

    def __init__(self, error: ArithError, loc):
        self.error = str(error)
        super().__init__(1, Note(NoteKind.ARITHMETIC, loc, f"bash stops here: arithmetic error: {error}"))
