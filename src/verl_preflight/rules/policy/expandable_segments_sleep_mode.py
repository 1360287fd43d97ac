"""On Ascend, vLLM's sleep mode refuses PYTORCH_NPU_ALLOC_CONF with expandable_segments:True."""

from __future__ import annotations

from ...core.values import is_unknown
from .. import Rule

ROLLOUT = "actor_rollout_ref.rollout"
VAR = "PYTORCH_NPU_ALLOC_CONF"
MARK = "expandable_segments:True"  # the substring vllm-ascend tests for, case and all


class ExpandableSegmentsSleepMode(Rule):
    id = "expandable-segments-sleep-mode"
    severity = "warning"
    stage = "policy"
    scope = "launch"
    summary = (
        "PYTORCH_NPU_ALLOC_CONF with expandable_segments:True exported for a vLLM rollout in sleep mode "
        "(actor_rollout_ref.rollout.enable_sleep_mode, True by default) on Ascend"
    )
    why = (
        "verl hands rollout.enable_sleep_mode (a RolloutConfig field, True unless set) to vLLM. On Ascend, "
        "vllm-ascend then puts weights and KV cache in its CaMemAllocator memory pool, whose constructor asserts "
        "that PYTORCH_NPU_ALLOC_CONF does not contain 'expandable_segments:True' ('Expandable segments are not "
        "compatible with memory pool', pytorch/pytorch#147851): the rollout workers stop with AssertionError when "
        "the vLLM server starts, after the cluster is up. verl itself turns expandable segments on only when sleep "
        "mode is off. A warning, not an error: the assertion reads PYTORCH_NPU_ALLOC_CONF in recent vllm-ascend "
        "(older releases read PYTORCH_CUDA_ALLOC_CONF there, and an open vllm-ascend PR, #9242, would switch "
        "expandable segments off inside the pool instead), and the variable reaches vLLM only through the Ray "
        "cluster the job runs in. Fix: drop expandable_segments:True (or set it False), or "
        "+actor_rollout_ref.rollout.enable_sleep_mode=False."
    )
    ground_truth = (
        "vllm-ascend vllm_ascend/device_allocator/camem.py:148-152 at commit 34d204e0 (CaMemAllocator.__init__ "
        "asserts 'expandable_segments:True' not in PYTORCH_NPU_ALLOC_CONF; at commit 0bdaad4b the same assert "
        "reads PYTORCH_CUDA_ALLOC_CONF); verl 0.9.1 workers/config/rollout.py:268 (enable_sleep_mode: bool = True), "
        "workers/rollout/vllm_rollout/vllm_async_server.py:300-303 (expandable segments on only without sleep "
        "mode) and :337 (enable_sleep_mode handed to vLLM); vLLM PR #14189 added the same assert to CuMemAllocator"
    )
    bad = (
        "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True ... actor_rollout_ref.rollout.name=vllm "
        "trainer.device=npu"
    )
    good = (
        "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:False ... actor_rollout_ref.rollout.name=vllm "
        "trainer.device=npu"
    )

    def check_launch(self, view, ctx):
        conf = view.exported(VAR)
        if conf is None or is_unknown(conf) or MARK not in conf or not view.target.on_npu:
            return []
        if view.value(f"{ROLLOUT}.name") != "vllm":
            return []
        sleep = view.value(f"{ROLLOUT}.enable_sleep_mode")
        if sleep is None:
            sleep = True  # not in verl's YAML: RolloutConfig's default
        if is_unknown(sleep) or str(sleep).lower() not in ("true", "1"):
            return []
        message = (
            f"{VAR}={conf} with the vLLM rollout's sleep mode (enable_sleep_mode "
            f"{'True by default' if view.setting(f'{ROLLOUT}.enable_sleep_mode') is None else sleep}): "
            "vllm-ascend's CaMemAllocator asserts expandable segments are off when the rollout starts"
        )
        return [self.finding(view.export_loc(VAR), message, f"{ROLLOUT}.enable_sleep_mode")]
