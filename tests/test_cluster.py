"""`validate-scripts preflight --ray-address`: against a real Ray cluster started here.

Each node is a real `ray start` process (the head with `--head`, the others joining it), as a
user starts a cluster; per node differ what the issue's reports say differs between the nodes
of a job: the devices Ray counts (`--num-gpus`, as Ray reads CUDA_VISIBLE_DEVICES), the
packages installed (a folder of distribution metadata first on that node's PYTHONPATH: the
probe reads versions from metadata, and no package is run), the files it sees (a node started
in a mount namespace of its own, with a tmpfs over the model folder), and a hung `nvidia-smi`
on its PATH. Nothing of Ray is mocked; no GPU is needed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest
from conftest import ROOT

pytestmark = pytest.mark.slow

VENV_BIN = os.path.dirname(sys.executable)
RAY = os.path.join(VENV_BIN, "ray")
TOOL = [sys.executable, os.path.join(ROOT, "tools", "validate_scripts.py")]

if not os.path.exists(RAY):
    pytest.skip("Ray is not installed for this Python (make setup installs the cluster extra)", allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _metadata(folder: str, packages: dict) -> str:
    """A folder of distribution metadata: `packages` {name: version} installed as far as
    importlib.metadata can tell (what the probe reads), no module of theirs."""
    os.makedirs(folder, exist_ok=True)
    for name, version in packages.items():
        info = os.path.join(folder, f"{name.replace('-', '_')}-{version}.dist-info")
        os.makedirs(info, exist_ok=True)
        with open(os.path.join(info, "METADATA"), "w") as fh:
            fh.write(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    return folder


class LocalCluster:
    """A head node and nodes joining it, each a `ray start --block` in a session of its own."""

    def __init__(self, base: str):
        self.base = base
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.nodes: list[subprocess.Popen] = []

    def start(self, gpus: int, env: dict | None = None, hide: str | None = None, head: bool = False, then: str = ""):
        args = [RAY, "start", "--block", "--num-cpus=1", f"--num-gpus={gpus}", "--disable-usage-stats"]
        if head:
            args += ["--head", f"--port={self.port}", "--include-dashboard=false", f"--temp-dir={self.base}/r"]
        else:
            args += [f"--address={self.address}"]
        if hide:  # this node sees an empty folder at `hide` (then `then` fills it): a mount namespace of its own
            args = [
                "unshare",
                "-m",
                "sh",
                "-c",
                f'mount -t tmpfs tmpfs "{hide}" && {then or ":"} && exec "$@"',
                "sh",
                *args,
            ]
        log = open(os.path.join(self.base, f"node{len(self.nodes)}.log"), "w")
        proc = subprocess.Popen(args, env={**os.environ, **(env or {})}, stdout=log, stderr=log, start_new_session=True)
        self.nodes.append(proc)
        self.wait_for(len(self.nodes))
        return proc

    def alive(self) -> int:
        code = (
            "import ray, warnings; warnings.simplefilter('ignore');"
            f"ray.init(address='{self.address}', log_to_driver=False, logging_level='ERROR');"
            "print(sum(1 for n in ray.nodes() if n['Alive']))"
        )
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        return int(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 and proc.stdout.strip() else 0

    def wait_for(self, count: int, deadline: float = 60.0) -> None:
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            if any(p.poll() is not None for p in self.nodes):
                logs = open(os.path.join(self.base, f"node{len(self.nodes) - 1}.log")).read()[-2000:]
                raise RuntimeError(f"a node of the test cluster exited: {logs}")
            if self.alive() >= count:
                return
            time.sleep(0.5)
        raise RuntimeError(f"the test cluster has not {count} nodes alive after {deadline:g}s")

    def kill(self, proc) -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)

    def stop(self) -> None:
        for proc in reversed(self.nodes):
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
        for proc in self.nodes:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill(proc)


def _mount_namespaces() -> bool:
    proc = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs tmpfs /mnt"], capture_output=True)
    return proc.returncode == 0


QWEN3_8B = {  # Qwen3-8B's config.json, the numbers the shape and memory checks read
    "architectures": ["Qwen3ForCausalLM"],
    "model_type": "qwen3",
    "hidden_size": 4096,
    "num_hidden_layers": 36,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "intermediate_size": 12288,
    "vocab_size": 151936,
    "max_position_embeddings": 40960,
    "tie_word_embeddings": False,
}


# node B's torch: what torch.cuda answers on a machine of eight 24 GB GPUs (this one has none)
TORCH_OF_B = """\
class _Properties:
    total_memory = 24 * 1024 ** 3


