"""The command line: exit codes, text and JSON output, render, profiles, cache."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT
from conftest import run_cli as run
from conftest import write_file as write

from verl_preflight.app.cli import main

EXAMPLES = os.path.join(ROOT, "examples")
Q35 = os.path.join(EXAMPLES, "grpo_trainer", "run_qwen3_5_35b_megatron.sh")
TOOL = os.path.join(ROOT, "tools", "validate_scripts.py")
GDN = ("use_ascend_gdn", "use_triton_gdn")


BAD = """\
#!/usr/bin/env bash
set -euo pipefail
ACTOR=(
    actor_rollout_ref.actor.optim.lr=1e-6
    actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn=True
)
python3 -m verl.trainer.main_ppo model_engine=megatron "${ACTOR[@]}" trainer.total_epoch=2 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 trainer.device=cuda "$@"
"""


def test_examples_are_clean_in_every_profile(capsys):
    code, out, err = run(capsys, "--format", "json", EXAMPLES)
    assert code == 0, out + err
    doc = json.loads(out)
    assert doc["version"] == 1
    assert doc["config_source"]["verl_version"] == "0.9.1"
    assert doc["findings"] == []
    scripts = {os.path.relpath(s["path"], ROOT): s for s in doc["scripts"]}
    # the installer of the Ascend stack runs no launch in any profile, and has no finding either
    installer = scripts.pop("examples/ascend_extras/install_mindspeed_bridge.sh")
    assert {p["status"] for p in installer["profiles"]} <= {"no-launch", "rejected"}
    assert len(scripts) == 5
    for rel, script in scripts.items():
        for prof in script["profiles"]:
            assert prof["status"] == "launches", (rel, prof["env"])
            assert all(la["module"] == "verl.trainer.main_ppo" for la in prof["launches"])
    for name in ("run_qwen3_5_35b_megatron.sh", "run_qwen3_5_122b_a10b_megatron.sh", "run_qwen3_5_397b_megatron.sh"):
        profiles = scripts[f"examples/grpo_trainer/{name}"]["profiles"]
        envs = [p["env"] for p in profiles]
        for env in (
            {"DEVICE": "gpu"},  # USE_MINDSPEED_BRIDGE changes nothing on GPU: one profile
            {"DEVICE": "npu", "USE_MINDSPEED_BRIDGE": "False"},
            {"DEVICE": "npu", "USE_MINDSPEED_BRIDGE": "True"},
        ):
            assert env in envs, (name, envs)
        for p in profiles:
            overrides = p["launches"][0]["overrides"]
            has_gdn = any(flag in o for o in overrides for flag in GDN)
            assert has_gdn == (p["env"] == {"DEVICE": "npu", "USE_MINDSPEED_BRIDGE": "True"}), (name, p["env"])
            assert overrides[-1] != "", 'the user\'s "$@" expands to nothing'


def test_text_findings_are_gcc_style_with_locations(tmp_path, capsys):
    path = write(tmp_path, "bad.sh", BAD)
    code, out, _ = run(capsys, path)
    assert code == 1
    lines = out.strip().splitlines()
    pattern = re.compile(r"^(.+):(\d+):(\d+): (error|warning|info): (.+) \[([a-z-]+)\]( \(profiles: .+\))?$")
    parsed = [pattern.match(line) for line in lines[:-1] if ": note: " not in line]
    assert all(parsed), lines
    by_rule = {(m.group(6), int(m.group(2)), int(m.group(3))) for m in parsed}
    # the key arrives through an array built three lines above the launch
    assert ("override-missing-key", 5, 5) in by_rule
    assert ("override-missing-key", 7, 70) in by_rule
    assert "did you mean 'trainer.total_epochs'" in out
    # on GPU use_flash_attn is no TransformerConfig field either (Megatron-Bridge >= 0.5 would fail next):
    # the same mistake at the same word, a gcc-style note under the one finding
    assert ("transformer-config-key", 5, 5) not in by_rule
    assert [line for line in lines if re.match(r"^.+:5:5: note: also error: .+ \[transformer-config-key\]$", line)]
    assert re.match(r"^1 script, 1 profile, 1 launch: 2 errors, 0 warnings \(\d+\.\d+s\)$", lines[-1])


def test_json_finding_shape(tmp_path, capsys):
    path = write(tmp_path, "bad.sh", BAD)
    code, out, _ = run(capsys, "--format", "json", path)
    assert code == 1
    doc = json.loads(out)
    f = doc["findings"][0]
    assert set(f) == {"path", "line", "column", "rule", "severity", "message", "key", "profiles", "assumptions", "related", "also"}
    assert f["key"] == "actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn"
    assert f["profiles"] == [{}]
    launch = doc["scripts"][0]["profiles"][0]["launches"][0]
    assert launch == {
        "line": 7,
        "module": "verl.trainer.main_ppo",
        "config_name": "ppo_trainer",
        "overrides": [
            "model_engine=megatron",
            "actor_rollout_ref.actor.optim.lr=1e-6",
            "actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn=True",
            "trainer.total_epoch=2",
            "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1",
            "trainer.device=cuda",
        ],
        "unknown_parts": [None] * 6,  # every override fully known
        "target": {
            "device": {"kind": "gpu", "why": "trainer.device=cuda"},
            "stack": {"megatron-core": {"version": "0.16.1", "origin": "default"}},
            "mindspeed_bridge": None,
            "verl": launch["target"]["verl"],
            "config": {
                "folders": launch["target"]["config"]["folders"],
                "how": "verl's own config folder",
                "checked": True,
                "missing": None,
                "assumed": None,
            },
        },
        "unchecked": None,  # its config was composed
    }


def test_findings_merge_across_profiles(tmp_path, capsys):
    path = write(
        tmp_path,
        "sw.sh",
        """\
