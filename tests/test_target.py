"""The target of a launch (target.py, target_config.py): decided once, read by every rule and render.

Each signal that decides the device, each source of a stack version and each way
Hydra finds its config folders has a script here; the first test checks that a
script judged Ascend by one signal is judged Ascend by every rule and by render.
"""

from __future__ import annotations

import json
import os

import pytest
from conftest import run_cli, write_file

from verl_preflight.app.cli import main

OTC = "actor_rollout_ref.actor.megatron.override_transformer_config"
MEGATRON = "model_engine=megatron actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 critic.ppo_micro_batch_size_per_gpu=1 data.train_batch_size=512"


def write(tmp_path, body: str, name: str = "run.sh") -> str:
    return write_file(tmp_path, name, "#!/usr/bin/env bash\n" + body)


def report(capsys, *args) -> dict:
    return json.loads(run_cli(capsys, "--no-cache", "--format", "json", *args)[1])


def targets(doc: dict) -> list[dict]:
    return [la["target"] for s in doc["scripts"] for p in s["profiles"] for la in p["launches"]]


def shown(path) -> str:
    """A path as the report shows it: relative to the working directory when under it."""
    rel = os.path.relpath(path)
    return rel if not rel.startswith("..") else str(path)


def by_rule(doc: dict, rule: str) -> list[dict]:
    return [f for f in doc["findings"] if f["rule"] == rule]


# ---- one answer for every rule ---------------------------------------------------

QWEN35 = (
    "ARGS=(\n"
    f"    {MEGATRON}\n"
    "    actor_rollout_ref.model.path=/models/Qwen3.5-35B-A3B\n"
    "    actor_rollout_ref.model.use_remove_padding=True\n"  # qwen35-gpu-bshd on GPU only
    "    actor_rollout_ref.actor.megatron.context_parallel_size=2\n"  # model-shape: GDN with CP on GPU only
    f"    +{OTC}.use_flash_attn=True\n"  # transformer-config-key: read on Ascend, no field on GPU
    "    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2\n"
    "    actor_rollout_ref.actor.megatron.expert_model_parallel_size=8\n"
    "    actor_rollout_ref.rollout.tensor_model_parallel_size=8\n"
    "    +actor_rollout_ref.actor.optim.override_optimizer_config.optimizer_cpu_offload=True\n"
    "    +actor_rollout_ref.actor.optim.override_optimizer_config.optimizer_offload_fraction=1\n"
    "    trainer.nnodes=1 trainer.n_gpus_per_node=16\n"
    ")\n"
    'python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"\n'
)
# MindSpeed-Bridge's GDN flags: ignored on Ascend without the bridge, fail on GPU (and say Ascend by themselves)
GDN_FLAGS = f"    +{OTC}.use_ascend_gdn=True\n    +{OTC}.use_triton_gdn=False\n"
DEVICE_RULES = ("qwen35-gpu-bshd", "model-shape", "transformer-config-key")


def test_a_script_judged_ascend_by_one_signal_is_ascend_for_every_rule_and_render(tmp_path, capsys):
    path = write(tmp_path, "export HCCL_CONNECT_TIMEOUT=1200\n" + QWEN35.replace(")\n", GDN_FLAGS + ")\n", 1))
    doc = report(capsys, path)
    (target,) = targets(doc)
    assert target["device"] == {"kind": "npu", "why": "HCCL_CONNECT_TIMEOUT exported"}
    assert target["stack"]["mindspeed"] == {"version": "core_r0.16.0", "origin": "default"}
    # on Ascend: nothing fails; the GDN flags without MindSpeed-Bridge do nothing (warnings)
    assert not [f for f in doc["findings"] if f["severity"] == "error"], doc["findings"]
    assert {f["rule"] for f in doc["findings"] if f["severity"] == "warning"} == {"gdn-flag-gate"}
    main(["render", "--no-cache", path])
    out = capsys.readouterr().out
    assert "#   target: verl 0.9.1 (installed); device npu (HCCL_CONNECT_TIMEOUT exported)" in out
    assert "#   devices: 1 node x 16 = 16 NPUs (64 GB each, default for npu)" in out
    # the same launch named GPU (on a named megatron-core release): every one of these rules has its error
    gpu = report(capsys, "--device", "gpu", "--stack", "megatron-core=0.16.1", path)
    assert {f["rule"] for f in gpu["findings"] if f["severity"] == "error"} == {*DEVICE_RULES, "gdn-flag-gate"}
    main(["render", "--no-cache", "--device", "gpu", path])
    assert "16 GPUs (80 GB each, default for gpu)" in capsys.readouterr().out


