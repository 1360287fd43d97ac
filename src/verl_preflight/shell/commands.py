"""Simple commands: words to argv, then a launch, a function, a builtin or a program.

Every command is first offered to the `on_command` callback (the caller decides
what starts verl); otherwise functions, then builtins (dispatched from the
builtins table), then scripts started as programs (`bash FILE`, `./FILE.sh`),
which are read like the main script. Anything else has an unknown status.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from .expand import escaped_blanks_before, with_escaped_blanks, word_groups
from .notes import NoteKind
from .state import State, Var
from .words import Field, join_pieces

if TYPE_CHECKING:
    from .evaluate import Interpreter


NO_EFFECT = frozenset(
    {
        "echo",
        "true",
        ":",
        "shopt",
        "trap",
        "ulimit",
        "umask",
        "wait",
        "hash",
        "alias",
        "unalias",
        "sleep",
        "history",
        "type",
        "dirs",
        "disown",
        "enable",
        "help",
        "logger",
    }
)
_ESCAPED_BLANK_AT_END = re.compile(rb"([ \t]*)\\([ \t])[ \t]*(?:#[^\n]*)?(?:\r?\n|$)")
_REDIRECTS = {"file_redirect", "heredoc_redirect", "herestring_redirect"}
_TEMPORARY_PREFIX = frozenset({"eval", "source", "."})  # builtins that run script text with the prefixes


def _is_shell_script(path: str) -> bool:
    """A file run as a program that is a shell script: *.sh, or a `#!...sh` first line."""
    if path.endswith(".sh"):
        return True
    from ..core.bounded_read import read_head

    first = read_head(path, 200).split(b"\n", 1)[0]
    return first.startswith(b"#!") and first.rstrip().split(b"/")[-1].split(b" ")[-1] in (b"bash", b"sh")


class Commands:
    """Expands and runs simple commands."""

    def __init__(self, interp: Interpreter):
        self.i = interp

    def x_command(self, node, st, depth, in_cond):
        assigns, words, hashed, last_word = self._words(node)
        for word in hashed:
            self._note_hash_after_escaped_blank(word, st)
        argv = self.i.expander.expand_words(words, st, "a command")  # past MAX_ELEMENTS: not run (ControlFlow)
        if not argv:
            for group in assigns:
                self.i.variables.assign_node(group[0], st, extra=group[1:])
            st.status = 0
            return [st]
        last_word = self._escaped_blank_at_end(words[-1][-1].end_byte, argv, last_word, st)
        if self.i.ctx.forwarding:  # eval of a command string that ends with the script's arguments
            last_word = '"$@"'
        return self.run_command(node, argv, st, depth, last_word, assigns)

    def environment(self, st: State, assigns=()) -> dict:
        """The environment a program started here gets: the exported scalar variables (a Field
        each; bash exports no arrays), with the command's own `NAME=value` prefixes. Asked for
        by the `on_command` callback only when the command is one it records."""
        exported = self._exported(st, assigns)
        return {name: var.value for name, var in exported.items() if isinstance(var.value, Field)}

    def _exported(self, st: State, assigns=()) -> dict:
        """The exported variables a program started here gets (`STAGE=x bash other.sh`: the
        prefixes are exported to it only)."""
        scope = st
        if assigns:
            scope = st.fork()
            for group in assigns:
                self.i.variables.assign_node(group[0], scope, extra=group[1:], attrs={"exported": True})
        return {name: var for name, var in scope.vars.items() if var.exported}

    def _words(self, node) -> tuple:
        """(its `NAME=value` prefixes, its words, those of them that start with an escaped blank
        and a `#`, its last word's text) of a command: read from the source once a script (kept
        on its Script), the same in every state and path."""
        script = self.i.script
        key = (node.type, node.start_byte, node.end_byte)
        kept = script.command_words.get(key)
        if kept is not None:
            return kept
        flat = []
        for c in node.children:
            if c.type in _REDIRECTS or c.type == "comment" or c.end_byte == c.start_byte:
                continue
            if c.type == "command_name":
                flat.extend(x for x in c.children if x.end_byte > x.start_byte)
            else:
                flat.append(c)
        assigns, words = [], []
        for group in word_groups(flat, script.source):
            if not words and group[0].type == "variable_assignment":
                assigns.append(group)
            else:
                words.append(with_escaped_blanks(group, script.source))
        # a word after escaped blanks (its first item their text) whose own first node starts with `#`
        hashed = [
            w for w in words if isinstance(w[0], str) and script.source[w[1].start_byte : w[1].start_byte + 1] == b"#"
        ]
        last = [n for n in words[-1] if not isinstance(n, str)] if words else []
        last_word = script.source[last[0].start_byte : last[-1].end_byte].decode("utf-8", "replace") if last else ""
        kept = script.command_words[key] = (assigns, words, hashed, last_word)
        return kept

    def _note_hash_after_escaped_blank(self, word: list, st: State) -> None:
        """`a=1 \\ #b`: the `#` right after an escaped blank starts no comment (the word, from
        with_escaped_blanks, is ' #b', one of _words' `hashed`): say so at the backslash, since it is
        surely a mistake."""
        m = escaped_blanks_before(self.i.script.source, word[1].start_byte)
        self.i.note(
            st,
            self.i.script.loc_at(m.start()),
            NoteKind.ESCAPED_BLANK,
            "a blank after this backslash: the `#` right after it starts no comment, so bash passes "
            f"'{word[0]}#...' and the words after it on this line as arguments",
        )

    def _escaped_blank_at_end(self, end: int, argv: list[Field], last_word: str, st: State) -> str:
        """`\\ ` at the end of a line: not a continuation. bash passes the escaped blank
        as a word (or the end of the last one) and the command ends on this line;
        `argv` takes it, and the last word's text is returned."""
        source = self.i.script.source
        blank = _ESCAPED_BLANK_AT_END.match(source, end)
        if blank is None:
            return last_word
        loc = self.i.script.loc_at(blank.start(2) - 1)
        text = blank.group(2).decode()
        if blank.group(1):
            argv.append(Field.of(text, loc))
            last_word = "\\" + text
        else:
            argv[-1] = Field(join_pieces((*argv[-1].pieces, text)), argv[-1].loc)
            last_word += "\\" + text
        self.i.note(
            st,
            loc,
            NoteKind.ESCAPED_BLANK,
            "a blank after this backslash: bash passes ' ' and the command ends on this line "
            "(the lines below are not its arguments)",
        )
        return last_word

    def run_command(
        self, node, argv: list[Field], st: State, depth: int, last_word: str = "", assigns=()
    ) -> list[State]:
        loc = self.i.script.loc(node)
        launch = self.i.ctx.on_command(list(argv), loc, last_word, lambda: self.environment(st, assigns))
        if launch is not None:
            st.launches.append(launch)
            st.status = 0
            if argv[0].value == "exec":
                st.flow, st.flow_arg = "exit", 0
            return [st]
        name = argv[0].value
        if name is None:
            st.status = None
            return [st]
        if assigns and (name in st.funcs or name in _TEMPORARY_PREFIX):
            return self._with_prefix(assigns, st, lambda: self.run_command(node, argv, st, depth, last_word))
        if name in st.funcs:
            return self.i.flow.call_function(name, argv[1:], st, depth, loc)
        if st.captured is not None and name in ("echo", "printf"):  # inside $(f ...): what it prints
            st.status = 0 if self.i.expander.output.print_to(name, argv[1:], st.captured) else 1
            return [st]
        handler = self.i.builtin_table.get(name)
        if handler is not None:
            return handler(node, argv, st, depth, loc)
        if name in NO_EFFECT:
            st.status = 0
            return [st]
        if name == "false":
            st.status = 1
            return [st]
        if name in ("command", "builtin", "nohup", "time", "exec") and len(argv) > 1:
            rest = argv[1:]
            while rest and rest[0].known and rest[0].value.startswith("-"):
                rest = rest[1:]
            if not rest:
                st.status = 0
                return [st]
            results = self.run_command(node, rest, st, depth, last_word, assigns)
            if name == "exec":
                for r in results:
                    if not r.flow:
                        r.flow, r.flow_arg = "exit", r.status
            return results
        wrapped = self._wrapped_script(name, argv)
        if wrapped is not None:
            return self.run_script(wrapped[0], wrapped[1], st, depth, node, assigns)
        st.status = None  # an external command: its outcome is unknown
        return [st]

    def _with_prefix(self, assigns, st: State, run) -> list[State]:
        """`A=1 f`, `A=1 eval ...`, `A=1 source F`: bash exports the prefixes while the
        function or builtin runs, then gives the variables back their values from before
        (what it assigned to them is gone too)."""
        names = [self.i.script.text(g[0].child_by_field_name("name")).partition("[")[0] for g in assigns]
        saved = {n: st.vars.get(n) for n in names}
        for group in assigns:
            self.i.variables.assign_node(group[0], st, extra=group[1:], attrs={"exported": True})
        results = run()
        for r in results:
            for n, old in saved.items():
                if old is None:
                    r.vars.pop(n, None)
                else:
                    r.vars[n] = old
        return results

    def _wrapped_script(self, name: str, argv: list[Field]):
        """(path, arguments) for `bash FILE ARGS`, `sh FILE ARGS`, `./FILE.sh ARGS` when
        FILE is known and exists; None for anything else (`bash -c`, an unknown path)."""
        if name in ("bash", "sh"):
            rest = argv[1:]
            while rest and rest[0].known and rest[0].value.startswith("-") and rest[0].value not in ("-", "--"):
                if rest[0].value in ("-c", "-i", "-s") or rest[0].value.startswith("--"):
                    return None
                rest = rest[1:]
            if rest and rest[0].value in ("-", "--"):
                rest = rest[1:]
            if not rest or not rest[0].known:
                return None
            target, args = rest[0].value, rest[1:]
        elif "/" in name:
            target, args = name, argv[1:]
        else:
            return None
        path = self.resolve_source(target)
        if path is None or (name not in ("bash", "sh") and not _is_shell_script(path)):
            return None
        return path, args

    def run_script(self, path: str, args: list[Field], st: State, depth: int, node, assigns=()) -> list[State]:
        """A script started as a program: a new bash with the exported variables (and the
        command's `NAME=value` prefixes) and these positional arguments, read (never run)
        like the main script. Its launches are the caller's; arguments passed in keep the
        location of the caller's words."""
        if st.source_depth >= self.i.ctx.budget.source_depth:
            return [self.i.give_up(st, node, f"scripts nested deeper than {self.i.ctx.budget.source_depth}")]
        running = self.i.ctx.running
        if os.path.abspath(path) in running or os.path.abspath(self.i.ctx.main_path or "") == os.path.abspath(path):
            return [self.i.unfollowed(st, self.i.script.loc(node), f"{path} starts itself again: not followed twice")]
        self.i.ctx.wrapped_runs += 1
        if self.i.ctx.wrapped_runs > self.i.ctx.budget.states:
            return [
                self.i.unfollowed(st, self.i.script.loc(node), f"more than {self.i.ctx.budget.states} scripts started")
            ]
        script = self.i.ctx.load(path)
        if script is None:
            return [self.i.unfollowed(st, self.i.script.loc(node), f"cannot read {path}")]
        self.i.ctx.leave_unset(script)
        child = State(vars=self._exported(st, assigns), funcs={}, positional=tuple(args))
        child.vars["BASH_SOURCE"] = Var((Field.of(path),))
        child.launches, child.notes = list(st.launches), list(st.notes)
        child.assumptions, child.incomplete, child.excluded = st.assumptions, st.incomplete, st.excluded
        child.source_depth = st.source_depth + 1
        with self.i.reading(script), self.i.ctx.program(path):
            ends = self.i.flow.exec_block(script.root, [child], depth)
        out = []
        for end in ends:
            outer = st.fork()
            outer.launches, outer.notes = end.launches, end.notes
            outer.incomplete, outer.assumptions = end.incomplete, end.assumptions
            outer.status = end.flow_arg if end.flow == "exit" else end.status
            out.append(outer)
        return out

    def resolve_source(self, target: str) -> str | None:
        if "\0" in target or not target:
            return None
        if os.path.isabs(target):
            candidates = [target]
        else:  # beside the script, from its repository's root (where a project's scripts run), from here
            from ..core.repository import root_of

            root = root_of(self.i.script.path)
            candidates = [os.path.join(os.path.dirname(self.i.script.path), target)]
            candidates += [os.path.join(root, target)] if root is not None else []
            candidates.append(target)
        for c in candidates:
            if os.path.isfile(c):
                if os.path.isabs(c) and not os.path.isabs(self.i.script.path):
                    # one name per file: relative, as the script's own path is
                    rel = os.path.relpath(c)
                    return rel if not rel.startswith("..") else os.path.normpath(c)
                return os.path.normpath(c)
        return None
