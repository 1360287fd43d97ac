"""`--verl VERSION`: a verl release's config tree, from its wheel, cached once.

The wheel (about 2 MB) is fetched with `pip download --no-deps verl==VERSION`;
torch and Ray are never installed. Its `verl/` package is unpacked under
`$XDG_CACHE_HOME/verl-preflight/releases/VERSION/`. `VERL_PREFLIGHT_WHEELS`
names a folder of wheels to use instead of the package index (offline use,
tests).
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import tempfile
import zipfile

from ..core.config_location import ConfigTreeError
from ..hydra_stage.tree import ConfigSource

_VERSION = re.compile(r"^[0-9][0-9A-Za-z.+-]*$")


def releases_dir() -> str:
    """Under the private cache folder (cache_files), else a private temporary folder for this run."""
    from ..store import cache_files

    return cache_files.folder("releases") or _run_folder()


@functools.lru_cache(maxsize=1)
def _run_folder() -> str:
    return tempfile.mkdtemp(prefix="verl-preflight-releases-")


def release_source(version: str) -> ConfigSource:
    if not _VERSION.fullmatch(version):  # (`$` would let a final newline through)
        raise ConfigTreeError(f"--verl {version!r}: not a version number")
    root = os.path.join(releases_dir(), version)
    config = os.path.join(root, "verl", "trainer", "config")
    if not os.path.isfile(os.path.join(config, "ppo_trainer.yaml")):
        _fetch(version, root)
    return ConfigSource(config, version, os.path.join(root, "verl"), f"--verl {version}: the release's wheel")


def _fetch(version: str, root: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            sys.executable,
            "-I",  # isolated, and run from the empty folder below: no pip.py of the working directory is imported
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary",
            ":all:",
            "--disable-pip-version-check",
            "-q",
            "-d",
            tmp,
            f"verl=={version}",
        ]
        wheels = os.environ.get("VERL_PREFLIGHT_WHEELS")
        if wheels:
            cmd[5:5] = ["--no-index", "--find-links", os.path.abspath(wheels)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise ConfigTreeError(f"--verl {version}: pip download failed: {err}") from err
        found = [f for f in os.listdir(tmp) if f.startswith("verl-") and f.endswith(".whl")]
        if proc.returncode != 0 or not found:
            last = (proc.stderr.strip().splitlines() or ["no wheel"])[-1]
            raise ConfigTreeError(f"--verl {version}: cannot get the wheel with pip download: {last}")
        staging = tempfile.mkdtemp(prefix=".tmp-", dir=_ensure(os.path.dirname(root)))
        with zipfile.ZipFile(os.path.join(tmp, found[0])) as wheel:
            for member in wheel.namelist():
                if member.startswith("verl/") and ".." not in member.split("/"):
                    wheel.extract(member, staging)
        if not os.path.isfile(os.path.join(staging, "verl", "trainer", "config", "ppo_trainer.yaml")):
            raise ConfigTreeError(f"--verl {version}: the wheel has no verl/trainer/config")
        try:
            os.replace(staging, root)
        except OSError:  # another process got there first
            pass


def _ensure(path: str) -> str:
    os.makedirs(path, exist_ok=True)
    return path


__all__ = ["release_source", "releases_dir"]
