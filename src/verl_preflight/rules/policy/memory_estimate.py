"""An estimate of the memory a launch needs per device, per pipeline stage, against the device.

The formulas are src/verl_preflight/target/memory.py's; layout.estimate reads the launch into them.
Per device: the Megatron actor's update on each pipeline stage (bf16 weights, fp32 gradients,
Adam states after the distributed optimizer's sharding and Megatron's CPU optimizer,
activations in flight under 1F1B with the recompute settings, logits on the last stage), the
forward-only log-prob passes (actor and ref), and the rollout engine's weights plus the KV
cache of one max_model_len sequence within gpu_memory_utilization. Device memory:
--device-memory GB, else 80 GB for a GPU and 64 GB for an Ascend die. A warning when an
estimate is over; an error only when the weights alone (the rollout's, or the actor's
weights and gradients on its worst stage) cannot fit in the device.
"""

from __future__ import annotations

from ...core.findings import Finding
from ...target import layout as lay
from .. import Rule

ARF = "actor_rollout_ref"


class MemoryEstimate(Rule):
    id = "memory-estimate"
    severity = "warning"
    stage = "policy"
    scope = "launch"
    summary = (
        "estimated memory per device: the actor update on its worst pipeline stage and the log-prob passes vs "
        "device memory, the rollout's weights and one max_model_len sequence's KV cache vs gpu_memory_utilization"
    )
    why = (
        "A layout that composes can still run out of device memory after the cluster is up. The parameters a "
        "device holds are counted from the model's shape (attention, Gated DeltaNet, routed and shared experts, "
        "router, norms; the embedding and vision tower on the first pipeline stage, the LM head on the last) "
        "and sharded as Megatron-Core shards them (TP, EP x ETP, the stages' layers, "
        "num_layers_in_first/last_pipeline_stage). The update holds bf16 weights, fp32 gradients, and 12 bytes "
        "of Adam state a parameter over the distributed optimizer's shards (what Megatron's CPU optimizer "
        "keeps on the host excepted), the activations of the micro batches 1F1B keeps in flight (stage s of PP "
        "holds PP - s) under the recompute settings, and on the last stage the logits of a micro batch "
        "(vocabulary / TP entries a token, bf16 + an fp32 copy + the fp32 gradient). A vLLM replica that is "
        "tensor-parallel only holds every expert (Qwen3.5-397B: ~794 GB of bf16 weights, ~99 GB on each of "
        "8 GPUs), and vLLM refuses to start when one max_model_len sequence does not fit in what "
        "gpu_memory_utilization leaves after the weights. Activations, logits and the Gated DeltaNet state "
        "are estimates from the workload (render marks them ~); the engines' workspaces, graphs and "
        "communication buffers are not counted, so the findings warn; only weights that cannot fit in the "
        "whole device are an error. Device memory: --device-memory GB, else 80 GB a GPU, 64 GB an Ascend die."
    )
    ground_truth = (
        "Megatron-LM megatron/training/theoretical_memory_usage.py (compute_weight_and_optimizer_memory: "
        "6 + 12 / DP bytes a parameter with the distributed optimizer, the embedding on the most loaded stage; "
        "compute_activation_memory: s b h (18 + 4 ffn / h) / TP a layer, PP micro batches in flight on the "
        "first stage, the interleaved penalty 1 + (PP - 1) / (PP x VPP)); "
        "megatron-core 0.16.1 optimizer/distrib_optimizer.py (fp32 main params and Adam states sharded over the "
        "data-parallel group, experts over the expert-data-parallel group), optimizer/optimizer_config.py:304-307 "
        "(optimizer_cpu_offload; optimizer_offload_fraction defaults to 0.0); "
        "verl 0.9.1 utils/megatron_utils.py:102-105 (grad_reduce_in_fp32: True), "
        "trainer/ppo/ray_trainer.py:1352-1363 (the actor's mini batch is ppo_mini_batch_size x rollout.n), "
        "workers/engine/utils.py:107-126 (micro batches: the token budget x CP, or micro_batch_size_per_gpu rows), "
        "workers/rollout/vllm_rollout/vllm_async_server.py:1103-1105 (max_model_len defaults to the model's "
        "max_position_embeddings) and :332-349 (max_model_len, max_num_seqs, gpu_memory_utilization, "
        "engine_kwargs handed to vLLM), workers/config/rollout.py:185-192; "
        "verl docs/perf/dpsk.md (Qwen3-235B-A22B on 32 H20 96 GB GPUs with OFFLOAD_FRACTION=1: "
        "examples/grpo_trainer/run_qwen3-235b_megatron_96gb.sh, which this estimate puts under 96 GB)"
    )
    bad = (
        "Qwen3.5-397B-A17B: actor_rollout_ref.rollout.tensor_model_parallel_size=8 (no rollout EP): "
        "2 B x 396.8B / 8 = 99.2 GB per 80 GB GPU"
    )
    good = (
        "rollout.tensor_model_parallel_size=8 rollout.data_parallel_size=16 rollout.expert_parallel_size=128: "
        "2 B x (10.3B / TP 8 + 386.5B experts / EP 128) = 8.6 GB"
    )

    def check_launch(self, view, ctx):
        layout = lay.known_layout(view, ctx)
        if layout is None or layout.shape is None:
            return []
        report = lay.estimate(layout)
        if report is None:
            return []
        name = layout.shape.name
        memory = f"{layout.memory_gb:g} GB ({layout.memory_from}; --device-memory GB sets it)"
        out = []
        top = report.worst_update
        actor_hard = top is not None and top.term("weights") + top.term("grads") > layout.memory_gb
        r = report.rollout
        if r is not None:
            key = f"{ARF}.rollout.tensor_model_parallel_size"
            budget = layout.rollout_util * layout.memory_gb if layout.rollout_util else None
            if r.weights > layout.memory_gb:
                message = (
                    f"estimate: {name} rollout weights per device {r.weights:.1f} GB (rollout TP "
                    f"{layout.rollout_tp}, EP {layout.rollout_ep or 1}) do not fit in {memory}"
                )
                out.append(self._at(view.where(key), message, key, hard=True))
            elif budget is not None and r.weights >= budget:
                message = (
                    f"estimate: {name} rollout weights per device {r.weights:.1f} GB >= gpu_memory_utilization "
                    f"{layout.rollout_util:g} x {memory} = {budget:.1f} GB, before any KV cache"
                )
                out.append(self._at(view.where(key), message, key, hard=False))
            elif budget is not None and r.weights + r.one_sequence > budget:
                message = (
                    f"estimate: {name} rollout {lay.rollout_text(r)} = {r.weights + r.one_sequence:.1f} GB per "
                    f"device > gpu_memory_utilization {layout.rollout_util:g} x {memory} = {budget:.1f} GB: the "
                    f"engine cannot hold one max_model_len sequence ({layout.batches.max_model_len_from})"
                )
                out.append(self._at(view.where(key), message, key, hard=False))
        if top is not None:
            if actor_hard:
                message = (
                    f"estimate: {name} actor weights and gradients on {top.label()} "
                    f"{top.term('weights'):.1f} + {top.term('grads'):.1f} GB do not fit in {memory}"
                )
                out.append(self._at(view.loc, message, None, hard=True))
            elif top.total > layout.memory_gb:
                message = f"estimate: {name} actor update on {top.label()}: {top.short()} > {memory}"
                out.append(self._at(view.loc, message, None, hard=False))
        fwd = lay.forward_worst(report)
        if fwd is not None and fwd[1].total > layout.memory_gb and (top is None or top.total <= layout.memory_gb):
            what, st = fwd
            message = f"estimate: {name} {what} pass on {st.label()}: {st.short()} > {memory}"
            out.append(self._at(view.loc, message, None, hard=False))
        return out

    def _at(self, loc, message: str, key, hard: bool) -> Finding:
        severity = "error" if hard and self.severity != "info" else self.severity
        return Finding.at(loc, self.id, severity, message, key)
