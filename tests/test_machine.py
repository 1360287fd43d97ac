"""This machine's devices under --profile current: `nvidia-smi -L` and `npu-smi info`, run for real.

There is no accelerator here, so the tools are stub executables first on PATH: real
processes that print what the real tools print, fail, or hang. The probe must count,
say a failure or a timeout, and never raise; `render` shows the count next to what the
job asks of each node, and the machine-devices rule warns when the job asks more.
"""

from __future__ import annotations

import json
import shutil
import time

import pytest
from conftest import run_cli as run

from verl_preflight.target.machine import Devices, count_gpus, count_npus, probe_devices

CAT, SLEEP = shutil.which("cat"), shutil.which("sleep")  # the stubs run with PATH set to their folder alone
NVIDIA_L = "".join(f"GPU {i}: NVIDIA H100 80GB HBM3 (UUID: GPU-{i:08d}-0000)\n" for i in range(8))
NVIDIA_MIG = (
    "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-aaaa)\n"
    "  MIG 3g.40gb     Device  0: (UUID: MIG-bbbb)\n"
    "  MIG 3g.40gb     Device  1: (UUID: MIG-cccc)\n"
    "GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-dddd)\n"
)


def npu_smi_info(cards: int, chips_per_card: int, processes: int = 0) -> str:
    """A table laid out like `npu-smi info`: a name row and one row a chip for each card, then
    the process table (whose rows also start with two numbers, and must not be counted)."""
    rule = "+---------------------------+---------------+----------------------------------------------------+"
    lines = [
        rule,
        "| npu-smi 24.1.rc2          Version: 24.1.rc2                                                     |",
        rule,
        "| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|",
        "| Chip  Phy-ID              | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |",
        rule.replace("-", "="),
    ]
    for card in range(cards):
        lines.append(
            f"| {card:<5} Ascend910           | OK            | 170.2       36                0    / 0             |"
        )
        for chip in range(chips_per_card):
            lines.append(
                f"| {chip:<5} {card * chips_per_card + chip:<19} | 0000:{card:02X}:00.{chip}  "
                "| 0           0    / 0          3402 / 65536         |"
            )
        lines.append(rule)
    lines += [
        "| NPU     Chip              | Process id    | Process name             | Process memory(MB)      |",
        rule.replace("-", "="),
    ]
    row = "| 0       0                 | {pid:<13} | python3                  | 3000                    |"
    lines += [row.format(pid=4000 + p) for p in range(processes)]
    if not processes:
        lines.append("| No running processes found in NPU 0" + " " * 60 + "|")
    lines.append(rule)
    return "\n".join(lines) + "\n"


def test_counts_gpu_lines_not_mig_instances():
    assert count_gpus(NVIDIA_L) == 8
    assert count_gpus(NVIDIA_MIG) == 2
    assert count_gpus("No devices were found\n") == 0


@pytest.mark.parametrize("cards,chips,processes,expected", [(8, 1, 0, 8), (8, 2, 3, 16), (1, 1, 5, 1)])
def test_counts_npu_chips_not_processes(cards, chips, processes, expected):
    assert count_npus(npu_smi_info(cards, chips, processes)) == expected


