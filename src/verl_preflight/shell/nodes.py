"""Small readings of tree-sitter nodes shared by profile discovery and the evaluator."""

from __future__ import annotations

DEFAULT_OPS = frozenset({":-", "-", ":=", "=", ":?", "?", ":+", "+"})


def static_text(script, node) -> str | None:
    """The text of a word that expands to itself (no expansion, glob, escape or `|`); else None."""
    t = node.type
    if t in ("word", "number", "extglob_pattern"):
        text = script.text(node)
        if any(ch in text for ch in "$`\\*?[]|"):
            return None
        return text
    if t == "raw_string":
        return script.text(node)[1:-1]
    if t == "string":
        if any(c.type not in ('"', "string_content") for c in node.children):
            return None
        text = script.text(node)[1:-1]
        return None if "\\" in text else text
    return None


def variable_of(script, node, with_default: bool = True) -> str | None:
    """NAME when the node is `$NAME` or `${NAME}` (quoted or not), and with `with_default`
    also `${NAME:-...}` and the other default operators."""
    if node.type == "string":
        inner = list(node.named_children)
        if len(inner) != 1:
            return None
        node = inner[0]
    if node.type == "simple_expansion":
        text = script.text(node)
        if text[:1] != "$":
            return None  # a node that starts before its `$`: text precedes the expansion
        name = text[1:]
        return name if name.replace("_", "a").isalnum() and not name[0].isdigit() else None
    if node.type == "expansion":
        named = [c for c in node.children if c.type == "variable_name"]
        if len(named) == 1:
            ops = [script.text(c) for c in node.children if not c.is_named and script.text(c) not in ("${", "}")]
            if not ops or (with_default and ops[0] in DEFAULT_OPS):
                return script.text(named[0])
    return None
