"""The import graph points down the pipeline (issue 21): no edge back up, no cycle.

Every import is counted, the ones inside functions too (read with `ast` from the sources). The
layers, top to bottom (design.md, "Layers"):

    app       start, cli, application, runner, parallel, result_cache, report_memo, command_memo, settings,
              releases, discover, lsp, fix_files
    pipeline  validate, options, results, fix, suppressions, reach, rendering, value_origin
    report    report/                        formatting only
    rules     rules/                         each rule: id, doc, check or mapping, fix
    stages    target, target_config, hydra_stage/, launches, layout, memory, stack, machine (this machine's facts)
    readers   shell/ (bash only), sources/ (verl, Megatron, MindSpeed code)
    base      values, source, config_location, repository, edits, findings, data

A module imports its own layer or a lower one; shell and sources do not import each other;
report imports neither hydra_stage nor shell nor sources (it formats what the pipeline computed).
"""

from __future__ import annotations

import ast
import os

from conftest import ROOT

SRC = os.path.join(ROOT, "src")
PACKAGE = "verl_preflight"
LAYERS = [
    {"start", "cli", "application", "__main__", "runner", "parallel", "result_cache", "report_memo", "command_memo",
     "settings", "releases", "discover", "user_paths", "lsp", "fix_files"},
    {"validate", "options", "results", "fix", "suppressions", "reach", "rendering", "value_origin"},
    {"report"},
    {"rules"},
    {"target", "target_config", "hydra_stage", "launches", "layout", "memory", "stack", "machine"},
    {"shell", "sources"},
    {"values", "bounded_read", "source", "config_location", "repository", "edits", "findings", "data", "cache_files", "file_digests", "plain", "derived", "yaml_read", "shipped", "process_memos", ""},
]
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


def _rank(top: str) -> int | None:
    return next((i for i, layer in enumerate(LAYERS) if top in layer), None)


def _known_top(parts: list) -> str:
    """The top-level module or package an import names (`verl_preflight.fix.Fix` -> fix)."""
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
        mine = _top(parts)
        for _, target in _imports(parts, is_package, path):
            theirs = _known_top(target)
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
LONGER = {"lsp.Server": 506}  # not split yet: the language server's handlers (issue 46 item 5 is next)


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
