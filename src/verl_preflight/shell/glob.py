"""Bash patterns (`case`, `[[ == ]]`, `${X#pat}`, `${X//pat/rep}`) matched in time linear in the text.

A pattern is a sequence of one-character matchers (a literal, `?`, a bracket expression) and
`*`. Cut at its stars it is segments of a fixed width: `head*mid1*mid2*tail`. A segment of
literal characters only (quoted text, most patterns' parts) is matched as text (str.find);
any other is a regular expression with no quantifier (it cannot backtrack). The stars are resolved by
placing the segments greedily: every middle segment at its leftmost place after the one before
it (which leaves the most room to the rest), the tail at the end, or at its leftmost (shortest
match) or rightmost (longest match) place. So a match costs a few searches of fixed-width
expressions, never the backtracking that `.*a.*a.*b` costs a regular expression engine, and
`${X//pat/rep}` is one pass (a pattern with a star matches at most once from a place on).

The cost of an operation (a match at one place: the pattern's width; a search: the text's
length x the widest segment) is counted against the bound of one match and the script's work
(limits.py), and so is building the pattern, before it is built
(`pattern`); past the bound it raises OverBound (its result is unknown).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .limits import BUILT_ONCE, MAX_MATCH_COST, MAX_VALUE_CHARS, PATTERN_WORK, OverBound, meter, value_too_long

STAR = None  # the `*` atom of glob_atoms


@dataclass(frozen=True, slots=True)
class Chars:
    """An atom that is not one literal character: `?`, a bracket expression (its regex text)."""

    rx: str


ANY = Chars(".")  # `?`
# A pattern is read into cuts (the text between two stars), each a list of runs: literal text
# (a str, of any length) or a Chars. Quoted text is one run as it is, never read a character at
# a time; unquoted text with a `\\`, `*`, `?` or `[` is read by glob_atoms.


def _width(runs: list) -> int:
    return sum(len(r) if type(r) is str else 1 for r in runs)


def _is_literal(runs: list) -> bool:
    return all(type(r) is str for r in runs)


def _regex_text(runs) -> str:
    return "".join(r.rx if type(r) is Chars else re.escape(r) for r in runs)


def _reversed_runs(runs: list) -> list:
    return [r[::-1] if type(r) is str else r for r in reversed(runs)]


def pattern_too_costly(size: int, cost: int) -> str:
    return (
        f"building a pattern of {size:,} characters costs {cost:,}, past the tool's bound of "
        f"{MAX_MATCH_COST:,} for one match"
    )


class _Segment:
    """Fixed-width runs between two stars: literal text, or a regular expression."""

    __slots__ = ("width", "literal", "rx", "_runs", "_reverse")

    def __init__(self, runs: list):
        self.width = _width(runs)
        self.literal = "".join(runs) if _is_literal(runs) else None
        if self.literal is None:
            self.rx = re.compile(_regex_text(runs), re.DOTALL)
            self._runs = runs
            self._reverse = None  # to search the reversed text: made when first needed (a tail's rfind)

    def at(self, text: str, pos: int, end: int) -> bool:
        """It matches text[pos : pos + width], within text[:end]."""
        if pos + self.width > end:
            return False
        if self.literal is not None:
            return text.startswith(self.literal, pos, end)
        return self.rx.match(text, pos, end) is not None

    def find(self, text: str, lo: int, hi: int) -> int | None:
        """Its leftmost place p in [lo, hi - width]."""
        if lo + self.width > hi:
            return None
        if not self.width:
            return lo
        if self.literal is not None:
            p = text.find(self.literal, lo, hi)
            return p if p >= 0 else None
        m = self.rx.search(text, lo, hi)
        return m.start() if m is not None else None

    def rfind(self, text: str, lo: int, hi: int, rev: str) -> int | None:
        """Its rightmost place p in [lo, hi - width]; `rev` is text reversed."""
        if lo + self.width > hi:
            return None
        if not self.width:
            return hi
        if self.literal is not None:
            p = text.rfind(self.literal, lo, hi)
            return p if p >= 0 else None
        if self._reverse is None:
            meter().charge(self.width * PATTERN_WORK)  # its width was within the bound (Glob)
            self._reverse = re.compile(_regex_text(_reversed_runs(self._runs)), re.DOTALL)
        n = len(text)
        m = self._reverse.search(rev, n - hi, n - lo)
        return n - m.start() - self.width if m is not None else None


class Glob:
    """One bash pattern, compiled from its cuts (see above). Building it costs PATTERN_WORK for
    each character compiled into a regular expression (counted, and bounded, before compiling)."""

    def __init__(self, cuts: list[list]):
        widths = [_width(c) for c in cuts]
        self.size = sum(widths) + len(cuts) - 1  # its atoms: characters, `?` and brackets, stars
        self.widest = max(widths)  # its widest segment
        self.matches_all = len(cuts) == 2 and not cuts[0] and not cuts[1]  # `*`: anything (an unknown value too)
        self.starred = len(cuts) > 1
        compiled = sum(w for c, w in zip(cuts, widths, strict=True) if not _is_literal(c))
        cost = compiled * PATTERN_WORK
        if cost > MAX_MATCH_COST:
            raise OverBound(pattern_too_costly(self.size, cost))
        meter().charge(cost)
        if len(cuts) == 1:
            self.head, self.middles, self.tail = _Segment(cuts[0]), [], _Segment([])
        else:
            self.head, self.tail = _Segment(cuts[0]), _Segment(cuts[-1])
            self.middles = [_Segment(c) for c in cuts[1:-1] if c]
        self._cuts = cuts
        self._reversed: Glob | None = None

    def reversed(self) -> Glob:
        """The pattern that matches the reversed texts (for suffixes)."""
        if self._reversed is None:
            self._reversed = Glob([_reversed_runs(c) for c in reversed(self._cuts)])
        return self._reversed

    def _afford(self, text: str, search: bool) -> None:
        """Count what one operation costs: a pattern with no star matched at one place (its
        fullmatch, prefix, suffix) compares at most its width; a search (a star's, a `//`'s) at
        most the text's length x its widest segment."""
        cost = (len(text) + 1) * (self.widest + 1) if search or self.starred else self.size + 1
        if cost > MAX_MATCH_COST:
            raise OverBound(
                f"matching a pattern of {self.size:,} characters against a value of {len(text):,} costs "
                f"{cost:,}, past the tool's bound of {MAX_MATCH_COST:,} for one match"
            )
        meter().charge(cost)

    # ---- matching ------------------------------------------------------
    def fullmatch(self, text: str) -> bool:
        self._afford(text, False)
        n = len(text)
        if not self.starred:
            return self.head.width == n and self.head.at(text, 0, n)
        if self.head.width + self.tail.width > n or not self.head.at(text, 0, n):
            return False
        limit = n - self.tail.width
        if not self.tail.at(text, limit, n):
            return False
        pos = self.head.width
        for seg in self.middles:
            p = seg.find(text, pos, limit)
            if p is None:
                return False
            pos = p + seg.width
        return True

    def _end(self, text: str, k: int, longest: bool) -> int | None:
        """The shortest (longest) end j of a match text[k:j], or None."""
        n = len(text)
        if not self.head.at(text, k, n):
            return None
        if not self.starred:
            return k + self.head.width
        pos = k + self.head.width
        for seg in self.middles:
            p = seg.find(text, pos, n)
            if p is None:
                return None
            pos = p + seg.width
        tail = self.tail
        if not tail.width:
            return n if longest else pos
        if not longest:
            at = tail.find(text, pos, n)
        else:
            at = tail.rfind(text, pos, n, text[::-1] if tail.literal is None else "")
        return None if at is None else at + tail.width

    def prefix(self, text: str, longest: bool) -> int | None:
        """The length of the shortest (longest) prefix it matches, or None."""
        self._afford(text, False)
        return self._end(text, 0, longest)

    def suffix(self, text: str, longest: bool) -> int | None:
        """The length of the shortest (longest) suffix it matches, or None."""
        if self.starred:
            return self.reversed().prefix(text[::-1], longest)
        self._afford(text, False)
        width, n = self.head.width, len(text)
        return width if width <= n and self.head.at(text, n - width, n) else None

    # ---- the operators of ${X...} ----------------------------------------
    def remove(self, text: str, op: str) -> str:
        """`${X#p}`, `${X##p}`, `${X%p}`, `${X%%p}`."""
        if op in ("#", "##"):
            cut = self.prefix(text, op == "##")
            return text if cut is None else text[cut:]
        cut = self.suffix(text, op == "%%")
        return text if cut is None else text[: len(text) - cut]

    def substitute(self, text: str, repl: str, op: str) -> str:
        """`${X/p/r}` (the first match), `${X//p/r}` (every match), `${X/#p/r}`, `${X/%p/r}`.
        What it gives is at most the text and the replacement, made one value by words.join_pieces
        (which keeps it within MAX_VALUE_CHARS); only `//` of a pattern with no star can make
        more (a replacement per match): its size is counted before it is built."""
        if op == "/#":
            cut = self.prefix(text, True)
            return text if cut is None else repl + text[cut:]
        if op == "/%":
            cut = self.suffix(text, True)
            return text if cut is None else text[: len(text) - cut] + repl
        self._afford(text, True)
        if not self.starred:
            if not self.head.width:
                return text  # an empty pattern matches nothing to replace
            # a fixed-width pattern: its leftmost, non-overlapping matches, as bash takes them
            count = 1 if op == "/" else -1
            head = self.head
            if len(repl) > head.width:  # the text grows: by how much, before it is built
                if op == "/":
                    found = 1
                else:
                    found = text.count(head.literal) if head.literal is not None else head.rx.subn("", text)[1]
                _bounded_size(len(text) + found * (len(repl) - head.width))
            if head.literal is not None:
                return text.replace(head.literal, repl, count)
            return head.rx.sub(lambda _m: repl, text, count=max(count, 0))
        # with a star: the match starts at the first place the head matches (no match from it
        # means none from any later one: each later place leaves less room) and is the longest
        # there; it ends at the text's end or at the tail's last place, so no other follows it:
        # `/` and `//` replace the same one (on an empty text, `*` matches: bash gives `repl`)
        k = self.head.find(text, 0, len(text))
        end = None if k is None else self._end(text, k, True)
        if end is None:
            return text
        return text[:k] + repl + text[end:]


