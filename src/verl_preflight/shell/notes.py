"""What the bash stage tells the rest of the pipeline, besides commands: typed notes.

The shell knows bash only. It does not decide severities or rule metadata: it
says what kind of thing happened and where, and the pipeline turns each note
into a finding of the rule that owns its kind (each rule of rules/bash/ names
the kind it reports, `note = NoteKind.X`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, auto


class NoteKind(Enum):
    SYNTAX = auto()
    INCOMPLETE = auto()  # the evaluator cannot follow the script here
    BUDGET = auto()  # an evaluation budget ran out
    UNSET_VARIABLE = auto()  # set -u and a variable nobody assigns
    UNBOUND_VARIABLE = auto()  # bash stops: unset under set -u
    PARAMETER_ERROR = auto()  # ${V:?msg} on an unset variable
    ARITHMETIC = auto()
    TEST_SYNTAX = auto()
    READONLY = auto()
    ESCAPED_BLANK = auto()  # `\ ` at a line end: no continuation


@dataclass(frozen=True)
class Note:
    kind: NoteKind
    loc: object  # values.Loc or None
    message: str
    key: str | None = None
