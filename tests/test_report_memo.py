"""A run's report kept whole (report_memo.py): a warm run of an unchanged tree writes the report
a run without the cache writes, from one file; any change to what the report was made from
gives the new report.

Every case runs the real command line in a subprocess, in a cache folder of its own that starts
with the derived facts only (conftest.derived_facts_cache: no tree's results or reports). What a
warm run must write is what a run writes that finds none of them kept: a run in a new such folder
(test_a_run_from_the_derived_facts_alone_writes_the_report_of_a_run_without_the_cache ties it to
`--no-cache`).
"""

from __future__ import annotations

import json
import os

import pytest
from conftest import MEMO_LAUNCH, MEMO_TYPO, REPORT_TIME, spied_run, unkept_cache

LAUNCH, TIME = MEMO_LAUNCH, REPORT_TIME


@pytest.fixture
def tree(memo_tree):
    return memo_tree


class Ran:
    def __init__(self, proc, opened):
        self.opened, self.stderr, self.stdout, self.status = opened, proc.stderr, proc.stdout, proc.returncode


def run(tree, *argv, stdin=None, cache=None) -> Ran:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache or tree / "cache"))
    env.pop("NO_COLOR", None)
    proc, opened, _ = spied_run(argv, env=env, cwd=tree, input=stdin)
    assert proc.returncode in (0, 1), proc.stderr
    return Ran(proc, opened)


@pytest.fixture
def fresh(derived_facts_cache):
    """The run that finds no tree's results or report kept: what every warm run must write."""
    return lambda tree, *argv: run(tree, *argv, cache=unkept_cache(derived_facts_cache, tree))


def untimed(text: str) -> str:
    return TIME.sub("", text)


def cache_files_opened(tree, ran) -> dict:
    root = os.path.join(str(tree / "cache"), "verl-preflight")
    opened = [p for p in ran.opened if p.startswith(root) and p.endswith(".json")]
    return {kind: [p for p in opened if p.startswith(os.path.join(root, kind))] for kind in ("results", "reports")}


def reports(tree) -> list[str]:
    folder = tree / "cache" / "verl-preflight" / "reports"
    return sorted(str(p) for p in folder.rglob("*.json")) if folder.is_dir() else []


def test_a_run_from_the_derived_facts_alone_writes_the_report_of_a_run_without_the_cache(tree, fresh):
    """What the other cases take as the truth: the derived facts kept change no report."""
    (tree / "typo.sh").write_text(MEMO_TYPO)
    want = run(tree, "--no-cache", "--format", "json", ".")
    assert "override-missing-key" in want.stdout
    assert (fresh(tree, "--format", "json", ".").stdout, want.status) == (want.stdout, 1)


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_a_warm_run_writes_the_report_of_a_run_without_the_cache_from_one_file(tree, fresh, fmt):
    want = fresh(tree, "--format", fmt, ".")
    cold = run(tree, "--format", fmt, ".")
    warm = run(tree, "--format", fmt, ".")
    opened = cache_files_opened(tree, warm)
    assert opened["results"] == [] and len(opened["reports"]) == 1
    for ran in (cold, warm):
        assert (untimed(ran.stdout), ran.stderr, ran.status) == (untimed(want.stdout), want.stderr, want.status)
    if fmt == "text":  # the time is this run's
        assert TIME.search(warm.stdout)


def test_a_changed_sourced_file_gives_the_new_report(tree, fresh):
    run(tree, ".")
    (tree / "lib.sh").write_text("A=(trainer.total_epoch=2)\n")  # a misspelled key
    warm = run(tree, "--format", "json", ".")
    assert warm.stdout == fresh(tree, "--format", "json", ".").stdout
    assert any(f["rule"] == "override-missing-key" for f in json.loads(warm.stdout)["findings"])
    assert warm.status == 1


@pytest.mark.slow
def test_a_new_script_in_the_folder_gives_the_new_report(tree, fresh):
    before = len(json.loads(run(tree, "--format", "json", ".").stdout)["scripts"])
    (tree / "new.sh").write_text("#!/usr/bin/env bash\nA=(trainer.total_epochs=4)\n" + LAUNCH)
    warm = run(tree, "--format", "json", ".")
    assert len(json.loads(warm.stdout)["scripts"]) == before + 1
    assert warm.stdout == fresh(tree, "--format", "json", ".").stdout


