"""The two value types every stage shares: a source location and the typed unknown.

A value the validator cannot know statically (a variable from the environment, a
command's output, arithmetic on such a value) is an `Unknown`: it keeps the
script's own text for it when there is one (`${WORK_DIR}`, `$(date +%s)`) and
a label that says what it is. It is never replaced by a made-up stand-in: every
stage either handles it as unknown or shows what the script wrote.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Loc:
    path: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}"


@dataclass(frozen=True, slots=True)
class Unknown:
    """A piece of text the evaluator cannot know.

    `source` is the script's exact text for it (None when the script has no such
    text, e.g. input read at run time); `label` says what it is."""

    source: str | None
    label: str

    def __str__(self) -> str:
        return self.source if self.source is not None else f"<{self.label}>"


def shown_path(path: str) -> str:
    """A path as the user sees it: relative to the working directory when under it, else as it is."""
    import os

    rel = os.path.relpath(path)
    return rel if not rel.startswith("..") else path


def is_unknown(value) -> bool:
    return isinstance(value, Unknown)


class _Other:
    """A profile value: the switch is set, to none of the literals the script compares it with.

    Not a string, so it can never be taken for what a script or user wrote; a
    profile shows it as an Assumption (`DEVICE not in {gpu, npu}`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "OTHER"


OTHER = _Other()


@dataclass(frozen=True, slots=True)
class Assumption:
    """What the evaluator assumed on one path about a value it could not know.

    `subject` is a variable name or, for a condition on something else, the
    condition's text; `relation` is "=", "not in", "true" or "false"."""

    subject: str
    relation: str
    values: tuple = ()

    def __str__(self) -> str:
        if self.relation == "=":
            return f"{self.subject}={self.values[0]}"
        if self.relation == "not in":
            if len(self.values) == 1:
                return f"{self.subject}!={self.values[0]}"
            return f"{self.subject} not in {{{', '.join(self.values)}}}"
        if self.relation == "other":
            return f"{self.subject}: none of the tested values"
        if self.relation == "set":
            return f"{self.subject} set"
        if self.relation == "given":  # what a correct use of the script gives: its arguments, a variable
            if not self.values:
                return f"{self.subject} set"
            n = self.values[0]
            return f"{n} positional argument{'s' if n != 1 else ''}"
        subject = self.subject if self.subject.startswith("[") else f"[{self.subject}]"
        return f"{subject} is {self.relation}"

    def as_json(self) -> dict:
        return {"subject": self.subject, "relation": self.relation, "values": list(self.values)}


def shared_assumptions(first: tuple, other: tuple) -> tuple:
    """The assumptions of `first` that `other` holds too, in `first`'s order: what two paths (or
    outcomes) that go on alike are labelled with once they are one."""
    held = set(other)
    return tuple(a for a in first if a in held)


@dataclass(frozen=True, slots=True)
class Profile:
    """One environment a script was evaluated in: the switches' values (None: unset)
    and the assumptions the evaluator made on the way."""

    env: tuple = ()  # ((name, value or None), ...) in the switches' order
    assumptions: tuple = ()  # (Assumption, ...)
    label: tuple | None = field(default=None, compare=False)  # the switches that tell it apart (None: env)

    @staticmethod
    def of(env: dict, assumptions=(), label: dict | None = None) -> Profile:
        shown = None if label is None else tuple((k, v) for k, v in label.items() if v is not OTHER)
        return Profile(tuple((k, v) for k, v in env.items() if v is not OTHER), tuple(assumptions), shown)

    def value(self, name: str) -> str | None:
        """The switch's value in this profile: set by the profile or assumed equal to a literal."""
        for k, v in self.env:
            if k == name:
                return v
        for a in self.assumptions:
            if a.subject == name and a.relation == "=":
                return a.values[0]
        return None

    def describe(self) -> str:
        """The profile as reports name it: the switches that tell it apart, then its assumptions."""
        shown = self.env if self.label is None else self.label
        parts = [f"{k}={v}" if v is not None else f"{k} unset" for k, v in shown]
        parts += dict.fromkeys(str(a) for a in self.assumptions)
        return " ".join(parts) if parts else "default"

    def as_json(self) -> dict:
        return {"env": dict(self.env), "assumptions": [a.as_json() for a in self.assumptions]}

    def sort_key(self):
        return (
            tuple((k, "" if v is None else v) for k, v in self.env),
            tuple((a.subject, a.relation, a.values) for a in self.assumptions),
        )
