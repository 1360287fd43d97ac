"""What a kept value depends on, and the digest of each dependency now.

A value the tool keeps (a script's result, a fact derived from verl's sources, a composition)
is valid while everything it was made from is as it was. Each of those is a dependency: a
string of a kind `kind_of` tells (a file's bytes, which Python files are below a folder, which
pin files a folder holds, which modules spell a name, a config tree's content, the list of
sources a session read), kept with its digest. The checks read verl's, Megatron's and
MindSpeed's sources through `read_source`, `python_files`, `modules_mentioning` and
`looked_for`, which record each dependency in the session (store/session.py: `record` is the
one way in); `digest_of` and `current_digests` give a dependency's digest now, from the
digests file_digests.py keeps beside each file's stamp.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import time
from functools import lru_cache

from ..core.bounded_read import SOURCE_MAX_BYTES, ReadError, TooLarge, read_bounded, read_stamped
from ..core.config_location import TREE_DEPENDENCY, current_tree_hash
from . import session as _session
from .file_digests import (
    derived_digest,
    file_digest,
    listing_digest,
    remember,
    remember_derived,
    remember_listing,
)

# What a kept value was made from, each kept with its digest, is a dependency: a string, of a kind
# `kind_of` tells. FILE: a file's absolute path (its bytes; the digest None: no file there, or one
# that cannot be read, so one that appears is a change); else a kind's mark and its subject:
FILE = "file"
LISTING = "[python files below]"  # + a folder: which Python files are below it (a module added)
PINS = "[pin files in]"  # + a folder: which requirements files and Dockerfiles it holds
UNPARSED = "[unparsed]"  # + a module: its bytes, which ast.parse gave up on (the report names it)
SOURCES = "sources:"  # + every source a session read (os.pathsep): their digests, as one
MENTIONING = "[python files mentioning]"  # + words ("|"), "\0", a folder: which files below it spell one
STATEMENTS = "[verl folders in]"  # + a repository's root: what it holds, installs, pins of verl (setup_statements)

KINDS = (LISTING, PINS, UNPARSED, MENTIONING, STATEMENTS, TREE_DEPENDENCY, SOURCES)  # (TREE: a config tree's content)


def kind_of(dependency: str) -> tuple[str, str]:
    """(its kind's mark, or FILE; what it is of, the dependency's end: a path, or for
    TREE_DEPENDENCY and SOURCES the whole dependency's paths)."""
    for kind in KINDS:
        if dependency.startswith(kind):
            subject = dependency[len(kind) :]
            return kind, subject.partition("\0")[2] if kind == MENTIONING else subject
    return FILE, dependency


def is_stack_file(name: str) -> bool:
    """`requirements*.txt`, `Dockerfile*`, `*.dockerfile` (any case; letters, digits, `_.-`):
    without `re`, which a warm start does not import."""
    low = name.lower()
    if not low or not all(c.isalnum() or c in "_.-" for c in low):
        return False
    return (
        (low.startswith("requirements") and low.endswith(".txt"))
        or low.startswith("dockerfile")
        or (low.endswith(".dockerfile") and len(low) > len(".dockerfile"))
    )


def _names_digest(names: list[str]) -> str:
    return hashlib.sha256("\0".join(names).encode()).hexdigest()


def pins_dependency(folder: str, names: list[str]) -> tuple[str, str]:
    """(the PINS dependency of `folder`, its digest) when it holds the pin files `names` (as
    `stack_names` gives them)."""
    return PINS + os.path.abspath(folder), _names_digest(names)


def stack_names(folder: str) -> list[str]:
    """The requirements files and Dockerfiles of `folder`, by name."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [n for n in names if is_stack_file(n) and os.path.isfile(os.path.join(folder, n))]


def _python_files(top: str, folders: list | None = None) -> list[str]:
    """The .py files below `top`; `folders`: the folders the walk read, and None for what
    their stamps do not cover (a folder it could not read, a link: file_digests.remember_listing)."""
    paths = []

    def unreadable(_error: OSError) -> None:
        folders.append(None)

    for dirpath, dirnames, filenames in os.walk(top, onerror=unreadable if folders is not None else None):
        dirnames[:] = sorted(d for d in dirnames if d not in ("__pycache__", "tests"))
        paths.extend(os.path.join(dirpath, n) for n in sorted(filenames) if n.endswith(".py"))
        if folders is not None:
            folders.append(dirpath)
            if any(os.path.islink(os.path.join(dirpath, n)) for n in (*dirnames, *filenames)):
                folders.append(None)
    return paths


def _listing_digest(top: str, paths: list[str]) -> str | None:
    if not os.path.isdir(top):
        return None
    return hashlib.sha256("\0".join(p[len(top) :] for p in paths).encode()).hexdigest()


def _walked(top: str) -> tuple[str | None, list[str]]:
    """(the digest of the listing below `top`, the folders its walk read)."""
    folders: list[str] = []
    return _listing_digest(top, _python_files(top, folders)), folders


def python_files(top: str) -> list[str]:
    """The .py files below `top` (its __pycache__ and tests folders left out), in a walk with
    folders and files sorted. Which files they are is recorded like a source read
    (reads()[LISTING + top]): a fact or a result derived from every module of a tree
    depends on a module added to it too, not only on the bytes of those it read."""
    before, folders = time.time_ns(), []
    paths = _python_files(top, folders)
    digest = _listing_digest(top, paths)
    record({LISTING + os.path.abspath(top): digest})
    remember_listing(top, digest, folders, before)  # (kept: the next warm run walks none of it)
    return paths


def modules_mentioning(top: str, *words: str) -> list[str]:
    """The .py files below `top` (as python_files walks them) whose bytes spell one of `words`:
    the modules a walk for a call or an attribute of that name can find anything in. What is
    recorded is which files those are (MENTIONING + top + words), not the bytes of every file:
    a module added or edited that spells none of the words changes nothing a walk finds, so a
    fact kept or shipped for a release still stands in a checkout or a fork that adds one. The
    caller reads the files returned (parse_file), and so depends on their bytes."""
    top = os.path.abspath(top)
    paths, basis, digest = _mentioning(top, words)
    paths = list(paths)
    dependency = MENTIONING + "|".join(words) + "\0" + top
    record({dependency: digest})
    if digest is not None:
        remember_derived(dependency, basis, digest)
    return paths


@_session.memo(limit=64)
def _mentioning(top: str, words: tuple) -> tuple[list[str], str | None, str | None]:
    """(the files below `top` that spell one of `words`, the digest of every file's bytes
    there, the digest of which files spell one); digests None when `top` is no folder."""
    modules = _modules(top)
    if modules is None:
        return [], None, None
    spelled = [w.encode() for w in words]
    # the files that spell one (and those that cannot be read, as if they did): which they are
    found = [(path, digest) for path, data, digest in modules if data is None or any(w in data for w in spelled)]
    names = hashlib.sha256("".join(f"{p[len(top):]}\0{d is not None}\0" for p, d in found).encode())
    return [p for p, _ in found], _basis(top, ((path, digest) for path, _, digest in modules)), names.hexdigest()


def _basis(top: str, digests) -> str:
    """The digest of (path below `top`, digest of its bytes) of each file: what a MENTIONING
    dependency's digest is kept beside."""
    return hashlib.sha256("".join(f"{p[len(top):]}\0{d}\0" for p, d in digests).encode()).hexdigest()


@_session.memo(limit=4)
def _modules(top: str) -> list[tuple[str, bytes | None, str | None]] | None:
    """(path, bytes, digest) of each .py file below `top`, read once a session (a walk for each
    registrar of a release asks; a folder below one read already is taken from it); None when
    `top` is no folder."""
    if not os.path.isdir(top):
        return None
    for (above,), modules in list((_session.current().memos.get(_modules) or {}).items()):
        rest = top[len(above) :].split(os.sep)[1:] if top.startswith(above + os.sep) else None
        if modules is not None and rest and not {"tests", "__pycache__"} & set(rest):
            return [m for m in modules if m[0].startswith(top + os.sep)]  # (the same walk's order)
    out = []
    for path in _python_files(top):
        try:
            data, info = read_stamped(path, SOURCE_MAX_BYTES)
        except (ReadError, TooLarge):
            data = info = None
        digest = hashlib.sha256(data).hexdigest() if data is not None else None
        if info is not None:
            remember(path, info, digest)  # (kept with its stamp: _mentioning_now reads only that)
        out.append((path, data, digest))
    return out


def _mentioning_now(dependency: str) -> str | None:
    """The digest of a MENTIONING dependency now: kept with the digest of every file's bytes
    below the folder (their stamps kept: a warm run stats them), worked out again when one differs."""
    words, _, top = dependency[len(MENTIONING) :].partition("\0")
    kept = derived_digest(dependency)  # (basis, digest), or None: the files are read once, below
    if kept is not None and kept[0] == _basis_now(top):
        return kept[1]
    _, made, digest = _mentioning(top, tuple(words.split("|")))
    if digest is not None:
        remember_derived(dependency, made, digest)
    return digest


@_session.memo(limit=16)
def _basis_now(top: str) -> str | None:
    """The digest of the bytes of every .py file below `top` now, as _mentioning makes it, from
    the files' kept digests (once a session: the dependencies on one folder share it)."""
    if not os.path.isdir(top):
        return None
    return _basis(top, ((path, file_digest(path)) for path in _python_files(top)))


def unparsed(path: str) -> None:
    """Record that the module at `path` (read by read_source) nests too deeply for `ast.parse`:
    a dependency like the module itself (its digest), which the report names (`not read: ...`)
    in every run that relied on it, warm or cold, whatever fact was kept from it."""
    path = os.path.abspath(path)
    read = reads()
    record({UNPARSED + path: read[path] if path in read else digest_of(path)})


def digest_of(dependency: str) -> str | None:
    """The digest now of a dependency of a file kind (`kind_of`): a file's bytes, a folder's
    Python listing or pin files, an unparsed module's bytes; None when it cannot be read."""
    kind, subject = kind_of(dependency)
    if kind == LISTING:
        return listing_digest(subject, _walked)
    if kind == PINS:
        return _names_digest(stack_names(subject))
    if kind == MENTIONING:
        return _mentioning_now(dependency)
    if kind == STATEMENTS:
        from ..core.setup_statements import statements_digest

        return statements_digest(subject) if os.path.isdir(subject) else None
    return file_digest(subject)  # (FILE, UNPARSED: the module's bytes)


def reads() -> dict[str, str | None]:
    """Every verl, Megatron or MindSpeed source, model config or listing the checks read in this
    session (store.session): path -> SHA-256 of its bytes as read (None: unreadable)."""
    return _session.current().reads


def record(found: dict) -> None:
    """Record sources read (path -> digest) in this session: the one way into reads(). A path
    read before with another digest (a file edited during the run) makes the sources' entry
    (sources_entry) be made again, as a new path does."""
    session = _session.current()
    for path, digest in found.items():
        if session.reads.get(path, digest) != digest:
            session.entry[0] = None
        session.reads[path] = digest


def sources_changed() -> bool:
    """Whether a source this session read (a file, a folder's listing) is not as read now (the
    language server then begins a new session: store.session)."""
    return any(digest_of(path) != digest for path, digest in list(reads().items()))


def read_source(path: str, errors: str = "strict") -> str | None:
    """A source file the checks read (verl's Python, a model's config.json), as text; None
    when it cannot be read. Each is remembered with its digest (reads()): a result
    depends on it like on the script, so an edited dataclass or model config re-checks."""
    try:
        data, info = read_stamped(path, SOURCE_MAX_BYTES)
    except (ReadError, TooLarge):  # missing, a FIFO or a device, larger than any source
        record({os.path.abspath(path): None})
        if not os.path.lexists(path):
            remember(path, None, None)  # (its absence kept: the next warm run tries no open)
        return None
    digest = hashlib.sha256(data).hexdigest()
    record({os.path.abspath(path): digest})
    remember(path, info, digest)  # (its stamp kept: the next warm run reads only that)
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError:
        return None


def looked_for(path: str) -> bool:
    """Whether a file is at `path`, remembered like a source read (its digest, None: no file
    there): a result that found none there is checked again once one appears."""
    digest = file_digest(path) if os.path.isfile(path) else None
    record({os.path.abspath(path): digest})
    if digest is None:
        remember(path, None, None)  # (kept as missing only where nothing is there)
    return digest is not None


def digest_as_read(path: str, now=None) -> str | None:
    """A source's digest as this process read it, else as it is now (`now(path)`: a memo of
    current_digests, where many lists name the same files)."""
    read = reads()
    return read[path] if path in read else (now or digest_of)(path)


def sources_dependency() -> str | None:
    """The dependency entry for every source read so far in this process (results read before
    this script's run count too: what a check reads once per process, every result relies on)."""
    read = reads()
    return SOURCES + os.pathsep.join(sorted(read)) if read else None


def sources_entry() -> tuple[str, str] | None:
    """(sources_dependency(), its digest as read): computed again only when reads() grew
    (a run of many scripts reads most sources for the first one)."""
    session = _session.current()
    grown = len(session.reads)  # read first: a source read while the entry is computed is not hidden
    # (a path read again with other bytes resets entry[0]: record)
    if session.entry[0] != grown:
        dependency = sources_dependency()
        session.entry[:] = [grown, (dependency, sources_digest(dependency)) if dependency else None]
    return session.entry[1]


def sources_digest(dependency: str, digest=None) -> str:
    """The digest of the sources a `sources_dependency()` names: as read in this process, or
    as `digest(path)` gives them now."""
    h = hashlib.sha256()
    for path in dependency[len(SOURCES) :].split(os.pathsep):
        found = (digest or digest_as_read)(path)
        h.update(f"{path}\0{found}\0".encode())
    return h.hexdigest()


@lru_cache(maxsize=1)
def hydra_versions() -> str:
    """The versions of hydra-core and omegaconf that compose here, read from their own
    sources without importing them (a fully cached run imports neither): part of the key of
    what Hydra or OmegaConf decided (compositions, results, OmegaConf's conversions)."""
    out = []
    for package, file in (("hydra", "__init__.py"), ("omegaconf", "version.py")):
        spec = importlib.util.find_spec(package)
        found = "?"
        if spec is not None and spec.submodule_search_locations:
            data = read_bounded(os.path.join(spec.submodule_search_locations[0], file))
            if data is not None:
                found = _version_line(data.decode("utf-8", "replace")) or "?"
        out.append(f"{package}={found}")
    return ",".join(out)


def _version_line(text: str) -> str | None:
    """The string of a module's `__version__ = "..."` line (either quote), or None."""
    for line in text.splitlines():
        if line.startswith("__version__"):
            value = line[len("__version__") :].strip()
            if value.startswith("="):
                value = value[1:].strip()
                rest = value[1:] if value[:1] in ("'", '"') else ""
                ends = [rest.find(quote) for quote in ("'", '"') if quote in rest]
                if ends and min(ends) > 0:
                    return rest[: min(ends)]
    return None


def current_digests():
    """A function from a dependency to its digest now, each read once (many results share
    verl's sources)."""
    memo: dict = {}
    return lambda dependency: _digest_now(dependency, memo)


def _digest_now(dependency: str, memo: dict) -> str | None:
    """A dependency's digest now, whatever its kind (`kind_of`); `memo`: what this check already
    read (many results share verl's sources)."""
    if dependency in memo:
        return memo[dependency]
    kind = kind_of(dependency)[0]
    if kind == TREE_DEPENDENCY:
        found = current_tree_hash(dependency)
    elif kind == SOURCES:
        found = sources_digest(dependency, lambda p: _digest_now(p, memo))
    else:
        found = digest_of(dependency)
    memo[dependency] = found
    return found
