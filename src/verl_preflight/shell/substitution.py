"""Command substitutions whose output is known without running anything.

`$(basename "$MODEL")`, `$(dirname "$0")`, `$(echo "$A" ...)`, `$(printf ...)`,
`$(expr $A + $B)`, `$(seq 0 7)`, `` `# note` `` (nothing) and the script-directory idiom
`$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)` are computed from their
expanded words, as bash would print them; anything else (another command, a
pipe, a redirection to a file) leaves the substitution unknown. Nothing is
executed and the script's variables are never changed by the substitution
(it runs in a subshell).
"""

from __future__ import annotations

import os
import posixpath
from typing import TYPE_CHECKING

from .directory import start_directory
from .errors import ArithFailure, ShellExit
from .limits import MAX_VALUE_CHARS, OverBound, meter, value_too_long
from .state import elements_of
from .words import Field, Unknown, join_pieces

if TYPE_CHECKING:
    from .expand import Expander

_PURE = frozenset({"echo", "printf", "basename", "dirname", "expr", "seq", ":", "true", "cd", "pwd"})
_MAX_SEQ = 10_000
_EXPR_BITS = 4096  # a number `expr` computes (its operands have at most 4300 digits, Python's bound)
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})


class _NotStatic(Exception):
    pass


class CommandOutput:
    """`$(...)` whose output is known: computed from the expanded words, never run."""

    def __init__(self, expander: Expander):
        self.x = expander
        self.host = expander.host

    def command_output(self, node, st) -> Field | None:
        """The output of `$(...)` with trailing newlines removed, or None when unknown."""
        body = [c for c in node.named_children if c.type != "comment"]
        sub = st.fork()
        sub.locals_stack = []
        out: list = []
        cwd = [None]  # the directory after a `cd`: a str when known
        try:
            for stmt in body:
                self._static_statement(stmt, sub, out, cwd)
        except ArithFailure as failure:  # the subshell exits 1 there: its output is what it printed before
            st.notes.append(failure.note)
        except (_NotStatic, ShellExit):  # ShellExit: set -u or ${X:?} stops the subshell
            return None
        except OverBound as past:  # a command of too many words: what it prints is unknown, and said
            loc = self.host.script.loc(node)
            return Field((meter().over(past.why, loc),), loc)
        pieces = list(join_pieces(out))
        while pieces and isinstance(pieces[-1], str):
            stripped = pieces[-1].rstrip("\n")
            if stripped:
                pieces[-1] = stripped
                break
            pieces.pop()
        return Field(tuple(pieces), self.host.script.loc(node))

    def _static_statement(self, node, st, out: list, cwd: list) -> bool:
        """Run one statement for its output; its exit status (True: 0)."""
        t = node.type
        if t == "list":
            left, op, right = node.children[0], node.children[1].type, node.children[-1]
            ok = self._static_statement(left, st, out, cwd)
            if (op == "&&") == ok:
                return self._static_statement(right, st, out, cwd)
            return ok
        if t == "redirected_statement":
            body = node.child_by_field_name("body")
            if body is None:
                raise _NotStatic
            redirects = [c for c in node.children if c.type in _REDIRECTS]
            return self._redirected(lambda sink: self._static_statement(body, st, sink, cwd), redirects, out)
        if t != "command":
            raise _NotStatic
        redirects = [c for c in node.children if c.type in _REDIRECTS]
        if redirects:
            bare = [c for c in node.children if c.type not in _REDIRECTS]
            return self._redirected(lambda sink: self._static_words(bare, st, sink, cwd), redirects, out)
        return self._static_words(node.children, st, out, cwd)

    def _redirected(self, run, redirects, out: list) -> bool:
        """Only redirections to /dev/null and 2>&1: the output goes nowhere or stays."""
        texts = [self.host.script.text(r).replace(" ", "") for r in redirects]
        if not all(r in (">/dev/null", "1>/dev/null", "2>/dev/null", "2>&1", "&>/dev/null") for r in texts):
            raise _NotStatic
        sink: list = []
        ok = run(sink)
        if not any(r in (">/dev/null", "1>/dev/null", "&>/dev/null") for r in texts):
            out.extend(sink)
        return ok

    def _static_words(self, children, st, out: list, cwd: list) -> bool:
        words = [c for c in children if c.type != "comment"]
        flat = []
        for c in words:
            flat.extend(c.children if c.type == "command_name" else [c])
        if any(c.type == "variable_assignment" for c in flat[:1]):
            raise _NotStatic
        argv = self.x.expand_args(flat, st)
        if argv and argv[0].value in st.funcs:
            return self._function_output(argv, st, out)
        if not argv or argv[0].value not in _PURE:
            raise _NotStatic
        return self._static_command(argv[0].value, argv[1:], st, out, cwd)

    def _function_output(self, argv: list[Field], st, out: list) -> bool:
        """`$(f ARGS)` of a function the script defines: its body is run by the interpreter
        (reading, never executing) with what echo and printf print captured; known when every
        path through it prints the same (else the substitution stays unknown)."""
        st.captured = []
        ends = self.host.call_function(argv[0].value, argv[1:], st, argv[0].loc)
        printed = {tuple(join_pieces(r.captured or [])) for r in ends}
        if len(printed) != 1 or any(r.incomplete for r in ends):
            raise _NotStatic
        out.extend(printed.pop())
        return all(r.status == 0 for r in ends)

    def print_to(self, name: str, args: list[Field], out: list) -> bool:
        """What `echo ARGS` / `printf ARGS` print, appended to `out`; an unknown piece when that is
        not known statically. (The status.)"""
        try:
            return self._static_command(name, args, None, out, [None])
        except _NotStatic:
            out.append(Unknown(None, f"what {name} prints"))
            return True

    def _static_command(self, name: str, args: list[Field], st, out: list, cwd: list) -> bool:
        if name in (":", "true"):
            return True
        if name == "echo":
            newline = True
            while args and args[0].value in ("-n", "-E"):
                newline = newline and args[0].value != "-n"
                args = args[1:]
            if args and (args[0].value is None or args[0].value.startswith("-")):
                raise _NotStatic  # -e, or an unknown first word that could be an option
            for i, a in enumerate(args):
                if i:
                    out.append(" ")
                out.extend(a.pieces)
            if newline:
                out.append("\n")
            return True
        if name == "printf":
            text = _printf(args)
            out.append(text)
            return True
        if name == "basename":
            out.extend(_basename(args))
            out.append("\n")
            return True
        if name == "dirname":
            out.extend(_dirname(args))
            out.append("\n")
            return True
        if name == "expr":
            if not all(a.known for a in args):
                raise _NotStatic
            value = _expr([a.value for a in args])
            out.append(value + "\n")
            return value not in ("0", "")
        if name == "seq":
            out.append("".join(f"{n}\n" for n in _seq(args)))
            return True
        if name == "cd":
            args = [a for a in args if a.value not in ("--", "-P", "-L")]
            if len(args) != 1 or not args[0].known:
                raise _NotStatic
            cwd[0] = self._cd_target(args[0].value, cwd[0], st)
            return True
        if name == "pwd":
            if cwd[0] is None:  # no `cd` in the substitution: the script's directory (shell.directory)
                var = st.vars.get("PWD")
                value = var.value if var is not None and isinstance(var.value, Field) else start_directory("$(pwd)")
                out.extend((*value.pieces, "\n"))
                return True
            out.append(cwd[0] + "\n")
            return True
        raise _NotStatic

    def _cd_target(self, target: str, cwd: str | None, st) -> str:
        """Where `cd target` goes, when that is known: an absolute path, or a path from
        the script's own directory (`cd "$(dirname "$0")"`, then maybe `/../..`)."""
        if target.startswith("/"):
            return posixpath.normpath(target)
        if cwd is not None:
            return posixpath.normpath(posixpath.join(cwd, target))
        # A relative path is known when it is a script's own directory (from $0 or
        # BASH_SOURCE, which are relative to where bash started): where bash started
        # is then where the main script's name, as given, points from.
        name = self.host.script_name
        sources = [f.value for f in elements_of(st.vars.get("BASH_SOURCE")) if f.known]
        dirs = {posixpath.dirname(p) or "." for p in [name, *sources] if not p.startswith("/")}
        main = os.path.abspath(self.host.main_path or self.host.script.path)
        rel = posixpath.normpath(name)
        if name.startswith("/"):
            raise _NotStatic
        if os.path.abspath(name) == main:  # the name as given here (`../x/run.sh`): from this folder
            start = os.getcwd()
        elif main.endswith("/" + rel):
            start = main[: -len(rel) - 1] or "/"
        else:
            raise _NotStatic
        if not any(target == d or target.startswith(d + "/") for d in dirs):
            raise _NotStatic
        return posixpath.normpath(posixpath.join(start, target))


