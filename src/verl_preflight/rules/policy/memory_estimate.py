"""An estimate of the memory a launch needs per device, against the device's memory.

Two numbers per launch and profile (formulas in layout.py): the rollout's
weights per device against gpu_memory_utilization x device memory, and the
Megatron actor's optimizer-step peak against device memory. Device memory:
--device-memory GB, else 80 GB for a GPU and 64 GB for an Ascend die. A
warning when the estimate is over; an error only when the weights alone (the
rollout's, or the actor's weights and gradients) cannot fit in the device.
"""

from __future__ import annotations

from ... import layout as lay
from ...findings import Finding
from .. import Rule

ARF = "actor_rollout_ref"


class MemoryEstimate(Rule):
    id = "memory-estimate"
    severity = "warning"
    stage = "policy"
    scope = "launch"
    summary = (
        "estimated rollout weights per device vs gpu_memory_utilization x device memory, and the actor's "
        "optimizer-step peak vs device memory"
    )
    why = (
        "A layout that composes can still run out of device memory: a vLLM replica that is tensor-parallel only "
        "holds every expert (Qwen3.5-397B: ~794 GB of bf16 weights, ~99 GB on each of 8 GPUs), and Adam's fp32 "
        "states of experts that have one data-parallel copy are not sharded. The job stops with out-of-memory "
        "after the cluster is up, or vLLM refuses to start when the weights exceed its gpu_memory_utilization "
        "share. The numbers are estimates (bf16 weights, fp32 grads, 12 bytes of Adam state a parameter, KV "
        "cache and activations not counted), so they warn; only weights that cannot fit in the whole device "
        "are an error. Device memory: --device-memory GB, else 80 GB a GPU, 64 GB an Ascend die."
    )
    ground_truth = (
        "megatron-core 0.16.1 optimizer/distrib_optimizer.py (fp32 main params and Adam states sharded over the "
        "data-parallel group, experts over the expert-data-parallel group), optimizer/optimizer_config.py:304-307 "
        "(optimizer_cpu_offload; optimizer_offload_fraction defaults to 0.0); "
        "verl 0.9.1 workers/config/rollout.py:185-192 "
        "(gpu_memory_utilization, tensor/data/expert_parallel_size handed to vLLM / SGLang)"
    )
    bad = (
        "Qwen3.5-397B-A17B: actor_rollout_ref.rollout.tensor_model_parallel_size=8 (no rollout EP): "
        "2 B x 397B / 8 = 99 GB per 80 GB GPU"
    )
    good = (
        "rollout.tensor_model_parallel_size=8 rollout.data_parallel_size=16 rollout.expert_parallel_size=128: "
        "2 B x (17B / 8 + 380B / 128) = 10.2 GB"
    )

    def check_launch(self, view, ctx):
        layout = lay.known_layout(view, ctx)
        if layout is None:
            return []
        shape = layout.shape
        if not shape.has_params:
            return []
        out = []
        memory = f"{layout.memory_gb:g} GB ({layout.memory_from}; --device-memory GB sets it)"
        if layout.rollout_tp:
            ep = layout.rollout_ep or 1
            weights = lay.rollout_weights_gb(shape.total_params_b, shape.active_params_b, layout.rollout_tp, ep)
            arithmetic = lay.rollout_weights_text(shape.total_params_b, shape.active_params_b, layout.rollout_tp, ep)
            key = f"{ARF}.rollout.tensor_model_parallel_size"
            if weights > layout.memory_gb:
                message = f"estimate: {shape.name} rollout weights per device {arithmetic} do not fit in {memory}"
                out.append(self._at(view.where(key), message, key, hard=True))
            elif layout.rollout_util and weights >= layout.rollout_util * layout.memory_gb:
                budget = layout.rollout_util * layout.memory_gb
                message = (
                    f"estimate: {shape.name} rollout weights per device {arithmetic} >= gpu_memory_utilization "
                    f"{layout.rollout_util:g} x {memory} = {budget:.1f} GB, before any KV cache"
                )
                out.append(self._at(view.where(key), message, key, hard=False))
        if layout.engine == "megatron" and layout.actor is not None and layout.world and shape.layers:
            step = lay.optimizer_step(
                shape.layers,
                shape.total_params_b,
                shape.active_params_b,
                layout.actor,
                layout.world,
                layout.cpu_fraction,
            )
            if step.weights + step.grads > layout.memory_gb:
                message = (
                    f"estimate: {shape.name} actor weights and gradients per device "
                    f"{step.weights:.1f} + {step.grads:.1f} GB do not fit in {memory} ({step.text()})"
                )
                out.append(self._at(view.loc, message, None, hard=True))
            elif step.total > layout.memory_gb:
                message = f"estimate: {shape.name} actor optimizer step per device {step.text()} > {memory}"
                out.append(self._at(view.loc, message, None, hard=False))
        return out

    def _at(self, loc, message: str, key, hard: bool) -> Finding:
        severity = "error" if hard and self.severity != "info" else self.severity
        return Finding.at(loc, self.id, severity, message, key)
