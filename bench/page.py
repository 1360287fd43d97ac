"""The page a bench writes under docs/benchmarks/: what ran, where, and its table.

`make bench` passes `--markdown docs/benchmarks/<name>.md` to each bench; the page is
replaced whole, so docs/ always holds the tables of the last run, never edited by hand.
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess


def _commit(root: str) -> str:
    try:
        out = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
    except OSError:
        return "not a git checkout"
    return out.stdout.strip() + (" with local changes" if dirty else "") if out.returncode == 0 else "not a git checkout"


def write_page(path: str, root: str, title: str, about: str, header: list[str], rows: list[list[str]]) -> None:
    """Replace `path` with `title`, a line saying which run wrote it (`about`: the bench and
    what its figures are), and the table of `rows` under `header`."""
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"# {title}",
        "",
        f"Written by `make bench` ({about}) on {when}, commit {_commit(root)}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}.",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
        *("| " + " | ".join(row) + " |" for row in rows),
        "",
    ]
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))