#!/usr/bin/env bash
MODE=${MODE:-a}
case "$MODE" in a) N=1 ;; b) N=2 ;; esac
python3 -m verl.trainer.main_ppo trainer.nnodes=$N trainer.no_such=1 \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 critic.ppo_micro_batch_size_per_gpu=1 "$@"
""",
    )
    code, out, _ = run(capsys, "--format", "json", path)
    doc = json.loads(out)
    assert code == 1
    assert len(doc["findings"]) == 1
    assert doc["findings"][0]["profiles"] == [{"MODE": "a"}, {"MODE": "b"}]


def test_profile_pins_one_environment(capsys):
    code, out, _ = run(capsys, "--format", "json", "--profile", "DEVICE=npu,USE_MINDSPEED_BRIDGE=True", Q35)
    assert code == 0
    profiles = json.loads(out)["scripts"][0]["profiles"]
    assert [p["env"] for p in profiles] == [{"DEVICE": "npu", "USE_MINDSPEED_BRIDGE": "True"}]


def test_rejected_profile_is_not_an_error(capsys):
    code, out, _ = run(capsys, "--format", "json", "--profile", "DEVICE=tpu", Q35)
    assert code == 0
    prof = json.loads(out)["scripts"][0]["profiles"][0]
    assert prof["status"] == "rejected" and prof["launches"] == []


def test_unpinned_switch_with_a_probe_forks(capsys):
    """DEVICE unset: its default is a probe nobody can know; every arm is explored."""
    code, out, _ = run(capsys, "--format", "json", "--profile", "USE_MINDSPEED_BRIDGE=True", Q35)
    profiles = json.loads(out)["scripts"][0]["profiles"]
    assert all(p["env"] == {"USE_MINDSPEED_BRIDGE": "True"} for p in profiles)
    statuses = {
        tuple((a["subject"], a["relation"], *a["values"]) for a in p["assumptions"]): p["status"] for p in profiles
    }
    assert statuses == {
        (("DEVICE", "=", "gpu"),): "launches",
        (("DEVICE", "=", "npu"),): "launches",
        (("DEVICE", "not in", "gpu", "npu"),): "rejected",
    }


def test_render_prints_pasteable_overrides(capsys):
    code, out, _ = run(capsys, "render", Q35, "--profile", "DEVICE=gpu")
    assert code == 0
    code, js, _ = run(capsys, "--format", "json", "--profile", "DEVICE=gpu", Q35)
    expected = json.loads(js)["scripts"][0]["profiles"][0]["launches"][0]["overrides"]
    body = [ln for ln in out.splitlines() if not ln.startswith("#") and ln.strip()]
    words = shlex.split(" ".join(ln.rstrip("\\") for ln in body))
    assert words[:3] == ["python3", "-m", "verl.trainer.main_ppo"]
    assert words[3:] == expected


def test_explain(capsys):
    code, out, _ = run(capsys, "--explain", "override-missing-key")
    assert code == 0 and "Fails:" in out and "Passes:" in out
    code, _, err = run(capsys, "--explain", "no-such-rule")
    assert code == 2 and "no rule" in err


@pytest.mark.parametrize(
    "args,needle",
    [
        (["/no/such/path.sh"], "no such file"),
        (["--verl-config", "/nonexistent", EXAMPLES], "not a directory"),
        ([], "no paths"),
        (["--profile", "DEVICE", EXAMPLES], "KEY=VAL"),
    ],
)
def test_usage_errors_exit_2(capsys, args, needle):
    code, _, err = run(capsys, *args)
    assert code == 2
    assert needle in err


def test_missing_verl_says_how_to_install(tmp_path):
    """A Python without verl, where no release can be fetched either: exit 2 and the pip command,
    no traceback."""
    env = dict(os.environ, VERL_PREFLIGHT_WHEELS=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"))
    env.pop("VERL_CONFIG_DIR", None)
    code = (
        "import sys, importlib.util; real = importlib.util.find_spec;"
        "importlib.util.find_spec = lambda n, *a: None if n == 'verl' else real(n, *a);"
        f"sys.argv = ['validate-scripts', {EXAMPLES!r}];"
        f"sys.path.insert(0, {os.path.join(ROOT, 'src')!r});"
        "from verl_preflight.app.cli import main; sys.exit(main())"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 2
    assert "pip install --no-deps verl==0.9.1" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_garbage_input_never_tracebacks(tmp_path):
    (tmp_path / "bin.sh").write_bytes(bytes(range(256)) * 20)
    (tmp_path / "latin1.sh").write_bytes("echo caf\xe9 $((1/0)) ${X:0:-9}\n".encode("latin-1"))
    (tmp_path / "empty.sh").write_bytes(b"")
    (tmp_path / "open.sh").write_text('if [ "$A" = x ]; then\n  python3 -m verl.trainer.main_ppo "${B[@]\n')
    proc = subprocess.run([sys.executable, TOOL, str(tmp_path)], capture_output=True, text=True)
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.returncode in (0, 1)
    assert "bash-syntax" in proc.stdout


def test_strict_turns_warnings_into_failure(tmp_path, capsys):
    path = write(
        tmp_path,
        "w.sh",
        "#!/usr/bin/env bash\nset -u\npython3 -m verl.trainer.main_ppo data.train_files=$TRAIN "
        'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 critic.ppo_micro_batch_size_per_gpu=1 data.train_batch_size=512 "$@"\n',
    )
    code, out, _ = run(capsys, path)
    assert code == 0 and "unset-variable" in out
    code, _, _ = run(capsys, "--strict", path)
    assert code == 1


def test_cache_round_trip_and_corruption(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = write(tmp_path, "bad.sh", BAD)
    first = run(capsys, "--format", "json", path)
    files = list((tmp_path / "cache" / "verl-preflight" / "compositions").rglob("*.json"))
    assert len(files) == 1
    second = run(capsys, "--format", "json", path)
    assert first == second
    results = tmp_path / "cache" / "verl-preflight" / "results"
    reports = tmp_path / "cache" / "verl-preflight" / "reports"
    assert results.is_dir() and reports.is_dir()  # dropped below so the config cache is read again

    def drop_kept():
        shutil.rmtree(results)
        shutil.rmtree(reports)

    files[0].write_text('{"format": 3, "tree": "x", "snapshots": {"forged": 1}')
    drop_kept()
    third = run(capsys, "--format", "json", path)
    assert third == first
    tag, _, payload = files[0].read_bytes().partition(b"\n")
    data = json.loads(payload)
    assert "forged" not in data["value"]["snapshots"]
    # a well-formed document whose tag is not this user's key's is not trusted either
    data["value"]["snapshots"] = {k: {"tree": {}} for k in data["value"]["snapshots"]}
    files[0].write_bytes(tag + b"\n" + json.dumps(data).encode())
    drop_kept()
    assert run(capsys, "--format", "json", path) == first


def test_no_cache_writes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    run(capsys, "--no-cache", Q35)
    assert not (tmp_path / "cache").exists()


def test_console_command_is_installed():
    exe = os.path.join(os.path.dirname(sys.executable), "validate-scripts")
    proc = subprocess.run([exe, "--explain", "config-group"], capture_output=True, text=True)
    assert proc.returncode == 0 and "config-group" in proc.stdout


def test_render_as_overrides_and_config(capsys):
    code, out, _ = run(capsys, "render", Q35, "--profile", "DEVICE=npu,USE_MINDSPEED_BRIDGE=True", "--as", "overrides")
    lines = [ln for ln in out.splitlines() if ln and not ln.startswith("#")]
    assert code == 0 and lines[0] == "model_engine=megatron"
    assert "+actor_rollout_ref.actor.megatron.override_transformer_config.use_ascend_gdn=True" in lines
    code, out, _ = run(capsys, "render", Q35, "--profile", "DEVICE=npu,USE_MINDSPEED_BRIDGE=True", "--as", "config")
    import yaml

    doc = yaml.safe_load("\n".join(ln for ln in out.splitlines() if not ln.startswith("#")))
    otc = doc["actor_rollout_ref"]["actor"]["megatron"]["override_transformer_config"]
    assert otc["use_ascend_gdn"] is True and otc["use_triton_gdn"] is False
    assert doc["actor_rollout_ref"]["model"]["path"] == "${HOME}/models/Qwen3.5-35B-A3B"
    assert "model_engine" not in doc  # a group selection, not a change of value


def test_profile_current_probes_device(capsys, monkeypatch):
    monkeypatch.delenv("DEVICE", raising=False)
    monkeypatch.setenv("USE_MINDSPEED_BRIDGE", "True")
    code, out, _ = run(capsys, "--format", "json", "--profile", "current", Q35)
    profiles = json.loads(out)["scripts"][0]["profiles"]
    # torch_npu is not installed here, so the probe says gpu; the env is taken as it is
    assert [p["env"] for p in profiles] == [{"DEVICE": "gpu", "USE_MINDSPEED_BRIDGE": "True"}]
    assert profiles[0]["launches"][0]["overrides"][1].startswith(f"data.train_files={os.environ['HOME']}")


def test_color_only_when_asked(tmp_path, capsys, monkeypatch):
    path = write(tmp_path, "bad.sh", BAD)
    _, plain, _ = run(capsys, path)
    assert "\033[" not in plain
    _, colored, _ = run(capsys, "--color", "always", path)
    assert "\033[1;31merror\033[0m" in colored
    monkeypatch.setenv("NO_COLOR", "1")
    _, auto, _ = run(capsys, "--color", "auto", path)
    assert "\033[" not in auto


@pytest.mark.slow
def test_jobs_give_identical_output(tmp_path, monkeypatch):
    """-j N: the same output, in the same order, for any N (cold and warm caches)."""
    outs = []
    for jobs in ("1", "3"):
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / f"c{jobs}"))
        for _ in range(2):  # cold, then warm
            proc = subprocess.run(
                [sys.executable, TOOL, "-j", jobs, "--format", "json", os.path.join(ROOT, "tests", "fixtures")],
                capture_output=True,
                text=True,
            )
            assert proc.returncode == 1 and "Traceback" not in proc.stderr
            outs.append(proc.stdout)
    assert len(set(outs)) == 1
    assert len(json.loads(outs[0])["scripts"]) > 40


def test_nothing_is_written_outside_the_cache_folder(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    script = work / "run.sh"
    script.write_text(BAD)
    env = dict(os.environ, HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(tmp_path / "cache"))
    before = {p for p in tmp_path.rglob("*")}
    proc = subprocess.run([sys.executable, TOOL, str(script)], capture_output=True, text=True, env=env, cwd=work)
    assert proc.returncode == 1
    written = {p for p in tmp_path.rglob("*")} - before
    assert written and all(str(p).startswith(str(tmp_path / "cache")) for p in written), written


@pytest.mark.parametrize("option,value", [("--max-bytes", "-5"), ("--max-bytes", "1000000000000"),
                                          ("--max-bytes", "0"), ("--max-profiles", "0"), ("--max-bytes", "ten")])
def test_limits_out_of_range_exit_2_naming_the_range(option, value, tmp_path, capsys):
    """A limit is a limit, never an allocation: a negative, zero or huge --max-bytes exits 2."""
    script = write(tmp_path, "run.sh", 'python3 -m verl.trainer.main_ppo "$@"\n')
    with pytest.raises(SystemExit) as stop:
        main([option, value, script])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {option}:" in err and ("outside" in err or "whole number" in err)


def test_standard_input_is_read_within_max_bytes(monkeypatch, capsys):
    import io

    class Stdin:
        buffer = io.BytesIO(b"#" * 5000 + b"\n")

    monkeypatch.setattr("sys.stdin", Stdin)
    assert main(["--max-bytes", "1000", "-"]) == 1
    assert "larger than 1000 bytes" in capsys.readouterr().out


def test_a_script_without_a_verl_launch_says_what_it_runs_instead(tmp_path, capsys, monkeypatch):
    """No profile launches verl: the note names the project's Hydra app it runs, and a wrapped
    script that is not found from here (the launch is in it), each with its lines."""
    (tmp_path / "repo" / "sub").mkdir(parents=True)
    (tmp_path / "repo" / "sub" / "launch.sh").write_text(
        "#!/usr/bin/env bash\npython3 -m verl.trainer.main_ppo trainer.total_epoch=1 \"$@\"\n"
    )
    app = write(tmp_path, "app.sh", "#!/usr/bin/env bash\npython3 main_ppo_split.py trainer.total_epochs=2 \"$@\"\n")
    (tmp_path / "main_ppo_split.py").write_text("print('no Hydra app')\n")  # (here: a program, not one of verl's)
    (tmp_path / "repo" / "tests").mkdir()
    wrapper = write(tmp_path / "repo" / "tests", "all.sh", "#!/usr/bin/env bash\nbash sub/launch.sh\nbash sub/launch.sh\n")
    monkeypatch.chdir(tmp_path)
    _, out, _ = run(capsys, "--no-cache", app, wrapper)
    assert "it runs python3 main_ppo_split.py (line 2), a Python program, not a verl entry point" in out
    assert "it runs bash sub/launch.sh (lines 2, 3), another script, not found from here" in out
    _, out, _ = run(capsys, "--no-cache", "--format", "json", app)
    (script,) = json.loads(out)["scripts"]
    assert script["no_launch"]["runs"] == [{"program": "python3 main_ppo_split.py", "kind": "python", "lines": [2]}]
    monkeypatch.chdir(tmp_path / "repo")  # where it is run from: the wrapped launch is followed and checked
    code, out, _ = run(capsys, "--no-cache", "tests/all.sh")
    assert code == 1 and "override-missing-key" in out and "no verl launch" not in out


def test_an_internal_error_is_the_tools_own_and_the_run_goes_on(tmp_path, capsys, monkeypatch):
    """A bug of ours in one check (issue 44: a ZeroDivisionError inside a rule) is exit 2 with one line
    naming the script on standard error, never a finding on the user's line 1; the other scripts
    are checked and reported; --show-traceback adds where it happened."""
    import verl_preflight.pipeline.validate as validate

    real = validate.validate_script

    def failing(path, caches, opts):
        if path.endswith("broken.sh"):
            raise ZeroDivisionError("division by zero")
        return real(path, caches, opts)

    monkeypatch.setattr(validate, "validate_script", failing)
    broken = write(tmp_path, "broken.sh", "#!/usr/bin/env bash\necho\n")
    other = write(tmp_path, "other.sh", BAD)
    code, out, err = run(capsys, "--no-cache", "--format", "json", broken, other)
    doc = json.loads(out)
    assert code == 2 and [s["path"] for s in doc["scripts"]] == [other]
    assert not [f for f in doc["findings"] if f["rule"] == "internal-error" or f["path"] == broken]
    assert (
        f"validate-scripts: internal error while checking {broken}: ZeroDivisionError: division by zero "
        "(please report; --show-traceback shows where)"
    ) in err.splitlines()
    assert "Traceback" not in err
    monkeypatch.delenv("VERL_PREFLIGHT_SHOW_TRACEBACK", raising=False)
    code, _, err = run(capsys, "--no-cache", "--show-traceback", broken)
    os.environ.pop("VERL_PREFLIGHT_SHOW_TRACEBACK", None)  # (set by the flag for the workers; none here)
    assert code == 2 and "Traceback (most recent call last)" in err and "in failing" in err


def test_preflight_without_a_cluster_at_the_address_says_so(tmp_path, capsys, monkeypatch):
    """`preflight` where no Ray cluster runs: exit 2 at once, naming the address tried; without
    an address (no --ray-address, no RAY_ADDRESS): exit 2 saying how to give one."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # (closed again: nothing listens there)
    script = write(tmp_path, "run.sh", "python3 -m verl.trainer.main_ppo trainer.nnodes=1\n")
    assert main(["preflight", "--ray-address", f"127.0.0.1:{port}", str(script)]) == 2
    err = capsys.readouterr().err
    assert f"no Ray cluster answers at 127.0.0.1:{port}" in err and "Traceback" not in err
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert main(["preflight", str(script)]) == 2
    assert "--ray-address HOST:PORT, or RAY_ADDRESS" in capsys.readouterr().err


def test_preflight_checks_against_one_verl(tmp_path, capsys):
    """A compatibility matrix (--verl twice) is no preflight: the cluster runs one verl."""
    script = write(tmp_path, "run.sh", "python3 -m verl.trainer.main_ppo trainer.nnodes=1\n")
    argv = ["preflight", "--ray-address", "127.0.0.1:1", "--verl", "0.9.1", "--verl", "0.8.0", str(script)]
    assert main(argv) == 2
    assert "preflight checks against one verl" in capsys.readouterr().err
