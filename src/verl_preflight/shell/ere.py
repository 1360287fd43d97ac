"""`[[ TEXT =~ RE ]]`: POSIX extended regular expressions, matched in time linear in the text.

bash hands the expression to the C library's regcomp(REG_EXTENDED); this reads the same
syntax (glibc's, with its GNU escapes `\\w \\W \\s \\S \\b \\B \\< \\> \\` \\'`) and matches it
by simulating the automaton (every possible place in the expression at once, one position of
the text after the other), never by backtracking: `^(a|a)*b$` on forty `a`s costs a few
hundred steps, not 2**40. Only whether it matches is computed (bash's BASH_REMATCH is not).

A syntax error gives False (bash's status 2: the test fails). A construct this does not read
(a back-reference) gives None: unknown, the test can go either way. An expression longer than
MAX_REGEX_CHARS (refused before it is read) or past MAX_REGEX_STATES, or a match past
MAX_REGEX_STEPS raises OverBound (limits.py). Reading an expression costs REGEX_CHAR_WORK a
character, counted once in an evaluation (limits.Meter.built), its failure too.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from .limits import (
    MAX_REGEX_CHARS,
    MAX_REGEX_STATES,
    MAX_REGEX_STEPS,
    REGEX_CHAR_WORK,
    REGEX_STEP_WORK,
    OverBound,
    meter,
)

_DUP_MAX = 0x7FFF  # glibc's RE_DUP_MAX: the largest count of {m,n}
_GROUPS = 200  # groups nested deeper than this are past a bound (the parser recurses)


class RegexSyntax(Exception):
    """regcomp would refuse it."""


class Unreadable(Exception):
    """A construct not read here (a back-reference)."""


# ---- the syntax tree ------------------------------------------------------
@dataclass(frozen=True)
class _Chars:
    """One character: `test(ch)`."""

    negate: bool = False
    chars: frozenset = frozenset()
    ranges: tuple = ()
    classes: tuple = ()  # POSIX class names
    any: bool = False

    def test(self, ch: str) -> bool:
        if self.any:
            return True
        hit = (
            ch in self.chars or any(a <= ch <= b for a, b in self.ranges) or any(_CLASSES[c](ch) for c in self.classes)
        )
        return hit != self.negate


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


_CLASSES = {
    "alpha": str.isalpha,
    "digit": lambda c: "0" <= c <= "9",
    "alnum": str.isalnum,
    "upper": str.isupper,
    "lower": str.islower,
    "space": str.isspace,
    "blank": lambda c: c in " \t",
    "punct": lambda c: c.isprintable() and not c.isalnum() and not c.isspace() and unicodedata.category(c)[0] in "PS",
    "print": lambda c: c.isprintable(),
    "graph": lambda c: c.isprintable() and not c.isspace(),
    "cntrl": lambda c: unicodedata.category(c) == "Cc",
    "xdigit": lambda c: c in "0123456789abcdefABCDEF",
    "word": _is_word,
}

_ANY = _Chars(any=True)


class _Parser:
    """ERE text -> tree: ("alt", [..]), ("cat", [..]), ("rep", node, m, n|None), ("chars", _Chars),
    ("assert", kind), ("empty",)."""

    def __init__(self, text: str):
        self.text = text
        self.i = 0
        self.depth = 0  # groups open

    def parse(self):
        return self.alternation()

    def peek(self) -> str | None:
        return self.text[self.i] if self.i < len(self.text) else None

    def alternation(self):
        branches = [self.branch()]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.branch())
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def branch(self):
        items = []
        while self.peek() is not None and self.peek() != "|" and (self.peek() != ")" or not self.depth):
            items.append(self.piece(not items))
        if not items:
            return ("empty",)
        return items[0] if len(items) == 1 else ("cat", items)

    def piece(self, first: bool):
        if self.peek() in "*+?{" and first:  # glibc: a repetition of nothing
            raise RegexSyntax("repetition of nothing")
        atom = self.atom()
        while True:
            ch = self.peek()
            if ch == "*":
                self.i += 1
                atom = ("rep", atom, 0, None)
            elif ch == "+":
                self.i += 1
                atom = ("rep", atom, 1, None)
            elif ch == "?":
                self.i += 1
                atom = ("rep", atom, 0, 1)
            elif ch == "{":
                atom = ("rep", atom, *self.interval())
            else:
                break
            if atom[1][0] == "assert":
                raise RegexSyntax("repetition of an anchor")
        return atom

    def interval(self):
        """`{m}`, `{m,}`, `{m,n}`, `{,n}` after an atom (glibc refuses any other `{`)."""
        j = self.text.find("}", self.i)
        if j < 0:
            raise RegexSyntax("unmatched {")
        body = self.text[self.i + 1 : j]
        low, comma, high = body.partition(",")
        if not (low.isdigit() or (comma and not low)) or (high and not high.isdigit()):
            raise RegexSyntax("invalid interval")
        m = int(low) if low else 0
        n = (int(high) if high else None) if comma else m
        if m > _DUP_MAX or (n is not None and (n > _DUP_MAX or n < m)):
            raise RegexSyntax("invalid repetition count")
        self.i = j + 1
        return m, n

    def atom(self):
        ch = self.peek()
        self.i += 1
        if ch == "(":
            if self.depth >= _GROUPS:
                raise OverBound(f"a regular expression with groups nested deeper than the tool's bound of {_GROUPS}")
            self.depth += 1
            inner = self.alternation()
            self.depth -= 1
            if self.peek() != ")":
                raise RegexSyntax("unmatched (")
            self.i += 1
            return inner
        if ch == ".":
            return ("chars", _ANY)
        if ch == "^":
            return ("assert", "^")
        if ch == "$":
            return ("assert", "$")
        if ch == "[":
            return ("chars", self.bracket())
        if ch == "\\":
            return self.escape()
        return ("chars", _Chars(chars=frozenset(ch)))

    def escape(self):
        ch = self.peek()
        if ch is None:
            raise RegexSyntax("trailing backslash")
        self.i += 1
        if ch.isdigit() and ch != "0":
            raise Unreadable("a back-reference")
        if ch in "wW":
            return ("chars", _Chars(negate=ch == "W", classes=("word",)))
        if ch in "sS":
            return ("chars", _Chars(negate=ch == "S", classes=("space",)))
        if ch in "bB<>`'":
            return ("assert", ch)
        return ("chars", _Chars(chars=frozenset(ch)))

    def bracket(self) -> _Chars:
        text = self.text
        negate = self.peek() == "^"
        if negate:
            self.i += 1
        chars, ranges, classes = set(), [], []
        first = True
        while True:
            if self.i >= len(text):
                raise RegexSyntax("unmatched [")
            ch = text[self.i]
            if ch == "]" and not first:
                self.i += 1
                break
            first = False
            if ch == "[" and self.i + 1 < len(text) and text[self.i + 1] in ":=.":
                kind = text[self.i + 1]
                end = text.find(kind + "]", self.i + 2)
                if end < 0:
                    raise RegexSyntax("unmatched [")
                name = text[self.i + 2 : end]
                self.i = end + 2
                if kind == ":":
                    if name not in _CLASSES or name == "word":
                        raise RegexSyntax("invalid character class")
                    classes.append(name)
                    self._no_range_after()
                    continue
                if len(name) != 1:
                    raise Unreadable("a collating element")
                lo = name
            else:
                lo = ch
                self.i += 1
            if self.peek() == "-" and self.i + 1 < len(text) and text[self.i + 1] != "]":
                hi = text[self.i + 1]
                self.i += 2
                if hi == "[" and self.i < len(text) and text[self.i] in ".=":
                    raise Unreadable("a collating element")
                if not (lo.isascii() and hi.isascii()):  # what it spans depends on the machine's locale
                    raise Unreadable("a range of non-ASCII characters")
                if hi < lo:
                    raise RegexSyntax("invalid range end")
                ranges.append((lo, hi))
                self._no_range_after()
            else:
                chars.add(lo)
        return _Chars(negate=negate, chars=frozenset(chars), ranges=tuple(ranges), classes=tuple(classes))

    def _no_range_after(self) -> None:
        """A range or a class cannot start a range (`[a-c-e]`, `[[:alpha:]-z]`)."""
        if self.peek() == "-" and self.i + 1 < len(self.text) and self.text[self.i + 1] != "]":
            raise RegexSyntax("invalid range end")


# ---- the automaton: instructions of a Pike machine ------------------------
_CHAR, _SPLIT, _JUMP, _ASSERT, _MATCH = range(5)


class _Program:
    def __init__(self):
        self.code: list[list] = []

    def emit(self, *ins) -> int:
        self.code.append(list(ins))
        if len(self.code) > MAX_REGEX_STATES:
            raise OverBound(f"a regular expression larger than the tool's bound of {MAX_REGEX_STATES:,} states")
        return len(self.code) - 1

    def compile(self, node) -> None:
        kind = node[0]
        if kind == "empty":
            return
        if kind == "chars":
            self.emit(_CHAR, node[1])
        elif kind == "assert":
            self.emit(_ASSERT, node[1])
        elif kind == "cat":
            for item in node[1]:
                self.compile(item)
        elif kind == "alt":
            jumps = []
            branches = node[1]
            for k, branch in enumerate(branches):
                if k < len(branches) - 1:
                    split = self.emit(_SPLIT, 0, 0)
                    self.code[split][1] = len(self.code)
                    self.compile(branch)
                    jumps.append(self.emit(_JUMP, 0))
                    self.code[split][2] = len(self.code)
                else:
                    self.compile(branch)
            for j in jumps:
                self.code[j][1] = len(self.code)
        elif kind == "rep":
            _, inner, low, high = node
            for _ in range(low):
                self.compile(inner)
            if high is None:  # then any number more
                split = self.emit(_SPLIT, 0, 0)
                self.code[split][1] = len(self.code)
                self.compile(inner)
                self.emit(_JUMP, split)
                self.code[split][2] = len(self.code)
            else:
                splits = []
                for _ in range(high - low):
                    split = self.emit(_SPLIT, 0, 0)
                    self.code[split][1] = len(self.code)
                    splits.append(split)
                    self.compile(inner)
                for split in splits:
                    self.code[split][2] = len(self.code)


def _holds(kind: str, text: str, pos: int) -> bool:
    before = text[pos - 1] if pos > 0 else ""
    after = text[pos] if pos < len(text) else ""
    if kind == "^" or kind == "`":
        return pos == 0
    if kind == "$" or kind == "'":
        return pos == len(text)
    word_before, word_after = bool(before) and _is_word(before), bool(after) and _is_word(after)
    if kind == "b":
        return word_before != word_after
    if kind == "B":
        return word_before == word_after
    if kind == "<":
        return word_after and not word_before
    return word_before and not word_after  # ">"


def _anchors(node) -> int:
    """How many `^` and `$` are in the tree."""
    kind = node[0]
    if kind == "assert":
        return int(node[1] in "^$")
    if kind in ("cat", "alt"):
        return sum(_anchors(n) for n in node[1])
    if kind == "rep":
        return _anchors(node[1])
    return 0


def _inner_anchor(tree) -> bool:
    """A `^` or `$` that neither starts nor ends a branch of the expression. glibc matches
    those at a newline inside the text too (`a$.` matches "a\nb"; `a$` does not): not read."""
    for branch in tree[1] if tree[0] == "alt" else [tree]:
        items = branch[1] if branch[0] == "cat" else [branch]
        outer = int(items[0] == ("assert", "^")) + int(len(items) > 1 and items[-1] == ("assert", "$"))
        if len(items) == 1 and items[0] == ("assert", "$"):
            outer = 1
        if _anchors(branch) > outer:
            return True
    return False


class Regex:
    """One compiled ERE."""

    def __init__(self, text: str):
        tree = _Parser(text).parse()
        self.inner_anchor = _inner_anchor(tree)
        program = _Program()
        program.compile(tree)
        program.emit(_MATCH)
        self.code = program.code

    def search(self, text: str) -> bool:
        """Whether it matches anywhere in `text` (bash's =~)."""
        code = self.code
        seen = [-1] * len(code)
        steps = 0
        current: list[int] = []  # the _CHAR (and _MATCH) instructions threads wait at

        def add(pc: int, pos: int, into: list) -> bool:
            """Follow `pc` through jumps, splits and assertions at `pos`; True on a match."""
            nonlocal steps
            stack = [pc]
            while stack:
                pc = stack.pop()
                if seen[pc] == pos:
                    continue
                seen[pc] = pos
                steps += 1
                ins = code[pc]
                op = ins[0]
                if op == _CHAR:
                    into.append(pc)
                elif op == _MATCH:
                    return True
                elif op == _JUMP:
                    stack.append(ins[1])
                elif op == _SPLIT:
                    stack.append(ins[2])
                    stack.append(ins[1])
                elif _holds(ins[1], text, pos):
                    stack.append(pc + 1)
            return False

        n = len(text)
        for pos in range(n + 1):
            if add(0, pos, current):  # a match may start at every position
                break
            if steps > MAX_REGEX_STEPS:
                self._over(steps, n)
            if pos == n:
                meter().charge(steps * REGEX_STEP_WORK)
                return False
            ch = text[pos]
            following: list[int] = []
            for pc in current:
                if code[pc][1].test(ch) and add(pc + 1, pos + 1, following):
                    meter().charge(steps * REGEX_STEP_WORK)
                    return True
            current = following
        meter().charge(steps * REGEX_STEP_WORK)
        return True

    def _over(self, steps: int, n: int):
        meter().charge(steps * REGEX_STEP_WORK)
        raise OverBound(
            f"matching a regular expression of {len(self.code):,} states against a value of {n:,} characters "
            f"took more than the tool's bound of {MAX_REGEX_STEPS:,} steps"
        )


def _built(pattern: str):
    """The compiled expression, or what reading it raised (a failure is kept as a success is)."""
    meter().charge(len(pattern) * REGEX_CHAR_WORK)
    try:
        return Regex(pattern)
    except (RegexSyntax, Unreadable, OverBound) as failed:
        return failed


def regex_search(pattern: str, text: str) -> bool | None:
    """bash's `[[ text =~ pattern ]]`: True, False (also for an expression regcomp refuses),
    None when it uses a construct not read here; OverBound past a bound (an expression longer
    than MAX_REGEX_CHARS is refused before it is read)."""
    if len(pattern) > MAX_REGEX_CHARS:
        raise OverBound(
            f"a regular expression of {len(pattern):,} characters is longer than the tool's bound "
            f"of {MAX_REGEX_CHARS:,}"
        )
    regex = meter().built(("ere", pattern), True, lambda: _built(pattern))
    if isinstance(regex, RegexSyntax):
        return False
    if isinstance(regex, Unreadable):
        return None
    if isinstance(regex, OverBound):
        raise regex
    if regex.inner_anchor and "\n" in text:
        return None
    return regex.search(text)
