"""Issue 13: what a new user meets in the first ten minutes (CLI conventions, silent passes,
settings, messages, render, README commands)."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT
from conftest import run_cli as run
from conftest import write_file as write

from verl_preflight.app.cli import main

pytestmark = pytest.mark.slow  # the slow tier (make test-slow): every README command run as written

EXAMPLES = os.path.join(ROOT, "examples")
Q35 = os.path.join(EXAMPLES, "grpo_trainer", "run_qwen3_5_35b_megatron.sh")
TOOL = os.path.join(ROOT, "tools", "validate_scripts.py")

TYPO = """\
#!/usr/bin/env bash
python3 -m verl.trainer.main_ppo trainer.total_epoch=2 "$@"
"""


# ---- 7. CLI conventions ------------------------------------------------------


def test_version(capsys):
    from verl_preflight import __version__

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"validate-scripts {__version__}"


def test_dash_reads_the_script_from_stdin(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(TYPO.encode())))
    code, out, _ = run(capsys, "-")
    assert code == 1
    assert "-:2:34: error: Could not override 'trainer.total_epoch'" in out, out


def test_explain_unknown_id_suggests_and_list_rules_lists(capsys):
    code, _, err = run(capsys, "--explain", "override-missing")
    assert code == 2
    assert "did you mean override-missing-key" in err and "--list-rules" in err
    code, out, _ = run(capsys, "--list-rules")
    from verl_preflight.rules import registry

    assert code == 0
    assert [ln.split()[0] for ln in out.splitlines()] == list(registry())


def test_explain_knows_every_id_the_tool_emits(capsys):
    from verl_preflight.rules import registry

    emitted = set(registry())
    # rule ids the Hydra stage names as text (hydra_stage/check.py's Problem(...))
    for name in ("hydra_stage/check.py",):
        with open(os.path.join(ROOT, "src", "verl_preflight", name), encoding="utf-8") as fh:
            emitted |= set(re.findall(r'Problem\([^,]+, "([a-z-]+)"', fh.read()))
    assert len(emitted) > 30
    for rid in sorted(emitted):
        code, out, _ = run(capsys, "--explain", rid)
        assert code == 0 and out.startswith(rid + " ("), rid


def test_help_shows_render_profile_current_and_color_value(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "validate-scripts render" in out
    assert "--profile current" in out
    assert "--color WHEN" in out and "always or never" in out


def test_profile_warns_on_a_key_never_read(capsys):
    code, _, err = run(capsys, "--profile", "DEVCE=npu", Q35)
    assert code == 0
    assert "warning: --profile DEVCE=...: DEVCE is never read by" in err
    code, _, err = run(capsys, "--profile", "DEVICE=npu", Q35)
    assert "never read" not in err


def test_profile_value_with_a_comma():
    from verl_preflight.app.cli import parse_profiles

    assert parse_profiles(['DEVICE=npu,NODES="a,b"']).pinned == ({"DEVICE": "npu", "NODES": "a,b"},)
    assert parse_profiles(["NODES=a,b,DEVICE=npu"]).pinned == ({"NODES": "a,b", "DEVICE": "npu"},)
    assert parse_profiles(["A=1", "B='x,y'"]).pinned == ({"A": "1"}, {"B": "x,y"})
    assert parse_profiles(["current"]).current and parse_profiles(["__current__=1"]).pinned == ({"__current__": "1"},)


def test_jobs_zero_is_refused(capsys):
    code, _, err = run(capsys, "-j", "0", Q35)
    assert code == 2 and "at least 1" in err


# ---- 4. silent passes ----------------------------------------------------------

REJECTS = """\
#!/usr/bin/env bash
DEVICE=${DEVICE:-gpu}
case "$DEVICE" in
  gpu) N=8 ;;
  *) echo "unsupported $DEVICE"; exit 1 ;;
