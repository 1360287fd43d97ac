"""Run the pipeline over many scripts (in worker processes when it pays) and collect the results.

The output never depends on the number of workers: results come back in the
order of the files, and notes that hold for the whole run (an info about a
skipped check) are merged by rule and message.
"""

from __future__ import annotations

import functools
import os

from ..core.findings import Finding
from ..core.values import Loc
from ..rules.tool.internal_error import InternalError

SERIAL_BELOW = 8  # fewer scripts than this: worker start-up costs more than it saves


def run_files(files, caches, opts, jobs: int = 1, results_cache=None):
    """(results, unreadable): one ScriptResult per readable file, in order; read errors as text.

    With a `results_cache` (result_cache.ResultCache), a script whose inputs did not change
    is not checked again; only the others go through the pipeline (and workers)."""
    if jobs <= 0:
        jobs = os.cpu_count() or 1
    outcomes: list = [None] * len(files)
    todo = []
    for i, path in enumerate(files):
        cached = results_cache.get(path) if results_cache is not None else None
        if cached is not None:
            outcomes[i] = (cached, None)
        else:
            todo.append(i)
    paths = [files[i] for i in todo]
    check = functools.partial(run_and_keep, results_cache=results_cache)
    if jobs > 1 and len(paths) >= SERIAL_BELOW:
        from . import parallel  # worker processes only when there are enough scripts to share

        fresh = parallel.run(paths, caches, opts, jobs, check)
    else:
        fresh = [check(path, caches, opts) for path in paths]
    for i, outcome in zip(todo, fresh, strict=True):
        outcomes[i] = outcome
    results = [r for r, _ in outcomes if r is not None]
    unreadable = [e for _, e in outcomes if e is not None]
    if caches is not None and todo:
        caches.save()
    merge_run_notes(results)
    return results, unreadable


def run_and_keep(path, caches, opts, results_cache=None):
    """run_one, and the result written to the result cache (in the worker that made it)."""
    outcome = run_one(path, caches, opts)
    if results_cache is not None and outcome[0] is not None:
        results_cache.put(path, outcome[0])
    return outcome


def run_one(path, caches, opts):
    """(result, None) or (None, read error); never raises."""
    from ..pipeline.validate import ReadError, validate_script

    try:
        return validate_script(path, caches, opts), None
    except ReadError as err:
        return None, str(err)
    except RecursionError:
        return failed(path, "the script nests too deeply to follow"), None
    except Exception as err:  # a bug of ours: said as the tool's (exit 2), never as a finding; the run goes on
        return None, internal_error(path, err)


TRACEBACK = "VERL_PREFLIGHT_SHOW_TRACEBACK"  # set by --show-traceback (workers inherit it)


def internal_error(path: str, err: Exception) -> str:
    """The line that says a check failed by a fault of the tool's, with the traceback under
    --show-traceback."""
    line = (
        f"internal error while checking {path}: {type(err).__name__}: {err} "
        "(please report; --show-traceback shows where)"
    )
    if os.environ.get(TRACEBACK):
        import traceback

        line += "\n" + "".join(traceback.format_exception(err)).rstrip()
    return line


def failed(path: str, why: str):
    from ..pipeline.results import ScriptResult

    return ScriptResult(path, findings=[InternalError.emit(Loc(path, 1, 1), f"not checked: {why}")])


def merge_run_notes(results) -> None:
    """A run-wide note (a check skipped on this machine, say) is kept once, on the first
    script that met it, merged by rule and message, whatever -j was."""
    from ..rules import get

    seen: set[tuple[str, str]] = set()
    for r in results:
        kept: list[Finding] = []
        for f in r.findings:
            rule = get(f.rule)
            if rule is not None and rule.run_wide:
                if (f.rule, f.message) in seen:
                    continue
                seen.add((f.rule, f.message))
            kept.append(f)
        r.findings = kept
