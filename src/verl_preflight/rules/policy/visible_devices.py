"""A device-visibility variable the script exports must list at least trainer.n_gpus_per_node devices."""

from __future__ import annotations

from ...core.values import is_unknown
from .. import Rule

KEY = "trainer.n_gpus_per_node"


class VisibleDevices(Rule):
    id = "visible-devices"
    severity = "warning"
    stage = "policy"
    scope = "launch"
    summary = (
        "CUDA_VISIBLE_DEVICES (GPU) or ASCEND_RT_VISIBLE_DEVICES (NPU) exported with fewer devices than "
        "trainer.n_gpus_per_node"
    )
    why = (
        "Ray counts a node's devices from the visibility variable of the processes that start it "
        "(CUDA_VISIBLE_DEVICES for GPUs, ASCEND_RT_VISIBLE_DEVICES for Ascend NPUs), and verl asks for "
        "trainer.n_gpus_per_node devices on each node. When main_ppo starts Ray itself (ray.init() with no "
        "RAY_ADDRESS and no cluster started earlier on the machine), a single node then has too few: verl raises "
        "ValueError 'Total available GPUs N is less than total desired GPUs M' when it creates the pool; on "
        "several nodes the per-node placement groups wait for devices that never come. A Ray cluster started "
        "before, with another environment, decides instead, which the tool cannot see: a warning. The variable "
        "counts where the launch gets it (an `export`, a `NAME=value` prefix, or --profile current's "
        "environment); a value known only at run time is not judged, nor a launch through `ray job submit`, "
        "whose job does not get the submitting shell's environment."
    )
    ground_truth = (
        "verl 0.9.1 trainer/main_ppo.py:57-74 (ray.init only when Ray is not initialized), "
        "trainer/ppo/v1/trainer_base.py:818-820 (the pool: [n_gpus_per_node] x nnodes), "
        "single_controller/ray/base.py:226-242 (_check_resource_available: ValueError), :131 and :160 "
        "(STRICT_PACK placement groups, ray.get(pg.ready()) blocks); Ray's accelerator managers read "
        "CUDA_VISIBLE_DEVICES (ray/_private/accelerators/nvidia_gpu.py) and ASCEND_RT_VISIBLE_DEVICES "
        "(ray/_private/accelerators/npu.py) for the node's device count"
    )
    bad = "export CUDA_VISIBLE_DEVICES=0,1,2,3 ... trainer.nnodes=1 trainer.n_gpus_per_node=8"
    good = "export CUDA_VISIBLE_DEVICES=0,1,2,3 ... trainer.nnodes=1 trainer.n_gpus_per_node=4"

    def check_launch(self, view, ctx):
        # the device's variable; where the device is not known, CUDA's (an Ascend one would have decided it)
        name = "ASCEND_RT_VISIBLE_DEVICES" if view.target.on_npu else "CUDA_VISIBLE_DEVICES"
        value = view.exported(name)
        if value is None or is_unknown(value) or _through_ray_job(view.spec):
            return []
        per_node = view.int_value(KEY)
        visible = [d for d in value.split(",") if d.strip()]
        if per_node is None or len(visible) >= per_node:
            return []
        nnodes = view.int_value("trainer.nnodes")
        shown = f"{name}={value}" if value else f"{name} empty"
        if nnodes == 1:
            outcome = (
                f"a Ray started by main_ppo sees {len(visible)} and verl raises ValueError (total available "
                f"{len(visible)} < desired {per_node}), unless the job joins a Ray cluster started with more"
            )
        else:
            outcome = (
                f"a node whose Ray starts with it offers {len(visible)}, and verl's per-node placement groups "
                "wait for devices that never come"
            )
        on = "" if view.target.device.known else "on GPU, "
        message = f"{on}{shown} lists {len(visible)} device(s) but {KEY}={per_node}: {outcome}"
        return [self.finding(view.export_loc(name), message, KEY)]


def _through_ray_job(spec) -> bool:
    """`ray job submit ... -- python3 -m verl...`: the job runs in the cluster's environment."""
    words = [f.value for f in spec.argv[: spec.entry]]
    return "ray" in [w.rsplit("/", 1)[-1] for w in words if w] and "submit" in words
