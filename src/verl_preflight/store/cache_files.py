"""The tool's cache folder and the files in it: plain JSON, never code, signed with this user's key.

Everything the tool keeps between runs (results, compositions, fetched releases) lives
under one folder, `$XDG_CACHE_HOME/verl-preflight` (else `~/.cache/verl-preflight`):

- The folder and every folder made in it are 0700; a folder in it that is a link, or another
  user's, is not used (what would go there is not kept). An existing folder of this user that
  others could read or write (umask 002 makes `drwxrwxr-x`) is made 0700; a folder owned by
  another user is not used at all (this run keeps no cache; `refused()` says why).
- Each file is `TAG\\n` followed by a JSON document, TAG being the HMAC-SHA256 of the
  document under this user's key: `key` in the folder, 32 random bytes, 0600, made on
  first use. A file whose tag does not match (flipped bits, an entry forged or restored
  from another user's or another job's cache without its key), that is not JSON, or whose
  content fails the reader's own checks is a miss, and is written anew.

JSON is parsed, never run: a hostile cache entry can at worst be a miss. It is read with the C
scanner `json.loads` itself uses (`_loads`), without importing the `json` package: that import
(its `re`, `enum`) was a quarter of a warm run, which reads a few entries and writes none.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import os
import stat
from functools import lru_cache

KEY_BYTES = 32
MAX_FILE_BYTES = 256 * 1024 * 1024  # a cache file larger than this is a miss (never read whole)
_PRIVATE = 0o700
_on_disk = [True]  # off for --no-cache (use_disk)


def use_disk(on: bool) -> None:
    """Off for --no-cache: no folder is given out, so this process reads and writes nothing of
    the cache (the results, the digests, the derived facts, the settings tables alike)."""
    _on_disk[0] = on


def base_folder() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "verl-preflight")


@lru_cache(maxsize=8)
def _usable(folder: str) -> str | None:
    """None when `folder` is private to this user (made so when it is ours), else why not."""
    try:
        os.makedirs(folder, mode=_PRIVATE, exist_ok=True)
    except OSError as err:
        return f"cannot make {folder}: {err.strerror or err}"
    return _why_not_ours(folder, os.stat)


def _why_not_ours(path: str, stat_of) -> str | None:
    """None when `path` (its `stat_of`: os.stat, or os.lstat where a link is refused) is a folder
    of this user, made private when others could read it; else why not."""
    try:
        info = stat_of(path)
    except OSError as err:
        return f"cannot read {path}: {err.strerror or err}"
    if not stat.S_ISDIR(info.st_mode):
        return f"{path} is not a folder"
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        return f"{path} belongs to another user"
    if stat.S_IMODE(info.st_mode) & 0o077:
        try:
            os.chmod(path, _PRIVATE)
        except OSError as err:
            return f"cannot make {path} private: {err.strerror or err}"
    return None


def refused() -> str | None:
    """Why this run keeps no cache on disk (the folder is another user's, or cannot be made)."""
    return _usable(base_folder())


def folder(*parts: str) -> str | None:
    """A private folder under the cache folder (made, 0700), or None when there is no usable
    cache or none is used (use_disk)."""
    if not _on_disk[0]:
        return None
    root = base_folder()
    if _usable(root) is not None:
        return None
    path = os.path.join(root, *parts)
    try:
        os.makedirs(path, mode=_PRIVATE, exist_ok=True)
    except OSError:
        return None
    for n in range(1, len(parts) + 1):  # each folder under the root: ours, or the cache is not used there
        if not _ours(os.path.join(root, *parts[:n])):
            return None
    return path


def _ours(path: str) -> bool:
    """Whether `path` is a private folder of this user and not a link (a link planted there
    would send the tool's writes elsewhere)."""
    return _why_not_ours(path, os.lstat) is None


@lru_cache(maxsize=8)
def _key_in(root: str) -> bytes | None:
    path = os.path.join(root, "key")
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)  # (a FIFO planted there: no hang)
    for _ in range(2):
        try:
            fd = os.open(path, flags)
        except FileNotFoundError:
            if not _publish_key(path):
                return None
            continue  # ours, or another run's that was published first: read it
        except OSError:
            return None
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fh.fileno())
            mine = not hasattr(os, "geteuid") or info.st_uid == os.geteuid()
            if not stat.S_ISREG(info.st_mode) or not mine or stat.S_IMODE(info.st_mode) & 0o077:
                return None  # a key others can read or wrote is no key
            key = fh.read(KEY_BYTES + 1)
        return key if len(key) == KEY_BYTES else None
    return None


