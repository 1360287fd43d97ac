"""The Ray cluster a launch will meet: `validate-scripts preflight --ray-address ADDRESS`.

verl runs on Ray, and every job starts with a Ray cluster that can be asked, before the job,
what each node has. `connect` joins the running cluster as a driver (the user's own Ray: a
driver must run the cluster's Ray version), reads each alive node's resources as Ray counts
them (what verl's resource pool asks for), and runs node_probe.node_facts once on each node:
a task pinned to it (node affinity, not soft), claiming no CPU and no accelerator, all nodes at
once within one timeout. A node whose task does not finish in time, dies, or fails is named
with why; nothing is assumed of it. The probe runs only the tool's own code (node_probe,
shipped by value); the script, verl, and the files the launch names are never run.

The paths a launch names (its model folder, data files) are asked of every node when a rule
first needs them (`path_facts`), in one more round of tasks.
"""

from __future__ import annotations

import os
import socket
import time
import warnings
from dataclasses import dataclass, field

from . import node_probe

PROBE_TIMEOUT = 30.0  # seconds for every node to answer one round of probes
CONNECT_TIMEOUT = 5.0  # seconds for the cluster's address to accept a connection


class ClusterError(Exception):
    """No cluster to ask (not running at the address, Ray not installed here): exit 2."""


@dataclass
class Node:
    node_id: str
    address: str  # the node's IP as Ray names it
    resources: dict  # Ray's total resources of the node (CPU, GPU or NPU, memory, custom)
    available: dict  # what is free now (what verl's _check_resource_available counts)
    facts: dict | None = None  # node_probe.node_facts; None when not known (`problem` says why)
    problem: str = ""
    paths: dict = field(default_factory=dict)  # path -> node_probe._path facts, as asked so far

    label: str = ""  # how messages name it: its IP, with its node ID's start where two share one (Cluster)

    def devices(self) -> tuple[str, float]:
        """(resource name, count available) as verl counts a node: GPU when Ray lists it, else NPU."""
        kind = "GPU" if "GPU" in self.available else "NPU"
        return kind, float(self.available.get(kind, 0))


@dataclass
class Cluster:
    address: str
    ray_version: str
    nodes: list  # the nodes alive when asked
    _ask: object = None  # paths -> {node_id: {path: facts} or why not}: a further round of probes
    _asked: set = field(default_factory=set)  # the paths asked already (a node that did not answer is not asked again)

    def known(self) -> list:
        return [n for n in self.nodes if n.facts is not None]

    def path_facts(self, paths) -> None:
        """Ask every node that answered about `paths` (those not asked yet), in one round."""
        wanted = sorted({p for p in paths if p and p not in self._asked})
        self._asked.update(wanted)
        if wanted and self._ask is not None:
            answers = self._ask(wanted)
            for node in self.known():
                got = answers.get(node.node_id)
                if isinstance(got, dict):
                    node.paths.update(got)

    def model_config(self, path: str):
        """(the config.json document of the model folder `path`, where it was read) from the
        first node that has one, asking the nodes when not asked yet; None when none has."""
        if not os.path.isabs(path):
            return None
        path = os.path.normpath(path)
        self.path_facts([path])
        for node in self.known():
            config = (node.paths.get(path) or {}).get("config")
            if isinstance(config, dict):
                return config, f"{path}/config.json on node {node.label}"
        return None

    def device_memory(self):
        """(GB of the smallest device a node of the cluster shows, which node and how) when
        `nvidia-smi` or `npu-smi` gave sizes there; None otherwise."""
        sizes = [
            (mib * 1024 * 1024 / 1e9, node.label, node.facts["accelerators"].get("how", ""))
            for node in self.known()
            for mib in (node.facts.get("accelerators") or {}).get("memory_mib") or []
            if isinstance(mib, int) and mib > 0
        ]
        if not sizes:
            return None
        gb, label, how = min(sizes)
        return round(gb, 1), f"{how} on node {label}, the smallest of the cluster's devices"

    def describe(self) -> str:
        """One line: `Ray cluster at ADDR (Ray 2.x): 3 nodes alive, 24 GPU; node X did not answer ...`."""
        totals: dict = {}
        for node in self.nodes:
            kind, count = node.devices()
            totals[kind] = totals.get(kind, 0) + count
        devices = ", ".join(f"{count:g} {kind}" for kind, count in sorted(totals.items()) if count) or "no GPU or NPU"
        plural = "" if len(self.nodes) == 1 else "s"
        line = (
            f"Ray cluster at {self.address} (Ray {self.ray_version}): {len(self.nodes)} node{plural} alive, {devices}"
        )
        missing = [f"{n.label}: {n.problem}" for n in self.nodes if n.facts is None]
        return line + ("; " + "; ".join(missing) if missing else "")

    def as_json(self) -> dict:
        return {
            "address": self.address,
            "ray": self.ray_version,
            "nodes": [
                {
                    "node_id": n.node_id,
                    "address": n.address,
                    "resources": n.resources,
                    "available": n.available,
                    "facts": n.facts,
                    "problem": n.problem or None,
                }
                for n in self.nodes
            ],
        }