def printf_text(args: list[Field]) -> str | None:
    """What `printf FORMAT ARGS...` writes (%s, %d, %%, \\n, \\t, \\\\; the format is reused
    while arguments remain, as bash does); None when it is not known statically."""
    try:
        return _printf(args)
    except _NotStatic:
        return None


def _printf(args: list[Field]) -> str:
    if not args or not all(a.known for a in args):
        raise _NotStatic
    fmt, values = args[0].value, [a.value for a in args[1:]]
    out = []
    size = 0  # what is written so far, within MAX_VALUE_CHARS (the format is reused per argument)
    first = 0  # the first argument not used yet
    while True:
        start = len(out)
        i, used = 0, 0
        while i < len(fmt):
            ch = fmt[i]
            if ch == "%" and i + 1 < len(fmt):
                spec = fmt[i + 1]
                if spec == "%":
                    out.append("%")
                elif spec in "sd":
                    v = values[first + used] if first + used < len(values) else ""
                    if spec == "d" and v and not v.lstrip("-").isdigit():
                        raise _NotStatic
                    out.append(v if v or spec == "s" else "0")
                    used += 1
                else:
                    raise _NotStatic
                i += 2
                continue
            if ch == "\\" and i + 1 < len(fmt):
                nxt = fmt[i + 1]
                if nxt not in "nt\\":
                    raise _NotStatic
                out.append({"n": "\n", "t": "\t", "\\": "\\"}[nxt])
                i += 2
                continue
            out.append(ch)
            i += 1
        first += used
        size += sum(len(p) for p in out[start:])
        if size > MAX_VALUE_CHARS:
            meter().over(value_too_long(size))
            raise _NotStatic
        if first >= len(values) or not used:
            return "".join(out)