esac
python3 -m verl.trainer.main_ppo trainer.n_gpus_per_node=$N \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 critic.ppo_micro_batch_size_per_gpu=1 "$@"
"""


def test_text_report_says_what_passed_unchecked(tmp_path, capsys):
    rejects = write(tmp_path, "rejects.sh", REJECTS)
    nolaunch = write(tmp_path, "nolaunch.sh", "#!/bin/bash\necho hello\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, _ = run(capsys, rejects, nolaunch, str(empty))
    assert code == 0, out
    assert f"{empty}: note: no *.sh script in this folder" in out
    assert f"{rejects}: note: profile DEVICE!=gpu is rejected: the script exits by itself there" in out
    assert f"{nolaunch}: note: no verl launch" in out
    assert re.search(r"^2 scripts, \d+ profiles, \d+ launch(es)?: 0 errors, 0 warnings", out.splitlines()[-1])
    assert run(capsys, "--quiet", rejects, nolaunch, str(empty))[1] == ""
    code, out, _ = run(capsys, str(empty))
    assert code == 0 and "0 scripts, 0 profiles, 0 launches" in out


def test_quiet_ends_with_what_its_findings_were_checked_against(tmp_path, capsys):
    """Issue 44, item 6: --quiet prints the findings, then one line naming the verl."""
    script = write(tmp_path, "run.sh", "python3 -m verl.trainer.main_ppo trainer.totl_epochs=3\n")
    code, out, _ = run(capsys, "--no-cache", "--quiet", script)
    lines = out.splitlines()
    assert code == 1 and len(lines) == 2 and "[override-missing-key]" in lines[0], out
    assert re.fullmatch(r"validate-scripts: checked against verl \S+ \(\w+\) \(1 launch\)", lines[1]), lines[1]


def test_the_working_directory_given_as_dot_is_not_called_empty(tmp_path, capsys, monkeypatch):
    write(tmp_path, "nolaunch.sh", "#!/bin/bash\necho hello\n")
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, ".")
    assert code == 0 and "1 script," in out.splitlines()[-1]
    assert "no *.sh script in this folder" not in out


# ---- 3. --profile current probes the python3 the script runs --------------------


@pytest.mark.parametrize("imports,device", [(True, "npu"), (False, "gpu")])
def test_profile_current_probes_the_first_python3_on_path(tmp_path, capsys, monkeypatch, imports, device):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "python3"
    log = tmp_path / "argv"
    # a python3 that "has" torch_npu (or not) and records how it was called
    fake.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexit {0 if imports else 1}\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.delenv("DEVICE", raising=False)
    monkeypatch.setenv("USE_MINDSPEED_BRIDGE", "False")
    code, out, err = run(capsys, "--format", "json", "--profile", "current", Q35)
    assert code == 0, err
    assert json.loads(out)["scripts"][0]["profiles"][0]["env"]["DEVICE"] == device
    assert log.read_text().split() == ["-B", "-c", "import", "torch_npu"]
    why = f"{fake} imports torch_npu" if imports else f"{fake} cannot import torch_npu"
    assert f"--profile current: DEVICE={device} ({why})" in err


def test_profile_current_takes_device_from_the_environment(capsys, monkeypatch):
    monkeypatch.setenv("DEVICE", "npu")
    code, _, err = run(capsys, "--profile", "current", Q35)
    assert "DEVICE=npu (DEVICE is set in the environment)" in err


# ---- 12. SARIF: the tool's own identity, percent-encoded locations ----------------


def test_sarif_driver_and_uris(tmp_path, capsys):
    odd = write(tmp_path, "bad, odd: name #1.sh", TYPO)
    code, out, _ = run(capsys, "--format", "sarif", odd)
    doc = json.loads(out)
    driver = doc["runs"][0]["tool"]["driver"]
    assert "verl-project/verl" not in out  # not verl's URL: this tool has no public page
    assert "informationUri" not in driver and driver["fullName"].startswith("verl-preflight ")
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in doc["runs"][0]["results"]}
    assert uris == {"file://" + str(tmp_path) + "/bad%2C%20odd%3A%20name%20%231.sh"}
    from verl_preflight.report.sarif import artifact_uri

    assert artifact_uri("examples/a b.sh") == "examples/a%20b.sh"


# ---- 8. settings ---------------------------------------------------------------------


def test_settings_unknown_key_and_rule_id_name_the_file(tmp_path, capsys, monkeypatch):
    script = write(tmp_path, "typo.sh", TYPO)
    pyproject = tmp_path / "pyproject.toml"
    monkeypatch.chdir(tmp_path)
    pyproject.write_text('[tool.validate-scripts]\npath = ["."]\n')
    code, _, err = run(capsys, script)
    assert code == 2
    assert f"[tool.validate-scripts] in {pyproject}: unknown key 'path' (did you mean 'paths'?" in err
    pyproject.write_text('[tool.validate-scripts]\nseverity = { override-missing = "off" }\n')
    code, _, err = run(capsys, script)
    assert code == 2
    assert f"[tool.validate-scripts] in {pyproject}: severity: no rule 'override-missing'" in err
    assert "did you mean 'override-missing-key'?" in err


def test_settings_exclude_applies_to_files_given_explicitly(tmp_path, capsys, monkeypatch):
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    script = write(legacy, "typo.sh", TYPO)
    monkeypatch.chdir(tmp_path)
    for pattern in ("*/legacy/*", "*/legacy", "typo.sh"):
        (tmp_path / "pyproject.toml").write_text(f'[tool.validate-scripts]\nexclude = ["{pattern}"]\n')
        for given in (script, os.path.join("legacy", "typo.sh")):
            code, out, _ = run(capsys, given)
            assert code == 0 and out.splitlines()[-1].startswith("0 scripts"), (pattern, given, out)


# ---- 10. render -------------------------------------------------------------------------

TWO_WORDS = """\
#!/usr/bin/env bash
python3 -u -m verl.trainer.main_ppo --config-name ppo_megatron_trainer \\
    data.train_files="$HOME/d x.parquet" trainer.total_epochs=1 "$@"
