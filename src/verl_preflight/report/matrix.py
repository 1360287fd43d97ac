"""A compatibility matrix: which scripts compose on which verl release."""

from __future__ import annotations


def render(versions: list[str], table: dict[str, dict[str, str]]) -> str:
    """`table` maps a script path to {version: "ok" | "N errors"}."""
    width = max([len("script")] + [len(p) for p in table])
    heads = [f"verl {v}" for v in versions]

    def row_text(first, cells):
        return "  ".join([first.ljust(width)] + [c.ljust(len(h)) for c, h in zip(cells, heads, strict=True)])

    out = [row_text("script", heads)]
    for path, row in table.items():
        out.append(row_text(path, [row.get(v, "-") for v in versions]))
    return "\n".join(line.rstrip() for line in out) + "\n"