def _bounded_size(size: int) -> None:
    if size > MAX_VALUE_CHARS:
        raise OverBound(value_too_long(size))


_SPECIAL = re.compile(r"[\\*?\[]")


def pattern(parts) -> Glob:
    """The pattern of `parts` ((text, quoted) pairs: quoted text is taken literally), built once
    in an evaluation when it is at most BUILT_ONCE characters long (limits.Meter.built).
    Reading and compiling it is counted: a character of unquoted text with a glob character is
    read by Python code (PATTERN_WORK), any other is copied (one). Past the bound of one match
    it raises OverBound, before the work is done; a bracket expression Python refuses gives None."""
    parts = tuple(parts)
    size = sum(len(t) for t, _ in parts)
    return meter().built(("glob", parts), size <= BUILT_ONCE, lambda: _built(parts, size))


def _built(parts, size: int):
    read = sum(len(t) for t, quoted in parts if not quoted and _SPECIAL.search(t) is not None)
    cost = size + read * PATTERN_WORK
    if cost > MAX_MATCH_COST:
        raise OverBound(pattern_too_costly(size, cost))
    meter().charge(cost)
    cuts: list[list] = [[]]
    for text, quoted in parts:
        if quoted or _SPECIAL.search(text) is None:
            if text:
                cuts[-1].append(text)
            continue
        for atom in glob_atoms(text):
            if atom is STAR:
                if cuts[-1] or len(cuts) == 1:
                    cuts.append([])
            else:
                cuts[-1].append(atom)
    try:
        return Glob(cuts)
    except re.error:
        return None


def glob_atoms(text: str) -> list:
    """The atoms of an unquoted glob fragment (its `\\x`, `*`, `?`, `[...]` read as bash does):
    one character (a str), a Chars, or STAR."""
    out: list = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n:
            out.append(text[i + 1])
            i += 2
            continue
        if ch == "*":
            out.append(STAR)
        elif ch == "?":
            out.append(ANY)
        elif ch == "[":
            j = i + 1
            if j < n and text[j] in "!^":
                j += 1
            if j < n and text[j] == "]":
                j += 1
            while j < n and text[j] != "]":
                j += 1
            if j >= n:
                out.append(ch)
            else:
                body = text[i + 1 : j]
                negate = body[:1] in ("!", "^")
                if negate:
                    body = body[1:]
                body = body.replace("\\", "\\\\")
                out.append(Chars("[" + ("^" if negate else "") + body + "]"))
                i = j
        else:
            out.append(ch)
        i += 1
    return out
