"""Builtins: set, shift, exit/return/break/continue, source, eval, let, read,
printf, getopts, unset, and the declarations (declare, local, export, readonly,
typeset). `BUILTINS` maps each name to the part and method that run it; `test`
and `[` are read in conditions.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.values import Loc
from .expand import word_groups
from .notes import NoteKind
from .parse import Script, parse_script
from .state import ARRAY_READ_AT_RUN_TIME, READ_AT_RUN_TIME, State, Var, elements_of
from .substitution import printf_text
from .words import Field, Unknown

if TYPE_CHECKING:
    from .evaluate import Interpreter


class Builtins:
    """The builtins that change the state, the flow or the current file."""

    def __init__(self, interp: Interpreter):
        self.i = interp

    def x_unset_command(self, node, st, depth, in_cond):
        func = any(self.i.script.text(c) == "-f" for c in node.children)
        for c in node.named_children:
            text = self.i.script.text(c)
            if text.startswith("-"):
                continue
            if func:
                st.funcs.pop(text, None)
                continue
            if "[" in text:
                name, _, idx = text.partition("[")
                var = st.vars.get(name)
                if var is not None and isinstance(var.value, tuple):
                    i, _ = self.i.arith_command(idx.rstrip("]"), st, self.i.script.loc(c))
                    if i is not None and 0 <= i < len(var.value):
                        items = list(var.value)
                        items[i] = None
                        st.set_var(name, tuple(items))
                continue
            var = st.vars.get(text)
            if var is not None and var.readonly:
                continue
            if st.locals_stack:
                st.vars[text] = Var(None)
            else:
                st.vars.pop(text, None)
                st.vars[text] = Var(None)
        st.status = 0
        return [st]

    def b_set(self, node, argv, st, depth, loc):
        args = argv[1:]
        i = 0
        while i < len(args):
            text = args[i].value or ""
            if text == "--":
                st.positional = tuple(args[i + 1 :])
                break
            if text in ("-o", "+o") and i + 1 < len(args):
                opt = args[i + 1].value
                on = text == "-o"
                _set_option(st, opt, on)
                i += 2
                continue
            if text[:1] in "-+" and len(text) > 1:
                on = text[0] == "-"
                if "e" in text:
                    st.errexit = on
                if "u" in text:
                    st.nounset = on
                if "a" in text:
                    st.allexport = on
                if "o" in text[1:] and i + 1 < len(args):
                    _set_option(st, args[i + 1].value, on)
                    i += 1
                i += 1
                continue
            st.positional = tuple(args[i:])
            break
        st.status = 0
        return [st]

    def b_shift(self, node, argv, st, depth, loc):
        n = 1
        if len(argv) > 1:
            n, ok = self.i.arith_command(argv[1].value, st, loc) if argv[1].known else (None, True)
            if not ok:
                return [st]
            if n is None:
                st.status = None
                return [st]
        if n > len(st.positional):
            st.status = 1
            return [st]
        st.positional = st.positional[n:]
        st.status = 0
        return [st]

    def _code(self, argv, st) -> int | None:
        if len(argv) < 2:
            return st.status
        if not argv[1].known:
            return None
        from .arith import parse_int

        n = parse_int(argv[1].value)
        return None if n is None else n & 0xFF

    def b_exit(self, node, argv, st, depth, loc):
        st.flow, st.flow_arg = "exit", self._code(argv, st)
        st.status = st.flow_arg
        return [st]

    def b_return(self, node, argv, st, depth, loc):
        st.flow, st.flow_arg = "return", self._code(argv, st)
        return [st]

    def b_break(self, node, argv, st, depth, loc):
        levels = 1
        if len(argv) > 1 and argv[1].known:
            levels, ok = self.i.arith_command(argv[1].value, st, loc)
            if not ok:
                return [st]
        st.flow, st.flow_arg = argv[0].value, levels or 1
        return [st]

    def b_source(self, node, argv, st, depth, loc):
        if len(argv) < 2:
            st.status = 2
            return [st]
        target = argv[1]
        if not target.known:
            return [self.i.unfollowed(st, loc, f"source of a path that is not known statically ({target.display})")]
        path = self.i.commands.resolve_source(target.value)
        if path is None:
            return [self.i.unfollowed(st, loc, f"source of '{target.value}': no such readable file")]
        if st.source_depth >= self.i.ctx.budget.source_depth:
            return [self.i.give_up(st, node, f"source nested deeper than {self.i.ctx.budget.source_depth}")]
        script = self.i.ctx.load(path)
        if script is None:
            return [self.i.unfollowed(st, loc, f"source of '{target.value}': cannot read it")]
        saved_positional = st.positional
        if len(argv) > 2:
            st.positional = tuple(argv[2:])
        st.source_depth += 1
        # BASH_SOURCE is a stack, [0] the file being read: its path as found from here
        # (so that `$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)` in it is its directory)
        outer_source = st.vars.get("BASH_SOURCE")
        st.vars["BASH_SOURCE"] = Var((Field.of(path, target.loc), *elements_of(outer_source)))
        with self.i.reading(script):
            results = self.i.flow.exec_block(script.root, [st], depth)
        for r in results:
            if outer_source is not None:
                r.vars["BASH_SOURCE"] = outer_source
            else:
                r.vars.pop("BASH_SOURCE", None)
            r.source_depth -= 1
            if len(argv) > 2:
                r.positional = saved_positional
            if r.flow == "return":
                r.status = r.flow_arg if r.flow_arg is not None else r.status
                r.flow, r.flow_arg = None, 0
        return results

    def b_eval(self, node, argv, st, depth, loc):
        """`eval` of text known statically is read as bash reads it (and never run);
        its launches are reported at the `eval` line. Unknown text is not followed."""
        args = argv[1:]
        if not all(a.known for a in args):
            shown = " ".join(a.display for a in args)
            return [self.i.unfollowed(st, loc, f"eval of text that is not known statically ({shown[:60]})")]
        text = " ".join(a.value for a in args)
        if not text.strip():
            st.status = 0
            return [st]
        snippet = _EvalText(self.i.script.path, text.encode(), loc)
        forwarding, self.i.ctx.forwarding = self.i.ctx.forwarding, any(self._ends_with_script_args(a) for a in args)
        try:
            with self.i.reading(snippet):
                return self.i.flow.exec_block(snippet.root, [st], depth)
        finally:
            self.i.ctx.forwarding = forwarding

    def _ends_with_script_args(self, value) -> bool:
        """Whether the word that wrote `value` ends with the script's arguments
        (`COMMAND="python3 -m ... $@"; eval ${COMMAND}`): each profile runs the script with
        no arguments, so they leave no text in the value, but a run with some passes them."""
        loc = value.loc
        if loc is None:
            return False
        ctx = self.i.ctx
        candidates = (self.i.script, ctx.main_script, ctx.parsed.get(loc.path))
        script = next((s for s in candidates if s is not None and s.path == loc.path), None)
        if script is None:
            return False
        node, _ = script.word_at(loc)
        if node is None:
            return False
        return script.text(node).rstrip('"').rstrip().endswith(("$@", "${@}", "$*", "${*}"))

    def b_let(self, node, argv, st, depth, loc):
        value = None
        for f in argv[1:]:
            value, ok = self.i.arith_command(f.value, st, loc) if f.known else (None, True)
            if not ok:
                return [st]
        st.status = None if value is None else int(value == 0)
        return [st]

    def b_read(self, node, argv, st, depth, loc):
        names = []
        skip = False
        read = argv[0].value == "read"
        array = not read  # mapfile, readarray
        with_argument = ("-d", "-n", "-N", "-p", "-t", "-u") if read else ("-d", "-n", "-O", "-s", "-u", "-C", "-c")
        for f in argv[1:]:
            if skip:
                skip = False
                continue
            if f.known and f.value.startswith("-"):
                skip = f.value in with_argument
                if read and "a" in f.value[1:]:  # `read -a A`, `read -ra A`
                    skip, array = False, True
                continue
            if f.known:
                names.append(f.value)
        for n in names or ["REPLY" if read else "MAPFILE"]:
            if array:  # how many elements, and each of them, known only at run time
                self.i.variables.unknown_array(st, n, ARRAY_READ_AT_RUN_TIME, loc)
            else:
                self.i.variables.assign_scalar(st, n, Field((Unknown(None, READ_AT_RUN_TIME),)), loc)
        st.status = None
        return [st]

    def b_printf(self, node, argv, st, depth, loc):
        if len(argv) >= 3 and argv[1].value == "-v" and argv[2].known:
            fmt = argv[3] if len(argv) > 3 else Field(())
            args = argv[4:]
            printed = printf_text([fmt, *args])
            text = Field.of(printed, fmt.loc) if printed is not None else None
            self.i.variables.assign_scalar(
                st,
                argv[2].value,
                text if text is not None else Field((Unknown(None, "printf output with an unknown format"),)),
                loc,
            )
        st.status = 0
        return [st]

    def b_getopts(self, node, argv, st, depth, loc):
        st.status = 1  # no script arguments in a profile
        return [st]


class Declarations:
    """declare, local, export, readonly, typeset: one path, one semantics, whether
    tree-sitter read a declaration (`export A=1 B`) or a command reached it
    (`command export A=1`, `builtin declare -x "$V"`)."""

    def __init__(self, interp: Interpreter):
        self.i = interp

    def x_declaration_command(self, node, st, depth, in_cond):
        script = self.i.script
        keyword = script.text(node.children[0])
        flags = set()
        items: list = []  # assignment node groups, names, and expanded words
        for group in word_groups(node.children[1:], script.source):
            c = group[0]
            text = script.text(c)
            if c.type in ("word", "test_operator") and text[:1] in "-+" and len(text) > 1:
                flags.update(_flags(text))
            elif c.type == "variable_assignment":
                items.append(group)
            elif c.type == "variable_name" or (c.type == "word" and text[:1] not in "-+"):
                items.append(text)
            elif c.type in ("simple_expansion", "expansion", "string", "concatenation"):
                items.extend(self.i.expander.expand_args([c], st))
        return self.declare(keyword, flags, items, st)

    def b_declare(self, node, argv, st, depth, loc):
        flags = set()
        items: list = []
        for f in argv[1:]:
            if f.known and f.value[:1] in "-+" and len(f.value) > 1 and not items:
                flags.update(_flags(f.value))
            else:
                items.append(f)
        return self.declare(argv[0].value, flags, items, st)

    def declare(self, keyword: str, flags: set, items: list, st: State) -> list[State]:
        """Declare each item: an assignment node group, a NAME, or an expanded word
        (`NAME` or `NAME=value`). Assigning to a readonly variable fails the command
        (status 1) and the script goes on, as in bash."""
        attrs = {}
        if keyword == "export" and "n" in flags or "+x" in flags:
            attrs["exported"] = False  # `export -n`, `declare +x`: no longer exported
        elif keyword == "export" or "x" in flags:
            attrs["exported"] = True
        if keyword == "readonly" or "r" in flags:
            attrs["readonly"] = True
        local = keyword == "local" or (keyword in ("declare", "typeset") and st.locals_stack and "g" not in flags)
        status = 0
        for item in items:
            if isinstance(item, Field):
                if not item.known:
                    continue
                name, eq, value = item.value.partition("=")
                if not name.replace("_", "a").isalnum():
                    continue
                assign = (name, Field.of(value, item.loc), item.loc) if eq else None
            elif isinstance(item, list):
                name = self.i.script.text(item[0].child_by_field_name("name"))
                name = name.partition("[")[0]
                assign = item
            else:
                name, assign = item, None
            if assign is None:
                self._declare_name(name, flags, local, attrs, st)
                continue
            old = st.vars.get(name)
            if old is not None and old.readonly:
                loc = assign[2] if isinstance(assign, tuple) else self.i.script.loc(assign[0])
                self.i.note(st, loc, NoteKind.READONLY, f"{keyword}: {name} is readonly", name)
                status = 1
                continue
            if isinstance(assign, tuple):
                if local:
                    st.save_local(name)
                self.i.variables.assign_scalar(st, name, assign[1], assign[2], attrs)
            else:
                self.i.variables.assign_node(assign[0], st, local=local, attrs=attrs, extra=assign[1:])
            if "i" in flags:  # declare -i V=A*B: the value is arithmetic
                self._integer_value(name, st)
        st.status = status
        return [st]

    def _declare_name(self, name: str, flags: set, local: bool, attrs: dict, st: State) -> None:
        """`declare NAME` without a value: set attributes, or create it (unset, an empty
        array, or unknown from the environment outside a function). In a function it is
        a new local variable, unset, unless it is already local there."""
        if "f" in flags:
            return
        old = st.vars.get(name)
        if local and st.locals_stack and name not in st.locals_stack[-1]:
            st.save_local(name)
            old = None  # a new local variable hides the outer one
        if old is not None:
            st.set_var(name, old.value, **attrs)
            return
        if "a" in flags:
            value = ()
        elif "A" in flags:
            value = {}
        elif local:
            value = None
        else:
            value = self.i.ctx.missing(name)
        st.vars[name] = Var(value, attrs.get("exported", False), attrs.get("readonly", False))

    def _integer_value(self, name: str, st: State) -> None:
        var = st.vars.get(name)
        if var is None or not isinstance(var.value, Field):
            return
        value = self.i.expander.arithmetic(var.value.value, st, var.value.loc) if var.value.known else None
        shown = f"$(({var.value.display}))"
        text = str(value) if value is not None else Unknown(shown, "arithmetic on an unknown value")
        st.set_var(name, Field((text,), var.value.loc))


def _set_option(st: State, name: str | None, on: bool) -> None:
    """`set -o NAME` / `set +o NAME` for the options the evaluation follows."""
    if name == "errexit":
        st.errexit = on
    elif name == "nounset":
        st.nounset = on
    elif name == "allexport":
        st.allexport = on


def _flags(option: str) -> set:
    """`-xr` -> {"x", "r"}; `+x` -> {"+x"} (an attribute taken away)."""
    return {("+" if option[0] == "+" else "") + ch for ch in option[1:]}


class _EvalText(Script):
    """The text an `eval` runs: every location in it is the `eval` command's."""

    def __init__(self, path: str, source: bytes, at: Loc):
        parsed = parse_script(path, source)
        super().__init__(path, parsed.source, parsed.tree)
        self.at = at

    def loc(self, node) -> Loc:
        return self.at


# name -> (the interpreter part, its method(node, argv, st, depth, loc))
BUILTINS = {
    "set": ("builtins", "b_set"),
    "shift": ("builtins", "b_shift"),
    "exit": ("builtins", "b_exit"),
    "return": ("builtins", "b_return"),
    "break": ("builtins", "b_break"),
    "continue": ("builtins", "b_break"),
    "test": ("tests", "b_test"),
    "[": ("tests", "b_test"),
    "source": ("builtins", "b_source"),
    ".": ("builtins", "b_source"),
    "eval": ("builtins", "b_eval"),
    "export": ("declarations", "b_declare"),
    "local": ("declarations", "b_declare"),
    "declare": ("declarations", "b_declare"),
    "typeset": ("declarations", "b_declare"),
    "readonly": ("declarations", "b_declare"),
    "let": ("builtins", "b_let"),
    "read": ("builtins", "b_read"),
    "mapfile": ("builtins", "b_read"),
    "readarray": ("builtins", "b_read"),
    "printf": ("builtins", "b_printf"),
    "getopts": ("builtins", "b_getopts"),
    "cd": ("directory", "b_cd"),
    "pushd": ("directory", "b_pushd"),
    "popd": ("directory", "b_popd"),
}
