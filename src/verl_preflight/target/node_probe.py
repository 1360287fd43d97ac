"""What one node of the Ray cluster has: run there by `validate-scripts preflight`, one task a node.

This module is shipped to the nodes by value (Ray's cloudpickle, `register_pickle_by_value`):
a node needs Python and Ray, not this tool, so it imports nothing but the standard library and
refers to nothing outside itself. It reads; it never runs the script, verl, or anything the
launch names: it asks the package metadata for versions, stats the paths the launch names
(and reads a model folder's config.json, at most 1 MB), reads /proc/meminfo, and lists the
accelerators with `nvidia-smi` or `npu-smi` where they are on PATH, else with the device API
of the torch installed there, in a child process (read-only queries, each with a timeout).
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys

# the distributions whose versions decide what the launch meets (PyPI names)
PACKAGES = (
    "verl",
    "torch",
    "torch_npu",
    "vllm",
    "vllm-ascend",
    "sglang",
    "megatron-core",
    "megatron-bridge",
    "mbridge",
    "mindspeed",
    "mindspeed-bridge",
    "transformers",
    "ray",
)
# the environment verl, Ray and the collective libraries read (no tokens or keys: names only of these)
ENV_NAMES = ("CUDA_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES", "ASCEND_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES")
ENV_PREFIXES = ("NCCL_", "HCCL_", "GLOO_", "VLLM_", "VERL_", "RAY_", "PYTORCH_", "TORCH_", "MASTER_", "HYDRA_")
_SECRET_PARTS = ("TOKEN", "KEY", "SECRET", "PASSWORD")
CONFIG_MAX_BYTES = 1024 * 1024
TOOL_TIMEOUT = 10.0  # seconds for nvidia-smi / npu-smi


def node_facts(paths: list, tool_timeout: float = TOOL_TIMEOUT) -> dict:
    """Plain data: this node's host name, Python, package versions, environment, host memory,
    accelerators, and what each of `paths` is here."""
    return {
        "host": socket.gethostname(),
        "python": platform.python_version(),
        "versions": _versions(),
        "env": _env(),
        "memory": _memory(),
        "accelerators": _accelerators(tool_timeout),
        "paths": paths_facts(paths),
    }


def paths_facts(paths: list) -> dict:
    """What each of `paths` is on this node (`_path`)."""
    return {p: _path(p) for p in paths}


def _versions() -> dict:
    from importlib import metadata

    out = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except Exception:  # not installed (PackageNotFoundError), or its metadata unreadable
            out[name] = None
    return out


def _env() -> dict:
    """The variables (ENV_NAMES, ENV_PREFIXES) of the node's environment as its raylet started
    with it: a task's own has the visible-devices variables Ray set for that task (empty for
    one that claims no device), not the node's. This process's where the raylet's cannot be read."""
    out = {}
    for name, value in _raylet_environ().items():
        if name in ENV_NAMES or name.startswith(ENV_PREFIXES):
            if not any(part in name for part in _SECRET_PARTS):
                out[name] = value[:512]
    return dict(sorted(out.items()))


def _raylet_environ() -> dict:
    pid = os.environ.get("RAY_RAYLET_PID", "")
    if pid.isdigit():
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                data = fh.read(1024 * 1024)
        except OSError:
            data = b""
        pairs = [item.decode("utf-8", "replace").partition("=") for item in data.split(b"\0") if b"=" in item]
        if pairs:
            return {name: value for name, _, value in pairs}
    return dict(os.environ)


def _memory() -> dict:
    """{"total": bytes, "available": bytes} from /proc/meminfo, and "limit": bytes where this
    process's cgroup caps memory below that (a container: what Ray's memory monitor measures
    against); {} where /proc/meminfo cannot be read."""
    out = {}
    try:
        with open("/proc/meminfo", encoding="ascii", errors="replace") as fh:
            for line in fh.read(65536).splitlines():
                name, _, rest = line.partition(":")
                if name in ("MemTotal", "MemAvailable") and rest.strip().endswith("kB"):
                    out["total" if name == "MemTotal" else "available"] = int(rest.split()[0]) * 1024
    except (OSError, ValueError):
        return {}
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):  # cgroup v2, v1
        try:
            with open(path, encoding="ascii") as fh:
                limit = int(fh.read(64).strip())
        except (OSError, ValueError):  # (v2's "max": no limit)
            continue
        if 0 < limit < out.get("total", 0):
            out["limit"] = limit
            usage = os.path.join(os.path.dirname(path), "memory.current" if path.endswith(".max") else "memory.usage_in_bytes")
            try:
                with open(usage, encoding="ascii") as fh:
                    left = limit - int(fh.read(64).strip())
                out["available"] = min(out.get("available", left), max(left, 0))  # (what the cgroup has left)
            except (OSError, ValueError):
                pass
        break
    return out


