"""Paths in every format are the user's view: relative to the working directory when under it,
else absolute, the same with a cold and a warm cache and whatever spelling made the cache entry."""

from __future__ import annotations

import json
import os

import pytest

from verl_preflight.app.cli import main
from verl_preflight.app.user_paths import shown, under

pytestmark = pytest.mark.slow  # the slow tier (make test-slow): the CLI run from several folders in every format

SOURCED = "COMMON=(\n    actor_rollout_ref.actor.ppo_mini_batchsize=8\n)\n"
RUN = 'source "$(dirname "$0")/common.sh"\npython3 -m verl.trainer.main_ppo "${COMMON[@]}" "$@"\n'


def test_under_is_the_root_or_a_name_inside_it():
    assert under("/a/b", "/a/b") and under("/a/b/c", "/a/b") and under("/a", "/")
    assert not under("/a/bc", "/a/b") and not under("/a", "/a/b")
    assert under("x/y.sh", "x") and not under("xy.sh", "x")


def _places(fmt: str, out: str) -> list[str]:
    if fmt == "json":
        return sorted({f["path"] for f in json.loads(out)["findings"]})
    if fmt == "sarif":
        runs = json.loads(out)["runs"]
        return sorted({r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in runs[0]["results"]})
    if fmt == "github":
        return sorted({line.split("file=")[1].split(",")[0] for line in out.splitlines() if "file=" in line})
    return sorted({line.split(":")[0] for line in out.splitlines() if ": error:" in line})


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_a_sourced_file_is_named_from_where_the_user_stands(fmt, tmp_path, monkeypatch, capsys):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "common.sh").write_text(SOURCED)
    (tmp_path / "src" / "run.sh").write_text(RUN)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    runs = [  # (working directory, the script as given, what the user must see)
        (tmp_path, "src/run.sh", "src/common.sh"),
        (tmp_path, str(tmp_path / "src" / "run.sh"), "src/common.sh"),  # given absolute, under the cwd
        (tmp_path / "src", "run.sh", "common.sh"),
        (tmp_path, "src/run.sh", "src/common.sh"),  # warm, after a run from inside src/
    ]
    for cold_first in (True, False):
        for cwd, script, expected in runs:
            monkeypatch.chdir(cwd)
            args = ["--format", fmt, script] + (["--no-cache"] if cold_first else [])
            assert main(args) == 1
            assert _places(fmt, capsys.readouterr().out) == [expected], (cwd, script, cold_first)


def test_shown_paths(tmp_path):
    cwd = str(tmp_path / "a")
    assert shown(os.path.join(cwd, "b", "c.sh"), cwd) == os.path.join("b", "c.sh")
    assert shown("b/./c.sh", cwd) == os.path.join("b", "c.sh")
    assert shown("../x/c.sh", cwd) == str(tmp_path / "x" / "c.sh")  # outside: absolute
    assert shown("/etc/c.sh", cwd) == "/etc/c.sh"
