"""preflight: the devices the launch asks of the Ray cluster, against what its alive nodes give."""

from __future__ import annotations

from ...target.cluster import NO_FIXTURE
from .. import Rule


class ClusterDevices(Rule):
    id = "cluster-devices"
    severity = "error"
    stage = "policy"
    scope = "launch"
    summary = (
        "preflight: trainer.nnodes x trainer.n_gpus_per_node more devices than the Ray cluster's alive nodes have "
        "free, fewer nodes that hold trainer.n_gpus_per_node each than trainer.nnodes, or devices of the other "
        "kind (GPU for a launch on Ascend, NPU for one on GPUs)"
    )
    why = (
        "verl asks Ray for one pool of trainer.n_gpus_per_node devices on each of trainer.nnodes nodes. Before it "
        "places them it adds up the GPU (else NPU) resources Ray lists free on each node "
        "(ray._private.state.available_resources_per_node()) and raises ValueError ('Total available GPUs ... is "
        "less than total desired GPUs ...') when they are fewer: a node that never joined (verl #2515) or devices "
        "a node does not show (CUDA_VISIBLE_DEVICES, ASCEND_RT_VISIBLE_DEVICES) make them so. When the total is "
        "there but fewer than trainer.nnodes nodes hold trainer.n_gpus_per_node each, its placement groups "
        "(STRICT_PACK, one to a node) wait for devices that never come: the job hangs at start. They ask for the "
        "resource of the platform verl runs on (GPU on CUDA, NPU on Ascend): a cluster of the other kind hangs the "
        "same way. Checked only "
        "by `validate-scripts preflight`, against the cluster at --ray-address as Ray counts it."
    )
    ground_truth = (
        "verl 0.9.1 single_controller/ray/base.py:226-242 (_check_resource_available: GPU else NPU per node, "
        "ValueError), :131-160 (get_placement_groups: STRICT_PACK bundles of one device, ray.get(pg.ready()) "
        "blocks, the bundle asks current_platform.ray_resource_name()); plugin/platform/platform_cuda.py:127-128 "
        "('GPU') and platform_npu.py:139-140 ('NPU'); trainer/main_ppo_v0.py:71-73 (the pool: [n_gpus_per_node] x "
        "nnodes)"
    )
    bad = "on a cluster of one node with 8 GPUs: trainer.nnodes=2 trainer.n_gpus_per_node=8"
    good = "trainer.nnodes=1 trainer.n_gpus_per_node=8"
    no_fixture = NO_FIXTURE

    def check_launch(self, view, ctx):
        cluster = getattr(ctx, "cluster", None)
        per_node, nnodes = view.int_value("trainer.n_gpus_per_node"), view.int_value("trainer.nnodes")
        if cluster is None or per_node is None or nnodes is None or per_node < 1 or nnodes < 1:
            return []
        counts = [(node, *node.devices()) for node in cluster.nodes]
        kinds = sorted({kind for _, kind, count in counts if count}) or ["GPU"]
        total = sum(count for _, _, count in counts)
        each = ", ".join(f"{node.label}: {count:g} {kind}{_visible(node)}" for node, kind, count in counts) or "no node"
        asked = f"trainer.nnodes={nnodes} x trainer.n_gpus_per_node={per_node}"
        where = f"the Ray cluster at {cluster.address} ({each})"
        target = view.target
        wanted = ("NPU" if target.on_npu else "GPU" if target.on_gpu else None) if target is not None else None
        if wanted is not None and total and wanted not in kinds:
            message = (
                f"this launch runs on {target.device.kind} ({target.device.why}), so verl's placement groups ask Ray "
                f"for {wanted} resources, but {where} lists {'/'.join(kinds)} only: they wait for devices that never "
                "come, and the job hangs at start"
            )
        elif total < per_node * nnodes:
            message = (
                f"{asked} asks {per_node * nnodes} devices, but {where} has {total:g} {'/'.join(kinds)} free: verl "
                f"{view.verl_version} raises ValueError ('Total available GPUs {total:g} is less than total desired "
                f"GPUs {per_node * nnodes}') when it creates the resource pool"
            )
        else:
            holding = [node for node, _, count in counts if count >= per_node]
            if len(holding) >= nnodes:
                return []
            message = (
                f"{asked}: {len(holding)} of the nodes of {where} hold {per_node} free devices each, and verl's "
                f"placement groups (STRICT_PACK, one to a node) wait for the other {nnodes - len(holding)}: the job "
                "hangs at start"
            )
        key = "trainer.nnodes" if view.setting("trainer.nnodes") is not None else "trainer.n_gpus_per_node"
        return [self.finding(view.where(key), message, key)]


VISIBLE = ("CUDA_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES")


def _visible(node) -> str:
    """` (CUDA_VISIBLE_DEVICES=0,1)` where the node's probe saw one of them set."""
    env = (node.facts or {}).get("env") or {}
    shown = [f"{name}={env[name]}" for name in VISIBLE if name in env]
    return f" ({', '.join(shown)})" if shown else ""