"""


def test_render_several_scripts_as_bash_passes_them(tmp_path, capsys):
    a = write(tmp_path, "a.sh", TWO_WORDS)
    b = write(tmp_path, "b.sh", TYPO)
    code, out, _ = run(capsys, "render", a, b)
    assert code == 0
    assert f"# {a} [default]: launches" in out and f"# {b} [default]: launches" in out
    lines = [ln for ln in out.splitlines() if not ln.startswith("#   ")]  # without the layout summary
    assert lines[1:4] == [
        "python3 -u -m verl.trainer.main_ppo \\",
        "    --config-name ppo_megatron_trainer \\",
        "    data.train_files=\"${HOME}\"'/d x.parquet' \\",
    ]
    # pasted into bash, the words are the ones the script passes
    words = subprocess.run(
        ["bash", "-c", 'HOME=/h; f() { printf "%s\\n" "$@"; }; f ' + "\n".join(lines[1:5])],
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    assert words == [
        "python3",
        "-u",
        "-m",
        "verl.trainer.main_ppo",
        "--config-name",
        "ppo_megatron_trainer",
        "data.train_files=/h/d x.parquet",
        "trainer.total_epochs=1",
    ]


def test_render_json(tmp_path, capsys):
    a = write(tmp_path, "a.sh", TWO_WORDS)
    code, out, _ = run(capsys, "render", "--format", "json", a)
    assert code == 0
    launch = json.loads(out)["scripts"][0]["profiles"][0]["launches"][0]
    assert launch["argv"][4:6] == ["--config-name", "ppo_megatron_trainer"]
    assert launch["overrides"] == [
        ["data.train_files=", {"unknown": "${HOME}"}, "/d x.parquet"],
        "trainer.total_epochs=1",
    ]


# ---- 9. JSON: unknown values cannot be mistaken for Hydra interpolations ------------------


def test_json_marks_unknown_pieces(tmp_path, capsys):
    a = write(tmp_path, "a.sh", TWO_WORDS)
    code, out, _ = run(capsys, "--format", "json", a)
    launch = json.loads(out)["scripts"][0]["profiles"][0]["launches"][0]
    assert launch["overrides"] == ["data.train_files=${HOME}/d x.parquet", "trainer.total_epochs=1"]  # as before
    assert launch["unknown_parts"] == [["data.train_files=", {"unknown": "${HOME}"}, "/d x.parquet"], None]


# ---- 5. --verl-config DIR holding the config tree alone --------------------------------


def _tree_alone(tmp_path, config_source, touch: bool):
    import shutil

    tree = tmp_path / "only" / "config"
    shutil.copytree(config_source.path, tree)
    if touch:  # not the installed verl's tree any more: only the shipped table can say
        with open(tree / "ppo_trainer.yaml", "a", encoding="utf-8") as fh:
            fh.write("\n# edited\n")
    return str(tree)


@pytest.mark.parametrize("touch,origin", [(False, "the installed verl at"), (True, "verl-preflight's table")])
def test_config_tree_alone_still_checks_main_ppo(tmp_path, capsys, config_source, touch, origin):
    tree = _tree_alone(tmp_path, config_source, touch)
    script = write(tmp_path, "typo.sh", TYPO)
    code, out, err = run(capsys, "--verl-config", tree, script)
    assert code == 1, out
    assert "[override-missing-key]" in out and "not a Hydra entry point" not in out
    assert f"verl entry points (module -> root config) from {origin}" in err
    code, out, _ = run(capsys, "--format", "json", "--verl-config", tree, script)
    assert json.loads(out)["config_source"]["entry_points"].startswith(origin)


def test_entry_table_matches_installed_verl(config_source):
    """The shipped table says what the installed verl's @hydra.main decorators say."""
    from verl_preflight.hydra_stage.tree import ENTRY_POINTS, entry_config_name

    for module, (path, name) in ENTRY_POINTS.items():
        if module == "verl.trainer.main_ppo_sync":  # 0.8.0 only
            continue
        assert entry_config_name(config_source, module) == (path, name), module


