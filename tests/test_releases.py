"""--verl VERSION: a release's config tree from its wheel (seeded in .venv/wheels by make)."""

from __future__ import annotations

import json
import os

import pytest
from conftest import ROOT

from verl_preflight.app.cli import main

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


@pytest.mark.slow
def test_fetching_a_release_runs_no_code_of_the_working_directory(tmp_path, monkeypatch, capsys):
    """`pip download` runs isolated from an empty folder: a pip.py where the user stands is not imported."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    work = tmp_path / "work"
    work.mkdir()
    (work / "pip.py").write_text(f"open({str(tmp_path / 'ran')!r}, 'w').close()\n")
    monkeypatch.chdir(work)
    monkeypatch.setenv("VERL_PREFLIGHT_WHEELS", os.path.relpath(WHEELS, work))  # relative: resolved from here
    assert main(["--format", "json", "--verl", "0.8.0", Q35]) in (0, 1)
    assert not (tmp_path / "ran").exists()
    assert (tmp_path / "cache" / "verl-preflight" / "releases" / "0.8.0" / "verl").is_dir()


@pytest.mark.slow
def test_compatibility_matrix(capsys):
    code = main(["--verl", "0.9.1", "--verl", "0.8.0", Q35, REGRESSION])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    assert lines[0].split() == ["script", "verl", "0.9.1", "verl", "0.8.0"]
    assert lines[1].split()[1:] == ["ok", "ok"]
    # the pre-PR-6429 script: use_mbridge=False twice (errors); a ref that drops the actor's keys, and
    # expandable_segments:True exported for a vLLM rollout in sleep mode on Ascend (warnings)
    assert lines[2].split()[1:] == ["2", "errors,", "2", "warnings", "2", "errors,", "2", "warnings"]


def test_unknown_release_exits_2(capsys):
    assert main(["--verl", "0.0.0", Q35]) == 2
    assert "cannot get the wheel" in capsys.readouterr().err


NEW_KEY = """\
#!/usr/bin/env bash
python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.fsdp_config.turbo_config.distributed.expert_parallel_size=1 \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 \\
    critic.ppo_micro_batch_size_per_gpu=1
"""  # a key verl 0.9.1 has and 0.8.0 has not; no "$@": a launch-passes-args warning on both


def test_matrix_shows_the_findings_that_differ(tmp_path, capsys):
    script = tmp_path / "new_key.sh"
    script.write_text(NEW_KEY)
    code = main(["--enable", "launch-passes-args", "--verl", "0.9.1", "--verl", "0.8.0", str(script)])
    out = capsys.readouterr().out
    assert code == 1
    lines = out.splitlines()
    assert lines[1].split()[1:] == ["1", "warning", "1", "error,", "1", "warning"]
    differ = out.split("Findings that differ between releases:\n")[1].split("\n\n")[0].splitlines()
    assert len(differ) == 1
    assert differ[0].startswith(f"{script}:2:34: error: Could not override")
    assert differ[0].endswith("[override-missing-key] (only verl 0.8.0)")
    every = out.split("Findings on every release:\n")[1].splitlines()
    assert every == [ln for ln in every if "[launch-passes-args]" in ln] and len(every) == 1


def test_matrix_lists_a_finding_the_releases_share_once_whatever_lines_they_cite(tmp_path, capsys):
    """Issue 44, item 4: the batch finding of 0.9.1 and 0.8.0 differs only in the release and the
    file:line it cites; a typo is in both arms of a DEVICE switch. Each is listed once, on every
    release, labelled as the one-release report labels it (it said `(only verl 0.9.1)` and
    `(only verl 0.8.0)`, each `(profiles: DEVICE=gpu; DEVICE=npu)`)."""
    script = tmp_path / "arms.sh"
    script.write_text(
        '#!/usr/bin/env bash\nDEVICE=${DEVICE:-gpu}\ncase "$DEVICE" in npu) N=16 ;; *) N=8 ;; esac\n'
        "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo trainer.n_gpus_per_node=$N "
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 "
        "trainer.totl_epochs=3 actor_rollout_ref.actor.ppo_mini_batch_size=6 data.train_batch_size=30\n"
    )
    assert main(["--no-cache", "--verl", "0.9.1", "--verl", "0.8.0", str(script)]) == 1
    out = capsys.readouterr().out
    assert "Findings that differ between releases" not in out, out
    every = out.split("Findings on every release:\n")[1].splitlines()
    labels = sorted(ln.split(" [")[-1] for ln in every if "[batch-dispatch]" in ln or "[override-missing-key]" in ln)
    assert labels == ["batch-dispatch] (all profiles)", "override-missing-key] (all profiles)"], out


def test_matrix_honours_format_quiet_strict_and_severity(tmp_path, capsys, monkeypatch):
    import json

    script = tmp_path / "new_key.sh"
    script.write_text(NEW_KEY)
    args = ["--enable", "launch-passes-args", "--verl", "0.9.1", "--verl", "0.8.0", str(script)]
    assert main(["--format", "json", *args]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [m["verl"] for m in doc["matrix"]] == ["0.9.1", "0.8.0"]
    assert [m["config_source"]["verl_version"] for m in doc["matrix"]] == ["0.9.1", "0.8.0"]
    assert [sorted(f["rule"] for f in m["findings"]) for m in doc["matrix"]] == [
        ["launch-passes-args"],
        ["launch-passes-args", "override-missing-key"],
    ]
    assert main(["--format", "sarif", *args]) == 1
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert [r["properties"]["verl_version"] for r in runs] == ["0.9.1", "0.8.0"]
    assert main(["--format", "github", *args]) == 1
    gh = capsys.readouterr().out.splitlines()
    assert len(gh) == 2 and gh[1].startswith("::error ") and gh[1].endswith("(only verl 0.8.0)")
    assert main(["--quiet", *args]) == 1
    quiet = capsys.readouterr().out.splitlines()
    assert len(quiet) == 2 and not any(ln.startswith("script ") for ln in quiet)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.validate-scripts]\nseverity = { override-missing-key = "warning", launch-passes-args = "off" }\n'
    )
    args = args[2:]  # the opt-in rule as the settings leave it: off
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "launch-passes-args" not in out and ": warning: Could not override" in out
    assert main(["--strict", *args]) == 1  # only warnings remain: they fail with --strict


@pytest.mark.slow
@pytest.mark.parametrize("version", ["0.4.1", "0.7.0"])
@pytest.mark.parametrize("kl_loss", ["True", "False"])
def test_reference_policy_follows_the_role_mapping_main_ppo_builds(version, kl_loss, tmp_path, capsys, monkeypatch):
    """verl 0.4.1 (the trainer's constructor) and 0.7.0 (need_reference_policy over the mapping)
    check the ref's log-prob micro batch only when main_ppo's task runner adds a reference
    policy to its role mapping: with KL in the loss."""
    if not any(f.startswith(f"verl-{version}-") for f in os.listdir(WHEELS)):
        pytest.skip(f"make has not downloaded the verl {version} wheel")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    script = tmp_path / "run.sh"
    script.write_text(
        "python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 "
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2 critic.ppo_micro_batch_size_per_gpu=2 "
        f"algorithm.adv_estimator=grpo actor_rollout_ref.actor.use_kl_loss={kl_loss} \"$@\"\n"
    )
    main(["--no-cache", "--format", "json", "--verl", version, str(script)])
    messages = [f["message"] for f in json.loads(capsys.readouterr().out)["findings"] if f["rule"] == "verl-check"]
    said = any("actor_rollout_ref.ref.log_prob_micro_batch_size" in m for m in messages)
    assert said == (kl_loss == "True"), messages
