"""This machine, for `--profile current`: its environment and what the scripts probe on it."""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass

from .node_probe import count_gpus, count_npus

PROBE_TIMEOUT = 60.0  # seconds; importing torch_npu imports torch, which is slow
PROBE = "import torch_npu"  # what the reference scripts run: DEVICE=$(python3 -c 'import torch_npu' && ...)
OUTPUT_CAP = 64 * 1024  # bytes of a probe's standard output (and of its standard error) kept; the rest is dropped


def which(name: str) -> str | None:
    """`name` in the folders of PATH that are absolute. An empty or relative entry (`.`, `bin`,
    a leading `:`) names the working directory, whose programs are not this tool's to run."""
    entries = [e for e in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(e)]
    return shutil.which(name, path=os.pathsep.join(entries)) if entries else None


def probe_device(timeout: float = PROBE_TIMEOUT) -> tuple[str, str]:
    """(DEVICE, why): the scripts' own probe, `python3 -c 'import torch_npu'`, run with the
    first `python3` on PATH (the interpreter the script will run), not the validator's.

    What it learns is whether torch_npu is installed for that interpreter, not what the
    working directory holds: `-c` puts the working directory first on sys.path, so the probe
    runs in a fresh empty folder (run_probe), where a `torch_npu.py` or a `torch_npu/` of the
    user's tree is not imported. Not `-I`: that would also drop PYTHONPATH and the user's
    site-packages, which the script's own probe sees (a `pip install --user torch_npu`, an
    Ascend environment on PYTHONPATH), and answer gpu where the script answers npu; a
    relative PYTHONPATH entry resolves in the empty folder too. `-B`: it writes no bytecode."""
    if "DEVICE" in os.environ:
        return os.environ["DEVICE"], "DEVICE is set in the environment"
    exe = which("python3")
    if exe is None and shutil.which("python3"):
        return "gpu", "python3 is only in a folder of PATH relative to the working directory, not run; assumed gpu"
    if exe is None:
        return "gpu", "no python3 on PATH, so the scripts' torch_npu probe would fail"
    try:
        code, _, _ = run_probe([exe, "-B", "-c", PROBE], timeout)
    except subprocess.TimeoutExpired:
        return "gpu", f"{exe} -c '{PROBE}' did not finish in {timeout:g}s; assumed gpu (set DEVICE to choose)"
    except OSError as err:
        return "gpu", f"{exe} could not be run ({err.strerror or err}), so the scripts' probe would fail"
    if code == 0:
        return "npu", f"{exe} imports torch_npu"
    return "gpu", f"{exe} cannot import torch_npu"


@dataclass(frozen=True)
class Output:
    """What a probe wrote on one stream: the first `OUTPUT_CAP` bytes, and how many it dropped."""

    kept: bytes = b""
    dropped: int = 0


REAP_GRACE = 5.0  # seconds to reap a killed probe; one stuck in the kernel (a hung driver) is left to the system


def run_probe(argv: list[str], timeout: float, cap: int = OUTPUT_CAP) -> tuple[int, Output, Output]:
    """(exit status, standard output, standard error) of a probe of this machine. It runs in a
    fresh empty folder, with no input, in a process group of its own; each stream is read as
    it comes, its first `cap` bytes kept and the rest dropped (a probe that floods its output
    costs no memory). When the probe ends, or at `timeout` seconds, the whole group is killed:
    a child it left (a wrapper script's, holding the output pipes open) does not outlive it.
    On timeout: subprocess.TimeoutExpired, with the output kept so far."""
    deadline = time.monotonic() + timeout
    with tempfile.TemporaryDirectory(prefix="verl-preflight-probe-", ignore_cleanup_errors=True) as empty:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=empty, start_new_session=True,
        )
        kept = {proc.stdout: bytearray(), proc.stderr: bytearray()}
        dropped = dict.fromkeys(kept, 0)
        try:
            ended = _follow(proc.pid, kept, dropped, deadline, cap)
        finally:
            _kill_group(proc.pid)  # the leader is not reaped yet: its group id names no other group
            try:
                proc.wait(timeout=REAP_GRACE)
            except subprocess.TimeoutExpired:
                pass
            for stream in kept:
                stream.close()
    out, err = (Output(bytes(kept[s]), dropped[s]) for s in (proc.stdout, proc.stderr))
    if not ended:
        raise subprocess.TimeoutExpired(argv, timeout, output=out.kept, stderr=err.kept)
    return proc.returncode, out, err


