"""The working directory: `cd`, `pushd` and `popd`, kept in PWD as bash keeps it.

bash sets PWD (and OLDPWD) on every `cd` (bash 5.2 builtins/cd.def: bindpwd), and a
program it starts inherits the directory, so where a launch runs is the PWD at that
command: `cd "$ROOT/luffy/verl" && python3 -m verl.X` imports the `verl` of that folder
first (Python puts the working directory first on sys.path for `-m`). The value is a
Field like any other: known text where the target is known (`cd /workspace/verl`),
the directory the script started in (`$PWD`, from the environment) followed by known
text for a relative target (`cd luffy/verl`), the target's own pieces where it is
known only at run time (`cd "$ROOT/luffy/verl"`). Where the directory is decided is
the word that wrote the target (the Field's location).

Nothing is looked up on this machine: the directories are the training machine's.
`cd` succeeds (status 0) in every path: whether the folder is there is known only
where the script runs. A subshell's `cd` stays in it (its state is a fork).
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

from .state import State, elements_of
from .words import Field, Unknown, join_pieces

if TYPE_CHECKING:
    from .evaluate import Interpreter

_OPTIONS = frozenset({"-L", "-P", "-e", "-@", "--"})


_START = ("${PWD}", "$(pwd)")  # how the folder the script started in is written (said as the user wrote it)


def start_directory(written: str = "${PWD}") -> Field:
    """The directory the script started in: PWD from the environment, known only at run time
    (`written`: `$(pwd)` where a substitution asked for it)."""
    return Field((_start_above(0, written),))


def _start_above(levels: int, written: str = "${PWD}") -> Unknown:
    """The folder `levels` above the one the script started in (`cd ..` from there)."""
    return Unknown(written + "/.." * levels, "environment variable PWD")


def _above_start(piece) -> int | None:
    """How many folders above the start `piece` is (_start_above), None for any other piece."""
    if not isinstance(piece, Unknown) or piece.label != "environment variable PWD":
        return None
    for written in _START:
        rest = piece.source[len(written) :] if piece.source.startswith(written) else None
        if rest is not None and rest == "/.." * (len(rest) // 3):
            return len(rest) // 3
    return None


def joined(base: Field, target: Field) -> Field:
    """`cd target` from `base`: an absolute target replaces the base, a relative one is added
    to it, and `.`, `..` are taken out of the known text where that is sure (a `..` right after
    an unknown piece stays)."""
    head = target.pieces[0] if target.pieces else ""
    if isinstance(head, str) and head.startswith("/"):
        pieces: tuple = target.pieces
    elif not isinstance(head, str):  # `cd "$ROOT/x"`: absolute or not, only the run knows; the target as it is
        return target
    else:
        pieces = join_pieces((*base.pieces, "/", *target.pieces))
    return Field(_normal(pieces), target.loc)


def _normal(pieces: tuple) -> tuple:
    """Each run of known text normalized as a path (posixpath.normpath's rules): `a/./b` is
    `a/b`, `a/x/../b` is `a/b`; a `..` that would climb past an unknown piece is kept."""
    out: list = []
    for i, piece in enumerate(pieces):
        if not isinstance(piece, str):
            out.append(piece)
            continue
        lead = piece.startswith("/")
        parts: list[str] = []
        for part in piece.split("/"):
            if part in ("", "."):
                continue
            if part == ".." and parts and parts[-1] != "..":
                parts.pop()
            elif part == ".." and not parts and out and _above_start(out[-1]) is not None:
                written = next(w for w in _START if out[-1].source.startswith(w))
                out[-1] = _start_above(_above_start(out[-1]) + 1, written)  # above the folder the script started in
            elif part == ".." and lead and i == 0:
                continue  # `/..` is `/`
            else:
                parts.append(part)
        text = "/".join(parts)
        if parts and (lead or i > 0) or lead and i == 0:
            text = "/" + text  # (after an unknown piece: still a path below it)
        if piece.endswith("/") and i < len(pieces) - 1 and not text.endswith("/"):
            text += "/"
        if text:
            out.append(text)
    return join_pieces(tuple(out)) or ("/",)


class WorkingDirectory:
    """`cd`, `pushd`, `popd` (module docstring)."""

    def __init__(self, interp: Interpreter):
        self.i = interp

    def current(self, st: State) -> Field:
        var = st.vars.get("PWD")
        if var is not None and isinstance(var.value, Field):
            return var.value
        return start_directory()

    def _move(self, st: State, to: Field) -> None:
        old = self.current(st)
        exported = st.vars.get("PWD").exported if st.vars.get("PWD") is not None else True
        st.set_var("OLDPWD", old)
        st.set_var("PWD", to, exported=exported)  # (PWD is in the environment bash starts with)

    def _target(self, argv, st: State, loc) -> Field | None:
        args = [a for a in argv[1:] if a.value not in _OPTIONS]
        if not args:
            home = st.vars.get("HOME")
            return home.value if home is not None and isinstance(home.value, Field) else Field(
                (Unknown("${HOME}", "environment variable HOME"),), loc
            )
        target = args[0]
        if target.value == "-":
            old = st.vars.get("OLDPWD")
            return old.value if old is not None and isinstance(old.value, Field) else None
        return target

    def b_cd(self, node, argv, st, depth, loc):
        target = self._target(argv, st, loc)
        if target is not None:
            self._move(st, joined(self.current(st), target if target.loc else Field(target.pieces, loc)))
        st.status = 0
        return [st]

    def b_pushd(self, node, argv, st, depth, loc):
        """`pushd DIR`: DIRSTACK holds the directories, the current first (bash's DIRSTACK)."""
        args = [a for a in argv[1:] if a.value not in ("-n", "--")]
        if not args or args[0].value is not None and args[0].value[:1] in ("+", "-"):
            st.status = 0  # (a rotation of the stack: where it leads is not followed)
            return [st]
        here = self.current(st)
        stack = self._stack(st)
        self._move(st, joined(here, args[0] if args[0].loc else Field(args[0].pieces, loc)))
        st.set_var("DIRSTACK", (self.current(st), here, *stack[1:]))
        st.status = 0
        return [st]

    def b_popd(self, node, argv, st, depth, loc):
        stack = self._stack(st)
        if len(stack) > 1 and len(argv) == 1:
            self._move(st, stack[1])
            st.set_var("DIRSTACK", tuple(stack[1:]))
        st.status = 0
        return [st]

    def _stack(self, st: State) -> list:
        items = [f for f in elements_of(st.vars.get("DIRSTACK")) if isinstance(f, Field)]
        return items or [self.current(st)]


def resolved(cwd: Field | None, start: str) -> str | None:
    """The working directory as a path of this machine, given the folder the script started in
    (`start`): None (no `cd`) is `start`; the start followed by known text is that path from it;
    known text is itself. None where a piece is known only at run time."""
    if cwd is None:
        return posixpath.normpath(start)
    pieces = cwd.pieces
    levels = _above_start(pieces[0]) if pieces else None
    if levels is not None:
        pieces = (posixpath.join(start, *([".."] * levels)), *pieces[1:])
    if not all(isinstance(p, str) for p in pieces):
        return None
    path = "".join(pieces)
    return posixpath.normpath(path if path.startswith("/") else posixpath.join(start, path))


def shown(cwd: Field) -> str:
    """The directory as said to the user: from the folder the script started in, `./x` or `../x`."""
    pieces = cwd.pieces
    levels = _above_start(pieces[0]) if pieces else None
    if levels is None:
        return cwd.display
    rest = "".join(str(p) for p in pieces[1:])
    return ("/".join([".."] * levels) if levels else ".") + rest
