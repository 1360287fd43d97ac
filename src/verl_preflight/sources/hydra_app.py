"""A project's own entry module read as Hydra reads it: its `@hydra.main(config_path, config_name)`.

Projects built on verl launch a module of their own (`python3 -m myproj.main_ppo`, `python
train.py`) whose function carries `@hydra.main(config_path="config", config_name="x")`; its
root config usually extends verl's (`defaults: [ppo_trainer, _self_]` with
`hydra.searchpath`). The module is read with `ast`, never imported (importing it would run
the project's code, torch and Ray). A module that only calls another's `main` (a package's
`__main__.py`: `from .entrypoint import main; main()`) is followed there, a few hops at most.
"""

from __future__ import annotations

import ast
import os
import warnings
from dataclasses import dataclass

_HOPS = 3  # modules followed from the one launched to the one holding @hydra.main
_KEYWORDS = ("config_path", "config_name")


@dataclass(frozen=True)
class HydraApp:
    """The @hydra.main a launched module runs, where it is (`file`, `line`), as declared; `why`:
    what kept it from being read (a computed argument, a module that does not parse), None
    when it was. `calls`: the names of the functions the module calls (its entry's behaviour)."""

    file: str
    line: int = 1
    config_path: str | None = None
    config_name: str | None = None
    calls: frozenset = frozenset()
    why: str | None = None


def hydra_app(path: str, read, resolve=None, hops: int = 0, follow: bool = True) -> HydraApp | None:
    """The Hydra app the module at `path` runs; None when it runs none (a plain script, an
    argparse program). `read(path)`: the module's text or None; `resolve(module)`: the file
    of one of the project's absolute module names or None (for `from myproj.x import main`);
    `follow`: False reads the module's own decorator only."""
    text = read(path)
    if text is None:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return HydraApp(path, why=f"{os.path.basename(path)} does not parse as Python")
    names = _hydra_main_names(tree)
    calls = frozenset(_called(tree))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for deco in node.decorator_list:
                if isinstance(deco, ast.Call) and dotted_name(deco.func) in names:
                    return _declared(path, deco, calls)
    if hops >= _HOPS or not follow:
        return None
    for target in _imported_mains(tree, path, resolve, calls):
        found = hydra_app(target, read, resolve, hops + 1)
        if found is not None:
            return found
    return None


def _declared(path: str, deco: ast.Call, calls: frozenset) -> HydraApp:
    given: dict[str, ast.expr] = dict(zip(_KEYWORDS, deco.args, strict=False))
    given.update({k.arg: k.value for k in deco.keywords if k.arg in _KEYWORDS})
    values: dict[str, str | None] = {}
    for key in _KEYWORDS:
        node = given.get(key)
        if node is None or isinstance(node, ast.Constant) and node.value is None:
            values[key] = None
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            values[key] = node.value
        else:
            why = f"@hydra.main's {key} at {os.path.basename(path)}:{deco.lineno} is computed, not written"
            return HydraApp(path, deco.lineno, calls=calls, why=why)
    return HydraApp(path, deco.lineno, values["config_path"], values["config_name"], calls)


def dotted_name(node: ast.expr) -> str | None:
    """`a.b.c` of a name or an attribute chain; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted_name(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def _hydra_main_names(tree: ast.Module) -> set[str]:
    """The names `hydra.main` goes by in the module (`hydra.main`, `h.main`, `main`, ...)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "hydra":
                    names.add(f"{alias.asname or 'hydra'}.main")
        elif isinstance(node, ast.ImportFrom) and node.module == "hydra" and not node.level:
            names |= {alias.asname or alias.name for alias in node.names if alias.name == "main"}
    return names


def _called(tree: ast.Module) -> set[str]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                out.add(func.id)
            elif isinstance(func, ast.Attribute):
                out.add(func.attr)
    return out


def _imported_mains(tree: ast.Module, path: str, resolve, calls: frozenset) -> list[str]:
    """The files of the modules whose functions this one imports and calls (`from .entrypoint
    import main` then `main()`): where its @hydra.main may be."""
    out = []
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom) or not any((a.asname or a.name) in calls for a in node.names):
            continue
        if node.level:
            base = os.path.dirname(path)
            for _ in range(node.level - 1):
                base = os.path.dirname(base)
            parts = node.module.split(".") if node.module else []
            stem = os.path.join(base, *parts)
            out += [stem + ".py", os.path.join(stem, "__init__.py")] if parts else []
        elif resolve is not None and node.module:
            found = resolve(node.module)
            if found:
                out.append(found)
    return [p for p in out if os.path.isfile(p)]
