"""At home in a user's repository (issue 43): what a project built on verl needs of the tool.

Each test builds the pattern it names in a folder of its own (a project's layout, its pins,
its entry module, its wrapper scripts), as the public projects have it, and runs the command
as a user runs it.
"""

from __future__ import annotations

import json
import os

from verl_preflight.cli import main

LAUNCH = (
    "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo "
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 "
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1"
)


def _report(capsys, *args) -> tuple[int, dict]:
    code = main(["--no-cache", "--format", "json", *map(str, args)])
    return code, json.loads(capsys.readouterr().out)


def _rules(doc: dict) -> list[tuple[int, str, str]]:
    return sorted((f["line"], f["rule"], f["severity"]) for f in doc["findings"])


# ---- style lints are opt-in --------------------------------------------------------------


def test_a_launch_without_the_scripts_arguments_is_no_finding_unless_turned_on(tmp_path, capsys):
    script = tmp_path / "run.sh"
    script.write_text(f"#!/usr/bin/env bash\n{LAUNCH}\n")
    code, doc = _report(capsys, script)
    assert (code, _rules(doc)) == (0, [])
    code, doc = _report(capsys, "--enable", "launch-passes-args", script)
    assert (code, _rules(doc)) == (0, [(2, "launch-passes-args", "warning")])


def test_a_script_that_reads_its_own_arguments_is_never_asked_to_forward_them(tmp_path, capsys):
    for reads in (
        'MODEL="$1"',
        "MODEL=${1:-Qwen/Qwen3-8B}",
        "shift",
        'while getopts "m:" o; do :; done',
        '[ "$#" -gt 0 ] && echo "$#"',
    ):
        script = tmp_path / "run.sh"
        script.write_text(f"#!/usr/bin/env bash\n{reads}\n{LAUNCH}\n")
        assert _rules(_report(capsys, "--enable", "launch-passes-args", script)[1]) == [], reads


def test_enable_names_a_rule(tmp_path, capsys):
    script = tmp_path / "run.sh"
    script.write_text(f"#!/usr/bin/env bash\n{LAUNCH}\n")
    assert main(["--enable", "launch-passes-arg", str(script)]) == 2
    assert "--enable: no rule 'launch-passes-arg' (did you mean 'launch-passes-args'?)" in capsys.readouterr().err


def test_the_rule_list_says_which_rules_are_off(capsys):
    main(["--list-rules"])
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("launch-passes-args "))
    assert line.split()[1] == "off"
    main(["--explain", "launch-passes-args"])
    assert "(off (opt-in, warning), policy)" in capsys.readouterr().out


# ---- the same verl for every -j ----------------------------------------------------------


def test_every_worker_checks_against_the_verl_the_run_names(tmp_path, capsys):
    """A verl vendored beside the scripts and the --verl-config tree differ: with -j 2 the workers
    check against the tree the command line names, as -j 1 does (they looked beside each script)."""
    import shutil

    from verl_preflight.config_location import installed_root
    from verl_preflight.runner import SERIAL_BELOW

    vendored = tmp_path / "proj" / "verl" / "trainer" / "config"
    shutil.copytree(os.path.join(installed_root(), "trainer", "config"), vendored)
    text = (vendored / "ppo_trainer.yaml").read_text()
    (vendored / "ppo_trainer.yaml").write_text(text.replace("  total_epochs:", "  total_epoch_count:", 1))
    (tmp_path / "proj" / ".git").mkdir()
    for i in range(max(SERIAL_BELOW, 2)):
        (tmp_path / "proj" / f"run_{i}.sh").write_text(f"#!/usr/bin/env bash\n{LAUNCH} trainer.total_epochs=2\n")
    given = os.path.join(installed_root(), "trainer", "config")
    docs = []
    for jobs in ("1", "2"):
        code, doc = _report(capsys, "-j", jobs, "--verl-config", given, tmp_path / "proj")
        origins = {
            la["target"]["verl"]["origin"] for s in doc["scripts"] for p in s["profiles"] for la in p["launches"]
        }
        docs.append((code, origins, _rules(doc)))
    assert docs[0] == docs[1] == (0, {"--verl-config"}, [])
    code, doc = _report(capsys, "-j", "2", tmp_path / "proj")  # no flag: the project's own verl
    assert code == 1 and {r for _, r, _ in _rules(doc)} == {"override-missing-key"}


