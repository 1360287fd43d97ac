"""preflight: what verl's Megatron offload puts on a node's host memory, against the nodes of the Ray cluster."""

from __future__ import annotations

from ...target import layout as lay
from ...target.cluster import NO_FIXTURE
from .. import Rule

ARF = "actor_rollout_ref"
RAY_THRESHOLD = 0.95  # Ray's memory_usage_threshold (ray_config_def.h), RAY_memory_usage_threshold overrides it
# where the finding goes: the offload switch the launch sets, the first found
KEYS = (
    f"{ARF}.actor.megatron.optimizer_offload",
    f"{ARF}.actor.megatron.param_offload",
    f"{ARF}.ref.megatron.param_offload",
    f"{ARF}.actor.optim.override_optimizer_config.optimizer_offload_fraction",
    "trainer.n_gpus_per_node",
)


class ClusterHostMemory(Rule):
    id = "cluster-host-memory"
    severity = "error"
    stage = "policy"
    scope = "launch"
    summary = (
        "preflight: the trainer state verl's Megatron offload puts on the host (param_offload, optimizer_offload, "
        "the CPU optimizer's share, the ref's param_offload), times trainer.n_gpus_per_node, more than Ray lets a "
        "node of the cluster use (an error), or more than it has free now (a warning)"
    )
    why = (
        "With megatron.param_offload verl copies each device's bf16 weights into a pinned host buffer between "
        "steps (the gradients are freed, not copied); with optimizer_offload it moves the fp32 master weights and "
        "Adam's m and v, 12 bytes a parameter after the distributed optimizer's sharding, to the host; Megatron's "
        "CPU optimizer keeps optimizer_offload_fraction of them there all along; the ref's param_offload moves the "
        "ref's weights. Each of a node's n_gpus_per_node devices does so (Megatron orders ranks TP, CP, DP before "
        "PP, so a node's devices hold the same pipeline stage: the worst stage is counted). Ray's memory monitor "
        "kills the most recently started worker once a node uses more than memory_usage_threshold (0.95) of its "
        "memory: the job dies with ray.exceptions.OutOfMemoryError ('Task was killed due to the node running low "
        "on memory', verl #3453, #2950). The count is a floor: the rollout engine, the data loader and the "
        "TaskRunner use host memory too. Checked only by `validate-scripts preflight`, against each node's "
        "/proc/meminfo (or its cgroup's limit) as the probe reads it."
    )
    ground_truth = (
        "verl 0.9.1 utils/megatron_utils.py:713-800 (offload_megatron_model_to_cpu: param_data copied into a "
        "pinned cpu_data buffer, grad_data resized to 0; the ref's parameters .to('cpu')), :890-965 "
        "(offload_megatron_optimizer: master params, exp_avg, exp_avg_sq .to('cpu')); megatron-core 0.16.1 "
        "optimizer/optimizer_config.py:304-307 (optimizer_cpu_offload, optimizer_offload_fraction); Ray 2.52 "
        "src/ray/common/ray_config_def.h (memory_usage_threshold 0.95, memory_monitor_refresh_ms 0 disables it)"
    )
    bad = (
        "Qwen3-8B on nodes of 24 GB: actor.megatron.param_offload=True actor.megatron.optimizer_offload=True, "
        "TP 2, 8 GPUs a node: 8 x (8.2 GB + 49 GB / 4 DP shards)"
    )
    good = "the optimizer offloaded only, over more data-parallel shards, on nodes whose memory holds it"
    no_fixture = NO_FIXTURE

    def check_launch(self, view, ctx):
        cluster = getattr(ctx, "cluster", None)
        layout = lay.known_layout(view, ctx) if cluster is not None else None
        report = lay.estimate(layout) if layout is not None and layout.per_node else None
        if report is None or not report.host:
            return []
        each = sum(term.gb for term in report.host)
        need = each * layout.per_node
        nnodes = layout.nnodes or 1
        sizes = [(node, *_limit(node)) for node in cluster.known() if (node.facts.get("memory") or {}).get("total")]
        unknown = len(cluster.nodes) - len(sizes)  # (a node that did not answer: it may hold it)
        if not sizes:
            return []
        terms = " + ".join(term.text() for term in report.host)
        key = next((k for k in KEYS if view.setting(k) is not None), "trainer.n_gpus_per_node")
        held = f"each of a node's {layout.per_node} devices puts {each:.1f} GB on the host ({terms}): {need:.1f} GB"
        fits = [node for node, limit, _, _ in sizes if limit >= need * 1e9]
        if len(fits) + unknown < nnodes:
            named = "; ".join(
                f"{node.label}: {total / 1e9:.1f} GB {how}, Ray kills workers above {limit / 1e9:.1f} GB "
                f"(memory_usage_threshold {threshold:g})"
                for node, limit, total, (how, threshold) in sizes
            )
            message = (
                f"{held}, which {len(fits)} of the cluster's nodes can hold, where trainer.nnodes={nnodes} are needed "
                f"({named}): "
                "Ray kills a worker at the first offload, and the job dies with ray.exceptions.OutOfMemoryError; "
                "offload less (only the optimizer, or optimizer_offload_fraction below 1), shard more (a larger "
                "TP, PP or data-parallel world), or run on nodes with more memory"
            )
            return [self.finding(view.where(key), message, key)]
        free = [node for node in fits if (node.facts.get("memory") or {}).get("available", 0) >= need * 1e9]
        if len(free) + unknown >= nnodes:
            return []
        now = "; ".join(f"{node.label}: {(node.facts['memory'].get('available') or 0) / 1e9:.1f} GB free"
                        for node, _, _, _ in sizes)
        message = (
            f"{held}, which {len(free)} of the cluster's nodes have free now, where trainer.nnodes={nnodes} are needed "
            f"({now}): "
            "other processes hold the rest, and Ray kills a worker once the node passes its threshold"
        )
        return [self.finding(view.where(key), message, key, at_most="warning")]


def _limit(node) -> tuple:
    """(bytes Ray lets the node use, its memory in bytes, (how it was read, the threshold))."""
    memory = node.facts.get("memory") or {}
    total = memory.get("limit") or memory["total"]
    how = "(its cgroup's limit)" if memory.get("limit") else "of memory"
    env = node.facts.get("env") or {}
    threshold = RAY_THRESHOLD
    try:
        threshold = min(max(float(env.get("RAY_memory_usage_threshold", RAY_THRESHOLD)), 0.0), 1.0)
    except ValueError:
        pass
    if env.get("RAY_memory_monitor_refresh_ms") == "0":
        threshold = 1.0  # Ray's monitor off: the kernel's OOM killer, at the whole memory
    return total * threshold, total, (how, threshold)