def test_a_script_that_names_no_device_is_judged_on_neither_side(tmp_path, capsys):
    doc = report(capsys, write(tmp_path, QWEN35))
    (target,) = targets(doc)
    assert target["device"]["kind"] is None
    assert not [f for f in doc["findings"] if f["severity"] == "error"]
    warned = {f["rule"] for f in doc["findings"] if f["severity"] == "warning"}
    assert warned == set(DEVICE_RULES)
    assert all("not known" in f["message"] for f in doc["findings"] if f["rule"] in DEVICE_RULES)


# ---- the device ------------------------------------------------------------------


@pytest.mark.parametrize(
    "body,name,why",
    [
        ("export HCCL_CONNECT_TIMEOUT=1200\n", "run.sh", "HCCL_CONNECT_TIMEOUT exported"),
        ("export VLLM_ASCEND_ENABLE_NZ=0\n", "run.sh", "VLLM_ASCEND_ENABLE_NZ exported"),
        ("source /usr/local/Ascend/ascend-toolkit/set_env.sh\n", "run.sh", "the script sources CANN's set_env.sh"),
        ("", "run_qwen3_8b_npu.sh", "its file name"),
        ("# Qwen3-8B GRPO, run on Ascend 910\n", "run.sh", "the header names it (line 2)"),
        (f"A=(+{OTC}.use_fused_rmsnorm=True)\n", "run.sh", "override_transformer_config.use_fused_rmsnorm"),
        (f"A=(+{OTC}.use_ascend_gdn=True)\n", "run.sh", "override_transformer_config.use_ascend_gdn"),
    ],
)
def test_each_signal_decides_the_device(tmp_path, capsys, body, name, why):
    path = write(tmp_path, body + f'python3 -m verl.trainer.main_ppo {MEGATRON} "${{A[@]}}" "$@"\n', name)
    (target,) = targets(report(capsys, path))
    assert target["device"]["kind"] == "npu" and why in target["device"]["why"], target["device"]


@pytest.mark.parametrize(
    "profile,launch,device",
    [
        ("DEVICE=npu", "", "npu"),
        ("DEVICE=gpu", "trainer.device=npu", "gpu"),  # the profile is the stronger signal
        ("DEVICE=other", "trainer.device=cuda", "gpu"),  # a DEVICE value that names no device says nothing
        ("DEVICE=other", "", None),
    ],
)
def test_the_strongest_signal_wins(tmp_path, capsys, profile, launch, device):
    path = write(tmp_path, f'echo "$DEVICE"\npython3 -m verl.trainer.main_ppo {MEGATRON} {launch} "$@"\n')
    (target,) = targets(report(capsys, "--profile", profile, path))
    assert target["device"]["kind"] == device


def test_device_option_and_setting(tmp_path, capsys, monkeypatch):
    path = write(tmp_path, "export HCCL_CONNECT_TIMEOUT=1200\n" + f'python3 -m verl.trainer.main_ppo {MEGATRON} "$@"\n')
    (target,) = targets(report(capsys, "--device", "gpu", path))
    assert target["device"] == {"kind": "gpu", "why": "--device gpu"}
    (tmp_path / "pyproject.toml").write_text('[tool.validate-scripts]\ndevice = "gpu"\n')
    monkeypatch.chdir(tmp_path)
    (target,) = targets(report(capsys, path))
    assert target["device"]["kind"] == "gpu"
    (tmp_path / "pyproject.toml").write_text('[tool.validate-scripts]\ndevice = "tpu"\n')
    assert main([path]) == 2 and "device: gpu or npu" in capsys.readouterr().err


# ---- the stack -------------------------------------------------------------------


def test_a_comment_pin_holds_under_its_heading(tmp_path, capsys):
    header = (
        "# Requirements on GPU\n#   * megatron-core 0.13.1\n#\n"
        "# Requirements on Ascend\n#   * Megatron-LM core_v0.18.0\n#   * MindSpeed core_r0.18.0\n#\n"
    )
    path = write(tmp_path, header + f'python3 -m verl.trainer.main_ppo {MEGATRON} trainer.device="$D" "$@"\n')
    for device, core in (("cuda", "0.13.1"), ("npu", "0.18.0")):
        (target,) = targets(report(capsys, "--profile", f"D={device}", path))
        assert target["stack"]["megatron-core"]["version"] == core
        assert target["stack"]["megatron-core"]["origin"].startswith("script comment, line ")


