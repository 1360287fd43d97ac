"""`--profile current` probes this machine without running the user's tree, leaving nothing
behind and holding a bounded output (issue 24, item 6; machine.py).

The probes are real processes: `python3` and `nvidia-smi` stand-ins first on PATH, shell
scripts that import from the working directory, leave a sleeping child, or flood their output.
Outcomes are counted (bytes kept and dropped, a child's process state), not timed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import tracemalloc

import pytest
from conftest import run_cli as run

from verl_preflight.target.machine import OUTPUT_CAP, Devices, probe_device, probe_devices, run_probe, which

SH, SLEEP, HEAD, YES = (shutil.which(p) for p in ("sh", "sleep", "head", "yes"))
NVIDIA_L = "".join(f"GPU {i}: NVIDIA H100 80GB HBM3 (UUID: GPU-{i:08d})\\n" for i in range(8))


def stub(folder, name: str, body: str) -> str:
    path = folder / name
    path.write_text(f"#!{SH}\n{body}")
    path.chmod(0o755)
    return str(path)


@pytest.fixture
def bin_dir(tmp_path, monkeypatch):
    """A folder first on PATH for the stand-ins; DEVICE unset, so the python3 probe runs."""
    d = tmp_path / "bin"
    d.mkdir()
    monkeypatch.setenv("PATH", f"{d}{os.pathsep}{os.environ.get('PATH', os.defpath)}")
    monkeypatch.delenv("DEVICE", raising=False)
    return d


def running(pid: int) -> bool:
    """Whether the process exists and is not a zombie (a killed orphan waits for its reaper)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False
    except OSError:
        return True


def gone(pid: int, tries: int = 500) -> bool:
    """SIGKILL is delivered asynchronously: look up to `tries` times for the process to be gone."""
    for _ in range(tries):
        if not running(pid):
            return True
        time.sleep(0.01)
    return False


# ---- 1. the working directory's code is not run ------------------------------------------


@pytest.mark.parametrize("form", ["torch_npu.py", "torch_npu/__init__.py"])
def test_a_torch_npu_in_the_working_directory_is_not_imported(form, bin_dir, tmp_path, monkeypatch, capsys):
    """The scripts' probe, `python3 -c 'import torch_npu'`, imports from the working directory;
    the tool asks whether torch_npu is installed, so its probe runs in an empty folder."""
    stub(bin_dir, "python3", f'exec {sys.executable} "$@"\n')  # the interpreter here, which lacks torch_npu
    cwd = tmp_path / "user-tree"
    marker = tmp_path / "imported"
    (cwd / form).parent.mkdir(parents=True, exist_ok=True)
    (cwd / form).write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.chdir(cwd)
    assert probe_device() == ("gpu", f"{bin_dir / 'python3'} cannot import torch_npu")
    assert not marker.exists()
    (cwd / "run.sh").write_text('python3 -m verl.trainer.main_ppo trainer.total_epochs=1 "$@"\n')
    code, out, err = run(capsys, "--profile", "current", "run.sh")
    assert "--profile current: DEVICE=gpu" in err and not marker.exists()


def test_a_program_in_a_relative_path_folder_is_not_run(bin_dir, tmp_path, monkeypatch):
    """PATH=`bin:...` (or `.`, or an empty entry) names the working directory's programs."""
    marker = tmp_path / "ran"
    cwd = tmp_path / "user-tree"
    (cwd / "bin").mkdir(parents=True)
    stub(cwd / "bin", "python3", f"touch {marker}\nexit 0\n")
    stub(cwd / "bin", "nvidia-smi", f"touch {marker}\necho 'GPU 0: x'\n")
    stub(cwd, "python3", f"touch {marker}\nexit 0\n")
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("PATH", f"bin{os.pathsep}.{os.pathsep}{os.pathsep}{bin_dir}")
    assert which("python3") is None and which("nvidia-smi") is None
    assert probe_device() == (
        "gpu", "python3 is only in a folder of PATH relative to the working directory, not run; assumed gpu")
    assert probe_devices().count is None
    assert not marker.exists()


# ---- 2. a timed-out probe leaves no child ------------------------------------------------


