"""Where a finding's value was set: the one assignment of the variable an override expands.

A check of a value (a batch size that does not divide, a TP that does not fit) is found at the
override that hands it to verl (`data.train_batch_size=$GEN_BS`, an array element far down the
script); the number was made where the variable was assigned (`GEN_BS=$((128 * 5 / 16))`, line
20). When the value part of the override expands exactly one variable, and the file assigns that
variable exactly once, before the override, the finding says so: the assignment's text (the
arithmetic that made the value) is added to its message, and its place to the related
locations (`see also line 20`, SARIF, the editor). Anything less certain (two assignments, a loop, a sourced file's
variable, several variables) adds nothing.
"""

from __future__ import annotations

from dataclasses import replace

from ..core.values import Loc

_SHOWN = 80  # characters of an assignment's text a message quotes, at most


def with_origins(findings: list, scripts: dict, stage_of) -> list:
    """The findings, each value finding (`stage_of(rule)` is "policy", with a key) told where its
    value was set (module docstring)."""
    out = []
    assignments: dict = {}
    for f in findings:
        script = scripts.get(f.path)
        if script is None or not f.key or not f.line or stage_of(f.rule) != "policy":
            out.append(f)
            continue
        origin = _origin(script, Loc(f.path, f.line, f.column), assignments)
        if origin is None:
            out.append(f)
            continue
        name, loc, text = origin
        said = f"{f.message} (from {text})"  # the line: the related location (`see also line 20`)
        out.append(replace(f, message=said, related=(*f.related, (loc.path, loc.line, loc.col, name))))
    return out


def _origin(script, at: Loc, assignments: dict):
    """(variable, its assignment's Loc, its text) for the override word at `at`, or None."""
    node, _offset = script.word_at(at)
    if node is None:
        return None
    text = node.text.decode("utf-8", "replace")
    eq = text.find("=")
    if eq < 0:
        return None
    names = [
        _name(child)
        for child in _descendants(node)
        if child.type in ("simple_expansion", "expansion") and child.start_byte > node.start_byte + eq
    ]
    if len(names) != 1 or names[0] is None:
        return None
    if script.path not in assignments:
        assignments[script.path] = _assignments(script)
    found = assignments[script.path].get(names[0], [])
    if len(found) != 1:
        return None
    assigned = found[0]
    loc = script.loc(assigned)
    if (loc.line, loc.col) >= (at.line, at.col):
        return None
    shown = " ".join(assigned.text.decode("utf-8", "replace").split())
    if len(shown) > _SHOWN:
        shown = shown[: _SHOWN - 3] + "..."
    return names[0], loc, shown


def _name(expansion) -> str | None:
    """The variable a plain `$NAME` or `${NAME}` (with a default or not) expands."""
    for child in expansion.children:
        if child.type == "variable_name":
            return child.text.decode("utf-8", "replace")
    return None


def _descendants(node):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _assignments(script) -> dict:
    """{variable: [variable_assignment nodes]} of one file, anywhere in it (a `for`, `read` or
    `declare` does not count: those names are not looked up here)."""
    out: dict = {}
    for node in _descendants(script.root):
        if node.type == "for_statement":  # a loop variable takes many values
            name = node.child_by_field_name("variable")
            if name is not None:
                out.setdefault(name.text.decode("utf-8", "replace"), []).extend([node, node])
        if node.type == "variable_assignment":
            name = node.child_by_field_name("name")
            if name is not None and name.type == "variable_name":
                out.setdefault(name.text.decode("utf-8", "replace"), []).append(node)
            elif name is not None:  # an array element (A[0]=...): the array is assigned more than once
                base = name.children[0] if name.children else None
                if base is not None:
                    out.setdefault(base.text.decode("utf-8", "replace"), []).extend([node, node])
    return out
