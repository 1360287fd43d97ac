"""The two value types every stage shares: a source location and the typed unknown.

A value the validator cannot know statically (a variable from the environment, a
command's output, arithmetic on such a value) is an `Unknown`: it keeps the
script's own text for it when there is one (`${WORK_DIR}`, `$(date +%s)`) and
a label that says what it is. It is never replaced by a made-up stand-in: every
stage either handles it as unknown or shows what the script wrote.
"""

from __future__ import annotations

import re
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
        words = condition_words(self.subject, self.relation == "true")
        if words is not None:
            return ", ".join(text for _name, text in words)
        subject = self.subject if self.subject.startswith("[") else f"[{self.subject}]"
        return f"{subject} is {self.relation}"

    def names(self) -> set:
        """The variables this assumption speaks of (a condition's, where its words are known)."""
        if self.relation in ("true", "false"):
            words = condition_words(self.subject, self.relation == "true")
            return {name for name, _text in words or () if name}
        return {self.subject}

    def as_json(self) -> dict:
        return {"subject": self.subject, "relation": self.relation, "values": list(self.values)}


_OPERAND = re.compile(r'^"?\$\{?(?P<v>[A-Za-z_]\w*)(?::?-(?P<v_default>[^}]*))?\}?"?$')
_UNARY = re.compile(r"^(?P<neg>!\s+)?-(?P<op>[zndfe])\s+(?P<arg>\S+)$")
_BINARY = re.compile(r"^(?P<left>\S+)\s+(?P<op>==?|!=|-eq|-ne)\s+(?P<right>\S+)$")
_PATH_WORDS = {"d": ("{0} is a folder", "no folder {0}"), "f": ("{0} is a file", "no file {0}"),
               "e": ("{0} exists", "no {0}")}


def condition_words(subject: str, truth: bool) -> list | None:
    """A condition the evaluator assumed, in the words of the script's switches: [(variable or
    None, text)], as `[ -z "$X" ]` true is `X empty`, `[ "${DEVICE:-gpu}" = npu ]` false is
    `DEVICE!=npu`, a command that is true `nvidia-smi succeeds`; `A && B` true (`A || B`
    false) each part. None for a form it does not put in words (shown as written)."""
    text = subject.strip()
    if text.endswith("..."):
        return None
    if text.startswith("! ") and not text.startswith("! -"):
        return condition_words(text[2:], not truth)
    joint = " && " if truth else " || "
    if text.startswith("[[ ") and text.endswith(" ]]") and text.count("]]") == 1 and joint in text:
        return condition_words(joint.join(f"[ {part} ]" for part in text[3:-3].split(joint)), truth)
    if joint in text and text.count("[") == text.count("]"):
        parts = [condition_words(part, truth) for part in text.split(joint)]
        return None if any(p is None for p in parts) else [w for p in parts for w in p]
    test = re.fullmatch(r"\[\[?\s+(.*?)\s+\]\]?", text)
    if test is None:
        command = re.sub(r"\s*[0-9&]?>\s*/dev/null|\s*2>&1", "", text)
        if text.startswith("[") or any(c in command for c in "|&;`<>"):
            return None
        return [(None, f"`{command}` {'succeeds' if truth else 'fails'}")]
    body = test.group(1)
    unary = _UNARY.match(body)
    if unary is not None:
        truth = truth != bool(unary.group("neg"))
        op, arg = unary.group("op"), unary.group("arg")
        var = _OPERAND.match(arg)
        if op in "zn":
            if var is None:
                return None
            empty = truth == (op == "z")
            return [(var.group("v"), f"{var.group('v')} {'empty' if empty else 'set'}")]
        yes, no = _PATH_WORDS[op]
        return [(None, (yes if truth else no).format(arg.strip('"')))]
    binary = _BINARY.match(body)
    if binary is None:
        return None
    left, right = _OPERAND.match(binary.group("left")), binary.group("right").strip("\"'")
    if left is None or _OPERAND.match(binary.group("right")) is not None:
        return None
    name, default = left.group("v"), left.group("v_default")
    equal = truth == (binary.group("op") in ("=", "==", "-eq"))
    if equal:
        return [(name, f"{name}={right}" + (f" or unset" if default == right else ""))]
    return [(name, f"{name}!={right}")]


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
        known = {k for k, v in self.env if v is not None}  # a condition on a set switch adds nothing
        parts += dict.fromkeys(str(a) for a in self.assumptions if not (a.names() and a.names() <= known))
        return ", ".join(parts) if parts else "default"

    def as_json(self) -> dict:
        return {"env": dict(self.env), "assumptions": [a.as_json() for a in self.assumptions]}

    def sort_key(self):
        return (
            tuple((k, "" if v is None else v) for k, v in self.env),
            tuple((a.subject, a.relation, a.values) for a in self.assumptions),
        )
