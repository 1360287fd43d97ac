"""preflight: the packages the launch imports on the Ray cluster's nodes, missing or at other versions."""

from __future__ import annotations

from .. import Rule


class ClusterPackages(Rule):
    id = "cluster-packages"
    severity = "error"
    stage = "policy"
    scope = "launch"
    summary = (
        "preflight: a package the launch's workers import (verl, torch, the rollout's engine, Megatron-Core for the "
        "megatron engine, torch_npu on Ascend) missing on a node of the Ray cluster (an error), or at different "
        "versions on different nodes, or at another verl than the one checked against (warnings)"
    )
    why = (
        "Ray starts verl's workers on every node of the job's pools, in that node's Python: a node without verl, "
        "torch or the rollout's engine fails at the worker's first import (ModuleNotFoundError), after the other "
        "nodes started (mindspeed or Megatron-Bridge missing on one NPU node, verl #6931). Versions that differ "
        "between nodes fail later, at the first collective or weight sync, or silently train with other "
        "defaults; a verl other than the one the script was checked against has other keys and checks."
    )
    ground_truth = (
        "verl 0.9.1 single_controller/ray/base.py (RayWorkerGroup creates each worker as a Ray actor on its "
        "node: the worker class's module is imported there); trainer/main_ppo.py:92 (TaskRunner, a Ray actor "
        "placed on any node)"
    )
    bad = "a cluster whose second node has no vllm, with actor_rollout_ref.rollout.name=vllm"
    good = "every node with the same verl, torch and vllm"
    no_fixture = "needs a running Ray cluster: tests/test_cluster.py checks it against a local multi-node cluster"

    def check_launch(self, view, ctx):
        cluster = getattr(ctx, "cluster", None)
        nodes = cluster.known() if cluster is not None else []
        if not nodes:
            return []
        found = []
        for package, key in _needed(view):
            versions = {node.label: (node.facts.get("versions") or {}).get(package) for node in nodes}
            missing = [label for label, version in versions.items() if version is None]
            where = view.where(key) if key else view.spec.loc
            if missing:
                why = f" ({key}={view.value(key)})" if key else ""
                message = (
                    f"{package} is not installed on {_nodes(missing)} of the Ray cluster at {cluster.address}{why}: "
                    "the workers Ray starts there fail at their first import (ModuleNotFoundError)"
                )
                found.append(self.finding(where, message, key))
                continue
            distinct = sorted(set(versions.values()))
            if len(distinct) > 1:
                each = ", ".join(f"{v} on {_nodes([n for n, x in versions.items() if x == v])}" for v in distinct)
                message = (
                    f"{package} differs between the nodes of the Ray cluster at {cluster.address}: {each}; the "
                    "nodes' workers meet at the first collective or weight sync with different code"
                )
                found.append(self.finding(where, message, key, at_most="warning"))
            elif package == "verl" and view.source is not None and view.source.verl_version:
                checked = view.source.verl_version
                if distinct[0] != checked and not checked.startswith(distinct[0] + "."):
                    message = (
                        f"the Ray cluster at {cluster.address} runs verl {distinct[0]}, but this launch was checked "
                        f"against verl {checked}: its keys and start-up checks are another release's; check again "
                        f"with --verl {distinct[0]}"
                    )
                    found.append(self.finding(where, message, key, at_most="warning"))
        return found


def _needed(view) -> list[tuple[str, str | None]]:
    """(distribution, the key that makes the launch need it, or None: every launch) in the order
    a worker imports them."""
    out = [("verl", None), ("torch", None)]
    device = view.value("trainer.device")
    if device == "npu":
        out.append(("torch_npu", "trainer.device"))
    rollout = view.value("actor_rollout_ref.rollout.name")
    if rollout in ("vllm", "sglang"):
        out.append((rollout, "actor_rollout_ref.rollout.name"))
        if rollout == "vllm" and device == "npu":
            out.append(("vllm-ascend", "trainer.device"))
    if view.training_engine == "megatron":
        key = "model_engine" if view.engine == "megatron" else "actor_rollout_ref.actor.strategy"
        out.append(("megatron-core", key))
        if device == "npu":
            out.append(("mindspeed", key))  # (Megatron on Ascend runs through MindSpeed's patches)
    return out


def _nodes(labels: list) -> str:
    return ("node " if len(labels) == 1 else "nodes ") + ", ".join(labels)
