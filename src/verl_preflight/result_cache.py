"""Each script's result, cached on disk and keyed by everything it depends on (like ruff's cache).

A result is reused only when nothing it depends on changed: the tool itself
(its version and the bytes of its own files), Hydra's and OmegaConf's versions,
the verl config tree (content digest) and release, the policy schema, the
options (profiles, stack, limits), and every file the script's run read (the script, the files it sources or
follows, requirements-ascend.txt), each by content digest. A changed input
invalidates exactly the scripts that read it. `--profile current` is never
cached: the machine's environment is an input. An unreadable, corrupt or
foreign entry is a miss and is written anew.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import pickle
import tempfile
from functools import lru_cache

from .source import digest_of

FORMAT = 1
_PACKAGE = os.path.dirname(os.path.abspath(__file__))


@lru_cache(maxsize=1)
def tool_fingerprint() -> str:
    """The tool's version and the bytes of its own files (a source checkout changes without a release)."""
    from . import __version__

    h = hashlib.sha256(__version__.encode())
    for dirpath, dirnames, files in sorted(os.walk(_PACKAGE)):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".yaml", ".json")):
                path = os.path.join(dirpath, name)
                h.update(os.path.relpath(path, _PACKAGE).encode())
                h.update((digest_of(path) or "").encode())
    return h.hexdigest()


def options_digest(opts) -> str:
    """The options that change a script's result, as text."""
    parts = []
    for f in dataclasses.fields(opts):
        if f.name in ("schema", "ambient"):
            continue
        parts.append(f"{f.name}={getattr(opts, f.name)!r}")
    schema = getattr(opts, "schema", None)
    if schema is not None:
        parts.append(f"schema={schema.path}:{digest_of(schema.path)}")
    if opts.ambient is not None:
        parts.append(f"ambient={sorted(opts.ambient.items())!r}")
    return "\n".join(parts)


def _digest_now(dependency: str) -> str | None:
    """A file's digest now, or a config tree's (hydra_stage.tree.ConfigCache.dependency)."""
    from .hydra_stage.tree import TREE_DEPENDENCY, current_tree_hash

    if dependency.startswith(TREE_DEPENDENCY):
        return current_tree_hash(dependency)
    return digest_of(dependency)


class ResultCache:
    def __init__(self, source, digest: str, opts, use_disk: bool = True):
        self.enabled = use_disk and not getattr(opts, "current", False)
        key = hashlib.sha256()
        from .hydra_stage.tree import hydra_versions

        # the working directory: a relative `source` is resolved from it, the paths are spelled from it
        for part in (tool_fingerprint(), hydra_versions(), digest, repr(source), options_digest(opts), os.getcwd()):
            key.update(part.encode())
            key.update(b"\0")
        self.key = key.hexdigest()
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        self.folder = os.path.join(base, "verl-preflight", "results")
        self.hits = 0

    def _file(self, path: str) -> str:
        name = hashlib.sha256((self.key + "\0" + os.path.abspath(path)).encode()).hexdigest()
        return os.path.join(self.folder, name[:2], name + ".pickle")

    def get(self, path: str):
        """The cached result of `path`, or None (a miss: absent, stale, corrupt or foreign)."""
        if not self.enabled:
            return None
        try:
            with open(self._file(path), "rb") as fh:
                entry = pickle.load(fh)
        except Exception:  # a missing, truncated or foreign file is a miss, never an error
            return None
        if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("key") != self.key:
            return None
        if entry.get("path") != os.path.abspath(path):
            return None
        deps = entry.get("deps")
        if not isinstance(deps, dict) or any(_digest_now(p) != d for p, d in deps.items()):
            return None
        self.hits += 1
        return entry.get("result")

    def put(self, path: str, result) -> None:
        if not self.enabled or not result.deps:
            return
        entry = {
            "format": FORMAT,
            "key": self.key,
            "path": os.path.abspath(path),
            "deps": result.deps,
            "result": result,
        }
        target = self._file(path)
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".tmp-")
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(entry, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, target)
        except OSError:
            return