# ---- 9. messages -------------------------------------------------------------------------


def test_config_name_typo_gets_did_you_mean(tmp_path, capsys):
    script = write(tmp_path, "cn.sh", '#!/bin/bash\npython3 -m verl.trainer.main_ppo --config-name=ppo_megatron "$@"\n')
    code, out, _ = run(capsys, script)
    assert code == 1
    assert "did you mean 'ppo_megatron_trainer'" in out and "[config-name]" in out


def test_unknown_module_is_an_error_unknown_entry_a_warning(tmp_path, capsys):
    script = write(
        tmp_path,
        "mod.sh",
        '#!/bin/bash\npython3 -m verl.trainer.mainppo "$@"\npython3 -m verl.trainer.ppo.ray_trainer "$@"\n',
    )
    code, out, _ = run(capsys, script)
    assert code == 1
    lines = [ln for ln in out.splitlines() if ": note: " not in ln]
    assert lines[0].startswith(f"{script}:2:12: error: No module named verl.trainer.mainppo")
    assert "did you mean verl.trainer.main_ppo" in lines[0] and lines[0].endswith("[unknown-module]")
    assert lines[1].startswith(f"{script}:3:1: warning: verl.trainer.ppo.ray_trainer is not a Hydra entry point")


def test_unset_variable_names_the_profile(tmp_path, capsys):
    script = write(
        tmp_path,
        "unset.sh",
        """\
#!/usr/bin/env bash
set -u
DEVICE=${DEVICE:-gpu}
if [ "$DEVICE" = "gpu" ]; then
  TRAIN=/data/train.parquet
fi
python3 -m verl.trainer.main_ppo data.train_files=$TRAIN actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 critic.ppo_micro_batch_size_per_gpu=1 "$@"
""",
    )
    code, out, _ = run(capsys, "--format", "json", script)
    found = [f for f in json.loads(out)["findings"] if f["rule"] == "unset-variable"]
    assert [f["message"] for f in found] == [
        "`set -u` is on and TRAIN is not assigned in profile DEVICE!=gpu (only other branches assign it): "
        "the script stops here unless TRAIN is exported"
    ]


def test_one_bad_tp_is_one_finding_on_the_key_that_was_set(tmp_path, capsys):
    script = write(
        tmp_path,
        "tp.sh",
        """\
#!/usr/bin/env bash
python3 -m verl.trainer.main_ppo model_engine=megatron trainer.nnodes=1 trainer.n_gpus_per_node=8 \\
    actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=1 \\
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=3 \\
    actor_rollout_ref.actor.use_dynamic_bsz=True "$@"
""",
    )
    code, out, _ = run(capsys, "--format", "json", script)
    found = [f for f in json.loads(out)["findings"] if f["rule"] == "parallelism"]
    assert [(f["line"], f["key"]) for f in found] == [
        (4, "actor_rollout_ref.actor.megatron.tensor_model_parallel_size")
    ]


# ---- 11. README: every command runs as shown, on files in the repo -----------------------


# README and the pages of docs/ written by hand (rules.md is generated, and names verl's own files)
PAGES = ["README.md", *(f"docs/{n}" for n in sorted(os.listdir(os.path.join(ROOT, "docs"))) if n.endswith(".md"))]
PAGES.remove("docs/rules.md")


def _page(name: str) -> str:
    with open(os.path.join(ROOT, name), encoding="utf-8") as fh:
        return fh.read()


