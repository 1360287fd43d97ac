"""Each script's result, cached on disk and keyed by everything it depends on (like ruff's cache).

A result is reused only when nothing it depends on changed: the tool itself
(its version and the bytes of its own files), Hydra's and OmegaConf's versions,
the verl config tree (content digest) and release, the policy schema, the
options (profiles, stack, limits), and every file the script's run read (the script, the files it sources or
follows, requirements-ascend.txt), each by content digest. A changed input
invalidates exactly the scripts that read it. `--profile current` is never
cached: the machine's environment is an input. The verl, Megatron and MindSpeed
sources the checks read and the model config are files the run read like any other.

Entries are plain JSON (plain.py), signed with this user's key in a private folder
(cache_files.py): an unreadable, altered, foreign or corrupt entry is a miss and is
written anew; nothing in it is ever run.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os

from ..core.source import SOURCES, current_digests
from . import cache_files
from .file_digests import tool_fingerprint
from .plain import NotPlain, from_plain, to_plain

FORMAT = 2  # 2: plain JSON, signed (1 was pickle)


def options_digest(opts) -> str:
    """The options that change a script's result, as text."""
    parts = []
    for f in dataclasses.fields(opts):
        if f.name in ("schema", "ambient"):
            continue
        parts.append(f"{f.name}={getattr(opts, f.name)!r}")
    schema = getattr(opts, "schema", None)
    if schema is not None:
        parts.append(f"schema={schema.path}:{schema.digest}")  # a user's: as it was read
    if opts.ambient is not None:
        parts.append(f"ambient={sorted(opts.ambient.items())!r}")
    return "\n".join(parts)


class ResultCache:
    def __init__(self, source, digest: str, opts, use_disk: bool = True):
        self.enabled = use_disk and not getattr(opts, "current", False)
        key = hashlib.sha256()
        from ..core.source import hydra_versions

        # the working directory: a relative `source` is resolved from it, the paths are spelled from it
        for part in (tool_fingerprint(), hydra_versions(), digest, repr(source), options_digest(opts), os.getcwd()):
            key.update(part.encode())
            key.update(b"\0")
        self.key = key.hexdigest()
        self.folder = cache_files.folder("results") if self.enabled else None
        self.enabled = self.folder is not None
        self.hits = 0
        self._now = current_digests()  # a dependency's digest, read once a check (forget: the files may change)
        self._lists: dict = {}  # digest -> the sources dependency it names (_listed)

    def forget(self) -> None:
        """Read the files again next time (--fix has changed some)."""
        self._now = current_digests()

    def _file(self, path: str) -> str:
        name = hashlib.sha256((self.key + "\0" + os.path.abspath(path)).encode()).hexdigest()
        return os.path.join(self.folder, name[:2], name + ".json")

    def get(self, path: str):
        """The cached result of `path`, or None (a miss: absent, stale, altered, corrupt or foreign)."""
        if not self.enabled:
            return None
        entry = cache_files.read(self._file(path))
        if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("key") != self.key:
            return None
        if entry.get("path") != os.path.abspath(path):
            return None
        deps = self._expanded(entry.get("deps"))
        if deps is None or any(self._now(p) != d for p, d in deps.items()):
            return None
        try:
            result = from_plain(entry.get("result"))
        except (NotPlain, RecursionError):
            return None
        if type(result).__name__ != "ScriptResult":
            return None
        result.deps = deps
        self.hits += 1
        return result

    def put(self, path: str, result) -> None:
        if not self.enabled or not result.deps:
            return
        try:
            plain = to_plain(dataclasses.replace(result, deps={}))  # the dependencies are kept once, below
        except (NotPlain, RecursionError):
            return  # a result holding something the cache does not keep: checked again next time
        deps = {self._listed(p): d for p, d in result.deps.items()}
        if None in deps:
            return
        entry = {"format": FORMAT, "key": self.key, "path": os.path.abspath(path), "deps": deps, "result": plain}
        cache_files.write(self._file(path), entry)

    # the sources a result depends on (hundreds of verl's files) are listed once, in a file of
    # their own named by the list's digest, which every result with that list refers to
    def _list_file(self, digest: str) -> str:
        return os.path.join(self.folder, "sources", digest + ".json")

    def _listed(self, dependency: str) -> str | None:
        if not dependency.startswith(SOURCES):
            return dependency
        digest = hashlib.sha256(dependency.encode()).hexdigest()
        if digest not in self._lists:
            if cache_files.read(self._list_file(digest)) != dependency and not cache_files.write(
                self._list_file(digest), dependency
            ):
                return None
            self._lists[digest] = dependency
        return f"{SOURCES}#{digest}"

    def _expanded(self, deps) -> dict | None:
        if not isinstance(deps, dict):
            return None
        out = {}
        for p, d in deps.items():
            if p.startswith(SOURCES + "#"):
                digest = p[len(SOURCES) + 1 :]
                if digest not in self._lists:
                    listed = cache_files.read(self._list_file(digest)) if len(digest) == 64 and digest.isalnum() else None
                    if not isinstance(listed, str) or hashlib.sha256(listed.encode()).hexdigest() != digest:
                        return None
                    self._lists[digest] = listed
                p = self._lists[digest]
            out[p] = d
        return out
