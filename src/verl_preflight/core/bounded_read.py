"""The one bounded reader: every file the tool opens, by one set of rules.

Regular files only (a FIFO, a device, a socket or a folder is refused: opened non-blocking, a
FIFO never hangs the open), read up to a size cap for its kind (a script: --max-bytes; a Python
module, a YAML config, a model's config.json, a pyproject.toml: SOURCE_MAX_BYTES), links
followed unless the caller says not to (the cache's own files). Nothing of the package is
imported here: every layer may read through it.
"""

from __future__ import annotations

import hashlib
import os
import stat
from contextlib import contextmanager

DEFAULT_MAX_BYTES = 5 * 1024 * 1024


class ReadError(Exception):
    """The file cannot be read; str(): "PATH: cannot read: WHY", `why`: the reason alone."""

    def __init__(self, path: str, why: str):
        super().__init__(f"{path}: cannot read: {why}")
        self.why = why


class NotRegular(ReadError):
    """A FIFO, a device, a socket or a folder: never read (a FIFO would block)."""

    def __init__(self, path: str):
        super().__init__(path, NOT_REGULAR)


class TooLarge(Exception):
    pass


NOT_REGULAR = "not a regular file"
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


@contextmanager
def _opened(path: str, follow: bool = True):
    """(descriptor, its status): opened non-blocking (a FIFO does not hang the open), closed on
    leaving; `follow=False` refuses a symbolic link as the last component. OSError as os.open."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | _CLOEXEC | (0 if follow else os.O_NOFOLLOW))
    try:
        yield fd, os.fstat(fd)
    finally:
        os.close(fd)


def read_stamped(path: str, max_bytes: int = DEFAULT_MAX_BYTES, follow: bool = True) -> tuple[bytes, os.stat_result]:
    """The file's bytes and the status of the descriptor they were read from (fstat: the file
    read, whatever the name points at a moment later), read only when regular (`_opened`).
    ReadError (NotRegular) when it cannot be read, TooLarge over max_bytes."""
    try:
        with _opened(path, follow) as (fd, info):
            if not stat.S_ISREG(info.st_mode):
                raise NotRegular(path)
            if info.st_size > max_bytes:
                raise TooLarge(path)
            data = _read_at_most(fd, min(max_bytes, info.st_size) + 1)  # a file that grew since: still bounded
    except OSError as err:
        raise ReadError(path, err.strerror or str(err)) from err
    if len(data) > max_bytes:
        raise TooLarge(path)
    return data, info


def _read_at_most(fd: int, size: int) -> bytes:
    chunks, left = [], size
    while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


SOURCE_MAX_BYTES = 8 * 1024 * 1024  # a Python module, a YAML config, a model's config.json, a pyproject.toml
DIGEST_MAX_BYTES = 1 << 30  # a file digested (streamed, never held whole): as large as --max-bytes allows


def read_bounded(path: str, max_bytes: int = SOURCE_MAX_BYTES, follow: bool = True) -> bytes | None:
    """The bytes of a regular file of at most `max_bytes`, read as read_stamped reads (opened
    non-blocking: a FIFO never hangs, a device is never read); None when it is missing, not
    regular, larger, or unreadable. Every file the tool opens but the scripts goes through here."""
    try:
        return read_stamped(path, max_bytes, follow)[0]
    except (ReadError, TooLarge):
        return None


def read_head(path: str, size: int) -> bytes:
    """The first `size` bytes of a regular file (`_opened`); b"" when it is not one."""
    try:
        with _opened(path) as (fd, info):
            return _read_at_most(fd, size) if stat.S_ISREG(info.st_mode) else b""
    except OSError:
        return b""


def streamed_digest(path: str) -> tuple[os.stat_result, str | None]:
    """(the file's status, the SHA-256 of its bytes): read in chunks (memory stays bounded); no
    digest for what is not a regular file or is larger than DIGEST_MAX_BYTES (a link to
    /dev/zero is a device: never read). OSError when it cannot be opened."""
    with _opened(path) as (fd, info):
        if not stat.S_ISREG(info.st_mode) or info.st_size > DIGEST_MAX_BYTES:
            return info, None
        h, left = hashlib.sha256(), DIGEST_MAX_BYTES + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            h.update(chunk)
            left -= len(chunk)
        return info, (h.hexdigest() if left > 0 else None)