def stub(bin_dir, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


@pytest.fixture
def bin_dir(tmp_path, monkeypatch):
    """An empty folder that is the whole PATH (only /bin/sh runs the stubs)."""
    d = tmp_path / "bin"
    d.mkdir()
    monkeypatch.setenv("PATH", str(d))
    return d


def test_nvidia_smi_counts_its_gpus(bin_dir, tmp_path):
    listing = tmp_path / "listing"
    listing.write_text(NVIDIA_L)
    log = tmp_path / "argv"
    stub(bin_dir, "nvidia-smi", f'echo "$@" > {log}\n{CAT} {listing}\n')
    assert probe_devices() == Devices(8, "GPU", "nvidia-smi -L")
    assert log.read_text().split() == ["-L"]
    assert probe_devices().describe() == "this machine shows 8 GPUs (nvidia-smi -L)"


def test_npu_smi_counts_its_chips(bin_dir, tmp_path):
    table = tmp_path / "table"
    table.write_text(npu_smi_info(8, 2, processes=2))
    stub(bin_dir, "npu-smi", f'[ "$1" = info ] || exit 2\n{CAT} {table}\n')
    assert probe_devices() == Devices(16, "NPU", "npu-smi info")


def test_no_tool_on_path_is_said(bin_dir):
    found = probe_devices()
    assert found.count is None and found.how == "neither nvidia-smi nor npu-smi is on PATH"
    assert found.describe() == "this machine's devices are not known (neither nvidia-smi nor npu-smi is on PATH)"


def test_a_failing_tool_is_said_not_raised(bin_dir):
    said = "NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver"
    stub(bin_dir, "nvidia-smi", f"echo '{said}' >&2\nexit 9\n")
    found = probe_devices()
    assert found.count is None and found.how == f"nvidia-smi -L failed (exit 9): {said}"


def test_a_hanging_tool_times_out_with_its_children(bin_dir, tmp_path):
    """The stub is a shell whose child `sleep` holds the output pipe: killing the shell alone
    would leave the probe waiting for the pipe; the probe kills the process group it started."""
    stub(bin_dir, "nvidia-smi", f"{SLEEP} 300\n")
    table = tmp_path / "table"
    table.write_text(npu_smi_info(1, 1))
    stub(bin_dir, "npu-smi", f"{CAT} {table}\n")
    # growing timeouts (counted tries): a loaded machine may need longer for npu-smi to answer
    start = time.monotonic()
    found, timeout = answered(lambda t: probe_devices(timeout=t), lambda f: f.count is not None)
    assert time.monotonic() - start < 150  # the hung nvidia-smi was killed, not waited for (300 s)
    # the hung nvidia-smi is said; npu-smi still answers
    assert found == Devices(1, "NPU", "npu-smi info")
    stub(bin_dir, "npu-smi", "exit 1\n")
    found, timeout = answered(lambda t: probe_devices(timeout=t), lambda f: "npu-smi info failed" in f.how)
    assert found.count is None
    assert found.how == f"nvidia-smi -L did not finish in {timeout:g}s; npu-smi info failed (exit 1)"


def answered(call, done, timeouts=(0.5, 2.0, 8.0, 30.0)):
    """(result, timeout) of the first call, with growing timeouts, whose result is `done`."""
    for timeout in timeouts:
        result = call(timeout)
        if done(result):
            return result, timeout
    pytest.fail(f"no answer in {timeouts[-1]:g}s: {result}")


def test_a_tool_that_lists_nothing_is_said(bin_dir):
    stub(bin_dir, "nvidia-smi", "echo 'No devices were found'\n")
    assert probe_devices() == Devices(None, how="nvidia-smi -L lists no GPU")


# ---- --profile current: render's line and the machine-devices rule ---------------

SCRIPT = """#!/usr/bin/env bash
set -euo pipefail
python3 -m verl.trainer.main_ppo \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 critic.ppo_micro_batch_size_per_gpu=1 \\
    trainer.nnodes=1 \\
    trainer.n_gpus_per_node=8 \\
    "$@"
"""


@pytest.fixture
def machine(bin_dir, tmp_path, monkeypatch):
    """`--profile current` on a machine whose nvidia-smi lists `n` GPUs; returns the script."""
    monkeypatch.setenv("DEVICE", "gpu")  # the scripts' python3 probe is not what is tested here
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    script = tmp_path / "run.sh"
    script.write_text(SCRIPT)

    def on(n: int) -> str:
        listing = tmp_path / "listing"
        listing.write_text("".join(f"GPU {i}: NVIDIA H100 80GB HBM3 (UUID: GPU-{i})\n" for i in range(n)))
        stub(bin_dir, "nvidia-smi", f"{CAT} {listing}\n")
        return str(script)

    return on


def test_render_shows_the_machine_next_to_the_job(machine, capsys):
    code, out, err = run(capsys, "render", "--profile", "current", machine(4))
    assert code == 0
    assert "validate-scripts: --profile current: this machine shows 4 GPUs (nvidia-smi -L)" in err
    lines = out.splitlines()
    assert lines[1].startswith("#   target: verl 0.9.1 (installed); device gpu (this machine, --profile current: ")
    assert lines[2] == "#   devices: 1 node x 8 = 8 GPUs (80 GB each, default for gpu)"
    assert lines[3] == "#   machine: this machine shows 4 GPUs (nvidia-smi -L); the job asks 8 per node"


def test_render_without_profile_current_does_not_probe(machine, capsys):
    _, out, err = run(capsys, "render", machine(4))
    assert "machine:" not in out and "nvidia-smi" not in err


def findings(capsys, *argv):
    code, out, _ = run(capsys, "--format", "json", "--no-cache", *argv)
    return code, json.loads(out)["findings"]


def test_the_job_asks_more_devices_than_the_machine_shows(machine, capsys):
    code, found = findings(capsys, "--profile", "current", machine(4))
    (f,) = [f for f in found if f["rule"] == "machine-devices"]
    assert f["severity"] == "warning" and f["line"] == 6
    assert f["message"].startswith(
        "trainer.n_gpus_per_node=8 but this machine shows 4 GPUs (nvidia-smi -L): with Ray started on this "
        "machine, verl raises ValueError"
    )


def test_enough_devices_no_tool_or_no_profile_current_give_no_finding(machine, bin_dir, capsys):
    script = machine(8)
    assert not [f for f in findings(capsys, "--profile", "current", script)[1] if f["rule"] == "machine-devices"]
    machine(2)
    assert not [f for f in findings(capsys, script)[1] if f["rule"] == "machine-devices"]
    (bin_dir / "nvidia-smi").unlink()
    assert not [f for f in findings(capsys, "--profile", "current", script)[1] if f["rule"] == "machine-devices"]


def test_profile_current_sees_the_visibility_variable_of_this_shell(machine, capsys, monkeypatch):
    """Under --profile current the launch gets this shell's environment: CUDA_VISIBLE_DEVICES
    exported here counts as if the script exported it."""
    script = machine(8)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    _, found = findings(capsys, "--profile", "current", script)
    (f,) = [f for f in found if f["rule"] == "visible-devices"]
    assert f["message"].startswith("CUDA_VISIBLE_DEVICES=0,1 lists 2 device(s) but trainer.n_gpus_per_node=8")
    assert f["line"] == 3  # the launch: the variable has no line in the script
    assert not [f for f in found if f["rule"] == "machine-devices"]
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert not [f for f in findings(capsys, script)[1] if f["rule"] == "visible-devices"]


def test_a_job_submitted_to_a_ray_cluster_does_not_get_the_shells_visibility(tmp_path, capsys):
    """`ray job submit -- python3 -m verl...`: the job runs in the cluster's environment."""
    script = tmp_path / "submit.sh"
    body = (
        "#!/usr/bin/env bash\nexport CUDA_VISIBLE_DEVICES=0\n"
        "{launcher} python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 critic.ppo_micro_batch_size_per_gpu=1 "
        'trainer.device=cuda trainer.n_gpus_per_node=8 "$@"\n'
    )
    script.write_text(body.format(launcher="ray job submit --address=http://head:8265 --"))
    assert not [f for f in findings(capsys, str(script))[1] if f["rule"] == "visible-devices"]
    script.write_text(body.format(launcher="nohup"))
    (f,) = [f for f in findings(capsys, str(script))[1] if f["rule"] == "visible-devices"]
    assert f["line"] == 2


@pytest.mark.parametrize(
    "lines,expected",
    [
        ("env CUDA_VISIBLE_DEVICES=0,1 {launch}", 2),
        ("nohup env -u X CUDA_VISIBLE_DEVICES=0 {launch}", 2),
        ("export CUDA_VISIBLE_DEVICES=0\nenv -u CUDA_VISIBLE_DEVICES {launch}", None),
        ("export CUDA_VISIBLE_DEVICES=0\nenv --unset=CUDA_VISIBLE_DEVICES {launch}", None),
        ("export CUDA_VISIBLE_DEVICES=0\nenv -i PATH=/usr/bin {launch}", None),
        ("export CUDA_VISIBLE_DEVICES=0\nenv CUDA_VISIBLE_DEVICES=0,1,2,3 {launch}", 3),
        # sudo resets the environment (env_reset, sudoers decides what is kept): unknown, not judged
        ("export CUDA_VISIBLE_DEVICES=0\nsudo -u trainer {launch}", None),
        ("export CUDA_VISIBLE_DEVICES=0\nsudo -E {launch}", 2),
        ("sudo CUDA_VISIBLE_DEVICES=0,1 {launch}", 2),
    ],
)
def test_the_env_command_sets_and_unsets_what_the_launch_gets(tmp_path, capsys, lines, expected):
    """`env NAME=value`, `env -u NAME`, `env -i` before python3 change the environment verl gets
    (real bash and coreutils env agree: the stub python3 of a bash run sees the same)."""
    script = tmp_path / "env.sh"
    launch = (
        "python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 critic.ppo_micro_batch_size_per_gpu=1 "
        'trainer.device=cuda trainer.n_gpus_per_node=8 "$@"'
    )
    script.write_text("#!/usr/bin/env bash\n" + lines.format(launch=launch) + "\n")
    found = [f for f in findings(capsys, str(script))[1] if f["rule"] == "visible-devices"]
    assert [f["line"] for f in found] == ([expected] if expected else [])
