"""Word expansion: parameters, arithmetic, quoting, splitting; never executes.

`WordExpander` is mixed into the interpreter. It turns tree-sitter word nodes
into chunks (see words.py), honouring bash's quoting rules, and evaluates
`${...}` operators. Command and process substitution become `Unknown` pieces
that say where they came from.
"""

from __future__ import annotations

import re

from .arith import ArithError, Arithmetic, Unsupported, parse_int
from .errors import ArithFailure, ShellExit
from .notes import Note, NoteKind
from .parse import arithmetic_text, expansion_operand_arithmetic, parse_script
from .state import State, elements_of, scalar_of
from .substitution import CommandOutput
from .words import (
    BREAK,
    DEFAULT_IFS,
    Chunk,
    Field,
    Unknown,
    join_field,
    join_pieces,
    pattern_regex,
    split_fields,
)


def arith_operands(node) -> list:
    """The expressions inside `$(( ))` or `(( ))`: the value is the last one's."""
    return [c for c in node.named_children if c.type != "comment"]


LITERAL_TYPES = {
    "word",
    "number",
    "test_operator",
    "extglob_pattern",
    "regex",
    "_special_character",
    "special_character",
    "file_descriptor",
    "variable_name",
}
SPECIAL_PARAMS = {"@", "*", "#", "?", "$", "!", "0", "-", "_"}


def unescape_unquoted(text: str) -> tuple[str, bool]:
    """Backslash removal in an unquoted word; also reports whether anything was escaped."""
    if "\\" not in text:
        return text, False
    out = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out), True


def unescape_double(text: str) -> str:
    """Backslash removal inside double quotes: only \\$ \\` \\" \\\\ and newline."""
    if "\\" not in text:
        return text
    out = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in '$`"\\\n':
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