def _publish_key(path: str) -> bool:
    """A new key written whole beside `path`, then linked to it: a run that starts at the same
    moment reads a whole key, never a file still being written. False when it cannot be made."""
    fresh = f"{path}.{os.getpid()}.{os.urandom(4).hex()}"
    try:
        fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(os.urandom(KEY_BYTES))
        try:
            os.link(fresh, path)
        except FileExistsError:
            pass  # another run published its key first
        except OSError:  # a file system without hard links: made in place
            return _write_key_in_place(path)
        return True
    except OSError:
        return False
    finally:
        try:
            os.unlink(fresh)
        except OSError:
            pass


def _write_key_in_place(path: str) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        return True
    except OSError:
        return False
    with os.fdopen(fd, "wb") as fh:
        fh.write(os.urandom(KEY_BYTES))
    return True


def _key() -> bytes | None:
    root = base_folder()
    return None if _usable(root) is not None else _key_in(root)


def _tag(key: bytes, payload: bytes) -> bytes:
    return hmac.new(key, payload, hashlib.sha256).hexdigest().encode()


_MADE: set = set()  # folders this process made or found: a write does not ask the file system again
_WRITES = itertools.count()


def write(path: str, document) -> bool:
    """Write `document` (JSON types only) to `path`, signed, atomically; False when it cannot be."""
    import json

    key = _key()
    if key is None:
        return False
    payload = json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    try:
        fd, tmp = _new_file(os.path.dirname(path))
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(_tag(key, payload) + b"\n" + payload)
        os.replace(tmp, path)
    except BaseException as err:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(err, OSError):
            return False
        raise
    return True


def _new_file(folder: str) -> tuple[int, str]:
    """(fd, path) of a new 0600 file in `folder` under a name no other writer uses (this
    process's id and count, random bytes), made exclusively; the folder made when this process
    has not made it yet, or again when it was removed since (a test, a user clearing the cache)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    tmp = os.path.join(folder, f".tmp-{os.getpid()}-{next(_WRITES)}-{os.urandom(4).hex()}")
    if folder in _MADE:
        try:
            return os.open(tmp, flags, 0o600), tmp
        except FileNotFoundError:
            _MADE.discard(folder)
    os.makedirs(folder, mode=_PRIVATE, exist_ok=True)
    _MADE.add(folder)
    return os.open(tmp, flags, 0o600), tmp


def read(path: str):
    """The document in `path` when its tag is this user's, else None (absent, altered, foreign, not JSON)."""
    key = _key()
    if key is None:
        return None
    try:  # an entry that is a link, a FIFO or a device is a miss: never followed, never waited on
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
                return None
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None
    tag, sep, payload = data.partition(b"\n")
    if not sep or not hmac.compare_digest(tag, _tag(key, payload)):
        return None
    try:
        return _loads(payload.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


class _Decoding:
    """What the C scanner reads of a decoder: json.loads's defaults."""

    strict = True
    object_hook = object_pairs_hook = None
    parse_float, parse_int = float, int
    parse_constant = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}.__getitem__


def _loads(text: str):
    """`json.loads(text)` for the compact documents `write` makes (no whitespace around them),
    by json's C scanner when this Python has it; ValueError for anything else."""
    try:
        from _json import make_scanner
    except ImportError:  # a Python without the accelerator: json's own, as it would use
        import json

        return json.loads(text)
    try:
        found, end = make_scanner(_Decoding())(text, 0)
    except StopIteration as err:  # (nothing that starts a JSON value)
        raise ValueError("not JSON") from err
    if end != len(text):
        raise ValueError("not one JSON document")
    return found
