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


ABORT = "abort"  # State.flow after an arithmetic error in an expansion: the top-level command is dropped


class ArithFailure(ShellExit):
    """An arithmetic error bash reports. In an expansion (bash 5.2, not in POSIX mode) bash
    prints it, drops the rest of the top-level command it is in (the whole `if`, loop or
    list, a function's caller's line; in a subshell or command substitution, that subshell,
    which exits 1) and goes on with the next one, $? 1: the evaluator's flow ABORT, ended
    where a file's (or eval's text's) top level reads on (flow.exec_seq). An arithmetic command
    (`(( ))`, `let`, `for ((;;))`, `shift N`) catches it and fails with status 1."""

    def __init__(self, error: ArithError, loc):
        self.error = str(error)
        message = f"arithmetic error: {error}: bash drops the rest of this command (the script goes on, $? 1)"
        super().__init__(1, Note(NoteKind.ARITHMETIC, loc, message))
