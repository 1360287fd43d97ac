"""--verl VERSION: a release's config tree from its wheel (seeded in .venv/wheels by make)."""

from __future__ import annotations

import os

import pytest
from conftest import ROOT

from verl_preflight.cli import main

WHEELS = os.path.join(ROOT, ".venv", "wheels")
REGRESSION = os.path.join(ROOT, "tests", "fixtures", "regressions", "use_mbridge_false.sh")
Q35 = os.path.join(ROOT, "examples", "grpo_trainer", "run_qwen3_5_35b_megatron.sh")


@pytest.fixture(autouse=True)
def offline_wheels(monkeypatch):
    have = {f for f in os.listdir(WHEELS)} if os.path.isdir(WHEELS) else set()
    if not {"verl-0.9.1-py3-none-any.whl", "verl-0.8.0-py3-none-any.whl"} <= have:
        pytest.skip("make has not downloaded the verl wheels")
    monkeypatch.setenv("VERL_PREFLIGHT_WHEELS", WHEELS)


def test_release_tree_is_unpacked_once(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert main(["--format", "json", "--verl", "0.9.1", Q35]) == 0
    first = capsys.readouterr().out
    tree = tmp_path / "verl-preflight" / "releases" / "0.9.1" / "verl" / "trainer" / "config" / "ppo_trainer.yaml"
    assert tree.is_file()
    monkeypatch.setenv("VERL_PREFLIGHT_WHEELS", str(tmp_path / "nowhere"))  # no second fetch
    assert main(["--format", "json", "--verl", "0.9.1", Q35]) == 0
    assert capsys.readouterr().out == first
    assert '"verl_version": "0.9.1"' in first


def test_compatibility_matrix(capsys):
    code = main(["--verl", "0.9.1", "--verl", "0.8.0", Q35, REGRESSION])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    assert lines[0].split() == ["script", "verl", "0.9.1", "verl", "0.8.0"]
    assert lines[1].split()[1:] == ["ok", "ok"]
    assert lines[2].split()[1:] == ["2", "errors", "2", "errors"]


def test_unknown_release_exits_2(capsys):
    assert main(["--verl", "0.0.0", Q35]) == 2
    assert "cannot get the wheel" in capsys.readouterr().err
