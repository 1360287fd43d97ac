"""Values of the abstract bash interpreter: known text, unknown pieces, origins.

A bash value here is a `Field`: a tuple of pieces, each either known text (`str`)
or an `Unknown` (a command substitution, a variable from the environment), plus
the source location of the word that wrote it. Word expansion produces `Chunk`s
that remember whether they were quoted; `split_fields` then applies bash's field
splitting, and `pattern_regex` turns chunks into a glob matcher (glob.py) with quoted
parts taken literally.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.values import Loc, Unknown
from .glob import Glob, pattern
from .limits import MAX_PIECES, MAX_VALUE_CHARS, is_past_bound, meter, too_many_pieces, value_too_long

Piece = str | Unknown


def join_pieces(pieces, loc: Loc | None = None) -> tuple[Piece, ...]:
    """Merge adjacent known text and drop empty text. In an evaluation, a value past a bound
    (longer than MAX_VALUE_CHARS, in more than MAX_PIECES parts) is one unknown piece instead,
    and the work of joining is counted (limits.py)."""
    out: list = []  # pieces, and lists: runs of known text to join
    size = 0
    for piece in pieces:
        if isinstance(piece, str):
            if not piece:
                continue
            size += len(piece)
            if out:
                last = out[-1]
                if isinstance(last, list):
                    last.append(piece)
                    continue
                if isinstance(last, str):
                    out[-1] = [last, piece]
                    continue
        elif out and piece == out[-1] and is_past_bound(piece):  # unknown twice is unknown once
            continue
        out.append(piece)
    m = meter()
    if m.allowance is not None:
        if size > MAX_VALUE_CHARS:
            return (m.over(value_too_long(size), loc),)
        if len(out) > MAX_PIECES:
            return (m.over(too_many_pieces(len(out)), loc),)
    joined = 0
    for i, piece in enumerate(out):
        if isinstance(piece, list):
            out[i] = "".join(piece)
            joined += len(out[i])
    m.charge(joined)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Field:
    pieces: tuple[Piece, ...]
    loc: Loc | None = None

    @staticmethod
    def of(text: str, loc: Loc | None = None) -> Field:
        return Field(join_pieces((text,)), loc)

    @property
    def known(self) -> bool:
        for p in self.pieces:
            if not isinstance(p, str):
                return False
        return True

    @property
    def value(self) -> str | None:
        """The text when fully known, else None (asked of every word of every command: a field of
        one piece, as join_pieces makes known text, is answered first)."""
        pieces = self.pieces
        if len(pieces) == 1:
            only = pieces[0]
            return only if isinstance(only, str) else None
        if not self.known:
            return None
        return "".join(pieces)  # type: ignore[arg-type]

    @property
    def display(self) -> str:
        return "".join(str(p) for p in self.pieces)


@dataclass(frozen=True, slots=True)
class Chunk:
    """One piece of an expanding word. `quoted` chunks are not split and are
    matched literally in patterns; `literal` chunks were written in the word itself."""

    piece: Piece
    quoted: bool
    literal: bool
    loc: Loc | None


class Break:
    """Field boundary from a quoted array expansion ("${X[@]}", "$@")."""

    __slots__ = ()


BREAK = Break()

DEFAULT_IFS = " \t\n"


def split_fields(chunks, ifs: str = DEFAULT_IFS, word_loc: Loc | None = None) -> list[Field]:
    """Bash field splitting over a chunk sequence (quote removal already done).

    Unquoted known text is split on IFS characters; quoted text and unknown pieces
    are kept whole. A field survives when it holds text or a quoted (possibly
    empty) part, as in bash.
    """
    fields: list[Field] = []
    pieces: list[Piece] = []
    has_content = False
    literal_loc: Loc | None = None
    first_loc: Loc | None = None

    def flush() -> None:
        nonlocal pieces, has_content, literal_loc, first_loc
        if has_content:
            at = literal_loc or first_loc or word_loc
            fields.append(Field(join_pieces(pieces, word_loc or at), at))
        pieces, has_content, literal_loc, first_loc = [], False, None, None

    def note(chunk: Chunk, nonempty: bool) -> None:
        nonlocal literal_loc, first_loc
        if chunk.literal and literal_loc is None and nonempty:
            literal_loc = chunk.loc
        if first_loc is None and nonempty:
            first_loc = chunk.loc

    for chunk in chunks:
        if chunk is BREAK:
            flush()
            continue
        piece = chunk.piece
        if chunk.quoted or isinstance(piece, Unknown) or not ifs:
            pieces.append(piece)
            has_content = True if chunk.quoted else (has_content or piece != "")
            note(chunk, piece != "" or chunk.quoted)
            continue
        start = 0
        for i, ch in enumerate(piece):
            if ch in ifs:
                if i > start:
                    pieces.append(piece[start:i])
                    has_content = True
                    note(chunk, True)
                flush()
                start = i + 1
        if start < len(piece):
            pieces.append(piece[start:])
            has_content = True
            note(chunk, True)
    flush()
    return fields


def join_field(chunks, word_loc: Loc | None = None) -> Field:
    """Concatenate chunks into one field without splitting (assignments, [[ ]], case)."""
    pieces: list[Piece] = []
    literal_loc = first_loc = None
    for chunk in chunks:
        if chunk is BREAK:
            pieces.append(" ")
            continue
        pieces.append(chunk.piece)
        if chunk.piece != "":
            if chunk.literal and literal_loc is None:
                literal_loc = chunk.loc
            if first_loc is None:
                first_loc = chunk.loc
    at = literal_loc or first_loc or word_loc
    return Field(join_pieces(pieces, word_loc or at), at)


def pattern_regex(chunks) -> Glob | None:
    """The compiled bash pattern (glob.Glob) of chunks, quoted parts taken literally; None when
    part of it is unknown. Past the bound of one match it raises OverBound (glob.pattern)."""
    parts = []
    for chunk in chunks:
        if chunk is BREAK:
            parts.append((" ", True))
            continue
        if isinstance(chunk.piece, Unknown):
            return None
        parts.append((chunk.piece, chunk.quoted))
    return pattern(parts)


MAX_BRACE_WORDS = 256  # a word's brace expansion stops growing here (`{1..100000}` stays bounded)


def brace_expand(chunks: list) -> list[list]:
    """Bash's brace expansion of one word, done first, on the text the word writes itself
    (literal, unquoted chunks): `p{a,b}q` is `paq pbq`, `{1..3}` is `1 2 3`, `{a..c}`, `{01..10}`,
    `{1..9..2}`; nested and several braces expand in turn. A brace with no top-level comma
    and no sequence (`{x}`, `{}`) stays as it is. Only a brace within one piece of literal
    text is expanded (one written across a quote or an expansion, `{"a",b}`, stays)."""
    chunks = _joined_literals(chunks)
    for i, chunk in enumerate(chunks):
        if chunk is BREAK or not chunk.literal or chunk.quoted or not isinstance(chunk.piece, str):
            continue
        found = _brace(chunk.piece)
        if found is None:
            continue
        start, end, items = found
        out: list[list] = []
        for item in items:
            text = chunk.piece[:start] + item + chunk.piece[end:]
            variant = [*chunks[:i], Chunk(text, False, True, chunk.loc), *chunks[i + 1 :]]
            out.extend(brace_expand(variant))
            if len(out) >= MAX_BRACE_WORDS:
                return out[:MAX_BRACE_WORDS]
        return out
    return [chunks]


def _joined_literals(chunks: list) -> list:
    """Adjacent pieces of literal, unquoted text as one (tree-sitter cuts `x{1,2}` into several)."""
    out: list = []
    for c in chunks:
        prev = out[-1] if out else None
        if (
            c is not BREAK
            and prev is not None
            and prev is not BREAK
            and c.literal
            and prev.literal
            and not c.quoted
            and not prev.quoted
            and isinstance(c.piece, str)
            and isinstance(prev.piece, str)
        ):
            out[-1] = Chunk(prev.piece + c.piece, False, True, prev.loc)
        else:
            out.append(c)
    return out


def _brace(text: str) -> tuple[int, int, list[str]] | None:
    """(start, end, alternatives) of the first brace expression in `text`, or None."""
    for start, ch in enumerate(text):
        if ch != "{" or (start and text[start - 1] in "$\\"):
            continue
        depth, commas = 0, []
        for end in range(start, len(text)):
            c = text[end]
            if c == "\\":
                continue
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    body = text[start + 1 : end]
                    if commas:
                        cuts = [start + 1, *[k + 1 for k in commas], end + 1]
                        return start, end + 1, [text[a : b - 1] for a, b in zip(cuts, cuts[1:], strict=False)]
                    seq = _sequence(body)
                    if seq is not None:
                        return start, end + 1, seq
                    break
            elif c == "," and depth == 1:
                commas.append(end)
    return None


def _sequence(body: str) -> list[str] | None:
    """`1..5`, `5..1`, `01..10` (padded), `1..9..2`, `a..e`: the items; None for anything else."""
    import re

    m = re.fullmatch(r"(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?", body)
    if m:
        a, b = int(m.group(1)), int(m.group(2))
        step = abs(int(m.group(3) or 1)) or 1
        width = (
            max(len(m.group(1)), len(m.group(2)))
            if m.group(1).lstrip("-").startswith("0") or m.group(2).lstrip("-").startswith("0")
            else 0
        )
        values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        if len(values) > MAX_BRACE_WORDS:
            return None
        return [str(v).zfill(width) if width else str(v) for v in values]
    m = re.fullmatch(r"([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?\d+))?", body)
    if m:
        a, b = ord(m.group(1)), ord(m.group(2))
        step = abs(int(m.group(3) or 1)) or 1
        values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [chr(v) for v in values]
    return None