def _readme_commands():
    """(command, shown output lines) for each validator command in the code blocks of README and docs/."""
    text = "\n".join(_page(name) for name in PAGES)
    out = []
    blocks, current = [], None  # fences pair up in order: ```lang opens, ``` closes
    for line in text.splitlines():
        if line.startswith("```"):
            if current is None:
                current = [] if line.strip() in ("```", "```bash", "```console", "```text") else False
            else:
                if current is not False:
                    blocks.append(current)
                current = None
        elif isinstance(current, list):
            current.append(line)
    for lines in blocks:
        for i, line in enumerate(lines):
            cmd = line[2:] if line.startswith("$ ") else line
            if "tools/validate_scripts.py" not in cmd or not re.match(r"^([A-Z_]+=\S+ )*python ", cmd):
                continue
            shown = []
            if line.startswith("$ "):
                for nxt in lines[i + 1 :]:
                    if nxt.startswith("$ "):
                        break
                    shown.append(nxt)
            out.append((re.sub(r"\s+#.*$", "", cmd), shown))
    return out


def test_readme_names_only_files_that_exist():
    text = "\n".join(_page(name) for name in PAGES)
    named = set(re.findall(r"(?<![\w/.-])((?:examples|tests|docs|tools)/[\w./-]+\.(?:sh|yaml|py|md))", text))
    assert len(named) > 10
    assert [p for p in sorted(named) if not os.path.exists(os.path.join(ROOT, p))] == []
    # the pre-commit sample's run.sh is a user's file, not this repository's: named only from there on
    assert "run.sh" not in re.sub(r"run_\w+\.sh", "", _page("README.md"))
    assert "run.sh" not in re.sub(r"run_\w+\.sh", "", _page("docs/where-to-run.md").split("## pre-commit")[0])


def test_readme_is_a_front_page_whose_links_resolve():
    """README is at most 150 lines (a front page; reference lives in docs/); every relative link of
    README and docs/ names a file that exists."""
    assert _page("README.md").count("\n") <= 150
    for name in [*PAGES, "CHANGELOG.md"]:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", _page(name)):
            assert os.path.exists(os.path.join(ROOT, os.path.dirname(name), target)), (name, target)


@pytest.mark.parametrize("cmd,shown", _readme_commands(), ids=lambda v: v if isinstance(v, str) else "")
def test_readme_command_runs_as_shown(cmd, shown, tmp_path):
    wheels = os.path.join(ROOT, ".venv", "wheels")
    if "--verl " in cmd and not os.path.isdir(wheels):
        pytest.skip("make has not downloaded the verl wheels")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"), XDG_CACHE_HOME=str(tmp_path / "cache"))
    env["VERL_PREFLIGHT_WHEELS"] = wheels
    if "--profile current" in cmd and any("nvidia-smi -L" in line for line in shown):
        # README shows this on "a machine whose nvidia-smi -L lists 4 GPUs": that machine's tool
        tool = tmp_path / "bin" / "nvidia-smi"
        tool.parent.mkdir()
        tool.write_text("#!/bin/sh\nfor i in 0 1 2 3; do echo \"GPU $i: NVIDIA H100 80GB HBM3 (UUID: GPU-$i)\"; done\n")
        tool.chmod(0o755)
        env["PATH"] = f"{tool.parent}{os.pathsep}{env['PATH']}"
    shell = cmd.replace("> results.sarif", f"> {tmp_path / 'results.sarif'}")
    shell = re.sub(r"(^|\s)python ", rf"\1{sys.executable} ", shell, count=1)
    proc = subprocess.run(["bash", "-c", shell], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 1), proc.stderr
    assert "no such file" not in proc.stderr and "error:" not in proc.stderr.replace("internal error", "error:")
    for line in shown:  # the findings the README shows are the ones the command prints
        if (": error: " in line or ": warning: " in line) and "..." not in line:
            assert line in proc.stdout.splitlines(), line


def test_readme_settings_block_names_every_key():
    """The `[tool.validate-scripts]` sample of docs/usage.md is the tool's key set, and its count says so."""
    from verl_preflight.app.settings import KEYS

    text = _page("docs/usage.md")
    settings = text.split("## Settings", 1)[1]
    block = re.search(r"```toml\n\[tool\.validate-scripts\]\n(.*?)```", settings, re.DOTALL).group(1)
    written = re.findall(r"(?:^|# or )([a-z][\w-]*) = ", block, re.MULTILINE)  # `verl = ...  # or verl-config = ...`
    assert sorted(written) == sorted(KEYS)
    words = {6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten"}
    assert f"The keys are exactly these {words[len(KEYS)]}." in text
