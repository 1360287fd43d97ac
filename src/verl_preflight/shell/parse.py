"""Parse bash with tree-sitter-bash; report syntax error nodes as notes.

tree-sitter keeps going past errors, so the evaluator still walks the rest of
the script; each ERROR or MISSING node becomes one note with its location.
"""

from __future__ import annotations

import codecs
import re
import threading
from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import lru_cache

from ..core.values import Loc
from .notes import Note, NoteKind

MAX_SYNTAX_FINDINGS = 20


@lru_cache(maxsize=1)
def _parser():
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


@dataclass
class Script:
    """One parsed bash file."""

    path: str
    source: bytes
    tree: object
    _lines: list[bytes] | None = field(default=None, repr=False)
    _locs: dict = field(default_factory=dict, repr=False)  # start byte -> Loc
    _starts: list[int] | None = field(default=None, repr=False)  # the byte offset where each line starts
    _cols: dict = field(default_factory=dict, repr=False)  # row -> how its byte columns become characters
    static_words: dict = field(default_factory=dict, repr=False)  # expand.Expander's memo of static words
    command_words: dict = field(default_factory=dict, repr=False)  # commands.Commands' memo of a command's words

    @property
    def root(self):
        return self.tree.root_node

    def loc(self, node) -> Loc:
        found = self._locs.get(node.start_byte)
        if found is None:
            row, col = node.start_point
            found = self._locs[node.start_byte] = Loc(self.path, row + 1, self.char_col(row, col) + 1)
        return found

    def lines(self) -> list[bytes]:
        if self._lines is None:
            self._lines = self.source.split(b"\n")
        return self._lines

    def line_starts(self) -> list[int]:
        """The byte offset of each line's start (computed once: a location costs a bisection,
        not a scan of the file or of its line)."""
        if self._starts is None:
            starts, at = [], 0
            for line in self.lines():
                starts.append(at)
                at += len(line) + 1
            self._starts = starts
        return self._starts

    def loc_at(self, offset: int) -> Loc:
        """The location of a byte offset in this file (as `loc` gives a node's)."""
        row = bisect_right(self.line_starts(), offset) - 1
        return Loc(self.path, row + 1, self.char_col(row, offset - self._starts[row]) + 1)

    def char_col(self, row: int, byte_col: int) -> int:
        """tree-sitter columns count bytes; report characters, as the line decoded (with
        replacements where it is not UTF-8) has them. Each line is looked at once: an ASCII
        line's columns are its bytes; in any other, a column is its bytes less the bytes before
        it that start no character (a bisection in their sorted offsets)."""
        cols = self._columns(row)
        if cols is None:
            return byte_col
        return byte_col - bisect_left(cols, byte_col)

    def _columns(self, row: int):
        """_line_columns of the line, computed once."""
        cols = self._cols.get(row, False)
        if cols is False:
            cols = self._cols[row] = _line_columns(self.lines()[row] if row < len(self.lines()) else b"")
        return cols

    def text(self, node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def offset(self, loc: Loc) -> int | None:
        """The byte offset of a location in this file (1-based line, character column): the
        inverse of `loc`; None when the file has no such place."""
        lines = self.lines()
        if not 1 <= loc.line <= len(lines):
            return None
        line, char = lines[loc.line - 1], loc.col - 1
        start = self.line_starts()[loc.line - 1]
        cols = self._columns(loc.line - 1)
        if cols is None:
            return start + char if char <= len(line) else None
        # the byte where character `char` starts: one more than the last byte b whose prefix
        # line[:b] holds `char` characters (b - the bytes before b that start none, as char_col)
        lo, hi = 0, len(line) + 1
        while lo < hi:
            mid = (lo + hi) // 2
            if mid - bisect_left(cols, mid) > char:
                hi = mid
            else:
                lo = mid + 1
        if lo <= len(line):
            return start + lo - 1
        return start + len(line) if len(line) - len(cols) == char else None

    def word_at(self, loc: Loc):
        """(the whole shell word around `loc`: an argument, an array element, an assigned
        value; the byte offset of `loc`), or (None, None)."""
        offset = self.offset(loc)
        if offset is None:
            return None, None
        node = self.root.descendant_for_byte_range(offset, offset)
        while node is not None and node.parent is not None and node.parent.type in ("string", "concatenation"):
            node = node.parent
        return node, offset


_CONTINUATION = re.compile(rb"[\x80-\xbf]")  # the bytes that continue a UTF-8 character
_UNDECODED = threading.local()


def _note_undecoded(err: UnicodeDecodeError):
    """A decoding error handler: "replace", noting where each replaced part starts and ends."""
    _UNDECODED.parts.append((err.start, err.end))
    return "\ufffd", err.end


codecs.register_error("verl_preflight.columns", _note_undecoded)


def _line_columns(line: bytes):
    """None for an ASCII line; else the sorted offsets of its bytes that start no character when
    it is decoded (with one replacement for each part that is not UTF-8, as Python gives): the
    continuation bytes, less those that stand alone (each of which is replaced by a character)."""
    if line.isascii():
        return None
    offsets = array("l", (m.start() for m in _CONTINUATION.finditer(line)))
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        _UNDECODED.parts = []
        line.decode("utf-8", "verl_preflight.columns")
        alone = {start for start, end in _UNDECODED.parts if end - start == 1}
        offsets = array("l", (o for o in offsets if o not in alone))
    return offsets


def parse_script(path: str, source: bytes) -> Script:
    tree = _parser().parse(_NOT_A_COMMENT.sub(rb"\1_", source) if b"\\ #" in source or b"\\\t#" in source else source)
    if tree.root_node.has_error:
        patched = _COMMENT_IN_BACKTICKS.sub(_blank_comment, source)
        if patched != source:
            source, tree = patched, _parser().parse(_NOT_A_COMMENT.sub(rb"\1_", patched))
    if tree.root_node.has_error and _SUBSTRING_OFFSET.search(source):
        tree = _parser().parse(_SUBSTRING_OFFSET.sub(rb"\1 ", _NOT_A_COMMENT.sub(rb"\1_", source)))
    return Script(path=path, source=source, tree=tree)


# `${ARGUMENT:$KEY_LENGTH+1}`: a substring whose offset is an expansion. tree-sitter-bash stops
# after the `:` and asks for a `}`; it parses `${ARGUMENT: KEY_LENGTH+1}` (same offsets), and the
# offset's text, read from the source, is the same arithmetic to bash.
_SUBSTRING_OFFSET = re.compile(rb"(\$\{[A-Za-z_][A-Za-z0-9_]*:)\$(?=[A-Za-z_])")


# `\ #x` (or a tab): an escaped blank, then `#` in the same word: bash reads the word ` #x`, not a
# comment (`a=1 \ # note` passes ' #', 'note'). tree-sitter-bash starts a comment there;
# it parses a `_` in place of the `#` (same offsets), and the text is read from the source.
_NOT_A_COMMENT = re.compile(rb"((?<!\\)(?:\\\\)*\\[ \t])#")


# `` `# note` `` between the words of a continued command: an empty command substitution
# (bash gives no word). tree-sitter-bash lets the comment run over the closing backtick;
# `:` and blanks of the same length mean the same to bash and keep every offset.
_COMMENT_IN_BACKTICKS = re.compile(rb"(?<=[ \t])`#[^`\n]*`(?=[ \t]|\\?\r?\n|$)")


def _blank_comment(m: re.Match) -> bytes:
    return b"`:" + b" " * (len(m.group(0)) - 3) + b"`"


def syntax_notes(script: Script) -> list[Note]:
    """One finding per ERROR / MISSING node (iterative walk: no recursion limit)."""
    findings: list[Note] = []
    root = script.root
    if not root.has_error:
        return findings
    stack = [root]
    while stack and len(findings) < MAX_SYNTAX_FINDINGS:
        node = stack.pop()
        if node.is_missing:
            loc = script.loc(node)
            findings.append(Note(NoteKind.SYNTAX, loc, f"bash syntax: missing '{node.type}' here"))
            continue
        if node.is_error:
            if _bash_accepts(script, node):
                continue
            quote = _unclosed_quote(script.source, node.start_byte, node.end_byte)
            if quote is not None:
                findings.append(Note(NoteKind.SYNTAX, script.loc_at(quote), "bash syntax: this quote is never closed"))
                continue
            loc = script.loc(node)
            snippet = script.text(node).strip().splitlines()[0][:40] if script.text(node).strip() else ""
            message = "bash syntax: cannot parse this" + (f" near '{snippet}'" if snippet else "")
            findings.append(Note(NoteKind.SYNTAX, loc, message))
            continue
        if node.has_error:
            stack.extend(reversed(node.children))
    return findings


def _unclosed_quote(source: bytes, start: int, end: int) -> int | None:
    """Where a quote in source[start:end] is left open, if one is.

    When quotes do not balance, the culprit is usually the first string that
    runs across a line end (its closing quote was forgotten); else the last one.
    """
    i = start
    open_at = None
    quote = None
    first_multiline = None
    while i < len(source):
        ch = source[i : i + 1]
        if quote is None:
            if i >= end:
                return None
            if ch == b"\\":
                i += 2
                continue
            if ch == b"#" and (i == 0 or source[i - 1 : i] in b" \t\n;"):
                nl = source.find(b"\n", i)
                i = len(source) if nl < 0 else nl
                continue
            if ch in (b'"', b"'"):
                quote, open_at = ch, i
        elif ch == b"\\" and quote == b'"':
            i += 2
            continue
        elif ch == quote:
            if first_multiline is None and b"\n" in source[open_at:i]:
                first_multiline = open_at
            quote = None
        i += 1
    if quote is None:
        return None
    return first_multiline if first_multiline is not None else open_at


_ARITH_TEXT = re.compile(r"\$\(\((.*)\)\)", re.DOTALL)


def arithmetic_text(text: str) -> str | None:
    """The expression of `$((...))` when the text is exactly one, with balanced parentheses."""
    m = _ARITH_TEXT.fullmatch(text.strip())
    if m is None:
        return None
    depth = 0
    for ch in m.group(1):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return None
    return m.group(1) if depth == 0 else None


def _bash_accepts(script: Script, node) -> bool:
    """Error nodes over text bash parses: a `\\` before the end of the file,
    `$(((a + b) * c))` as the operand of `${X:-...}`, and a `[` that starts such an operand
    before a quote (`${C:-['npu','cpu']}`: tree-sitter-bash stops at the `[`, bash reads it as
    a literal character, and the evaluator reads the operand with it)."""
    if not script.source[node.start_byte :].strip(b" \t\r\n\\"):
        return script.source[node.start_byte : node.end_byte].strip() in (b"\\", b"")
    parent = node.parent
    if parent is not None and parent.type == "expansion":
        if script.source[node.start_byte : node.end_byte].strip(b"[]") == b"":
            return True
        return expansion_operand_arithmetic(script, parent) is not None
    outer = _enclosing_expansion(node)  # `${N:=$(( A * (B + 1) ))}`: tree-sitter reads `$( (...) )` inside it
    return outer is not None and expansion_operand_arithmetic(script, outer) is not None


def _enclosing_expansion(node):
    """The nearest `${...}` the node is inside, or None."""
    cur = node.parent
    while cur is not None:
        if cur.type == "expansion":
            return cur
        cur = cur.parent
    return None


def expansion_operand_arithmetic(script: Script, node) -> str | None:
    """For `${X:-$((...))}` (any operator): the arithmetic expression of the operand."""
    text = script.text(node).strip()
    for op in (":-", ":=", ":+", ":?", "-", "=", "+", "?"):
        head, sep, rest = text.partition(op)
        if sep and head.startswith("${") and head[2:].replace("_", "a").isalnum() and rest.endswith("}"):
            return arithmetic_text(rest[:-1])
    return None