class cuda:
    is_available = staticmethod(lambda: True)
    device_count = staticmethod(lambda: 8)
    get_device_properties = staticmethod(lambda i: _Properties())
"""


@pytest.fixture(scope="module")
def cluster():
    """Three nodes: A (the head, 8 GPUs of 16 GB as its nvidia-smi says), B (8 GPUs of 24 GB as its
    torch's device API says, no nvidia-smi; verl 0.8.0 first on its path, neither Megatron-Bridge
    nor MindSpeed), C (4 GPUs as CUDA_VISIBLE_DEVICES=
    0,1,2,3 shows them, no vLLM, its own view of the files: the `local` folder is empty there, a
    model folder only it has in `c-only`, and `read-only-on-c` read-only). Every node has torch and torch_npu."""
    if shutil.which("unshare") is None or not _mount_namespaces():
        pytest.skip("unshare -m with a tmpfs mount is not allowed here (a node with files of its own needs it)")
    base = tempfile.mkdtemp(prefix="vp", dir="/tmp")  # (short: Ray's socket paths must fit 107 bytes)
    models = os.path.join(base, "local")
    for folder in (os.path.join(models, "Qwen3-8B"), os.path.join(base, "shared", "Qwen3-8B")):
        os.makedirs(folder)
        with open(os.path.join(folder, "config.json"), "w") as fh:
            json.dump(QWEN3_8B, fh)
    with open(os.path.join(base, "shared", "train.parquet"), "wb") as fh:
        fh.write(b"PAR1")
    common = {"torch": "2.8.0", "torch_npu": "2.8.0"}
    site = lambda name, extra: _metadata(os.path.join(base, name), {**common, **extra})  # noqa: E731
    smi = os.path.join(base, "smi")  # node A's nvidia-smi: eight 16 GB devices (what the query prints, in MiB)
    os.makedirs(smi)
    with open(os.path.join(smi, "nvidia-smi"), "w") as fh:
        fh.write("#!/bin/sh\nfor i in 1 2 3 4 5 6 7 8; do echo 16376; done\n")
    os.chmod(os.path.join(smi, "nvidia-smi"), 0o755)
    # node C's own files: the `local` folder empty, a model only it has in `c-only`
    os.makedirs(os.path.join(base, "c-only"))
    only_c = os.path.join(base, "c-only", "Qwen3-8B")
    config = json.dumps(QWEN3_8B)
    os.makedirs(os.path.join(base, "read-only-on-c"))  # node C mounts it read-only (a full or read-only share)
    fill = (
        f"mount -t tmpfs tmpfs {base}/c-only && mkdir {only_c} && printf %s '{config}' > {only_c}/config.json"
        f" && mount -t tmpfs -o ro tmpfs {base}/read-only-on-c"
    )
    local = LocalCluster(base)
    try:
        bridge = {"megatron-bridge": "0.2.0", "mindspeed": "0.12.1"}
        path = smi + os.pathsep + os.environ["PATH"]
        local.start(8, {"PYTHONPATH": site("a", {"vllm": "0.11.0", **bridge}), "PATH": path}, head=True)
        b_site = site("b", {"vllm": "0.11.0", "verl": "0.8.0"})
        os.makedirs(os.path.join(b_site, "torch"))
        with open(os.path.join(b_site, "torch", "__init__.py"), "w") as fh:
            fh.write(TORCH_OF_B)
        local.start(8, {"PYTHONPATH": b_site})
        local.start(4, {"PYTHONPATH": site("c", bridge), "CUDA_VISIBLE_DEVICES": "0,1,2,3"}, hide=models, then=fill)
        yield local
    finally:
        local.stop()
        shutil.rmtree(base, ignore_errors=True)


LAUNCH = """\
python3 -m verl.trainer.main_ppo \\
    data.train_files={data} \\
    actor_rollout_ref.model.path={model} \\
    actor_rollout_ref.rollout.name={rollout} \\
    trainer.nnodes={nnodes} \\
    trainer.n_gpus_per_node={per_node} {extra}