def _accelerators(timeout: float) -> dict:
    """{"kind": "GPU"|"NPU", "count": n, "memory_mib": [...], "how": command}, or {"how": why
    none is known}: `nvidia-smi --query-gpu=memory.total`, then `npu-smi info`, where on PATH."""
    notes = []
    exe = shutil.which("nvidia-smi")
    if exe:
        text, why = _run([exe, "--query-gpu=memory.total", "--format=csv,noheader,nounits"], timeout)
        sizes = [int(x) for x in (line.strip() for line in (text or "").splitlines()) if x.isdigit()]
        if sizes:
            return {"kind": "GPU", "count": len(sizes), "memory_mib": sizes, "how": "nvidia-smi --query-gpu"}
        notes.append(f"nvidia-smi: {why or 'lists no GPU'}")
    exe = shutil.which("npu-smi")
    if exe:
        text, why = _run([exe, "info"], timeout)
        count = count_npus(text or "")
        if count:
            return {"kind": "NPU", "count": count, "memory_mib": [], "how": "npu-smi info"}
        notes.append(f"npu-smi: {why or 'lists no NPU'}")
    if _installed("torch"):  # the device API of the torch the job's workers import, in a process of its own
        text, why = _run([sys.executable, "-c", TORCH_QUERY], timeout, env=_node_devices_env())
        try:
            found = json.loads(text) if text else None
        except ValueError:
            found, why = None, "printed no devices"
        if isinstance(found, dict) and found.get("memory"):
            sizes = [int(b) // (1024 * 1024) for b in found["memory"] if isinstance(b, int)]
            kind = "NPU" if found.get("kind") == "NPU" else "GPU"
            return {"kind": kind, "count": len(sizes), "memory_mib": sizes, "how": f"{found.get('api')}"}
        notes.append(f"torch: {why or 'shows no GPU or NPU'}")
    return {"how": "; ".join(notes) or "neither nvidia-smi nor npu-smi is on PATH, nor torch installed"}


# torch's device API, asked in a child process (an import of torch, and of torch_npu where it is
# there, that ends with the query): each device's total memory in bytes
TORCH_QUERY = """\
import json, torch
try:
    import torch_npu  # noqa: F401
    api, devices = "torch.npu", torch.npu
except ImportError:
    api, devices = "torch.cuda", torch.cuda
sizes = [devices.get_device_properties(i).total_memory for i in range(devices.device_count())] if devices.is_available() else []
print(json.dumps({"kind": "NPU" if api == "torch.npu" else "GPU", "api": api + ".get_device_properties", "memory": sizes}))
"""


def _node_devices_env() -> dict:
    """This process's environment with the visible-devices variables the node's raylet has (Ray
    sets them empty for this task, which claims no device: torch would see none)."""
    node = _raylet_environ()
    env = {k: v for k, v in os.environ.items() if k not in ENV_NAMES}
    env.update({k: node[k] for k in ENV_NAMES if k in node})
    return env


def _installed(name: str) -> bool:
    from importlib import metadata

    try:
        metadata.version(name)
    except Exception:
        return False
    return True


def count_gpus(text: str) -> int:
    """GPUs in `nvidia-smi -L` output: one line "GPU <i>: <name> (UUID: ...)" each (MIG
    instances are indented lines below their GPU)."""
    return sum(1 for line in text.splitlines() if line.startswith("GPU "))


# `npu-smi info` prints a table; after the header, each chip has a row whose first cell is
# "<Chip> <Device/Phy-ID>" and whose second is its Bus-Id, under a row "<NPU id> <Name>"
# whose second cell is its health. The process table below it starts with "Process id".
_NPU_CHIP_ROW = re.compile(r"^\|\s*\d+\s+\d+\s*\|[^|]*\|[^|]*\|\s*$")


def count_npus(text: str) -> int:
    """NPU chips in `npu-smi info` output: the chip rows of the device table (an Atlas A3 card
    shows two, one a die); the process table is not counted."""
    count = 0
    for line in text.splitlines():
        if "Process id" in line or "Process name" in line:
            break
        if _NPU_CHIP_ROW.match(line.strip()):
            count += 1
    return count


def _run(args: list, timeout: float, env: dict | None = None):
    """(standard output, None) of a read-only query, or (None, why not)."""
    try:
        proc = subprocess.run(args, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL, env=env)
    except subprocess.TimeoutExpired:
        return None, f"did not finish in {timeout:g}s"
    except OSError as err:
        return None, f"could not be run: {err.strerror or err}"
    if proc.returncode != 0:
        return None, f"exit {proc.returncode}"
    return proc.stdout[:65536].decode("utf-8", "replace"), None


def _path(path: str) -> dict:
    """Whether `path` exists here, is a folder, can be read, can be written (where it is missing:
    the nearest folder above it that exists); a folder's config.json (a model's shape: its
    architecture and sizes), when it has one."""
    out = {"exists": os.path.exists(path), "dir": os.path.isdir(path), "readable": os.access(path, os.R_OK)}
    above = path
    while not os.path.exists(above) and os.path.dirname(above) != above:
        above = os.path.dirname(above)
    out["writable"] = os.access(above, os.W_OK)  # (the path, or the folder that would hold it: a save can make it)
    out["writable_at"] = above
    config = os.path.join(path, "config.json")
    if out["dir"] and os.path.isfile(config):
        out["config"] = _model_config(config)
    return out


def _model_config(path: str):
    """The config.json's document (the shape the memory and model rules read), or None when it
    cannot be read as a JSON object."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(CONFIG_MAX_BYTES + 1)
        if len(data) > CONFIG_MAX_BYTES:
            return None
        doc = json.loads(data)
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None