def test_requirements_and_dockerfiles_beside_the_script(tmp_path, capsys):
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("megatron-core==0.12.2\nvllm==0.8.5\n")
    (tmp_path / "docker").mkdir()
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "Dockerfile").write_text(
        "RUN git clone -b core_r0.16.0 https://gitcode.com/Ascend/MindSpeed.git\n"
    )
    path = write(tmp_path / "scripts", f'python3 -m verl.trainer.main_ppo {MEGATRON} trainer.device=npu "$@"\n')
    (target,) = targets(report(capsys, path))
    stack = target["stack"]
    assert stack["megatron-core"] == {"version": "0.12.2", "origin": shown(tmp_path / "requirements.txt")}
    assert stack["vllm"]["version"] == "0.8.5"
    assert stack["mindspeed"]["version"] == "core_r0.16.0" and stack["mindspeed"]["origin"].endswith("Dockerfile")


def test_a_commit_pinned_from_a_release_branch_is_that_release_line(tmp_path, capsys):
    """requirements-ascend.txt pins MindSpeed at a commit of core_r0.18.0 and says so; the
    stack is MindSpeed core_r0.18.0 (the release line the tool knows arguments for)."""
    (tmp_path / ".git").mkdir()
    sha = "1881e01a996074b30d424349237d55a2c608e6b7"
    (tmp_path / "requirements-ascend.txt").write_text(
        f"mindspeed @ git+https://gitcode.com/Ascend/MindSpeed.git@{sha}  # branch core_r0.18.0\n"
        "mindspeed-bridge @ git+https://gitcode.com/Ascend/MindSpeed-Bridge.git@v1.0.0\n"
    )
    path = write(tmp_path, f'python3 -m verl.trainer.main_ppo {MEGATRON} trainer.device=npu "$@"\n')
    (target,) = targets(report(capsys, "--stack", "mindspeed-bridge=v1.0.0", path))
    assert target["stack"]["mindspeed"]["version"] == "core_r0.18.0"
    (tmp_path / "requirements-ascend.txt").write_text(
        f"mindspeed @ git+https://gitcode.com/Ascend/MindSpeed.git@{sha}\n"
        "mindspeed-bridge @ git+https://gitcode.com/Ascend/MindSpeed-Bridge.git@v1.0.0\n"
    )
    (target,) = targets(report(capsys, "--stack", "mindspeed-bridge=v1.0.0", path))
    assert target["stack"]["mindspeed"]["version"] == sha


def test_a_release_without_key_data_is_an_unknown_stack_not_an_error(tmp_path, capsys):
    path = write(
        tmp_path,
        "# pinned: megatron-core==0.99.0\n"
        f'python3 -m verl.trainer.main_ppo {MEGATRON} +{OTC}.recompute_granularty=full trainer.device=cuda "$@"\n',
    )
    doc = report(capsys, path)
    assert [f["severity"] for f in doc["findings"]] == ["warning"]
    assert by_rule(doc, "stack-unknown")[0]["message"].startswith("no key data for megatron-core 0.99.0")


def test_a_key_another_release_has_is_a_warning_where_nothing_names_the_release(tmp_path, capsys):
    key = f"+{OTC}.tensor_parallel_num_weight_shards=2"  # a field of megatron-core 0.19.0 only
    path = write(tmp_path, f'python3 -m verl.trainer.main_ppo {MEGATRON} {key} trainer.device=cuda "$@"\n')
    (found,) = by_rule(report(capsys, path), "transformer-config-key")
    assert found["severity"] == "warning" and "megatron-core 0.19.0 has it" in found["message"]
    assert by_rule(report(capsys, "--stack", "megatron-core=0.19.0", path), "transformer-config-key") == []
    (found,) = by_rule(report(capsys, "--stack", "megatron-core=0.18.0", path), "transformer-config-key")
    assert found["severity"] == "error"


# ---- the config folders -------------------------------------------------------------