def _follow(pid: int, kept: dict, dropped: dict, deadline: float, cap: int) -> bool:
    """Read the probe's pipes until it has exited and they are at their end, or until the
    deadline: each stream's first `cap` bytes into `kept`, the count of the rest into
    `dropped`. Whether the probe exited (it is left unreaped). Where the system gives a
    process descriptor (Linux), the group is killed as soon as the probe exits, which closes
    pipes a child of it still holds."""
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    exited = False
    open_pipes = set(kept)
    with selectors.DefaultSelector() as sel:
        for stream in kept:
            sel.register(stream, selectors.EVENT_READ)
        if pidfd is not None:
            sel.register(pidfd, selectors.EVENT_READ)
        try:
            while open_pipes or (pidfd is not None and not exited):
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                for key, _ in sel.select(left):
                    if key.fileobj == pidfd:
                        exited = True
                        sel.unregister(pidfd)
                        _kill_group(pid)
                        continue
                    chunk = os.read(key.fd, 65536)
                    if not chunk:
                        sel.unregister(key.fileobj)
                        open_pipes.discard(key.fileobj)
                        continue
                    buf = kept[key.fileobj]
                    room = max(0, cap - len(buf))
                    buf += chunk[:room]
                    dropped[key.fileobj] += len(chunk) - min(room, len(chunk))
        finally:
            if pidfd is not None:
                os.close(pidfd)
    return exited or _exited(pid, deadline)


def _exited(pid: int, deadline: float) -> bool:
    """Whether the process ends by the deadline, left unreaped (a zombie keeps its group id
    from being reused, so killing the group after cannot reach another one)."""
    pause = 0.0005
    while True:
        try:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(pause, left))
        pause = min(pause * 2, 0.05)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # nobody left in it


DEVICES_TIMEOUT = 10.0  # seconds for `nvidia-smi -L` / `npu-smi info`; a hung driver must not hang the run


@dataclass(frozen=True)
class Devices:
    """The accelerators this machine shows, as its tools list them."""

    count: int | None  # None: not known (no tool on PATH, or it failed or hung)
    kind: str = ""  # "GPU" or "NPU" when count is known
    how: str = ""  # the command that said so, or why nothing did

    def describe(self) -> str:
        if self.count is None:
            return f"this machine's devices are not known ({self.how})"
        plural = "" if self.count == 1 else "s"
        return f"this machine shows {self.count} {self.kind}{plural} ({self.how})"

    def against(self, per_node) -> str:
        """render's line: what this machine shows next to what the job asks of each node."""
        asks = f"the job asks {per_node} per node" if isinstance(per_node, int) else "what the job asks is not known"
        return f"{self.describe()}; {asks}"


_TOOLS = (("nvidia-smi", ("-L",), "GPU", count_gpus), ("npu-smi", ("info",), "NPU", count_npus))


def probe_devices(timeout: float = DEVICES_TIMEOUT) -> Devices:
    """The devices this machine shows: `nvidia-smi -L`, then `npu-smi info`, each run only when
    it is on PATH, read-only, with a timeout. A missing tool, a failure or a timeout is said
    in `how`, never raised."""
    notes = []
    for tool, args, kind, count_of in _TOOLS:
        exe = which(tool)
        if exe is None:
            continue
        command = " ".join((tool, *args))
        try:
            code, stdout, stderr = run_probe([exe, *args], timeout)
        except subprocess.TimeoutExpired:
            notes.append(f"{command} did not finish in {timeout:g}s")
            continue
        except OSError as error:
            notes.append(f"{command} could not be run: {error.strerror or error}")
            continue
        text = stdout.kept.decode("utf-8", "replace")
        if code != 0:
            first = (stderr.kept or stdout.kept).decode("utf-8", "replace").strip().splitlines()
            why = f": {first[0][:120]}" if first else ""
            notes.append(f"{command} failed (exit {code}){why}")
            continue
        found = count_of(text)
        if found:
            cut = f", its output past {OUTPUT_CAP // 1024} KB not read" if stdout.dropped else ""
            return Devices(found, kind, command + cut)
        notes.append(f"{command} lists no {kind}")
    if not notes:
        return Devices(None, how="neither nvidia-smi nor npu-smi is on PATH")
    return Devices(None, how="; ".join(notes))


def current_env(dims, device: str | None = None) -> dict:
    """The one profile this machine will run: its environment, DEVICE as probed (`device`,
    from probe_device, run once per run by the command line)."""
    env = {}
    for d in dims:
        if d.name in os.environ:
            env[d.name] = os.environ[d.name]
        elif d.name == "DEVICE":
            env["DEVICE"] = device if device is not None else probe_device()[0]
    return env


_DISTRIBUTIONS = {
    "megatron-core": "megatron-core",
    "megatron-bridge": "megatron-bridge",
    "mbridge": "mbridge",
    "mindspeed": "mindspeed",
}


def installed_stack() -> dict:
    """{package: version} of the stack packages installed here (read from their metadata)."""
    from importlib import metadata

    from ..sources import installed_megatron_version

    out = {}
    for package, dist in _DISTRIBUTIONS.items():
        try:
            out[package] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    core = installed_megatron_version()
    if core:
        out["megatron-core"] = core
    return out
