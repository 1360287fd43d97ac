"""Advice is the fix: a rename before a `+`, no `+` for a key nothing reads or verl removed, one
finding that names the cause of many (a config group's other option), and no advice that another
finding of the same run says fails."""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT, SHARED

from verl_preflight.app.cli import main

WHEELS = os.path.join(ROOT, ".venv", "wheels")


def _findings(tmp_path, capsys, body: str, *args: str) -> list[dict]:
    script = tmp_path / "run.sh"
    script.write_text(f'python3 -m verl.trainer.main_ppo {body} "$@"\n')
    main(["--no-cache", "--format", "json", *args, str(script)])
    return [f for f in json.loads(capsys.readouterr().out)["findings"] if f["rule"] == "override-missing-key"]


def test_a_typo_is_told_its_rename_and_no_plus(tmp_path, capsys):
    [f] = _findings(tmp_path, capsys, "trainer.totl_epochs=3")
    assert "did you mean 'trainer.total_epochs'?" in f["message"] and "+" not in f["message"], f["message"]


def test_a_key_nothing_reads_gets_no_plus(tmp_path, capsys):
    [f] = _findings(tmp_path, capsys, "trainer.foo_bar_baz=1")
    assert "nothing in verl reads it" in f["message"] and "+trainer" not in f["message"], f["message"]


def test_a_new_key_of_a_dict_typed_field_is_told_its_plus(tmp_path, capsys):
    [f] = _findings(
        tmp_path, capsys, "model_engine=megatron actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn=True"
    )
    assert "To add it use +actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn=True" in f["message"]


def test_a_key_verl_removed_says_when_and_proposes_no_plus(tmp_path, capsys):
    [f] = _findings(tmp_path, capsys, "actor_rollout_ref.actor.fsdp_config.grad_offload=False")
    assert "removed in 0.3.0.post1" in f["message"] and "+" not in f["message"], f["message"]
    assert "param_offload" not in f["message"]  # a close key that is no typo is not the advice


def test_keys_of_another_engine_are_one_finding_that_names_the_choice(tmp_path, capsys):
    keys = ["actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2",
            "actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=2",
            "actor_rollout_ref.actor.megatron.use_mbridge=True"]
    found = _findings(tmp_path, capsys, " ".join(keys))
    assert len(found) == 1, [f["message"] for f in found]
    [f] = found
    assert "set model_engine=megatron" in f["message"] and "model_engine=dp (the default)" in f["message"]
    assert "and 2 more keys" in f["message"] and len(f["related"]) == 2
    assert "+" not in f["message"]
    # chosen explicitly, it says so
    [f] = _findings(tmp_path, capsys, "model_engine=dp " + keys[0])
    assert "composes model_engine=dp:" in f["message"], f["message"]


def test_a_group_choice_set_as_a_sections_key_is_one_finding_at_it_with_its_fix(tmp_path, capsys):
    """`actor_rollout_ref.actor.model_engine=megatron` is the root's `model_engine` group misplaced:
    one error at it (it was 12 errors, then 2), the Megatron keys it leaves missing folded in, the
    FSDP key that choosing megatron would break named, and --fix moves the choice to the group."""
    body = ("actor_rollout_ref.actor.model_engine=megatron "
            "actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2 "
            "actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=2 "
            "actor_rollout_ref.actor.fsdp_config.param_offload=True")
    [f] = _findings(tmp_path, capsys, body)
    assert f["key"] == "actor_rollout_ref.actor.model_engine" and len(f["related"]) == 2, f
    assert "set model_engine=megatron in its place" in f["message"]
    assert "remove 'actor_rollout_ref.actor.fsdp_config.param_offload', which only model_engine=dp has" in f["message"]
    main(["--no-cache", "--fix", str(tmp_path / "run.sh")])  # megatron drops the FSDP key: unsafe, not applied
    assert "actor.model_engine=megatron" in (tmp_path / "run.sh").read_text()
    assert "unsafe: model_engine=megatron makes 'actor_rollout_ref.actor.fsdp_config.param_offload' fail" in (
        capsys.readouterr().out
    )
    main(["--no-cache", "--fix", "--unsafe-fixes", str(tmp_path / "run.sh")])
    capsys.readouterr()
    assert (tmp_path / "run.sh").read_text().startswith("python3 -m verl.trainer.main_ppo model_engine=megatron ")
    # the option already composed, or a value that is no option of the group: no such advice
    for value in ("dp", "fsdp3"):
        [f] = _findings(tmp_path, capsys, f"actor_rollout_ref.actor.model_engine={value}")
        assert "config group" not in f["message"] and "set model_engine" not in f["message"], f["message"]