NO_FIXTURE = "needs a running Ray cluster: tests/test_cluster.py checks it against a local multi-node cluster"


def of_run(ctx) -> tuple:
    """(the cluster of a preflight run, its nodes that answered); (None, []) for any other run."""
    cluster = getattr(ctx, "cluster", None)
    return cluster, (cluster.known() if cluster is not None else [])


def _reachable(address: str) -> None:
    """Fail at once when `HOST:PORT` accepts no connection (Ray would retry for a minute)."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "://" in address:
        return  # `auto`, `ray://...`: Ray's own resolution decides
    try:
        with socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout=CONNECT_TIMEOUT):
            pass
    except OSError as err:
        raise ClusterError(f"no Ray cluster answers at {address}: {err.strerror or err}") from err


def connect(address: str, timeout: float = PROBE_TIMEOUT) -> Cluster:
    """The cluster at `address`, each alive node probed (module doc). ClusterError when there is
    no cluster to ask."""
    _reachable(address)
    try:
        import ray
    except ImportError as err:
        raise ClusterError(
            "Ray is not installed for this Python: run preflight with the interpreter of the job's environment "
            "(pip install 'verl-preflight[cluster]' there, or ray itself)"
        ) from err
    ray.cloudpickle.register_pickle_by_value(node_probe)  # (the nodes need not have this tool)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (Ray's tips about its future defaults are not the user's)
            ray.init(
                address=address,
                namespace="verl-preflight",
                log_to_driver=False,
                logging_level="ERROR",
                configure_logging=False,
            )
    except Exception as err:  # ConnectionError, a version mismatch (RuntimeError), a bad address (ValueError)
        raise ClusterError(f"cannot join the Ray cluster at {address}: {_first_line(err)}") from err
    from ray._private import state

    available = state.available_resources_per_node()  # (what verl itself reads: base.py _check_resource_available)
    nodes = [
        Node(
            n["NodeID"],
            n.get("NodeManagerAddress", "?"),
            dict(n.get("Resources") or {}),
            dict(available.get(n["NodeID"], {})),
        )
        for n in ray.nodes()
        if n.get("Alive")
    ]
    nodes.sort(key=lambda n: (n.address, n.node_id))

    def ask(function, args) -> dict:
        return _round(ray, nodes, function, args, timeout)

    answers = ask(node_probe.node_facts, ([],))
    for node in nodes:
        got = answers[node.node_id]
        if isinstance(got, dict):
            node.facts = got
        else:
            node.problem = got
    shared = {n.address for n in nodes if sum(m.address == n.address for m in nodes) > 1}
    for node in nodes:
        node.label = f"{node.address}/{node.node_id[:8]}" if node.address in shared else node.address
    cluster = Cluster(address, ray.__version__, nodes)
    cluster._ask = lambda paths: ask(node_probe.paths_facts, (paths,))
    return cluster


def _round(ray, nodes: list, function, args: tuple, timeout: float) -> dict:
    """{node_id: what `function(*args)` returned there, or why it did not (a string)}."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    remote = ray.remote(num_cpus=0, max_retries=0)(function)
    refs = {}
    for node in nodes:
        if node.problem:
            continue
        strategy = NodeAffinitySchedulingStrategy(node.node_id, soft=False)
        refs[remote.options(scheduling_strategy=strategy).remote(*args)] = node.node_id
    out = {node.node_id: node.problem for node in nodes if node.problem}
    deadline = time.monotonic() + timeout
    pending = list(refs)
    while pending:
        ready, pending = ray.wait(pending, num_returns=1, timeout=max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        ref = ready[0]
        try:
            out[refs[ref]] = ray.get(ref, timeout=1)
        except Exception as err:  # the task failed, or its node or worker died
            out[refs[ref]] = _failed(ray, refs[ref], err)
    if pending:
        alive = {n["NodeID"] for n in ray.nodes() if n.get("Alive")}
        for ref in pending:
            node_id = refs[ref]
            out[node_id] = "died during the probe" if node_id not in alive else f"did not answer within {timeout:g}s"
            try:
                ray.cancel(ref, force=True)
            except Exception:  # (already gone with its node)
                pass
    return out


def _failed(ray, node_id: str, err: BaseException) -> str:
    """Why a node's probe gave no answer: its node or worker died, or the probe raised."""
    kind = type(err).__name__
    if any(word in kind for word in ("NodeDied", "WorkerCrashed", "ActorDied", "ObjectLost", "OwnerDied")):
        return f"died during the probe ({kind})"
    if node_id not in {n["NodeID"] for n in ray.nodes() if n.get("Alive")}:
        return f"died during the probe ({kind})"
    return f"its probe failed: {_first_line(err)}"


def disconnect() -> None:
    try:
        import ray

        if ray.is_initialized():
            ray.shutdown()
    except Exception:  # (nothing to release)
        pass


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return (text[0] if text else type(err).__name__)[:300]


def address_of(given: str | None) -> str | None:
    """`--ray-address`, else RAY_ADDRESS."""
    return given or os.environ.get("RAY_ADDRESS") or None
