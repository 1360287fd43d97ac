"""Every bound of the bash evaluator, in one place, and the meter that keeps them.

A script is never executed, so nothing a script asks for may cost more than a fixed, counted
amount (never the clock: the same script ends at the same place on any machine). There are
two kinds of bound:

- a script's budget (state.Budget, its defaults here): counted steps (one a command), and
  WORK: the characters and elements that its operations build, copy or match, all of its
  profiles together. Past either, every path still running ends (the `budget` note).
- bounds of one operation: a value longer than MAX_VALUE_CHARS, in more than MAX_PIECES
  parts, a list (an array, the words of a command) of more than MAX_ELEMENTS, a pattern
  whose building or match would cost more than MAX_MATCH_COST, a regular expression longer
  than MAX_REGEX_CHARS or larger than MAX_REGEX_STATES, or a match of one past
  MAX_REGEX_STEPS. Past one, what the operation
  gives is unknown (a test on it can go either way), the path goes on, and it is reported
  as not followed to its end (an `incomplete` note that names the bound).

Arithmetic needs no bound: it wraps at 64 bits as bash's does (arith.py), so no number grows.

The meter is the evaluation's: `metering(allowance)` makes it current for the evaluation of
one profile; the few functions that build values (words.join_pieces, the pattern matchers)
read it with `meter()`. Outside an evaluation it counts nothing and notes nothing.
"""

from __future__ import annotations

from collections import OrderedDict
from contextlib import contextmanager
from contextvars import ContextVar

from ..core.values import Unknown

# a script's budget (state.Budget's defaults)
STEPS = 200_000  # commands run, all profiles together
SECONDS = 60.0  # a backstop only (state.Allowance): a script past it is not reported at all
STATES = 64  # paths followed at once
SOURCE_DEPTH = 8
CALL_DEPTH = 64
LOOP_ITERATIONS = 10_000
NESTING = 300
WORK = 256 << 20  # characters (and elements) built, copied or matched, all profiles together

# one operation
MAX_VALUE_CHARS = 1 << 20  # the known text of one value: a word, a variable, an element
MAX_PIECES = 4096  # the known and unknown parts of one value
MAX_ELEMENTS = 1 << 14  # the elements of one array, the words of one command
MAX_MATCH_COST = 1 << 24  # one glob match (`${X//pat/}`, case, [[ == ]]): text length x widest segment
MAX_REGEX_STATES = 4096  # the size of one [[ =~ ]] regular expression, its {m,n} written out
MAX_REGEX_CHARS = 8 * MAX_REGEX_STATES  # its text (refused before it is read: reading costs more than matching)
MAX_REGEX_STEPS = 1 << 20  # one [[ =~ ]] match: (position, state) pairs visited

# what WORK counts, in characters: a character joined or matched (in C) is one; an element of a
# list made or copied, a step of the regular expression automaton, a character of a pattern read
# or compiled by Python code cost more (about what they take, 7 ns a unit)
ELEMENT_WORK = 512
REGEX_STEP_WORK = 64
PATTERN_WORK = 256  # a glob character read from unquoted text, or compiled into a regular expression
REGEX_CHAR_WORK = 512  # a character of a [[ =~ ]] regular expression read and compiled (ere.py)

# a pattern (glob, regular expression) is built once in an evaluation, and its work counted once,
# when it is kept: the last KEPT_PATTERNS of them are. A glob longer than BUILT_ONCE characters is
# never kept (each costs its length); a regular expression always is (MAX_REGEX_CHARS and
# MAX_REGEX_STATES bound it)
BUILT_ONCE = 4096
KEPT_PATTERNS = 256


class OverBound(Exception):
    """An operation would go past one of the bounds above; `why` names it (for the note)."""

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


def value_too_long(size: int) -> str:
    return f"a value of {size:,} characters is longer than the tool's bound of {MAX_VALUE_CHARS:,}"


def too_many_pieces(count: int) -> str:
    return f"a value made of {count:,} parts is past the tool's bound of {MAX_PIECES:,}"


def too_many_elements(what: str, count: int, unit: str = "elements") -> str:
    return f"{what} of {count:,} {unit} is past the tool's bound of {MAX_ELEMENTS:,}"


def within_elements(what: str, count: int, unit: str = "elements") -> None:
    """The one check of MAX_ELEMENTS: a list (an array, the words of a command, the items of a
    loop) of `count` raises OverBound past it. Where the list becomes a value (an array, a loop's
    items, a substitution's output), that value is unknown and the path goes on."""
    if count > MAX_ELEMENTS:
        raise OverBound(too_many_elements(what, count, unit))


PAST_BOUND = Unknown(None, "a value past a bound of the tool")  # what such a value becomes (the note says which)


def is_past_bound(piece) -> bool:
    """The unknown piece a value past a bound became (an array that became it has unknown elements)."""
    return piece == PAST_BOUND


_NONE = object()


class Meter:
    """What the operations of one evaluation cost (charged to the script's allowance) and the
    bounds they went past (`events`: (why, Loc or None), for the interpreter to note on the
    path it runs)."""

    def __init__(self, allowance=None):
        self.allowance = allowance
        self.events: list[tuple[str, object]] = []
        self._built: OrderedDict = OrderedDict()  # key -> a short pattern built in this evaluation

    def built(self, key, keep: bool, build):
        """What `build()` gives (a compiled pattern, or the failure it is; it charges its own
        work): when `keep`, once in this evaluation (the same work counted on any machine, in
        any process) and kept; else built each time."""
        if not keep:
            return build()
        found = self._built.get(key, _NONE)
        if found is _NONE:
            found = self._built[key] = build()
            if len(self._built) > KEPT_PATTERNS:
                self._built.popitem(last=False)
        else:
            self._built.move_to_end(key)
        return found

    def charge(self, units: int) -> None:
        if self.allowance is not None and units:
            self.allowance.charge(units)

    def over(self, why: str, loc=None) -> Unknown:
        """An operation went past a bound: noted, and the unknown piece it gives."""
        if self.allowance is not None:
            self.events.append((why, loc))
        return PAST_BOUND

    def set_aside(self) -> list[tuple[str, object]]:
        """The events pending now (an enclosing node's), put aside while a node runs."""
        events, self.events = self.events, []
        return events

    def restore(self, outer: list[tuple[str, object]]) -> list[tuple[str, object]]:
        """A node ended: the events it raised (returned, for its paths), and the pending ones of
        the enclosing node back in place."""
        own, self.events = self.events, outer
        return own


_IDLE = Meter()
_CURRENT: ContextVar[Meter] = ContextVar("verl_preflight_shell_meter", default=_IDLE)


def meter() -> Meter:
    return _CURRENT.get()


@contextmanager
def metering(allowance):
    """While one evaluation runs: its meter is the current one."""
    token = _CURRENT.set(Meter(allowance))
    try:
        yield _CURRENT.get()
    finally:
        _CURRENT.reset(token)