@pytest.mark.slow
@pytest.mark.parametrize("argv", [("--strict",), ("--quiet",), ("--format", "json"), ("--color", "always")])
def test_an_option_that_shapes_the_report_gives_its_own_report(tree, fresh, argv):
    (tree / "warn.sh").write_text("#!/usr/bin/env bash\nA=(trainer.total_epochs=1 trainer.total_epochs=2)\n" + LAUNCH)
    plain = run(tree, ".")
    assert "[duplicate-key]" in plain.stdout and plain.status == 0
    warm = run(tree, *argv, ".")
    want = fresh(tree, *argv, ".")
    assert want.stdout != plain.stdout or want.status != plain.status  # the option changes the report
    assert (untimed(warm.stdout), warm.stderr, warm.status) == (untimed(want.stdout), want.stderr, want.status)


@pytest.mark.slow
def test_a_severity_in_the_projects_settings_gives_its_own_report(tree, fresh):
    (tree / "lib.sh").write_text("A=(trainer.total_epoch=2)\n")
    assert run(tree, ".").status == 1
    (tree / "pyproject.toml").write_text('[tool.validate-scripts]\nseverity = {"override-missing-key" = "off"}\n')
    warm = run(tree, "--format", "json", ".")
    assert warm.status == 0 and warm.stdout == fresh(tree, "--format", "json", ".").stdout


@pytest.mark.slow
def test_an_altered_report_is_not_written(tree, fresh):
    run(tree, "--format", "json", ".")
    (kept,) = reports(tree)
    with open(kept, "rb") as fh:
        data = fh.read()
    forged = data.replace(b'"status":0', b'"status":1') if b'"status":0' in data else data.replace(b"alone", b"alonf")
    assert forged != data
    with open(kept, "wb") as fh:
        fh.write(forged)
    warm = run(tree, "--format", "json", ".")
    want = fresh(tree, "--format", "json", ".")
    assert (warm.stdout, warm.status) == (want.stdout, want.status)


@pytest.mark.slow
def test_no_report_is_kept_of_a_run_that_reads_the_machine_or_standard_input(tree):
    run(tree, "--profile", "current", ".")
    run(tree, "-", stdin=(tree / "alone.sh").read_text())
    run(tree, "--diff", ".")
    assert reports(tree) == []
    run(tree, ".")
    assert len(reports(tree)) == 1


@pytest.mark.slow
def test_the_kept_report_names_each_source_once_and_sees_it_edited(tree, fresh, monkeypatch):
    """verl's sources are kept file by file, each once however many results read it; an edit
    to one of them gives the new report."""
    import shutil

    from verl_preflight.store import cache_files
    from verl_preflight.core.config_location import found

    verl = tree / "verl"
    shutil.copytree(found(None)[2], verl, ignore=shutil.ignore_patterns("__pycache__"))
    (tree / "est.sh").write_text("#!/usr/bin/env bash\nA=(algorithm.adv_estimator=gpro)\n" + LAUNCH)
    argv = ("--format", "json", "--verl-config", str(verl / "trainer" / "config"), ".")
    assert "config-value" in {f["rule"] for f in json.loads(run(tree, *argv).stdout)["findings"]}
    (kept,) = reports(tree)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tree / "cache"))  # read with the runs' key
    deps = cache_files.read(kept)["deps"]  # (a query of the store: its dependencies beside its value)
    assert not [p for p in deps if p.startswith("sources:")]
    assert os.path.join(str(verl), "trainer", "ppo", "core_algos.py") in deps
    with open(verl / "trainer" / "ppo" / "core_algos.py", "a", encoding="utf-8") as fh:
        fh.write('\n\n@register_adv_est("gpro")\ndef compute_gpro_outcome_advantage(*a, **k):\n    return None\n')
    warm = run(tree, *argv)
    assert "config-value" not in {f["rule"] for f in json.loads(warm.stdout)["findings"]}
    assert warm.stdout == fresh(tree, *argv).stdout