"""


def _preflight(tmp_path, address: str, *options, env=None, **launch):
    """(exit status, JSON report, standard error) of `preflight` on one launch."""
    values = {
        "rollout": "hf",
        "nnodes": 2,
        "per_node": 8,
        "extra": "",
        "model": "Qwen/Qwen3-8B",
        "data": "data/train.parquet",
    }
    values.update(launch)
    (tmp_path / ".git").mkdir(exist_ok=True)
    script = tmp_path / "run.sh"
    script.write_text("#!/usr/bin/env bash\n" + LAUNCH.format(**values))
    proc = subprocess.run(
        [*TOOL, "preflight", "--ray-address", address, "--format", "json", *options, str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, **(env or {})},
    )
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def _of(report, rule: str, severity: str | None = None) -> list:
    return [f for f in report["findings"] if f["rule"] == rule and severity in (None, f["severity"])]


def _paths(cluster) -> dict:
    return {
        "model": os.path.join(cluster.base, "shared", "Qwen3-8B"),
        "data": os.path.join(cluster.base, "shared", "train.parquet"),
    }


def test_a_launch_the_cluster_can_hold_has_no_cluster_error(cluster, tmp_path):
    """Two pools of 8 on a cluster of 8 + 8 + 4 free GPUs, the model and data on every node,
    the HF rollout: no cluster error; the cluster is in the report's header (nodes, devices,
    the Ray version) and said on standard error."""
    status, report, err = _preflight(tmp_path, cluster.address, **_paths(cluster))
    errors = [f for f in report["findings"] if f["rule"].startswith("cluster-") and f["severity"] == "error"]
    assert errors == []
    nodes = report["cluster"]["nodes"]
    assert len(nodes) == 3 and all(n["facts"] for n in nodes)
    assert sorted(n["available"].get("GPU") for n in nodes) == [4, 8, 8]
    assert report["cluster"]["ray"] and f"Ray cluster at {cluster.address}" in err and "3 nodes alive, 20 GPU" in err


def test_more_devices_than_the_alive_nodes_give(cluster, tmp_path):
    """verl #2515 ('Total available GPUs 8.0 is less than total desired GPUs 16': a node that never
    joined) and devices a node does not show (node C shows 4
    of its 8: CUDA_VISIBLE_DEVICES=0,1,2,3): 3 x 8 asks 24 of 20; verl raises ValueError when it
    creates the pool. The finding is at trainer.nnodes and names each node's count."""
    status, report, _ = _preflight(tmp_path, cluster.address, nnodes=3, **_paths(cluster))
    (finding,) = _of(report, "cluster-devices")
    assert status == 1 and finding["severity"] == "error" and finding["line"] == 6
    assert "asks 24 devices" in finding["message"] and "20 GPU free" in finding["message"]
    assert "4 GPU (CUDA_VISIBLE_DEVICES=0,1,2,3)" in finding["message"] and "ValueError" in finding["message"]


def test_enough_devices_but_too_few_nodes_that_hold_a_pool(cluster, tmp_path):
    """verl #2596 (nodes of 4 and 2 GPUs, n_gpus_per_node=3: 'pending placement groups'): 3 x 6
    = 18 of 20 free, but node C holds 4: verl's STRICT_PACK placement groups, one a node, wait
    for a third node of 6 that never comes (the job hangs at start)."""
    _, report, _ = _preflight(tmp_path, cluster.address, nnodes=3, per_node=6, **_paths(cluster))
    (finding,) = _of(report, "cluster-devices")
    assert "2 of the nodes" in finding["message"] and "hangs" in finding["message"]


