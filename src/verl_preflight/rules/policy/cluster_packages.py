"""preflight: the packages the launch imports on the Ray cluster's nodes, missing or at other versions."""

from __future__ import annotations

from ...target.cluster import NO_FIXTURE, of_run
from ...target.launch_target import version_tuple
from .. import Rule


class ClusterPackages(Rule):
    id = "cluster-packages"
    severity = "error"
    stage = "policy"
    scope = "launch"
    summary = (
        "preflight: a package the launch's workers import (verl, torch, the rollout's engine, Megatron-Core for "
        "the megatron engine and its bridge, torch_npu on Ascend) missing on a node of the Ray cluster (an error), "
        "or at different versions on different nodes, or at another verl, Megatron-Core, Megatron-Bridge, mbridge or "
        "vLLM release than the one checked against (warnings)"
    )
    why = (
        "Ray starts verl's workers on every node of the job's pools, in that node's Python: a node without verl, "
        "torch or the rollout's engine fails at the worker's first import (ModuleNotFoundError), after the other "
        "nodes started (Megatron-Bridge missing on an NPU node: 'No module named megatron.bridge', verl #6931). "
        "Versions that differ between nodes fail later, at the first collective or weight sync, or silently "
        "train with other defaults; a verl other than the one the script was checked against has other keys and checks."
    )
    ground_truth = (
        "verl 0.9.1 single_controller/ray/base.py (RayWorkerGroup creates each worker as a Ray actor on its "
        "node: the worker class's module is imported there); trainer/main_ppo.py:92 (TaskRunner, a Ray actor "
        "placed on any node); workers/engine/megatron/transformer_impl.py:326-346 (the Megatron engine imports "
        "Megatron-Bridge through models/mcore/bridge.py:17, mbridge with vanilla_mbridge=True)"
    )
    bad = "a cluster whose second node has no vllm, with actor_rollout_ref.rollout.name=vllm"
    good = "every node with the same verl, torch and vllm"
    no_fixture = NO_FIXTURE

    def check_launch(self, view, ctx):
        cluster, nodes = of_run(ctx)
        if not nodes:
            return []
        said: dict = {}  # key -> [(an error, what is said)]: one finding a key (one mistake at one place)
        for package, key in _needed(view):
            versions = {node.label: (node.facts.get("versions") or {}).get(package) for node in nodes}
            missing = [label for label, version in versions.items() if version is None]
            distinct = sorted({v for v in versions.values() if v is not None})
            if missing:
                said.setdefault(key, []).append((True, f"{package} is not installed on {_nodes(missing)}"))
            elif len(distinct) > 1:
                each = ", ".join(f"{v} on {_nodes([n for n, x in versions.items() if x == v])}" for v in distinct)
                said.setdefault(key, []).append((False, f"{package} differs between the nodes: {each}"))
            elif package in STACK and _other_release(distinct[0], view, package):
                stack = view.target.stack
                text = (
                    f"the nodes run {package} {distinct[0]}, but this launch was checked against {package} "
                    f"{stack.version(package)} ({stack.origin(package)}): the keys and fields it checks are another "
                    f"release's (check again with --stack {package}={distinct[0]})"
                )
                said.setdefault(key, []).append((False, text))
            elif package == "verl" and view.source is not None and view.source.verl_version:
                checked = view.source.verl_version
                if distinct[0] != checked and not checked.startswith(distinct[0] + "."):
                    text = (
                        f"the nodes run verl {distinct[0]}, but this launch was checked against verl {checked}: its "
                        f"keys and start-up checks are another release's (check again with --verl {distinct[0]})"
                    )
                    said.setdefault(key, []).append((False, text))
        found = []
        for key, parts in said.items():
            error = any(e for e, _ in parts)
            outcome = (
                "the workers Ray starts there fail at their first import (ModuleNotFoundError)"
                if error
                else "the nodes' workers meet at the first collective or weight sync with different code"
            )
            why = f" ({key}={view.value(key)})" if key else ""
            message = f"{'; '.join(t for _, t in parts)} of the Ray cluster at {cluster.address}{why}: {outcome}"
            where = view.where(key) if key else view.spec.loc
            found.append(self.finding(where, message, key, at_most=None if error else "warning"))
        return found


def _needed(view) -> list[tuple[str, str | None]]:
    """(distribution, the key that makes the launch need it, or None: every launch) in the order
    a worker imports them."""
    out = [("verl", None), ("torch", None)]
    target = view.target
    npu = target.on_npu if target is not None else view.value("trainer.device") == "npu"
    if npu:
        out.append(("torch_npu", "trainer.device"))
    rollout = view.value("actor_rollout_ref.rollout.name")
    if rollout in ("vllm", "sglang"):
        out.append((rollout, "actor_rollout_ref.rollout.name"))
        if rollout == "vllm" and npu:
            out.append(("vllm-ascend", "trainer.device"))
    if view.training_engine == "megatron":
        key = "model_engine" if view.engine == "megatron" else "actor_rollout_ref.actor.strategy"
        out.append(("megatron-core", key))
        if view.engine == "megatron":  # the engine's bridge from the Hugging Face config
            vanilla = view.value("actor_rollout_ref.actor.megatron.vanilla_mbridge") is True
            out.append(("mbridge" if vanilla else "megatron-bridge", key))
        if npu:
            out.append(("mindspeed", key))  # (Megatron on Ascend runs through MindSpeed's patches)
    return out


STACK = ("megatron-core", "megatron-bridge", "mbridge", "vllm")  # the stack model's packages a version reads


def _other_release(version: str, view, package: str) -> bool:
    """Whether the cluster's `version` of `package` is another release than the stack the launch
    was checked against (both read as releases; a commit or branch is not compared)."""
    checked = view.target.stack.version(package) if view.target is not None else None
    ours, theirs = version_tuple(checked), version_tuple(version)
    return bool(ours and theirs) and ours != theirs


def _nodes(labels: list) -> str:
    return ("node " if len(labels) == 1 else "nodes ") + ", ".join(labels)
