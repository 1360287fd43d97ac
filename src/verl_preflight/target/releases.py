"""`--verl VERSION` and `--verl git:COMMIT`: a verl release's (or commit's) package, cached once.

A release's wheel (about 2 MB) is fetched with `pip download --no-deps verl==VERSION`;
torch and Ray are never installed. Its `verl/` package is unpacked under
`$XDG_CACHE_HOME/verl-preflight/releases/VERSION/`. `VERL_PREFLIGHT_WHEELS`
names a folder of wheels to use instead of the package index (offline use,
tests).

A commit of verl (a project's `verl @ git+https://...@SHA` pin, REQUIRED_VERL.txt's
`VERL_COMMIT`) is fetched the same way once: `git fetch --depth 1 URL COMMIT` into an
empty bare repository, then its `verl/` folder taken out of `git archive`, under
`releases/git-COMMIT/`. Nothing of it is run. `VERL_PREFLIGHT_VERL_GIT` names the
repository to fetch from instead (a mirror; tests use a local bare repository); where
nothing answers, the launch is left unchecked with the command that makes it checkable.
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
        _settle(staging, root, f"--verl {version}: the wheel")


_COMMIT = re.compile(r"^[0-9a-f]{7,40}$")
VERL_GIT = "https://github.com/verl-project/verl.git"


def commit_source(commit: str, url: str | None = None) -> ConfigSource:
    """The verl package of one commit of verl's git repository (module docstring);
    ConfigTreeError naming the command that gets it when it cannot be had."""
    if not _COMMIT.fullmatch(commit):
        raise ConfigTreeError(f"--verl git:{commit}: not a commit (give its hexadecimal id)")
    root = os.path.join(releases_dir(), f"git-{commit}")
    package = os.path.join(root, "verl")
    if not os.path.isfile(os.path.join(package, "trainer", "config", "ppo_trainer.yaml")):
        _fetch_commit(commit, os.environ.get("VERL_PREFLIGHT_VERL_GIT") or url or VERL_GIT, root, url or VERL_GIT)
    from ..core.config_location import version_file

    how = f"--verl git:{commit}: the commit's tree"
    return ConfigSource(os.path.join(package, "trainer", "config"), version_file(package), package, how)


def _fetch_commit(commit: str, url: str, root: str, named: str) -> None:
    """Fetch `commit` from `url` into `root` (module docstring); `named`: the repository the
    project names, said in the command that gets it by hand."""
    import tarfile

    get = f"git clone {named} verl && git -C verl checkout {commit}, then --verl-config verl/verl/trainer/config"
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="true", GIT_CONFIG_NOSYSTEM="1")
    with tempfile.TemporaryDirectory() as tmp:
        steps = (
            ["git", "init", "-q", "--bare", tmp],
            ["git", "-C", tmp, "fetch", "-q", "--depth", "1", url, commit],
            ["git", "-C", tmp, "archive", "--format=tar", "-o", os.path.join(tmp, "verl.tar"), "FETCH_HEAD", "verl"],
        )
        for cmd in steps:
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)
            except (OSError, subprocess.TimeoutExpired) as err:
                raise ConfigTreeError(f"commit {commit} of verl cannot be fetched ({err}): {get}") from err
            if proc.returncode != 0:
                last = (proc.stderr.strip().splitlines() or ["git failed"])[-1]
                raise ConfigTreeError(f"commit {commit} of verl cannot be fetched from {url} ({last}): {get}")
        staging = tempfile.mkdtemp(prefix=".tmp-", dir=_ensure(os.path.dirname(root)))
        with tarfile.open(os.path.join(tmp, "verl.tar")) as tar:
            tar.extractall(staging, filter="data")  # (no path out of staging, no device, no link out)
    _settle(staging, root, f"commit {commit} of verl")


def _settle(staging: str, root: str, what: str) -> None:
    """The unpacked `verl/` in `staging` becomes `root` at once (a reader never sees half of it);
    ConfigTreeError where it has no config tree."""
    if not os.path.isfile(os.path.join(staging, "verl", "trainer", "config", "ppo_trainer.yaml")):
        raise ConfigTreeError(f"{what} has no verl/trainer/config")
    try:
        os.replace(staging, root)
    except OSError:  # another process got there first
        pass


def _ensure(path: str) -> str:
    os.makedirs(path, exist_ok=True)
    return path


__all__ = ["commit_source", "release_source", "releases_dir"]