# ---- which verl: flags that disagree, none installed ---------------------------------------


def _tree():
    from verl_preflight.config_location import installed_root

    return os.path.join(installed_root(), "trainer", "config")


def test_two_verls_named_are_a_usage_error_naming_both(tmp_path, capsys, monkeypatch):
    script = tmp_path / "run.sh"
    script.write_text(f"#!/usr/bin/env bash\n{LAUNCH}\n")
    assert main(["--verl", "0.9.1", "--verl-config", _tree(), str(script)]) == 2
    err = capsys.readouterr().err
    assert f"--verl 0.9.1 and --verl-config {_tree()} name two verl config trees: give one" in err
    monkeypatch.setenv("VERL_CONFIG_DIR", str(tmp_path))
    assert main(["--verl-config", _tree(), str(script)]) == 2
    assert f"--verl-config {_tree()} and VERL_CONFIG_DIR={tmp_path} name two" in capsys.readouterr().err
    monkeypatch.setenv("VERL_CONFIG_DIR", _tree())  # the same tree twice: no disagreement
    assert main(["--no-cache", "--verl-config", _tree(), str(script)]) == 0
    capsys.readouterr()
    monkeypatch.delenv("VERL_CONFIG_DIR")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(f'[tool.validate-scripts]\nverl = "0.9.1"\nverl-config = "{_tree()}"\n')
    assert main([str(script)]) == 2
    assert "verl and verl-config name two verl config trees" in capsys.readouterr().err
    assert main(["--no-cache", "--verl-config", _tree(), str(script)]) == 0  # the command line wins over both


def test_with_no_verl_installed_the_newest_known_release_is_fetched(tmp_path, capsys, monkeypatch):
    import verl_preflight.config_location as location
    from conftest import ROOT

    wheels = os.path.join(ROOT, ".venv", "wheels")
    if not os.path.isdir(wheels):
        import pytest

        pytest.skip("make has not downloaded the verl wheels (.venv/wheels)")
    monkeypatch.setattr(location, "installed_root", lambda: None)
    monkeypatch.setenv("VERL_PREFLIGHT_WHEELS", wheels)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    script = tmp_path / "run.sh"
    script.write_text(f"#!/usr/bin/env bash\n{LAUNCH} trainer.total_epoch=1\n")
    code, doc = _report(capsys, script)
    assert code == 1 and [r for _, r, _ in _rules(doc)] == ["override-missing-key"]
    assert doc["config_source"]["verl_version"] == location.DEFAULT_RELEASE
    (verl,) = {la["target"]["verl"]["origin"] for p in doc["scripts"][0]["profiles"] for la in p["launches"]}
    assert verl == f"no verl installed: the release {location.DEFAULT_RELEASE}'s wheel"


# ---- an edit to a sourced helper re-checks the scripts that read it ------------------------


def test_dependents_are_the_scripts_whose_check_read_the_helper(tmp_path, capsys):
    (tmp_path / ".git").mkdir()
    (tmp_path / "common.sh").write_text("EPOCHS=(trainer.total_epoch=1)\n")
    (tmp_path / "run.sh").write_text(f'#!/usr/bin/env bash\nsource "$(dirname "$0")/common.sh"\n{LAUNCH} "${{EPOCHS[@]}}"\n')
    (tmp_path / "notes.sh").write_text("#!/usr/bin/env bash\n# common.sh is not sourced here\necho done\n")
    code, doc = _report(capsys, tmp_path / "common.sh")
    assert code == 0 and [s["path"] for s in doc["scripts"]] == [str(tmp_path / "common.sh")]
    code = main(["--no-cache", "--format", "json", "--dependents", str(tmp_path / "common.sh")])
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert code == 1 and "run.sh: checked too: it reads" in err
    assert sorted(os.path.basename(s["path"]) for s in doc["scripts"]) == ["common.sh", "run.sh"]
    assert [(os.path.basename(f["path"]), f["line"], f["rule"]) for f in doc["findings"]] == [
        ("common.sh", 1, "override-missing-key")
    ]
    helper = next(s for s in doc["scripts"] if s["path"].endswith("common.sh"))
    assert "read by" in helper["no_launch"]["message"]
