"""Values of the abstract bash interpreter: known text, unknown pieces, origins.

A bash value here is a `Field`: a tuple of pieces, each either known text (`str`)
or an `Unknown` (a command substitution, a variable from the environment), plus
the source location of the word that wrote it. Word expansion produces `Chunk`s
that remember whether they were quoted; `split_fields` then applies bash's field
splitting, and `pattern_regex` turns chunks into a glob matcher with quoted parts
taken literally.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..values import Loc, Unknown

Piece = str | Unknown


def join_pieces(pieces) -> tuple[Piece, ...]:
    """Merge adjacent known text and drop empty text."""
    out: list[Piece] = []
    for piece in pieces:
        if isinstance(piece, str):
            if not piece:
                continue
            if out and isinstance(out[-1], str):
                out[-1] = out[-1] + piece
                continue
        out.append(piece)
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
        return all(isinstance(p, str) for p in self.pieces)

    @property
    def value(self) -> str | None:
        """The text when fully known, else None."""
        if not self.known:
            return None
        return "".join(self.pieces)  # type: ignore[arg-type]

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
            fields.append(Field(join_pieces(pieces), literal_loc or first_loc or word_loc))
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
    return Field(join_pieces(pieces), literal_loc or first_loc or word_loc)


def _glob_part(text: str) -> str:
    """Translate an unquoted glob fragment to a regex fragment."""
    out = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n:
            out.append(re.escape(text[i + 1]))
            i += 2
            continue
        if ch == "*":
            out.append(".*")
        elif ch == "?":
            out.append(".")
        elif ch == "[":
            j = i + 1
            if j < n and text[j] in "!^":
                j += 1
            if j < n and text[j] == "]":
                j += 1
            while j < n and text[j] != "]":
                j += 1
            if j >= n:
                out.append(re.escape(ch))
            else:
                body = text[i + 1 : j]
                negate = body[:1] in ("!", "^")
                if negate:
                    body = body[1:]
                body = body.replace("\\", "\\\\")
                out.append("[" + ("^" if negate else "") + body + "]")
                i = j
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


def pattern_regex(chunks) -> re.Pattern | None:
    """A compiled regex for a bash pattern, or None when part of it is unknown."""
    parts = []
    for chunk in chunks:
        if chunk is BREAK:
            parts.append(" ")
            continue
        if isinstance(chunk.piece, Unknown):
            return None
        parts.append(re.escape(chunk.piece) if chunk.quoted else _glob_part(chunk.piece))
    try:
        return re.compile("".join(parts), re.DOTALL)
    except re.error:
        return None
