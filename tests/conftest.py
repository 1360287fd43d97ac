"""Shared test fixtures: the repository root, verl's config tree, a config cache."""

from __future__ import annotations

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

from verl_preflight.hydra_stage.tree import ConfigCache, locate  # noqa: E402

FIXTURES = os.path.join(ROOT, "tests", "fixtures")
SHARED = os.path.join(os.path.dirname(ROOT), "shared")


def run_cli(capsys, *args):
    """The command line in this process: (exit code, standard output, standard error)."""
    from verl_preflight.cli import main

    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def write_file(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.fixture(scope="session")
def config_source():
    return locate(None)


@pytest.fixture(scope="session")
def config_cache(config_source):
    return ConfigCache(config_source, use_disk=False)


@pytest.fixture(autouse=True)
def _private_cache_dir(tmp_path_factory, monkeypatch):
    """Tests never touch the user's cache. The workers of one session share one (what a check
    derives from a release's sources and composes is kept once, as on a user's machine); a
    test of the cache itself sets its own."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # the session's folder
    monkeypatch.setenv("XDG_CACHE_HOME", str(shared / "xdg-cache"))