_ANSI = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def decode_ansi_c(body: str) -> str:
    out = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 >= len(body):
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _ANSI:
            out.append(_ANSI[nxt])
            i += 2
        elif nxt == "x":
            j = i + 2
            while j < len(body) and j < i + 4 and body[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(chr(int(body[i + 2 : j], 16)) if j > i + 2 else "\\x")
            i = j
        elif nxt in "01234567":
            j = i + 1
            while j < len(body) and j < i + 4 and body[j] in "01234567":
                j += 1
            out.append(chr(int(body[i + 1 : j], 8) & 0xFF))
            i = j
        else:
            out.append("\\" + nxt)
            i += 2
    return "".join(out)


_MAY_START_EARLY = frozenset(
    {"simple_expansion", "expansion", "command_substitution", "arithmetic_expansion", "process_substitution"}
)
_NAME_PREFIX = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]|[@*#?$!-]")


def word_groups(nodes, source: bytes | None = None) -> list[list]:
    """Group sibling nodes into bash words: nodes with no gap between them are one word,
    and so are nodes joined by a backslash-newline (`X='a'\\` newline `'b'`), which
    tree-sitter-bash splits and bash removes."""
    groups: list[list] = []
    for node in nodes:
        if groups and (
            groups[-1][-1].end_byte == node.start_byte
            or source is not None
            and source[groups[-1][-1].end_byte : node.start_byte] in (b"\\\n", b"\\\r\n")
        ):
            groups[-1].append(node)
        else:
            groups.append([node])
    return groups


class WordExpander(CommandOutput):
    """Expansion methods; the interpreter provides script, ctx and lookups."""

    # ---- entry points -------------------------------------------------
    def expand_args(self, nodes, st: State) -> list[Field]:
        """Full expansion of command words, with field splitting."""
        out: list[Field] = []
        ifs = self.ifs(st)
        for group in word_groups(nodes, self.script.source):
            out.extend(split_fields(self.group_chunks(group, st), ifs, self.script.loc(group[0])))
        return out

    def group_chunks(self, group, st: State, quoted: bool = False) -> list:
        """Chunks of one bash word that tree-sitter may have cut into adjacent nodes.

        tree-sitter-bash splits some words (`${A}/$B/c` becomes `${A}/`, `$`,
        `B/c`); bash sees one word, so adjacent nodes are joined and a lone `$`
        followed by a name is read as `$NAME`.
        """
        parts = []
        for node in group:
            if node.type == "concatenation":
                parts.extend(self._parts_with_gaps(node))
            else:
                parts.append(node)
        return self._parts_chunks(parts, st, quoted, self.script.loc(group[0]))

    def _parts_chunks(self, parts, st: State, quoted: bool, word_loc) -> list:
        """Chunks of a word's parts: nodes, and source text between them (literal)."""
        out = []
        i = 0
        while i < len(parts):
            part = parts[i]
            if isinstance(part, str):
                out.append(Chunk(unescape_double(part) if quoted else part, quoted, True, word_loc))
                i += 1
                continue
            if (
                part.type == "$"
                and i + 1 < len(parts)
                and not isinstance(parts[i + 1], str)
                and parts[i + 1].type in ("word", "number")
                and parts[i + 1].start_byte == part.end_byte
            ):
                text = self.script.text(parts[i + 1])
                m = _NAME_PREFIX.match(text)
                if m:
                    loc = self.script.loc(part)
                    out.extend(self._value_chunks(self.param_scalar(m.group(0), st, loc), quoted, loc))
                    rest, _ = unescape_unquoted(text[m.end() :])
                    if rest:
                        out.append(Chunk(rest, quoted, True, loc))
                    i += 2
                    continue
            out.extend(self.chunks(part, st, quoted))
            i += 1
        return out

    def _parts_with_gaps(self, node, start: int | None = None, end: int | None = None) -> list:
        """The children within [start, end) and the source text between them."""
        pos = node.start_byte if start is None else start
        end = node.end_byte if end is None else end
        parts = []
        for child in node.children:
            if child.start_byte < pos or child.end_byte > end:
                continue
            if child.start_byte > pos:
                parts.append(self.script.source[pos : child.start_byte].decode("utf-8", "replace"))
            parts.append(child)
            pos = child.end_byte
        if pos < end:
            parts.append(self.script.source[pos:end].decode("utf-8", "replace"))
        return parts

    def expand_one(self, node, st: State, extra=()) -> Field:
        """Expansion without splitting (assignment values, case subjects, [[ ]])."""
        return join_field(self.group_chunks([node, *extra], st), self.script.loc(node))

    def expand_pattern(self, node, st: State):
        return pattern_regex(self.chunks(node, st, False))

    def ifs(self, st: State) -> str:
        var = st.vars.get("IFS")
        if var is None:
            return DEFAULT_IFS
        value = scalar_of(var)
        if value is None:
            return ""
        return value.value if value.known else DEFAULT_IFS

    # ---- chunks -------------------------------------------------------
    def chunks(self, node, st: State, quoted: bool) -> list:
        t = node.type
        if t in _MAY_START_EARLY:
            # tree-sitter-bash can start an expansion at the blanks before it
            # ("${A:-1} $B", "${A:-1} ${B}"): that text belongs to the word, before it.
            text = self.script.text(node)
            lead = text[: len(text) - len(text.lstrip())]
            if lead:
                return [Chunk(lead, quoted, True, self.script.loc(node)), *self._chunks(node, st, quoted)]
        return self._chunks(node, st, quoted)

    def _chunks(self, node, st: State, quoted: bool) -> list:
        t = node.type
        loc = self.script.loc(node)
        if t in LITERAL_TYPES:
            text = self.script.text(node)
            if quoted:
                return [Chunk(unescape_double(text), True, True, loc)]
            if not quoted and t == "word" and text.startswith("~"):
                return self._tilde(text, st, loc)
            plain, escaped = unescape_unquoted(text)
            if escaped and t in ("word", "regex", "extglob_pattern"):
                return self._escaped_word(text, loc)
            return [Chunk(plain, False, True, loc)]
        if t == "raw_string":
            return [Chunk(self.script.text(node)[1:-1], True, True, loc)]
        if t == "ansi_c_string":
            return [Chunk(decode_ansi_c(self.script.text(node)[2:-1]), True, True, loc)]
        if t in ("string", "translated_string"):
            return self._double_quoted(node, st, loc)
        if t == "string_content":
            return [Chunk(unescape_double(self.script.text(node)), True, True, loc)]
        if t == "concatenation":
            return self._concat(node, st, quoted, loc)
        if t == "simple_expansion":
            return self._simple_expansion(node, st, quoted, loc)
        if t == "expansion":
            return self._expansion(node, st, quoted, loc)
        if t == "command_substitution":
            expr = arithmetic_text(self.script.text(node))
            if expr is not None:  # `$((A + B))` read as `$( (A + B) )` inside `${X:-...}`
                return self._arith_chunks(expr, node, st, quoted, loc)
            output = self.command_output(node, st)
            if output is not None:
                return [Chunk(p, quoted, False, loc) for p in output.pieces] or [Chunk("", quoted, False, loc)]
        if t in ("command_substitution", "process_substitution"):
            why = "output of a command" if t == "command_substitution" else "a process substitution"
            return [Chunk(Unknown(self.script.text(node), why), quoted, False, loc)]
        if t == "arithmetic_expansion":
            value = self.arithmetic(arith_operands(node), st, loc)
            piece = (
                str(value) if value is not None else Unknown(self.script.text(node), "arithmetic on an unknown value")
            )
            return [Chunk(piece, quoted, False, loc)]
        if t == "brace_expression":
            return [Chunk(self.script.text(node), quoted, True, loc)]
        # Anything else inside a word: keep its text literally.
        return [Chunk(self.script.text(node), quoted, True, loc)]

    def _escaped_word(self, text: str, loc) -> list:
        """An unquoted word with backslashes: escaped characters are quoted."""
        out = []
        buf = []
        i = 0
        while i < len(text):
            ch = text[i]
            if ch == "\\" and i + 1 < len(text):
                if buf:
                    out.append(Chunk("".join(buf), False, True, loc))
                    buf = []
                if text[i + 1] != "\n":
                    out.append(Chunk(text[i + 1], True, True, loc))
                i += 2
                continue
            buf.append(ch)
            i += 1
        if buf:
            out.append(Chunk("".join(buf), False, True, loc))
        return out

    def _tilde(self, text: str, st: State, loc) -> list:
        head, sep, rest = text.partition("/")
        if head != "~":
            plain, _ = unescape_unquoted(text)
            return [Chunk(plain, False, True, loc)]
        home = self.lookup_scalar("HOME", st, loc)
        pieces = home.pieces if home is not None else ("~",)
        out = [Chunk(p, True, False, loc) for p in pieces]
        if sep:
            plain, _ = unescape_unquoted("/" + rest)
            out.append(Chunk(plain, False, True, loc))
        return out

    def _double_quoted(self, node, st: State, loc) -> list:
        children = node.children
        start = node.start_byte + (2 if node.type == "translated_string" else 1)
        end = node.end_byte - 1 if children and children[-1].type == '"' else node.end_byte
        out = self._parts_chunks(self._parts_with_gaps(node, start, end), st, True, loc)
        if not any(self._is_all_elements(c) for c in node.children):
            out.append(Chunk("", True, True, loc))
        return out

    def _concat(self, node, st: State, quoted: bool, loc) -> list:
        return self.group_chunks([node], st, quoted)

    def _is_all_elements(self, node) -> bool:
        """`$@`, `${X[@]}` (and `${X[@]...}`): expansions that yield one field per element."""
        if node.type == "simple_expansion":
            return self.script.text(node).lstrip() == "$@"
        if node.type == "expansion":
            text = self.script.text(node).lstrip()
            if text == "${@}" or text.startswith("${@:") or text.startswith("${@/"):
                return True
            for c in node.named_children:
                if c.type == "subscript":
                    idx = c.child_by_field_name("index")
                    return (
                        idx is not None
                        and self.script.text(idx) == "@"
                        and not text.startswith("${#")
                        and not text.startswith("${!")
                    )
        return False

    # ---- parameters ---------------------------------------------------
    def _elements_chunks(self, fields, quoted: bool, loc, sep_join: bool) -> list:
        """Chunks for a list of values: separate fields when quoted "[@]", else joined."""
        out = []
        for i, f in enumerate(fields):
            if i:
                if quoted and not sep_join:
                    out.append(BREAK)
                else:
                    out.append(Chunk(" ", quoted, False, loc))
            if not f.pieces:
                out.append(Chunk("", quoted, False, f.loc or loc))
            for p in f.pieces:
                out.append(Chunk(p, quoted, False, f.loc or loc))
        return out

    def _value_chunks(self, value: Field | None, quoted: bool, loc) -> list:
        if value is None:
            return []
        if not value.pieces:
            return [Chunk("", quoted, False, value.loc or loc)]
        return [Chunk(p, quoted, False, value.loc or loc) for p in value.pieces]

    def _simple_expansion(self, node, st: State, quoted: bool, loc) -> list:
        name = self.script.text(node).lstrip()[1:]
        if name in ("@", "*"):
            return self._elements_chunks(list(st.positional), quoted, loc, name == "*")
        return self._value_chunks(self.param_scalar(name, st, loc), quoted, loc)

    def param_scalar(self, name: str, st: State, loc) -> Field | None:
        """$NAME for scalars and special parameters; raises ShellExit under set -u."""
        if name == "#":
            return Field.of(str(len(st.positional)), loc)
        if name.isdigit():
            i = int(name)
            if i == 0:
                return Field.of(self.ctx.script_name, loc)
            if i <= len(st.positional):
                return st.positional[i - 1]
            self.nounset_check(name, st, loc)
            return None
        if name == "?":
            return (
                Field.of(str(st.status), loc)
                if st.status is not None
                else Field((Unknown("$?", "an exit status"),), loc)
            )
        if name in ("$", "!", "-", "_", "RANDOM", "SECONDS", "LINENO", "BASHPID", "PPID"):
            return Field((Unknown("$" + name, "a runtime value"),), loc)
        if name == "@" or name == "*":
            return join_field(self._elements_chunks(list(st.positional), True, loc, True))
        return self.lookup_scalar(name, st, loc)

    def lookup_scalar(self, name: str, st: State, loc, check_unset: bool = True) -> Field | None:
        var = st.vars.get(name)
        if var is not None and var.value is not None:
            return scalar_of(var)
        if var is None:
            missing = self.ctx.missing(name)
            if missing is not None:
                if check_unset and st.nounset and name not in self.ctx.always_set:
                    self.note_once(
                        st,
                        loc,
                        NoteKind.UNSET_VARIABLE,
                        f"`set -u` is on and {name} is never assigned: the script stops here unless {name} is exported",
                        name,
                    )
                return missing
        if check_unset:
            self.nounset_check(name, st, loc)
        return None

    def nounset_check(self, name: str, st: State, loc) -> None:
        if st.nounset:
            raise ShellExit(
                1,
                Note(NoteKind.UNBOUND_VARIABLE, loc, f"bash stops here: {name} is unbound under `set -u`", name),
            )

    def is_set(self, name: str, st: State) -> bool | None:
        """True/False when known, None when it depends on the environment."""
        if name in ("@", "*"):
            return len(st.positional) > 0
        if name.isdigit():
            return int(name) == 0 or int(name) <= len(st.positional)
        var = st.vars.get(name)
        if var is not None:
            return var.value is not None
        return None if self.ctx.missing(name) is not None else False

    def _expansion(self, node, st: State, quoted: bool, loc) -> list:
        parts = self._expansion_parts(node)
        prefix, target, ops = parts
        if target is None:
            if prefix == "#":  # ${#}
                return [Chunk(str(len(st.positional)), quoted, False, loc)]
            return [Chunk(Unknown(self.script.text(node), "an unsupported expansion"), quoted, False, loc)]
        name, index = target
        if prefix == "!":
            if index in ("@", "*") or ops and ops[0][0] in ("*", "@"):
                return [Chunk(Unknown(self.script.text(node), "indirect expansion"), quoted, False, loc)]
            ref = self.lookup_scalar(name, st, loc)
            if ref is None or not ref.known:
                return [Chunk(Unknown(self.script.text(node), "indirect expansion"), quoted, False, loc)]
            name = ref.value
            index = None
            if "[" in name and name.endswith("]"):
                name, _, idx = name[:-1].partition("[")
                index = idx
        if prefix == "#":
            return self._length(name, index, st, quoted, loc)
        if index is None and name in ("@", "*"):
            index = name  # ${@:1}, ${*/a/b}: every positional parameter
        if index in ("@", "*"):
            values = self._all_elements(name, st)
            if not ops:
                if values is None:
                    return []
                return self._elements_chunks(values, quoted, loc, index == "*")
            return self._apply_ops_list(node, name, index, values, ops, st, quoted, loc)
        value = self._element(name, index, st, loc, check_unset=not ops or ops[0][0] not in _DEFAULT_OPS)
        if not ops:
            return self._value_chunks(value, quoted, loc)
        return self._apply_op(node, name, index, value, ops, st, quoted, loc)

    def _expansion_parts(self, node):
        """Split `${...}` into (prefix op, (name, index) | None, [(op, [operand nodes])])."""
        children = (
            node.children[1:-1] if node.children and self.script.text(node.children[-1]) == "}" else node.children[1:]
        )
        prefix = None
        target = None
        ops: list = []
        for child in children:
            if target is None and not ops:
                if child.type in ("variable_name", "special_variable_name"):
                    target = (self.script.text(child), None)
                    continue
                if child.type == "subscript":
                    name = child.child_by_field_name("name")
                    idx = child.child_by_field_name("index")
                    target = (self.script.text(name), self.script.text(idx) if idx is not None else "0")
                    continue
                if not child.is_named and self.script.text(child) in ("#", "!") and prefix is None:
                    prefix = self.script.text(child)
                    continue
                if child.type == "word" and self.script.text(child) in SPECIAL_PARAMS | {"@"}:
                    target = (self.script.text(child), None)
                    continue
            if not child.is_named and child.type not in ("word",) and self._is_op_token(child):
                ops.append((self.script.text(child), []))
                continue
            if ops:
                ops[-1][1].append(child)
            elif target is None and prefix == "#" and child.type == "number":
                target = (self.script.text(child), None)
        return prefix, target, ops

    def _is_op_token(self, node) -> bool:
        return self.script.text(node) in _ALL_OPS

    def _all_elements(self, name: str, st: State):
        if name in ("@", "*"):
            return list(st.positional)
        var = st.vars.get(name)
        if var is None:
            missing = self.ctx.missing(name)
            return [missing] if missing is not None else None
        if var.value is None:
            return None
        return elements_of(var)

    def _element(self, name: str, index, st: State, loc, check_unset=True) -> Field | None:
        if index is None or index == "0" and not self._is_array(name, st):
            return self.param_scalar(name, st, loc) if check_unset else self._scalar_quiet(name, st, loc)
        var = st.vars.get(name)
        if var is None or var.value is None:
            if var is None and self.ctx.missing(name) is not None:
                return Field((Unknown(f"${{{name}[{index}]}}", f"environment variable {name}"),), loc)
            if check_unset:
                self.nounset_check(f"{name}[{index}]", st, loc)
            return None
        value = var.value
        if isinstance(value, dict):
            key = self._index_key(index, st, assoc=True, loc=loc)
            return (
                value.get(key)
                if key is not None
                else Field((Unknown(f"${{{name}[{index}]}}", "an unknown index"),), loc)
            )
        i = self._index_key(index, st, assoc=False, loc=loc)
        if i is None:
            return Field((Unknown(f"${{{name}[{index}]}}", "an unknown index"),), loc)
        if isinstance(value, Field):
            return value if i == 0 else None
        if i < 0:
            i += len(value)
        return value[i] if 0 <= i < len(value) else None

    def _scalar_quiet(self, name: str, st: State, loc) -> Field | None:
        if name.isdigit() or name in SPECIAL_PARAMS:
            if name.isdigit() and name != "0" and int(name) > len(st.positional):
                return None
            return self.param_scalar(name, st, loc)
        return self.lookup_scalar(name, st, loc, check_unset=False)

    def _is_array(self, name: str, st: State) -> bool:
        var = st.vars.get(name)
        return var is not None and var.is_array

    def _index_key(self, index: str, st: State, assoc: bool, loc):
        if assoc:
            return self._expand_text_snippet(index, st)
        try:
            return int(index)
        except ValueError:
            pass
        return self.arithmetic(index, st, loc)

    def _expand_text_snippet(self, text: str, st: State) -> str | None:
        """The value of an associative array's index text, expanded as in double quotes."""
        snippet = parse_script("<index>", f"x {text}".encode())
        commands = [c for c in snippet.root.named_children if c.type == "command"]
        if not commands:
            return None
        with self.reading(snippet):
            args = [c for c in commands[0].named_children if c.type != "command_name"]
            return join_field([c for a in args for c in self.chunks(a, st, True)]).value

    def _length(self, name, index, st, quoted, loc) -> list:
        if index in ("@", "*"):
            values = self._all_elements(name, st)
            return [Chunk(str(len(values or [])), quoted, False, loc)]
        value = self._element(name, index, st, loc)
        if value is None:
            return [Chunk("0", quoted, False, loc)]
        if not value.known:
            return [Chunk(Unknown(f"${{#{name}}}", "length of an unknown value"), quoted, False, loc)]
        return [Chunk(str(len(value.value)), quoted, False, loc)]

    def _arith_chunks(self, expr: str, node, st: State, quoted: bool, loc) -> list:
        value = self.arithmetic(expr, st, loc)
        piece = str(value) if value is not None else Unknown(self.script.text(node), "arithmetic on an unknown value")
        return [Chunk(piece, quoted, False, loc)]

    def _operand(self, nodes, st: State, quoted: bool) -> list:
        for n in nodes:
            if n.type == "ERROR" and n.parent is not None and n.parent.type == "expansion":
                # `${X:-$(((A + B) * C))}`: tree-sitter-bash cannot parse it; bash can
                expr = expansion_operand_arithmetic(self.script, n.parent)
                if expr is not None:
                    return self._arith_chunks(expr, n.parent, st, quoted, self.script.loc(n))
        out = []
        for i, n in enumerate(nodes):
            if i and n.start_byte > nodes[i - 1].end_byte:
                gap = self.script.source[nodes[i - 1].end_byte : n.start_byte].decode("utf-8", "replace")
                out.append(Chunk(gap, quoted, True, self.script.loc(n)))
            out.extend(self.chunks(n, st, quoted))
        return out

    def _apply_op(self, node, name, index, value, ops, st, quoted, loc) -> list:
        op, operand = ops[0]
        if op in _DEFAULT_OPS:
            colon = op.startswith(":")
            if value is None:
                state = self.is_set(name, st) if index is None else False
                if state is None:
                    state = False
                is_set = state
                empty = True
            else:
                is_set = True
                empty = value.known and value.value == ""
                if not value.known and colon:
                    # Unknown content: could be empty. Assume non-empty (the usual case).
                    empty = False
            use_default = (not is_set) or (colon and empty)
            kind = op.lstrip(":")
            if kind == "-":
                return self._operand(operand, st, quoted) if use_default else self._value_chunks(value, quoted, loc)
            if kind == "=":
                if use_default:
                    new = join_field(self._operand(operand, st, quoted), loc)
                    self.assign_scalar(st, name, new, loc)
                    return self._value_chunks(new, quoted, loc)
                return self._value_chunks(value, quoted, loc)
            if kind == "+":
                return [] if use_default else self._operand(operand, st, quoted)
            if kind == "?":
                if use_default:
                    msg = join_field(self._operand(operand, st, True), loc).display or "parameter null or not set"
                    raise ShellExit(1, Note(NoteKind.PARAMETER_ERROR, loc, f"bash stops here: {name}: {msg}", name))
                return self._value_chunks(value, quoted, loc)
        if value is None:
            value = Field((), loc)
        if not value.known:
            return [Chunk(Unknown(self.script.text(node), f"{op} on an unknown value"), quoted, False, loc)]
        text = value.value
        result = self._string_op(op, operand, ops, text, st, node)
        if result is None:
            return [Chunk(Unknown(self.script.text(node), "an operator on an unknown operand"), quoted, False, loc)]
        return [Chunk(result, quoted, False, value.loc or loc)]

    def _apply_ops_list(self, node, name, index, values, ops, st, quoted, loc) -> list:
        op, operand = ops[0]
        if op in _DEFAULT_OPS:
            present = values is not None and len(values) > 0
            kind = op.lstrip(":")
            if kind == "-" and not present:
                return self._operand(operand, st, quoted)
            if kind == "+":
                return self._operand(operand, st, quoted) if present else []
            return self._elements_chunks(values or [], quoted, loc, index == "*")
        if op == ":":
            # ${X[@]:offset:length}
            vals = values or []
            start = self._arith_operand(operand, st)
            length = self._arith_operand(ops[1][1], st) if len(ops) > 1 else None
            if start is None or (len(ops) > 1 and length is None):
                return [Chunk(Unknown(self.script.text(node), "a slice with unknown bounds"), quoted, False, loc)]
            if name in ("@", "*"):
                vals = [Field.of(self.ctx.script_name, loc)] + vals
            if start < 0:
                start = max(0, len(vals) + start)
            sliced = vals[start:] if length is None else vals[start : start + length]
            return self._elements_chunks(sliced, quoted, loc, index == "*")
        out = []
        for v in values or []:
            if not v.known:
                out.append(Field((Unknown(self.script.text(node), "an operator on an unknown value"),), v.loc))
                continue
            r = self._string_op(op, operand, ops, v.value, st, node)
            out.append(
                Field.of(r, v.loc)
                if r is not None
                else Field((Unknown(self.script.text(node), "an operator on an unknown operand"),), v.loc)
            )
        return self._elements_chunks(out, quoted, loc, index == "*")

    def _arith_operand(self, nodes, st) -> int | None:
        text_field = join_field(self._operand(nodes, st, True))
        if not text_field.known:
            return None
        return self.arithmetic(text_field.value, st, text_field.loc)

    def _string_op(self, op, operand, ops, text: str, st, node) -> str | None:
        if op in ("#", "##", "%", "%%"):
            rx = pattern_regex(self._operand(operand, st, False))
            if rx is None:
                return None
            return _remove(text, rx, op)
        if op in ("/", "//", "/#", "/%"):
            rx = pattern_regex(self._operand(operand, st, False))
            repl_nodes = ops[1][1] if len(ops) > 1 and ops[1][0] == "/" else []
            repl = join_field(self._operand(repl_nodes, st, False)) if repl_nodes else Field(())
            if rx is None or not repl.known:
                return None
            return _substitute(text, rx, repl.value, op)
        if op == ":":
            start = self._arith_operand(operand, st)
            if start is None:
                return None
            length = None
            if len(ops) > 1 and ops[1][0] == ":":
                length = self._arith_operand(ops[1][1], st)
                if length is None:
                    return None
            if start < 0:
                start = max(0, len(text) + start)
            if length is None:
                return text[start:]
            if length < 0:
                end = len(text) + length
                return text[start:end] if end >= start else None
            return text[start : start + length]
        if op == ",,":
            return text.lower()
        if op == "^^":
            return text.upper()
        if op == ",":
            return text[:1].lower() + text[1:]
        if op == "^":
            return text[:1].upper() + text[1:]
        if op == "@Q":
            return "'" + text.replace("'", "'\\''") + "'"
        return None

    # ---- arithmetic ---------------------------------------------------
    def arithmetic(self, expr, st: State, loc) -> int | None:
        """The one way into bash arithmetic: `expr` is expression text (`let`, an index,
        `shift N`) or the expression nodes of `$(( ))`, `(( ))`, `for ((;;))`.

        The value, or None when it depends on something unknown or on a form this
        evaluator does not read. A bash arithmetic error raises ArithFailure: the
        script stops, unless an arithmetic command catches it."""
        if isinstance(expr, str):
            n = parse_int(expr)
            if n is not None:
                return n
            snippet = parse_script("<arith>", f"(( {expr} ))".encode())
            node = snippet.root.named_children[0] if snippet.root.named_children else None
            if node is None or node.type != "compound_statement":
                return None
            with self.reading(snippet):
                return self._arithmetic(arith_operands(node), st, loc)
        return self._arithmetic(expr, st, loc)

    def _arithmetic(self, nodes, st: State, loc) -> int | None:
        calc = self._arith(st, loc)
        value = None
        try:
            for node in nodes:
                value = calc.eval(node)
        except ArithError as err:
            raise ArithFailure(err, loc) from err
        except (Unsupported, RecursionError):
            return None
        return value

    def _arith(self, st: State, loc) -> Arithmetic:
        interp = self

        class Env:
            def get(self, name):
                var = st.vars.get(name)
                if var is None:
                    if interp.ctx.missing(name) is not None:
                        return False
                    return None
                f = scalar_of(var)
                if f is None:
                    return None
                return f.value if f.known else False

            def set(self, name, value):
                field = (
                    Field.of(str(value))
                    if value is not None
                    else Field((Unknown(None, f"{name} after arithmetic on an unknown value"),))
                )
                interp.assign_scalar(st, name, field, None)

            def eval_text(self, text):
                return interp.arithmetic(text, st, loc)

        def expand_text(n):
            f = join_field(self.chunks(n, st, True))
            return f.value if f.known else None

        return Arithmetic(Env(), self.script.text, expand_text)


_DEFAULT_OPS = {":-", "-", ":=", "=", ":+", "+", ":?", "?"}
_ALL_OPS = _DEFAULT_OPS | {"#", "##", "%", "%%", "/", "//", "/#", "/%", ":", ",,", "^^", ",", "^", "@Q", "@", "*"}


def _remove(text: str, rx, op: str) -> str:
    n = len(text)
    if op == "#":
        for i in range(n + 1):
            if rx.fullmatch(text, 0, i):
                return text[i:]
    elif op == "##":
        for i in range(n, -1, -1):
            if rx.fullmatch(text, 0, i):
                return text[i:]
    elif op == "%":
        for i in range(n, -1, -1):
            if rx.fullmatch(text, i, n):
                return text[:i]
    else:
        for i in range(n + 1):
            if rx.fullmatch(text, i, n):
                return text[:i]
    return text


def _substitute(text: str, rx, repl: str, op: str) -> str:
    n = len(text)
    if op == "/#":
        for j in range(n, -1, -1):
            if rx.fullmatch(text, 0, j):
                return repl + text[j:]
        return text
    if op == "/%":
        for i in range(n + 1):
            if rx.fullmatch(text, i, n):
                return text[:i] + repl
        return text
    out = []
    i = 0
    replaced = False
    while i <= n:
        match_end = None
        if not (replaced and op == "/"):
            for j in range(n, i - 1, -1):
                if rx.fullmatch(text, i, j):
                    match_end = j
                    break
        if match_end is not None and match_end > i:
            out.append(repl)
            i = match_end
            replaced = True
            continue
        if i < n:
            out.append(text[i])
        i += 1
    return "".join(out)


__all__ = ["ArithFailure", "ShellExit", "WordExpander", "arith_operands", "join_pieces"]