def test_a_launch_on_ascend_against_a_cluster_of_gpus(cluster, tmp_path):
    """The head node says Ascend (DEVICE=npu, as its torch_npu probe would), the cluster's nodes
    list GPUs only: verl's placement groups ask for NPU resources and wait; on GPUs, no finding."""
    _, report, _ = _preflight(tmp_path, cluster.address, env={"DEVICE": "npu"}, **_paths(cluster))
    (finding,) = _of(report, "cluster-devices")
    assert "ask Ray for NPU resources" in finding["message"] and "lists GPU only" in finding["message"]
    _, report, _ = _preflight(tmp_path, cluster.address, env={"DEVICE": "gpu"}, **_paths(cluster))
    assert _of(report, "cluster-devices") == []


def test_a_rollout_engine_missing_on_one_node(cluster, tmp_path):
    """The vLLM rollout on a cluster whose node C has no vllm: an error at the rollout's override
    naming node C alone; with the HF rollout nothing is needed of vllm."""
    _, report, _ = _preflight(tmp_path, cluster.address, rollout="vllm", **_paths(cluster))
    missing = [f for f in _of(report, "cluster-packages", "error") if f["message"].startswith("vllm is not")]
    assert len(missing) == 1 and missing[0]["line"] == 5, report["findings"]
    node_c = [n for n in report["cluster"]["nodes"] if n["available"].get("GPU") == 4][0]["address"]
    assert f"on node {node_c}" in missing[0]["message"] or "nodes" not in missing[0]["message"]
    _, report, _ = _preflight(tmp_path, cluster.address, **_paths(cluster))
    assert not [f for f in _of(report, "cluster-packages", "error") if "vllm" in f["message"]]


def test_megatron_bridge_missing_on_an_ascend_node(cluster, tmp_path):
    """verl #6931 ('No module named megatron.bridge' on NPU): the Megatron engine on Ascend
    (trainer.device=npu) on a cluster whose node B has neither Megatron-Bridge nor MindSpeed: an
    error naming node B alone for both, at the selection of the engine; the FSDP engine needs
    neither."""
    npu = {"DEVICE": "npu"}  # (the head node's own probe would say so on Ascend)
    _, report, _ = _preflight(
        tmp_path, cluster.address, extra="trainer.device=npu model_engine=megatron", env=npu, **_paths(cluster)
    )
    missing = [f for f in _of(report, "cluster-packages", "error") if "megatron-bridge" in f["message"]]
    assert len(missing) == 1, [(f["line"], f["message"]) for f in report["findings"]]
    missing = missing[0]
    assert (missing["line"], missing["column"]) == (7, 50), missing  # at the `model_engine=megatron` word
    assert missing["message"].startswith("megatron-bridge is not installed on node "), missing
    assert "; mindspeed is not installed on node " in missing["message"]
    _, report, _ = _preflight(tmp_path, cluster.address, extra="trainer.device=npu", env=npu, **_paths(cluster))
    assert _of(report, "cluster-packages", "error") == []


def test_versions_that_differ_between_nodes_are_named(cluster, tmp_path):
    """Node B runs verl 0.8.0, the others the installed 0.9.1: a warning naming each version
    and its nodes."""
    _, report, _ = _preflight(tmp_path, cluster.address, **_paths(cluster))
    (skew,) = [f for f in _of(report, "cluster-packages") if "verl differs" in f["message"]]
    assert (
        skew["severity"] == "warning" and "0.8.0 on node " in skew["message"] and "0.9.1 on nodes " in skew["message"]
    )


