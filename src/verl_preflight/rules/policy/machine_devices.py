"""Under `--profile current`: the devices each node must give the job, against this machine's."""

from __future__ import annotations

from .. import Rule


class MachineDevices(Rule):
    id = "machine-devices"
    severity = "warning"
    stage = "policy"
    scope = "launch"
    summary = (
        "under --profile current: trainer.n_gpus_per_node larger than the devices this machine shows "
        "(nvidia-smi -L, npu-smi info)"
    )
    why = (
        "verl asks Ray for one pool of trainer.n_gpus_per_node devices on each of trainer.nnodes nodes. When Ray "
        "runs on this machine and its nodes are like it, the cluster has fewer devices than that: verl raises "
        "ValueError ('Total available GPUs ... is less than total desired GPUs ...') when it creates the pool, or, "
        "when the total is there but no node holds a pool, its placement groups (STRICT_PACK, one a node) wait "
        "for devices that never come. Other nodes, or a Ray cluster elsewhere (RAY_ADDRESS), can have more: a "
        "warning. Checked only under --profile current, against `nvidia-smi -L` (lines 'GPU <i>: ...') or "
        "`npu-smi info` (its chip rows); a missing tool, a failure or a timeout is said, and nothing is judged."
    )
    ground_truth = (
        "verl 0.9.1 trainer/ppo/v1/trainer_base.py:818-820 and trainer/main_ppo_v0.py:71-73 (the pool: "
        "[n_gpus_per_node] x nnodes); single_controller/ray/base.py:226-242 (_check_resource_available raises "
        "ValueError), :131 and :160 (STRICT_PACK placement groups, ray.get(pg.ready()) blocks)"
    )
    bad = "on a machine where `nvidia-smi -L` lists 4 GPUs: trainer.nnodes=1 trainer.n_gpus_per_node=8"
    good = "trainer.nnodes=1 trainer.n_gpus_per_node=4"
    no_fixture = (
        "needs --profile current and nvidia-smi / npu-smi on PATH: tests/test_machine.py runs it with stub executables"
    )

    def check_launch(self, view, ctx):
        devices = getattr(ctx, "devices", None)
        if not getattr(ctx, "current", False) or devices is None or devices.count is None:
            return []
        key = "trainer.n_gpus_per_node"
        per_node = view.int_value(key)
        if per_node is None or per_node <= devices.count:
            return []
        nnodes = view.int_value("trainer.nnodes")
        if nnodes == 1:
            outcome = (
                "with Ray started on this machine, verl raises ValueError when it creates the resource pool "
                f"(total available {devices.count} < desired {per_node})"
            )
        else:
            outcome = (
                f"a node like this one cannot hold a pool of {per_node}: verl's placement groups wait for devices "
                "that never come, or its resource check raises ValueError"
            )
        message = f"{key}={per_node} but {devices.describe()}: {outcome}"
        return [self.finding(view.where(key), message, key)]
