"""What the bash stage tells the rest of the pipeline, besides commands: typed notes.

The shell knows bash only. It does not decide severities or rule metadata: it
says what kind of thing happened and where, and the pipeline turns each note
into a finding of the rule with the same id (rules/bash/).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class NoteKind(StrEnum):
    SYNTAX = "bash-syntax"
    INCOMPLETE = "incomplete"  # the evaluator cannot follow the script here
    BUDGET = "budget"  # an evaluation budget ran out
    UNSET_VARIABLE = "unset-variable"  # set -u and a variable nobody assigns
    UNBOUND_VARIABLE = "unbound-variable"  # bash stops: unset under set -u
    PARAMETER_ERROR = "parameter-error"  # ${V:?msg} on an unset variable
    ARITHMETIC = "arithmetic"
    TEST_SYNTAX = "test-syntax"
    READONLY = "readonly"
    ESCAPED_BLANK = "escaped-blank"  # `\ ` at a line end: no continuation


@dataclass(frozen=True)
class Note:
    kind: NoteKind
    loc: object  # values.Loc or None
    message: str
    key: str | None = None
