"""The import graph points down the pipeline (issue 21): no edge back up, no cycle.

Every import is counted, the ones inside functions too (read with `ast` from the sources). The
layers, top to bottom (docs/design.md, "Layers"), each a folder of the package:

    app       app/        the command line, the language server, runs of many scripts, their memos
    pipeline  pipeline/   one script: profiles, launches, findings, fixes, suppressions
    report    report/     formatting only
    rules     rules/      each rule: id, doc, check or mapping, fix
    stages    target/ (what each launch meets), hydra_stage/
    readers   shell/ (bash only), sources/ (verl, Megatron, MindSpeed code)
    base      core/ (values, findings, the reader, sources read), store/ (what is kept), data/

A module imports its own layer or a lower one; shell and sources do not import each other;
report imports neither hydra_stage nor shell nor sources (it formats what the pipeline computed).
No cycle between modules (a module of app/, pipeline/, target/, store/ or core/ counts alone).
"""

from __future__ import annotations

import ast
import os

from conftest import ROOT

SRC = os.path.join(ROOT, "src")
PACKAGE = "verl_preflight"
LAYERS = [
    {"app", "__main__"},
    {"pipeline"},
    {"report"},
    {"rules"},
    {"target", "hydra_stage"},
    {"shell", "sources"},
    {"core", "store", "data", ""},
]
FOLDERS = {"app", "pipeline", "target", "store", "core"}  # their modules are the units of the cycle check
NEVER = {("report", "hydra_stage"), ("report", "shell"), ("report", "sources"), ("shell", "sources"),
         ("sources", "shell")}


def _modules():
    for dirpath, _, files in os.walk(os.path.join(SRC, PACKAGE)):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, SRC)[:-3].split(os.sep)
                yield (rel[:-1] if rel[-1] == "__init__" else rel), rel[-1] == "__init__", path


def _imports(parts: list, is_package: bool, path: str):
    """(line, imported module parts) of every import of the package, at any depth of the file."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    here = parts if is_package else parts[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            target = base + (node.module.split(".") if node.module else [])
            if target and target[0] == PACKAGE:
                for alias in node.names:  # `from . import fix` names a module
                    yield node.lineno, target + [alias.name]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE:
                    yield node.lineno, alias.name.split(".")


def _top(parts: list) -> str:
    return parts[1] if len(parts) > 1 else ""


def _unit(parts: list) -> str:
    """What the cycle check counts as one: a module of a layer folder, else the top-level name."""
    top = _top(parts)
    return ".".join(parts[1:3]) if top in FOLDERS and len(parts) > 2 else top


def _rank(top: str) -> int | None:
    return next((i for i, layer in enumerate(LAYERS) if top in layer), None)


def _known_top(parts: list) -> str:
    """The top-level module or package an import names (`verl_preflight.pipeline.fix.Fix` -> fix)."""
    top = _top(parts)
    exists = os.path.exists(os.path.join(SRC, PACKAGE, top + ".py")) or os.path.isdir(os.path.join(SRC, PACKAGE, top))
    return top if exists else ""


def test_every_module_has_a_layer():
    assert [p for p, _, _ in _modules() if _rank(_top(p)) is None] == []


def test_imports_point_down_the_layers():
    up = []
    for parts, is_package, path in _modules():
        mine = _top(parts)
        for line, target in _imports(parts, is_package, path):
            theirs = _known_top(target)
            if theirs == mine:
                continue
            if _rank(theirs) < _rank(mine) or (mine, theirs) in NEVER:
                up.append(f"{os.path.relpath(path, ROOT)}:{line}: {'.'.join(parts)} -> {'.'.join(target)}")
    assert not up, "\n".join(up)


def test_no_cycle_between_top_level_modules():
    graph: dict = {}
    for parts, is_package, path in _modules():
        mine = _unit(parts)
        for _, target in _imports(parts, is_package, path):
            theirs = _unit(target) if _known_top(target) in FOLDERS else _known_top(target)
            if theirs != mine:
                graph.setdefault(mine, set()).add(theirs)
    seen, stack, cycles = set(), [], []

    def visit(node):
        if node in stack:
            cycles.append(stack[stack.index(node):] + [node])
            return
        if node in seen:
            return
        seen.add(node)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            visit(nxt)
        stack.pop()

    for node in sorted(graph):
        visit(node)
    assert not cycles, cycles


MAX_CLASS_LINES = 400
LONGER: dict = {}  # a class allowed past the bound, with its length (none now)


def test_no_class_is_longer_than_a_screenful_of_concerns():
    """Issue 46: a class split by concern is at most MAX_CLASS_LINES long (the evaluator of verl's
    checks was 1,017: sources/pyeval/ is its statements, expressions, objects and state). A class
    listed in LONGER may not grow."""
    found = {}
    for parts, _, path in _modules():
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > MAX_CLASS_LINES:
                found[".".join([*parts[1:], node.name])] = node.end_lineno - node.lineno + 1
    assert {name: n for name, n in found.items() if n > LONGER.get(name, MAX_CLASS_LINES)} == {}, found