def _seq(args: list[Field]) -> range:
    """`seq LAST`, `seq FIRST LAST`, `seq FIRST INCR LAST` over integers."""
    if not 1 <= len(args) <= 3 or not all(a.known for a in args):
        raise _NotStatic
    try:
        nums = [int(a.value) for a in args]
    except ValueError:
        raise _NotStatic from None
    first, incr, last = (1, 1, nums[0]) if len(nums) == 1 else (nums[0], 1, nums[1]) if len(nums) == 2 else nums
    if incr == 0:
        raise _NotStatic
    out = range(first, last + (1 if incr > 0 else -1), incr)
    if len(out) > _MAX_SEQ:
        raise _NotStatic
    return out


def _basename(args: list[Field]) -> tuple:
    """`basename NAME [SUFFIX]` (also with an unknown head: `${HOME}/models/Qwen` gives Qwen)."""
    if args and args[0].value in ("-s", "-a", "-z", "--"):
        raise _NotStatic
    if not 1 <= len(args) <= 2 or (len(args) == 2 and not args[1].known):
        raise _NotStatic
    pieces = list(args[0].pieces)
    if not pieces or not isinstance(pieces[-1], str):
        raise _NotStatic
    last = pieces[-1].rstrip("/")
    if "/" in last:
        name = last.rsplit("/", 1)[1]
    elif len(pieces) == 1:
        name = last if last or not pieces[-1] else "/"
    else:
        raise _NotStatic
    if len(args) == 2 and args[1].value and name != args[1].value and name.endswith(args[1].value):
        name = name[: -len(args[1].value)]
    return (name,)


def _dirname(args: list[Field]) -> tuple:
    if len(args) != 1:
        raise _NotStatic
    pieces = list(args[0].pieces)
    if args[0].known:
        text = args[0].value
        stripped = text.rstrip("/")
        if not stripped:
            return ("/" if text else ".",)
        if "/" not in stripped:
            return (".",)
        head = stripped.rsplit("/", 1)[0].rstrip("/")
        return (head or "/",)
    if not pieces or not isinstance(pieces[-1], str):
        raise _NotStatic
    last = pieces[-1].rstrip("/")
    if "/" not in last:
        raise _NotStatic
    head = last.rsplit("/", 1)[0].rstrip("/")
    if not head and len(pieces) == 1:
        head = "/"
    return (*pieces[:-1], head) if head or len(pieces) > 1 else (Unknown("$(dirname)", "an unknown path"),)


def _expr(tokens: list[str]) -> str:
    """`expr` over integers and strings: | & comparisons + - * / %, left to right by level."""
    pos = [0]

    def peek():
        return tokens[pos[0]] if pos[0] < len(tokens) else None

    def take():
        pos[0] += 1
        return tokens[pos[0] - 1]

    def num(v: str) -> int:
        try:
            return int(v)
        except ValueError:
            raise _NotStatic from None

    def primary():
        tok = peek()
        if tok is None:
            raise _NotStatic
        if tok == "(":
            take()
            value = level(0)
            if take() != ")":
                raise _NotStatic
            return value
        if tok == "length":
            take()
            return str(len(take()))
        return take()

    levels = [("|",), ("&",), ("<", "<=", "=", "==", "!=", ">=", ">"), ("+", "-"), ("*", "/", "%")]

    def level(i: int):
        if i == len(levels):
            return primary()
        left = level(i + 1)
        while peek() in levels[i]:
            op = take()
            right = level(i + 1)
            if op == "|":
                left = left if left not in ("", "0") else right
            elif op == "&":
                left = left if left not in ("", "0") and right not in ("", "0") else "0"
            elif op in ("+", "-", "*", "/", "%"):
                a, b = num(left), num(right)
                if op in ("/", "%") and b == 0:
                    raise _NotStatic
                if op == "/":
                    q = abs(a) // abs(b)
                    left = str(q if (a >= 0) == (b >= 0) else -q)
                elif op == "%":
                    r = abs(a) % abs(b)
                    left = str(r if a >= 0 else -r)
                else:
                    value = a + b if op == "+" else a - b if op == "-" else a * b
                    if value.bit_length() > _EXPR_BITS:  # GNU expr has big numbers; not followed here
                        raise _NotStatic
                    left = str(value)
            else:
                try:
                    a, b = int(left), int(right)
                except ValueError:
                    a, b = left, right
                result = {
                    "<": a < b,
                    "<=": a <= b,
                    "=": a == b,
                    "==": a == b,
                    "!=": a != b,
                    ">=": a >= b,
                    ">": a > b,
                }[op]
                left = "1" if result else "0"
        return left

    value = level(0)
    if pos[0] != len(tokens):
        raise _NotStatic
    return value