@pytest.mark.slow
def test_the_key_history_matches_the_releases(tmp_path):
    """data/verl_key_history.json is what tools/verl_key_history.py writes from the wheels (a
    proof of shipped data over twelve releases: the slow tier)."""
    from verl_preflight.rules.hydra.override_missing_key import HISTORY

    with open(HISTORY, encoding="utf-8") as fh:
        shipped = json.load(fh)
    have = {f.split("-")[1] for f in os.listdir(WHEELS)} if os.path.isdir(WHEELS) else set()
    if not set(shipped["releases"]) <= have:
        pytest.skip("make has not downloaded the verl wheels the history is made from")
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import verl_key_history

    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for f in os.listdir(WHEELS):
        if f.startswith("verl-") and f.split("-")[1] in shipped["releases"]:
            os.symlink(os.path.join(WHEELS, f), wheels / f)
    assert verl_key_history.history(str(wheels)) == shipped


PLUS = re.compile(r"(?:use|instead:) \+([\w.]+)=")


def _scripts() -> list[str]:
    out = sorted(glob.glob(os.path.join(ROOT, "tests", "fixtures", "**", "*.sh"), recursive=True))
    out += sorted(glob.glob(os.path.join(ROOT, "examples", "**", "*.sh"), recursive=True))
    corpus = os.path.join(SHARED, "corpus", "verl-v0.7.0", "examples")
    if os.path.isdir(corpus):
        out += sorted(glob.glob(os.path.join(corpus, "**", "*.sh"), recursive=True))[:120]
    return out


@pytest.mark.slow
def test_no_advice_is_refused_by_another_finding_of_the_run(tmp_path):
    """Every `+key` a finding advises is a key no other finding of the same script and profile
    says verl refuses (config-field: the dataclass lacks it; override-append-existing: it is there)."""
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"), PYTHONPATH=os.path.join(ROOT, "src"))
    proc = subprocess.run(
        [sys.executable, "-m", "verl_preflight", "--format", "json", "-j", "2", *_scripts()],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=3000,
    )
    doc = json.loads(proc.stdout)
    refused = {(f["path"], f["key"]) for f in doc["findings"] if f["rule"] in ("config-field", "override-append-existing")}
    advised = [(f["path"], m.group(1), f["message"]) for f in doc["findings"] for m in PLUS.finditer(f["message"])]
    assert advised, "the run gives `+` advice somewhere, or the test checks nothing"
    contradicted = [(p, k, msg) for p, k, msg in advised if (p, k) in refused]
    assert not contradicted, contradicted[:5]


@pytest.mark.parametrize("module,meant", [
    ("verl.trainer.main_ppo_synk", None),  # main_ppo_sync was verl 0.8.0's only: never offered to 0.9.1
    ("verl.trainer.mainppo", "verl.trainer.main_ppo"),
])
def test_an_unknown_module_is_offered_only_modules_this_verl_has(module, meant, tmp_path, capsys):
    script = tmp_path / "run.sh"
    script.write_text(f'python3 -m {module} trainer.total_epochs=1 "$@"\n')
    main(["--no-cache", "--format", "json", str(script)])
    [f] = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["rule"] == "unknown-module"]
    assert "main_ppo_sync" not in f["message"].replace(module, ""), f["message"]
    if meant:
        assert f"did you mean {meant}" in f["message"], f["message"]


def test_a_gdn_flag_in_the_wrong_arm_is_one_finding_that_moves_it(tmp_path, capsys):
    """use_ascend_gdn=True in the gpu arm: gdn-flag-gate says where it belongs; the stack's view
    (no TransformerConfig field) is folded into it; nothing advises its partner flag in that arm."""
    script = tmp_path / "run.sh"
    script.write_text(
        'DEVICE=${DEVICE:-gpu}\nACTOR=()\ncase "${DEVICE}" in\n  gpu)\n'
        "    ACTOR+=(+actor_rollout_ref.actor.megatron.override_transformer_config.use_ascend_gdn=True)\n    ;;\n"
        "  npu)\n    ACTOR+=(trainer.device=npu)\n    ;;\nesac\n"
        'python3 -m verl.trainer.main_ppo model_engine=megatron "${ACTOR[@]}" "$@"\n'
    )
    main(["--no-cache", "--format", "json", str(script)])
    found = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["line"] == 5]
    assert [f["rule"] for f in found] == ["gdn-flag-gate"], found
    assert [o["rule"] for o in found[0]["also"]] == ["transformer-config-key"]
    assert "use_triton_gdn" not in json.dumps(found)