def test_a_stack_release_other_than_the_one_checked_is_named(cluster, tmp_path):
    """Checked against megatron-core 0.13.1 (--stack), the nodes run the installed 0.16.1: a warning
    at model_engine's launch saying which to check against; checked against 0.16.1, none."""
    extra = "model_engine=megatron"
    _, report, _ = _preflight(
        tmp_path, cluster.address, "--stack", "megatron-core=0.13.1", extra=extra, **_paths(cluster)
    )
    said = [f for f in _of(report, "cluster-packages") if "megatron-core" in f["message"]]
    assert len(said) == 1 and "check again with --stack megatron-core=0.16.1" in said[0]["message"], said
    _, report, _ = _preflight(tmp_path, cluster.address, extra=extra, **_paths(cluster))
    assert not [f for f in _of(report, "cluster-packages") if "megatron-core" in f["message"]]


def test_a_model_folder_on_some_nodes_only(cluster, tmp_path):
    """The model folder node C does not see (its own files: the head's folder is not there) is an
    error at the model's override naming node C; a data file on no node is an error too; both on
    shared storage, no finding."""
    model = os.path.join(cluster.base, "local", "Qwen3-8B")
    data = os.path.join(cluster.base, "shared", "missing.parquet")
    _, report, _ = _preflight(tmp_path, cluster.address, model=model, data=data)
    by_key = {f["message"].split("=", 1)[0]: f for f in _of(report, "cluster-paths")}
    assert set(by_key) == {"actor_rollout_ref.model.path", "data.train_files"}, report["findings"]
    assert "on node " in by_key["actor_rollout_ref.model.path"]["message"]
    assert by_key["actor_rollout_ref.model.path"]["line"] == 4 and by_key["data.train_files"]["severity"] == "error"
    assert "on nodes " in by_key["data.train_files"]["message"]
    _, report, _ = _preflight(tmp_path, cluster.address, **_paths(cluster))
    assert _of(report, "cluster-paths") == []


def test_checkpoints_on_some_nodes_only(cluster, tmp_path):
    """Checkpoints kept on the nodes' own disks: the one resume_from_path names is missing on node
    C, whose actor workers fail to load it (an error); under resume_mode=auto the tracker file is
    on nodes A and B only, so the run resumes or starts from scratch by where Ray places the
    TaskRunner (a warning); a default_local_dir node C cannot write fails the first save of
    save_freq (an error). On shared storage, none."""
    ckpt = os.path.join(cluster.base, "local", "ckpt")
    os.makedirs(os.path.join(ckpt, "global_step_10", "actor"), exist_ok=True)
    with open(os.path.join(ckpt, "latest_checkpointed_iteration.txt"), "w") as fh:
        fh.write("10")
    resume = f"trainer.resume_mode=resume_path trainer.resume_from_path={ckpt}/global_step_10"
    _, report, _ = _preflight(tmp_path, cluster.address, extra=resume, **_paths(cluster))
    (finding,) = [f for f in _of(report, "cluster-paths") if f["key"] == "trainer.resume_from_path"]
    assert finding["severity"] == "error" and f"{ckpt}/global_step_10/actor is not readable on node " in finding["message"]
    _, report, _ = _preflight(tmp_path, cluster.address, extra=f"trainer.default_local_dir={ckpt}", **_paths(cluster))
    (finding,) = [f for f in _of(report, "cluster-paths") if f["key"] == "trainer.default_local_dir"]
    assert finding["severity"] == "warning" and "latest_checkpointed_iteration.txt is there on nodes " in finding["message"]
    assert "starts from scratch elsewhere" in finding["message"]
    shut = os.path.join(cluster.base, "read-only-on-c", "ckpt")
    _, report, _ = _preflight(
        tmp_path, cluster.address, extra=f"trainer.default_local_dir={shut} trainer.save_freq=10", **_paths(cluster)
    )
    (finding,) = [f for f in _of(report, "cluster-paths") if f["key"] == "trainer.default_local_dir"]
    assert finding["severity"] == "error" and f"{shut} is not writable on node " in finding["message"], finding
    shared = os.path.join(cluster.base, "shared", "ckpt")
    _, report, _ = _preflight(
        tmp_path, cluster.address, extra=f"trainer.default_local_dir={shared} trainer.save_freq=10", **_paths(cluster)
    )
    assert _of(report, "cluster-paths") == [], report["findings"]