PROJECT_CONFIG = "hydra:\n  searchpath:\n    - pkg://verl.trainer.config\ndefaults:\n  - ppo_trainer\n  - _self_\n"


def project(tmp_path, config: str | None = PROJECT_CONFIG) -> str:
    """A repository whose script runs verl with its own config folder, from the repository root."""
    (tmp_path / ".git").mkdir()
    if config is not None:
        (tmp_path / "conf").mkdir()
        (tmp_path / "conf" / "mine.yaml").write_text(config)
    (tmp_path / "scripts").mkdir()
    return write(
        tmp_path / "scripts",
        'ROOT="$(pwd)"\npython3 -m verl.trainer.main_ppo --config-path="$ROOT/conf" --config-name=mine \\\n'
        '    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 critic.ppo_micro_batch_size_per_gpu=1 trainer.total_epoch=2 "$@"\n',
    )


def test_a_pwd_config_path_is_composed_from_the_repository_root(tmp_path, capsys):
    doc = report(capsys, project(tmp_path))
    (target,) = targets(doc)
    config = target["config"]
    assert config["checked"] and config["assumed"] == f"run from {shown(tmp_path)}"
    assert config["folders"][0] == str(tmp_path / "conf") and config["folders"][1].endswith("verl/trainer/config")
    (typo,) = by_rule(doc, "override-missing-key")
    assert typo["line"] == 4 and "trainer.total_epoch" in typo["message"]


def test_a_config_folder_that_is_not_here_is_a_note(tmp_path, capsys):
    doc = report(capsys, project(tmp_path, config=None))
    assert [(f["rule"], f["severity"]) for f in doc["findings"]] == [("config-path", "info")]
    assert "is not here" in doc["findings"][0]["message"]


def test_a_searchpath_package_that_is_not_installed_is_a_note(tmp_path, capsys):
    config = PROJECT_CONFIG.replace("pkg://verl.trainer.config", "pkg://no_such_package.config")
    doc = report(capsys, project(tmp_path, config=config))
    assert [(f["rule"], f["severity"]) for f in doc["findings"]] == [("config-path", "info")]
    assert "the package no_such_package is not installed here" in doc["findings"][0]["message"]


def test_a_relative_config_path_is_relative_to_the_entry_module(tmp_path, capsys):
    """hydra-core 1.3: --config-path=config is the folder beside the entry module's file, so for
    main_ppo it is verl's own config folder, wherever the launch starts."""
    path = write(
        tmp_path,
        "python3 -m verl.trainer.main_ppo --config-path=config --config-name=ppo_trainer "
        'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 critic.ppo_micro_batch_size_per_gpu=1 trainer.total_epoch=2 "$@"\n',
    )
    doc = report(capsys, path)
    assert [f["rule"] for f in doc["findings"]] == ["override-missing-key"]
    (target,) = targets(doc)
    assert target["config"]["how"] == "verl's own config folder"


# ---- verl -------------------------------------------------------------------------


def test_a_verl_vendored_under_another_package_is_the_one_checked(tmp_path, capsys, config_source):
    """python3 -m myproj.verl.trainer.main_ppo from the repository root runs myproj/verl: its config
    (here with a key the installed verl lacks) and its version are the launch's, unless the run
    names its verl (--verl-config)."""
    import shutil

    (tmp_path / ".git").mkdir()
    package = tmp_path / "myproj" / "verl"
    shutil.copytree(config_source.path, package / "trainer" / "config")
    shutil.copy(os.path.join(config_source.package_root, "trainer", "main_ppo.py"), package / "trainer")
    (package / "version").mkdir()
    (package / "version" / "version").write_text("0.4.0\n")
    yaml = package / "trainer" / "config" / "ppo_trainer.yaml"
    yaml.write_text(yaml.read_text() + "\nproject_only_key: 1\n")
    path = write(
        tmp_path,
        "python3 -m myproj.verl.trainer.main_ppo actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 critic.ppo_micro_batch_size_per_gpu=1 "
        'project_only_key=2 "$@"\n',
    )
    doc = report(capsys, path)
    (target,) = targets(doc)
    assert target["verl"]["version"] == "0.4.0" and target["verl"]["origin"] == "vendored, myproj/verl"
    assert doc["findings"] == []
    named = report(capsys, "--verl-config", config_source.path, path)
    assert [f["rule"] for f in named["findings"]] == ["override-missing-key"]
