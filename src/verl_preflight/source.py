"""The one reader of script files: the script itself and every file it sources.

It honours `--max-bytes`, refuses non-regular files (a FIFO would block), and
never raises for a sourced file (None: the shell reports it as not followed).
"""

from __future__ import annotations

import os
import stat

DEFAULT_MAX_BYTES = 5 * 1024 * 1024


class ReadError(Exception):
    pass


class TooLarge(Exception):
    pass


def read_script(path: str, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The file's bytes; ReadError when it cannot be read, TooLarge over max_bytes."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise ReadError(f"{path}: cannot read: not a regular file")
        if info.st_size > max_bytes:
            raise TooLarge(path)
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as err:
        raise ReadError(f"{path}: cannot read: {err.strerror or err}") from err
    if len(data) > max_bytes:
        raise TooLarge(path)
    return data


def reader(max_bytes: int = DEFAULT_MAX_BYTES):
    """A `path -> bytes | None` function for the files a script sources."""

    def read(path: str) -> bytes | None:
        try:
            return read_script(path, max_bytes)
        except (ReadError, TooLarge):
            return None

    return read