def timed_out(call, pid_file, timeouts=(0.5, 2.0, 8.0, 30.0)):
    """Call with growing timeouts until the stand-in had time to start its child (counted tries,
    so a loaded machine makes it slower, not wrong); the result and the child's pid."""
    for timeout in timeouts:
        result = call(timeout)
        if pid_file.exists() and pid_file.read_text().strip():
            return result, int(pid_file.read_text()), timeout
    pytest.fail("the stand-in never started its child")


def test_a_timed_out_python3_probe_leaves_no_child_running(bin_dir, tmp_path):
    pid_file = tmp_path / "child.pid"
    stub(bin_dir, "python3", f"{SLEEP} 300 &\necho $! > {pid_file}\n{SLEEP} 300\n")
    (device, why), pid, timeout = timed_out(lambda t: probe_device(timeout=t), pid_file)
    assert device == "gpu" and why.endswith(f"did not finish in {timeout:g}s; assumed gpu (set DEVICE to choose)")
    assert gone(pid), f"the probe's child {pid} is still running"


def test_a_timed_out_device_tool_leaves_no_child_running(bin_dir, tmp_path):
    pid_file = tmp_path / "child.pid"
    stub(bin_dir, "nvidia-smi", f"{SLEEP} 300 &\necho $! > {pid_file}\n{SLEEP} 300\n")
    found, pid, timeout = timed_out(lambda t: probe_devices(timeout=t), pid_file)
    assert found == Devices(None, how=f"nvidia-smi -L did not finish in {timeout:g}s")
    assert gone(pid), f"the probe's child {pid} is still running"


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="no process descriptors here (Linux 5.3+)")
def test_a_child_a_finished_probe_leaves_behind_is_killed_with_it(bin_dir, tmp_path):
    """The wrapper exits, its child keeps the output pipe open: the group goes when the probe
    ends, so the answer comes without waiting for the timeout (60 s here, never reached)."""
    pid_file = tmp_path / "child.pid"
    stub(bin_dir, "nvidia-smi", f"{SLEEP} 300 &\necho $! > {pid_file}\nprintf '{NVIDIA_L}'\n")
    assert probe_devices(timeout=60) == Devices(8, "GPU", "nvidia-smi -L")
    assert gone(int(pid_file.read_text()))


# ---- 3. a flooding probe is read up to a cap ----------------------------------------------


def test_a_flooding_probe_keeps_the_first_bytes_and_counts_the_rest(bin_dir):
    flood = 16 * OUTPUT_CAP
    exe = stub(bin_dir, "flood", f"{HEAD} -c {flood} /dev/zero\n{HEAD} -c {flood} /dev/zero >&2\n")
    tracemalloc.start()
    try:
        code, out, err = run_probe([exe], timeout=60)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert code == 0
    assert (len(out.kept), out.dropped) == (OUTPUT_CAP, flood - OUTPUT_CAP)
    assert (len(err.kept), err.dropped) == (OUTPUT_CAP, flood - OUTPUT_CAP)
    assert peak < 8 * OUTPUT_CAP, peak  # the two caps and a read's chunk, not the 2 MiB it printed
    code, out, err = run_probe([exe], timeout=60, cap=1000)
    assert (len(out.kept), out.dropped, len(err.kept)) == (1000, flood - 1000, 1000)


def test_a_probe_that_prints_forever_times_out_with_its_output_capped(bin_dir):
    exe = stub(bin_dir, "forever", f"exec {YES}\n")
    with pytest.raises(subprocess.TimeoutExpired) as stopped:
        run_probe([exe], timeout=0.5, cap=4096)
    assert len(stopped.value.output) <= 4096 and stopped.value.stderr == b""


def test_a_device_listing_past_the_cap_is_counted_from_what_was_kept(bin_dir):
    stub(bin_dir, "nvidia-smi", f"printf '{NVIDIA_L}'\n{HEAD} -c {4 * OUTPUT_CAP} /dev/zero\n")
    assert probe_devices(timeout=60) == Devices(8, "GPU", "nvidia-smi -L, its output past 64 KB not read")