def _host_memory() -> int:
    with open("/proc/meminfo") as fh:
        return next(int(line.split()[1]) * 1024 for line in fh if line.startswith("MemTotal:"))


def test_more_offloaded_state_than_a_node_can_hold(cluster, tmp_path):
    """verl #3453 and #2950 (Ray kills the workers: 'the node running low on memory'): Qwen3-8B on
    the Megatron engine with its weights and optimizer offloaded, TP 1 over 2 x 8 devices: each
    device puts 16.4 GB of bf16 weights and 6.1 GB of Adam state on the host, 180 GB a node, more
    than any node's memory here; the finding is at the offload switch. Offloading 1% of the
    optimizer only (Megatron's CPU optimizer) fits."""
    if _host_memory() * 0.95 >= 180e9:
        pytest.skip("this machine's memory holds 180 GB: no node of the local cluster is short of it")
    megatron = "model_engine=megatron actor_rollout_ref.actor.megatron.tensor_model_parallel_size=1 "
    offload = "actor_rollout_ref.actor.megatron.param_offload=True actor_rollout_ref.actor.megatron.optimizer_offload=True"
    _, report, _ = _preflight(tmp_path, cluster.address, extra=megatron + offload, **_paths(cluster))
    (finding,) = _of(report, "cluster-host-memory")
    assert finding["severity"] == "error" and finding["line"] == 7, finding
    assert "each of a node's 8 devices puts 22.5 GB on the host" in finding["message"], finding["message"]
    assert "actor weights 16.4 (megatron.param_offload=True)" in finding["message"]
    assert "which 0 of the cluster's nodes can hold, where trainer.nnodes=2 are needed" in finding["message"]
    assert "OutOfMemoryError" in finding["message"] and "memory_usage_threshold 0.95" in finding["message"]
    share = (
        "+actor_rollout_ref.actor.optim.override_optimizer_config.optimizer_cpu_offload=True "
        "+actor_rollout_ref.actor.optim.override_optimizer_config.optimizer_offload_fraction=0.01"
    )
    _, report, _ = _preflight(tmp_path, cluster.address, extra=megatron + share, **_paths(cluster))
    assert _of(report, "cluster-host-memory") == [], report["findings"]


