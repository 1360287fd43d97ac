"""MindSpeed's own arguments, per MindSpeed branch.

On Ascend, verl hands `override_transformer_config` to MindSpeed's `repatch`,
which sets each key on MindSpeed's global args. The arguments that exist there
are the ones MindSpeed's features register: each feature class under
`mindspeed/features_manager/**` has a `register_args(self, parser)` method that
calls `<group>.add_argument('--foo-bar', ...)`, directly or through a helper
(a method of the same class called as `self._helper(...)`, or a function of the
same module). The key verl must use is argparse's dest: the `dest=` keyword
when given, else the first long option without its dashes, `-` turned to `_`.

MindSpeed is not on the package index, so the data for each branch is
extracted ahead of time by tools/gen_stack_data.py into
`verl_preflight/data/stack/mindspeed-<branch>.json`.
"""

from __future__ import annotations

import ast
import json
import os
from functools import lru_cache
from importlib import resources

from ._pyast import dotted, parse_file, walk

FEATURES_DIR = os.path.join("mindspeed", "features_manager")
_DATA_PREFIX = "mindspeed-"


def normalize_branch(branch: str) -> str:
    """`core_r0.18.0` is the branch name; a bare `0.18.0` means the same branch."""
    branch = branch.strip()
    if branch[:1].isdigit():
        return "core_r" + branch
    return branch


def _literal(node: ast.expr | None, constants: dict[str, ast.expr]):
    """The value of a literal (or of a module-level name bound to one); None otherwise."""
    if node is None:
        return None
    if isinstance(node, ast.Name) and node.id in constants:
        node = constants[node.id]
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if isinstance(value, tuple | set | frozenset):
        value = list(value)
    return value


def _dest(call: ast.Call) -> tuple[str | None, list[str]]:
    """(dest, option strings) of an add_argument call; dest None when it is not static."""
    options = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if len(options) != len(call.args):
        return None, options
    for kw in call.keywords:
        if kw.arg == "dest":
            if isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                return kw.value.value, options
            return None, options
    if not options:
        return None, options
    longs = [o for o in options if o.startswith("--")]
    first = longs[0] if longs else options[0]
    return first.lstrip("-").replace("-", "_"), options


def _reachable(cls: ast.ClassDef, functions: dict[str, ast.FunctionDef]) -> list[ast.FunctionDef]:
    """register_args and the helpers it calls: `self.m(...)` methods of the class and
    module-level functions of the same file, followed transitively."""
    methods = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    start = methods.get("register_args")
    if start is None:
        return []
    out, todo, seen = [], [start], set()
    while todo:
        fn = todo.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        out.append(fn)
        for node in walk(fn):
            if not isinstance(node, ast.Call):
                continue
            name = dotted(node.func)
            if name and name.startswith("self.") and name.count(".") == 1 and name[5:] in methods:
                todo.append(methods[name[5:]])
            elif isinstance(node.func, ast.Name) and node.func.id in functions:
                todo.append(functions[node.func.id])
    return out


def extract_args(features_dir: str) -> dict[str, dict]:
    """{dest: info} for every argument the features under `features_dir` register.

    info: "options" (option strings), "feature" (class), "file" (path relative
    to features_dir), and "action", "type", "choices", "default" when they are
    literals in the source (None otherwise). The first registration of a dest
    wins; later ones add their option strings.
    """
    out: dict[str, dict] = {}
    paths = []
    for dirpath, dirnames, filenames in os.walk(features_dir):
        dirnames.sort()
        paths.extend(os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(".py"))
    for path in paths:
        tree = parse_file(path)
        if tree is None:
            continue
        functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        constants = {
            n.targets[0].id: n.value
            for n in tree.body
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
        }
        rel = os.path.relpath(path, features_dir).replace(os.sep, "/")
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            calls = [
                node
                for fn in _reachable(cls, functions)
                for node in walk(fn)
                if isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"
            ]
            for call in sorted(calls, key=lambda c: (c.lineno, c.col_offset)):
                dest, options = _dest(call)
                if dest is None:
                    raise ValueError(f"{rel}:{call.lineno}: add_argument with a dest that is not a literal")
                if dest in out:
                    out[dest]["options"] += [o for o in options if o not in out[dest]["options"]]
                    continue
                kws = {kw.arg: kw.value for kw in call.keywords if kw.arg}
                type_node = kws.get("type")
                out[dest] = {
                    "options": options,
                    "feature": cls.name,
                    "file": rel,
                    "action": _literal(kws.get("action"), constants),
                    "type": dotted(type_node) if type_node is not None else None,
                    "choices": _literal(kws.get("choices"), constants),
                    "default": _literal(kws.get("default"), constants),
                }
    return dict(sorted(out.items()))


@lru_cache(maxsize=1)
def known_mindspeed_branches() -> tuple[str, ...]:
    """The MindSpeed branches whose arguments ship with the package, sorted."""
    out = []
    for entry in resources.files("verl_preflight.data").joinpath("stack").iterdir():
        name = entry.name
        if name.startswith(_DATA_PREFIX) and name.endswith(".json"):
            out.append(name[len(_DATA_PREFIX) : -len(".json")])
    return tuple(sorted(out))


@lru_cache(maxsize=8)
def _shipped(branch: str) -> dict | None:
    entry = resources.files("verl_preflight.data").joinpath("stack", f"{_DATA_PREFIX}{branch}.json")
    try:
        return json.loads(entry.read_text(encoding="utf-8"))
    except (FileNotFoundError, OSError):
        return None


def mindspeed_arg_info(branch: str) -> dict[str, dict] | None:
    """{dest: info} (see extract_args) for a MindSpeed branch; None when it is not known."""
    data = _shipped(normalize_branch(branch))
    return None if data is None else data["args"]


def mindspeed_args(branch: str) -> frozenset[str] | None:
    """The dests MindSpeed's features register on `branch`; None when the branch is not known."""
    info = mindspeed_arg_info(branch)
    return None if info is None else frozenset(info)
