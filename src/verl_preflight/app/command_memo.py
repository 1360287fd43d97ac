"""A command line's kept report, written at the start when nothing it came from changed.

report_memo.py keeps a run's report under the results' key (the tool, Hydra, the verl config
tree, the options, the working directory) and the scripts found. Finding that key takes
parsing the arguments, reading the project's settings, walking the paths, locating the tree
and building the options: most of a warm run, and most of that is importing the modules
that do it. This memo keeps, for one command line started in one place (`key_of`: the
arguments, the working directory, the interpreter and its import path, the environment
variables in ENVIRONMENT, whether standard output is a terminal), the paths, excludes,
tree and schema the arguments and settings named, the answers those steps gave (`_answers`:
the project's settings, the scripts found and the walk's notes, the config tree located and
its digest, where its entry points come from, the schema file's digest, the tool's own
fingerprint, Hydra's versions), and the key of the report. The next start asks the same questions with the same functions, which are
light to import (settings.py, discover.py, config_location.py, file_digests.py, dependencies.py).
When every answer is the same, the run would build the same report key, so the kept report
is written after its own digests are checked (report_memo.ReportMemo.get). Any difference, an
unreadable or foreign entry, or any error is a miss, and the command runs in full as ever.

Kept only where report_memo keeps a report (so never for --profile current, standard input,
--fix, --diff or --no-cache), and not for `--verl VERSION` (a release fetched into the cache)
or `--model-config DIR` (read while the options are built).
"""

from __future__ import annotations

import hashlib
import os
import sys
import time

from .. import __version__
from ..store import queries

# what the tool reads from the environment that a start does not ask again: the colour
# (NO_COLOR) and where megatron-core's wheels are (sources/megatron.py). VERL_CONFIG_DIR is
# asked again (config_location.found); XDG_CACHE_HOME and HOME name the folder this memo is in.
ENVIRONMENT = ("NO_COLOR", "VERL_PREFLIGHT_WHEELS", "VERL_PREFLIGHT_VERL_GIT")


def key_of(argv) -> str:
    """The command line started here: its arguments, the working directory, the interpreter and
    its import path, ENVIRONMENT, whether standard output is a terminal (the colour)."""
    h = hashlib.sha256()
    parts = (
        __version__,
        sys.executable,
        repr(sys.path),
        os.getcwd(),
        repr(list(argv)),
        repr(sys.stdout.isatty()),
        *(f"{name}={os.environ.get(name)!r}" for name in ENVIRONMENT),
    )
    for part in parts:
        h.update(part.encode("utf-8", "surrogateescape"))
        h.update(b"\0")
    return h.hexdigest()


def _asked(argv) -> bool:
    """Whether a start looks for a kept report at all: not for the commands that are no check,
    nor under --no-cache (an entry is only ever kept by a run that report_memo keeps, `put`)."""
    if argv and argv[0] in ("render", "lsp"):
        return False
    return not any(len(a) > 2 and "--no-cache".startswith(a) for a in argv)  # argparse takes `--no-c` too


def answers(settings, paths, excludes, verl_config, schema) -> dict:
    """What the steps before the checks answer now, for the settings read and the paths,
    excludes, tree (--verl-config) and schema file the command line and those settings gave
    (a ConfigTreeError or DiscoverError propagates: the caller's miss)."""
    from ..core.config_location import TREE_DEPENDENCY, current_tree_hash, entry_root, found
    from ..store.dependencies import digest_of, hydra_versions
    from ..store.file_digests import tool_fingerprint
    from .discover import discover

    source = found(verl_config)
    notes: list = []
    files = discover(paths, excludes, notes)
    return _answers(
        settings,
        files,
        notes,
        source,
        current_tree_hash(TREE_DEPENDENCY + source[0]),  # (the report's check asks the same: hashed once)
        entry_root(source[0], source[2], source[1])[1],
        digest_of(schema) if schema else None,
        tool_fingerprint(),
        hydra_versions(),
    )


def answers_of_run(args, run, entry: str) -> dict | None:
    """The answers a run's own steps gave (application.setup: `run`; `entry`: where its entry
    points come from): the files it found, the tree's digest and the schema's as they were
    read, so a file changed after that is a miss next time, never a stale report. None when
    they cannot be kept (settings that are not plain JSON)."""
    import json

    from ..store.dependencies import hydra_versions
    from ..store.file_digests import tool_fingerprint

    s = run.source
    try:
        return _answers(
            json.loads(json.dumps(args.settings)),  # as it is read back (a tuple a list)
            run.files,
            list(run.notes),
            (s.path, s.verl_version, s.package_root, s.origin),
            run.caches.main.digest,
            entry,
            run.opts.schema.digest if args.schema else None,
            tool_fingerprint(),
            hydra_versions(),
        )
    except (TypeError, ValueError):
        return None


def _answers(settings, files, notes, source, tree, entry, schema, tool, hydra) -> dict:
    return {
        "settings": settings,
        "files": list(files),
        "notes": list(notes),
        "source": list(source),
        "tree": tree,
        "entry": entry,
        "schema": schema,
        "tool": tool,
        "hydra": hydra,
        # the environment's choice of verl (a run given another, or two that disagree, is no replay)
        "verl_config_dir": os.environ.get("VERL_CONFIG_DIR"),
    }


def put(argv, args, run, entry: str, report_key: str) -> None:
    """Keep what this run's steps answered (`answers_of_run`) and the key of the report it
    kept (called where report_memo kept or found that report)."""
    import json

    if args.verl or getattr(args, "model_config", None) or getattr(args, "python", None):
        return
    answered = answers_of_run(args, run, entry)
    if answered is None:
        return
    asked = [args.paths, args.excludes, args.verl_config, args.schema]
    entry = {
        "argv": list(argv),
        "asked": asked,
        "answers": answered,
        "settings_from": args.settings_start,  # where the run looked for its settings (settings.settings_start)
        "report": report_key,
    }
    try:
        json.dumps(entry, ensure_ascii=False).encode("utf-8")  # as cache_files writes it
    except (TypeError, ValueError, UnicodeError):  # (an argument that is no UTF-8: not kept)
        return
    queries.put("commands", (key_of(argv),), entry)


def replay(argv) -> int | None:
    """The exit status after writing the kept report of this command line, or None (a miss:
    nothing was written, the command runs in full)."""
    start = time.perf_counter()
    argv = list(argv)
    if not _asked(argv):
        return None
    try:
        kept, entry = _kept(argv)
    except Exception:  # a miss, whatever went wrong: the full run says it properly
        return None
    if kept is None:
        return None
    from ..report import console
    from ..store.file_digests import save
    from .report_memo import replay as write

    for line in entry["answers"]["notes"]:
        console.plain(line)
    said = console.entry_origin(entry["answers"]["entry"])  # as the run says it (application.validate)
    if said:
        console.say(said)
    status = write(kept, time.perf_counter() - start)
    save()
    return status


def _kept(argv):
    from .report_memo import ReportMemo
    from .settings import project_settings

    kept = queries.get("commands", (key_of(argv),))
    entry = kept[0] if kept is not None else None
    if not isinstance(entry, dict) or entry.get("argv") != argv:
        return None, None
    asked, report = entry.get("asked"), entry.get("report")
    if not (isinstance(asked, list) and len(asked) == 4 and isinstance(report, str) and len(report) == 64):
        return None, None
    start = entry.get("settings_from")
    if not isinstance(start, str) or entry.get("answers") != answers(project_settings(start), *asked):
        return None, None
    return ReportMemo(report).get(), entry
