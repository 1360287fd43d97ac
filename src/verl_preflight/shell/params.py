"""Parameter expansion: `$NAME`, `${NAME...}` operators, special parameters, arrays.

`Parameters` is the expander's collaborator for everything that reads a
variable; it raises ShellExit where bash stops (`set -u`, `${V:?}`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import ShellExit
from .limits import OverBound, meter
from .nodes import DEFAULT_OPS
from .notes import Note, NoteKind
from .parse import expansion_operand_arithmetic, parse_script
from .state import State, Var, elements_of, elements_unknown, scalar_of
from .words import Chunk, Field, Unknown, join_field, pattern_regex

if TYPE_CHECKING:
    from .expand import Expander

SPECIAL_PARAMS = {"@", "*", "#", "?", "$", "!", "0", "-", "_"}
_ALL_OPS = DEFAULT_OPS | {"#", "##", "%", "%%", "/", "//", "/#", "/%", ":", ",,", "^^", ",", "^", "@Q", "@", "*"}


def _bounded(string_op, loc):
    """What a string operator gives (text, or None when unknown); past a bound of the tool
    (a match too costly, a value too long), the unknown piece that says so."""
    try:
        return string_op()
    except OverBound as past:
        return meter().over(past.why, loc)


class Parameters:
    """Reads variables and parameters for the expander."""

    def __init__(self, expander: Expander):
        self.x = expander
        self.host = expander.host

    def simple_expansion(self, node, st: State, quoted: bool, loc) -> list:
        name = self.host.script.text(node).lstrip()[1:]
        if name in ("@", "*"):
            return self.x.elements_chunks(list(st.positional), quoted, loc, name == "*")
        return self.x.value_chunks(self.param_scalar(name, st, loc), quoted, loc)

    def param_scalar(self, name: str, st: State, loc) -> Field | None:
        """$NAME for scalars and special parameters; raises ShellExit under set -u."""
        if name == "#":
            return Field.of(str(len(st.positional)), loc)
        if name.isdigit():
            i = int(name)
            if i == 0:
                return Field.of(self.host.script_name, loc)
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
            return join_field(self.x.elements_chunks(list(st.positional), True, loc, True))
        return self.lookup_scalar(name, st, loc)

    def lookup_scalar(self, name: str, st: State, loc, check_unset: bool = True) -> Field | None:
        var = st.vars.get(name)
        if var is not None and var.value is not None:
            return scalar_of(var)
        if var is None:
            missing = self.host.missing(name)
            if missing is not None:
                if check_unset and st.nounset and name not in self.host.always_set:
                    self.host.note_once(
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
        return None if self.host.missing(name) is not None else False

    def expansion(self, node, st: State, quoted: bool, loc) -> list:
        parts = self._expansion_parts(node)
        prefix, target, ops = parts
        if target is None:
            if prefix == "#":  # ${#}
                return [Chunk(str(len(st.positional)), quoted, False, loc)]
            return [Chunk(Unknown(self.host.script.text(node), "an unsupported expansion"), quoted, False, loc)]
        name, index = target
        if prefix == "!":
            if index in ("@", "*") or ops and ops[0][0] in ("*", "@"):
                return [Chunk(Unknown(self.host.script.text(node), "indirect expansion"), quoted, False, loc)]
            ref = self.lookup_scalar(name, st, loc)
            if ref is None or not ref.known:
                return [Chunk(Unknown(self.host.script.text(node), "indirect expansion"), quoted, False, loc)]
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
                return self.x.elements_chunks(values, quoted, loc, index == "*")
            return self._apply_ops_list(node, name, index, values, ops, st, quoted, loc)
        value = self._element(name, index, st, loc, check_unset=not ops or ops[0][0] not in DEFAULT_OPS)
        if not ops:
            return self.x.value_chunks(value, quoted, loc)
        return self._apply_op(node, name, index, value, ops, st, quoted, loc)

    def _expansion_parts(self, node):
        """Split `${...}` into (prefix op, (name, index) | None, [(op, [operand nodes])])."""
        children = (
            node.children[1:-1]
            if node.children and self.host.script.text(node.children[-1]) == "}"
            else node.children[1:]
        )
        prefix = None
        target = None
        ops: list = []
        for child in children:
            if target is None and not ops:
                if child.type in ("variable_name", "special_variable_name"):
                    target = (self.host.script.text(child), None)
                    continue
                if child.type == "subscript":
                    name = child.child_by_field_name("name")
                    idx = child.child_by_field_name("index")
                    target = (self.host.script.text(name), self.host.script.text(idx) if idx is not None else "0")
                    continue
                if not child.is_named and self.host.script.text(child) in ("#", "!") and prefix is None:
                    prefix = self.host.script.text(child)
                    continue
                if child.type == "word" and self.host.script.text(child) in SPECIAL_PARAMS | {"@"}:
                    target = (self.host.script.text(child), None)
                    continue
            if not child.is_named and child.type not in ("word",) and self._is_op_token(child):
                ops.append((self.host.script.text(child), []))
                continue
            if ops:
                ops[-1][1].append(child)
            elif target is None and prefix == "#" and child.type == "number":
                target = (self.host.script.text(child), None)
        return prefix, target, ops

    def _is_op_token(self, node) -> bool:
        return self.host.script.text(node) in _ALL_OPS

    def _all_elements(self, name: str, st: State):
        if name in ("@", "*"):
            return list(st.positional)
        var = st.vars.get(name)
        if var is None:
            missing = self.host.missing(name)
            return [missing] if missing is not None else None
        if var.value is None:
            return None
        return elements_of(var)

    def _element(self, name: str, index, st: State, loc, check_unset=True) -> Field | None:
        if index is None or index == "0" and not self._is_array(name, st):
            return self.param_scalar(name, st, loc) if check_unset else self._scalar_quiet(name, st, loc)
        var = st.vars.get(name)
        if var is None or var.value is None:
            if var is None and self.host.missing(name) is not None:
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
            if i == 0:
                return value
            if elements_unknown(value):  # `read -a A`, an array past a bound: each element unknown
                return Field((Unknown(f"${{{name}[{index}]}}", "an element of an array not known here"),), loc)
            return None
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
        return self.x.arithmetic(index, st, loc)

    def _expand_text_snippet(self, text: str, st: State) -> str | None:
        """The value of an associative array's index text, expanded as in double quotes."""
        snippet = parse_script("<index>", f"x {text}".encode())
        commands = [c for c in snippet.root.named_children if c.type == "command"]
        if not commands:
            return None
        with self.host.reading(snippet):
            args = [c for c in commands[0].named_children if c.type != "command_name"]
            return join_field([c for a in args for c in self.x.chunks(a, st, True)]).value

    def _length(self, name, index, st, quoted, loc) -> list:
        if index in ("@", "*"):
            var = st.vars.get(name)
            if var is not None and elements_unknown(var.value):  # `read -a A`, an array past a bound
                count = Unknown(f"${{#{name}[{index}]}}", "how many elements: not known here")
                return [Chunk(count, quoted, False, loc)]
            return [Chunk(str(len(self._all_elements(name, st) or [])), quoted, False, loc)]
        value = self._element(name, index, st, loc)
        if value is None:
            return [Chunk("0", quoted, False, loc)]
        if not value.known:
            return [Chunk(Unknown(f"${{#{name}}}", "length of an unknown value"), quoted, False, loc)]
        return [Chunk(str(len(value.value)), quoted, False, loc)]

    def arith_chunks(self, expr: str, node, st: State, quoted: bool, loc) -> list:
        value = self.x.arithmetic(expr, st, loc)
        piece = (
            str(value) if value is not None else Unknown(self.host.script.text(node), "arithmetic on an unknown value")
        )
        return [Chunk(piece, quoted, False, loc)]

    def _operand(self, nodes, st: State, quoted: bool) -> list:
        for n in nodes:
            if n.type == "ERROR" and n.parent is not None and n.parent.type == "expansion":
                # `${X:-$(((A + B) * C))}`: tree-sitter-bash cannot parse it; bash can
                expr = expansion_operand_arithmetic(self.host.script, n.parent)
                if expr is not None:
                    return self.arith_chunks(expr, n.parent, st, quoted, self.host.script.loc(n))
        out = []
        for i, n in enumerate(nodes):
            if i and n.start_byte > nodes[i - 1].end_byte:
                gap = self.host.script.source[nodes[i - 1].end_byte : n.start_byte].decode("utf-8", "replace")
                out.append(Chunk(gap, quoted, True, self.host.script.loc(n)))
            out.extend(self.x.chunks(n, st, quoted))
        return out

    def _apply_op(self, node, name, index, value, ops, st, quoted, loc) -> list:
        op, operand = ops[0]
        if op in DEFAULT_OPS:
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
                return self._operand(operand, st, quoted) if use_default else self.x.value_chunks(value, quoted, loc)
            if kind == "=":
                if use_default:
                    new = join_field(self._operand(operand, st, quoted), loc)
                    self.host.assign_scalar(st, name, new, loc)
                    return self.x.value_chunks(new, quoted, loc)
                return self.x.value_chunks(value, quoted, loc)
            if kind == "+":
                if use_default:
                    return []
                if index is None and name not in st.vars and not value.known:
                    return self._operand_where_set(name, value, operand, st, quoted)
                return self._operand(operand, st, quoted)
            if kind == "?":
                if use_default:
                    msg = join_field(self._operand(operand, st, True), loc).display or "parameter null or not set"
                    raise ShellExit(1, Note(NoteKind.PARAMETER_ERROR, loc, f"bash stops here: {name}: {msg}", name))
                return self.x.value_chunks(value, quoted, loc)
        if value is None:
            value = Field((), loc)
        if not value.known:
            return [Chunk(Unknown(self.host.script.text(node), f"{op} on an unknown value"), quoted, False, loc)]
        result = _bounded(lambda: self._string_op(op, operand, ops, value.value, st, node), loc)
        if result is None:
            return [
                Chunk(Unknown(self.host.script.text(node), "an operator on an unknown operand"), quoted, False, loc)
            ]
        return [Chunk(result, quoted, False, value.loc or loc)]

    def _operand_where_set(self, name: str, value, operand, st: State, quoted: bool) -> list:
        """The operand of `${NAME:+...}` for a NAME from the environment: it is read only where NAME
        is set, so inside it NAME is set (to its unknown value) and `set -u` does not stop on it."""
        st.vars[name] = Var(value)
        try:
            return self._operand(operand, st, quoted)
        finally:
            del st.vars[name]

    def _apply_ops_list(self, node, name, index, values, ops, st, quoted, loc) -> list:
        op, operand = ops[0]
        if op in DEFAULT_OPS:
            present = values is not None and len(values) > 0
            kind = op.lstrip(":")
            if kind == "-" and not present:
                return self._operand(operand, st, quoted)
            if kind == "+":
                return self._operand(operand, st, quoted) if present else []
            return self.x.elements_chunks(values or [], quoted, loc, index == "*")
        if op == ":":
            # ${X[@]:offset:length}
            vals = values or []
            start = self._arith_operand(operand, st)
            length = self._arith_operand(ops[1][1], st) if len(ops) > 1 else None
            if start is None or (len(ops) > 1 and length is None):
                return [Chunk(Unknown(self.host.script.text(node), "a slice with unknown bounds"), quoted, False, loc)]
            if name in ("@", "*"):
                vals = [Field.of(self.host.script_name, loc)] + vals
            if start < 0:
                start = max(0, len(vals) + start)
            sliced = vals[start:] if length is None else vals[start : start + length]
            return self.x.elements_chunks(sliced, quoted, loc, index == "*")
        out = []
        for v in values or []:
            if not v.known:
                out.append(Field((Unknown(self.host.script.text(node), "an operator on an unknown value"),), v.loc))
                continue
            r = _bounded(lambda v=v: self._string_op(op, operand, ops, v.value, st, node), v.loc or loc)
            out.append(
                Field.of(r, v.loc)
                if isinstance(r, str)
                else Field((r or Unknown(self.host.script.text(node), "an operator on an unknown operand"),), v.loc)
            )
        return self.x.elements_chunks(out, quoted, loc, index == "*")

    def _arith_operand(self, nodes, st) -> int | None:
        text_field = join_field(self._operand(nodes, st, True))
        if not text_field.known:
            return None
        return self.x.arithmetic(text_field.value, st, text_field.loc)

    def _string_op(self, op, operand, ops, text: str, st, node) -> str | None:
        if op in ("#", "##", "%", "%%"):
            rx = pattern_regex(self._operand(operand, st, False))
            if rx is None:
                return None
            return rx.remove(text, op)
        if op in ("/", "//", "/#", "/%"):
            rx = pattern_regex(self._operand(operand, st, False))
            repl_nodes = ops[1][1] if len(ops) > 1 and ops[1][0] == "/" else []
            repl = join_field(self._operand(repl_nodes, st, False)) if repl_nodes else Field(())
            if rx is None or not repl.known:
                return None
            return rx.substitute(text, repl.value, op)
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
