"""-j N: scripts in worker processes, results in the order of the input.

Each worker keeps its own ConfigCache (loaded from the disk cache, so a warm
run composes nothing); a composition one worker makes is published in a folder
of the run for the others (tree.SharedSnapshots), and the entries a worker adds
come back with its results
and the parent merges them before saving, so the cache grows the same way as
in a serial run. So do the file digests a worker kept (file_digests.taken): the
parent's table is the one saved.
"""

from __future__ import annotations

import itertools
import os
import tempfile
from concurrent.futures import ProcessPoolExecutor

from ..store.file_digests import merge

_STATE: dict = {}


def _init(source, use_disk, digest, explicit, opts, run_one, shared_dir) -> None:
    from ..hydra_stage.tree import ConfigCache, ConfigCaches
    from ..store import cache_files

    cache_files.use_disk(use_disk)  # a worker keeps no cache where its run keeps none (--no-cache)
    main = ConfigCache(source, use_disk=use_disk, digest=digest)  # the tree is hashed once a run
    main.shared_dir = shared_dir
    from ..target.releases import release_source

    # the run's choice of verl, as the parent's; a release a project pins is fetched as there
    _STATE["caches"] = ConfigCaches(main, explicit=explicit, release=release_source)
    _STATE["caches"].shared_dir = shared_dir
    _STATE["opts"] = opts
    _STATE["run_one"] = run_one
    _STATE["known"] = {}


def _sizes(cache) -> tuple:
    return (len(cache.snapshots), len(cache.parsed), len(cache.verdicts))


def _added(table: dict, known: int) -> dict:
    """The entries added since the table held `known`: the tables only grow, in insertion
    order, so they are the last ones (read from the end: the cost is what was added)."""
    return dict(reversed(list(itertools.islice(reversed(table.items()), len(table) - known))))


def _work(path: str):
    """The outcome of one script, what each config tree's cache gained ({(source, tree):
    tables}), and the file digests the worker kept meanwhile."""
    from ..store.file_digests import taken

    caches = _STATE["caches"]
    outcome = _STATE["run_one"](path, caches, _STATE["opts"])
    fresh = {}
    for cache in caches.all():
        if cache._stored is None:
            continue  # not used by this worker yet
        key = caches.key(cache.source, cache.tree)
        snaps, parsed, verdicts = _STATE["known"].get(key) or tuple(len(keys) for keys in cache.loaded)
        fresh[key] = (
            cache.source,
            cache.tree,
            {
                "snapshots": _added(cache.snapshots, snaps),
                "parsed": _added(cache.parsed, parsed),
                "verdicts": _added(cache.verdicts, verdicts),
                "groups": cache.groups,
            },
        )
        _STATE["known"][key] = _sizes(cache)
    return outcome, fresh, taken()


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def run(files, caches, opts, jobs: int, run_one) -> list:
    """The outcome of each file, in the order of `files`. The largest scripts are handed
    out first and in small chunks, so no worker is left with a long one at the end."""
    order = sorted(range(len(files)), key=lambda i: -_size(files[i]))
    shared = (caches.main.source, caches.main.use_disk, caches.main.digest, caches.explicit)
    outcomes: list = [None] * len(files)
    with (
        tempfile.TemporaryDirectory(prefix="verl-preflight-") as shared_dir,
        ProcessPoolExecutor(max_workers=jobs, initializer=_init, initargs=(*shared, opts, run_one, shared_dir)) as pool,
    ):
        done = pool.map(_work, [files[i] for i in order], chunksize=max(1, len(files) // (jobs * 8)))
        for i, (outcome, fresh, digests) in zip(order, done, strict=True):
            outcomes[i] = outcome
            for source, tree, tables in fresh.values():
                caches.get(source, tree).merge(**tables)
            merge(digests)
    return outcomes
