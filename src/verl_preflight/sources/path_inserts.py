"""`sys.path.insert(0, FOLDER)` in a project's entry module, read with `ast` (never run).

A project's entry may put a folder of its own first on sys.path before it imports verl
(`sys.path.insert(0, os.path.join(os.path.dirname(__file__), "verl"))`): the `verl` there is
the one it imports. Read at the module's top level, where FOLDER is built from string
constants, `__file__`, and `os.path.dirname`, `abspath`, `realpath`, `join`, or
`pathlib.Path(__file__).parent` / `.resolve()` and `str(...)` of them; any other folder (one
computed at run time) is not followed.
"""

from __future__ import annotations

import ast
import os
import warnings

from ..store.dependencies import read_source
from .hydra_app import dotted_name


def inserted(path: str) -> list[tuple[str, int]]:
    """(folder, line) of each `sys.path.insert(0, ...)` at the module's top level, in the order
    they put folders first (the last insert is first on sys.path)."""
    text = read_source(path, errors="replace")
    if text is None:
        return []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    out = []
    for node in tree.body:
        call = node.value if isinstance(node, ast.Expr) else None
        if not (isinstance(call, ast.Call) and dotted_name(call.func) == "sys.path.insert" and len(call.args) == 2):
            continue
        if not (isinstance(call.args[0], ast.Constant) and call.args[0].value == 0):
            continue
        folder = _folder(call.args[1], os.path.abspath(path))
        if folder is not None:
            out.append((os.path.normpath(folder), node.lineno))
    return list(reversed(out))


def _folder(node, file: str) -> str | None:
    """The path `node` builds, from the module's own file; None when it is not built so."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value if os.path.isabs(node.value) else None  # (relative: to the working directory)
    if isinstance(node, ast.Name) and node.id == "__file__":
        return file
    if isinstance(node, ast.Call):
        name = dotted_name(node.func)
        args = [_folder(a, file) if not (isinstance(a, ast.Constant) and isinstance(a.value, str)) else a.value
                for a in node.args]
        if name in ("os.path.dirname", "dirname") and len(args) == 1 and args[0]:
            return os.path.dirname(args[0])
        if name in ("os.path.abspath", "os.path.realpath", "abspath", "realpath", "str", "Path", "pathlib.Path"):
            return args[0] if len(args) == 1 else None
        if name in ("os.path.join", "join") and args and all(a is not None for a in args) and os.path.isabs(args[0]):
            return os.path.join(*args)
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("resolve", "absolute") and not node.args:
            return _folder(node.func.value, file)
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = _folder(node.value, file)
        return os.path.dirname(inner) if inner else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):  # Path(__file__).parent / "verl"
        left, right = _folder(node.left, file), node.right
        if left and isinstance(right, ast.Constant) and isinstance(right.value, str):
            return os.path.join(left, right.value)
    return None