def test_every_format_carries_the_cluster(cluster, tmp_path):
    """SARIF keeps the cluster in the run's properties, text says it on standard error."""
    (tmp_path / ".git").mkdir()
    script = tmp_path / "run.sh"
    script.write_text("python3 -m verl.trainer.main_ppo trainer.nnodes=3 trainer.n_gpus_per_node=8\n")
    sarif = subprocess.run(
        [*TOOL, "preflight", "--ray-address", cluster.address, "--format", "sarif", str(script)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    run = json.loads(sarif.stdout)["runs"][0]
    assert len(run["properties"]["cluster"]["nodes"]) == 3
    assert any(r["ruleId"] == "cluster-devices" for r in run["results"])
    text = subprocess.run(
        [*TOOL, "preflight", "--ray-address", cluster.address, str(script)], capture_output=True, text=True, timeout=300
    )
    assert text.returncode == 1 and "[cluster-devices]" in text.stdout and "3 nodes alive" in text.stderr


def test_the_shape_is_read_from_the_config_json_a_node_has(cluster, tmp_path):
    """A model folder only node C has (not on this head node): its config.json, as that node
    reads it, gives the shape the model-shape rule checks (32 heads against a rollout TP of 3),
    and the finding says where it was read."""
    model = os.path.join(cluster.base, "c-only", "Qwen3-8B")
    _, report, _ = _preflight(
        tmp_path, cluster.address, model=model, extra="actor_rollout_ref.rollout.tensor_model_parallel_size=3"
    )
    (shape,) = _of(report, "model-shape")
    assert "32 attention heads are not divisible by the rollout's TP 3" in shape["message"]
    assert "(config.json on node " in shape["message"], shape["message"]


def test_the_memory_estimate_reads_the_devices_the_nodes_show(cluster, tmp_path):
    """Node A's nvidia-smi shows 16 GB devices, the smallest of the cluster: the memory estimate
    is against 17.2 GB (16,376 MiB), said with where the figure comes from, not the 80 GB default.
    Node B has no nvidia-smi: its torch's device API gives its eight 24 GB devices."""
    _, report, _ = _preflight(tmp_path, cluster.address, **_paths(cluster))
    (memory,) = _of(report, "memory-estimate")
    assert "17.2 GB (nvidia-smi --query-gpu on node " in memory["message"], memory["message"]
    shown = [n["facts"]["accelerators"] for n in report["cluster"]["nodes"]]
    shown = [(a.get("how"), a.get("memory_mib")) for a in shown]
    assert ("torch.cuda.get_device_properties", [24576] * 8) in shown, shown


HUNG_SMI = """#!/bin/sh
touch "{marker}"
exec sleep 600
"""


@pytest.fixture()
def hung_cluster(tmp_path_factory):
    """A head node and a node whose `nvidia-smi` hangs (a driver that does not answer)."""
    base = tempfile.mkdtemp(prefix="vq", dir="/tmp")
    tools = os.path.join(base, "bin")
    os.makedirs(tools)
    marker = os.path.join(base, "probed")
    with open(os.path.join(tools, "nvidia-smi"), "w") as fh:
        fh.write(HUNG_SMI.format(marker=marker))
    os.chmod(os.path.join(tools, "nvidia-smi"), 0o755)
    local = LocalCluster(base)
    try:
        local.start(8, head=True)
        hung = local.start(8, {"PATH": tools + os.pathsep + os.environ["PATH"]})
        local.marker, local.hung = marker, hung
        yield local
    finally:
        local.stop()
        shutil.rmtree(base, ignore_errors=True)


def test_a_node_that_does_not_answer_in_time_is_named(hung_cluster, tmp_path):
    """The node whose probe hangs is named with the timeout; the other node's facts are read,
    and the devices Ray lists for both still count (they are Ray's, not the probe's)."""
    start = time.monotonic()
    status, report, err = _preflight(tmp_path, hung_cluster.address, "--probe-timeout", "4", nnodes=2)
    assert time.monotonic() - start < 60
    problems = [n["problem"] for n in report["cluster"]["nodes"] if n["problem"]]
    assert problems == ["did not answer within 4s"], report["cluster"]
    assert "did not answer within 4s" in err
    assert _of(report, "cluster-devices") == []


def test_a_node_that_dies_during_the_probe_is_named(hung_cluster, tmp_path):
    """The node dies (its processes killed) while its probe runs: it is named as died, not
    waited for to the timeout's end."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "run.sh").write_text("python3 -m verl.trainer.main_ppo trainer.nnodes=1\n")
    args = [*TOOL, "preflight", "--ray-address", hung_cluster.address, "--probe-timeout", "90", "--format", "json"]
    proc = subprocess.Popen([*args, "run.sh"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    end = time.monotonic() + 60
    while not os.path.exists(hung_cluster.marker) and time.monotonic() < end:
        time.sleep(0.2)
    assert os.path.exists(hung_cluster.marker), "the node's probe never started"
    killed = time.monotonic()
    hung_cluster.kill(hung_cluster.hung)
    out, err = proc.communicate(timeout=120)
    assert time.monotonic() - killed < 80, "waited for the timeout instead"
    report = json.loads(out)
    problems = [n["problem"] for n in report["cluster"]["nodes"] if n["problem"]]
    assert len(problems) == 1 and problems[0].startswith("died during the probe"), (problems, err)
