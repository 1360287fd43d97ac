"""The layout must fit the model's shape: what Megatron-Core and verl assert when the model is built.

The shape comes from `--model-config DIR` (its config.json), else under
`--profile current` from the config.json in actor_rollout_ref.model.path (under `preflight`,
as a node of the cluster has it), else
from the shipped table (data/models.yaml) by the model path's last component.
A model the tool cannot identify is not checked. Arithmetic: layout.py.
"""

from __future__ import annotations

from ...target import layout as lay
from ...target.launch_target import version_tuple
from .. import Rule

ARF = "actor_rollout_ref"


class ModelShape(Rule):
    id = "model-shape"
    severity = "error"
    stage = "policy"
    scope = "launch"
    summary = (
        "layers split over PP (and VPP, first/last stages), heads and query groups over TP, experts over EP, "
        "heads over Ulysses SP, for the model the launch trains"
    )
    why = (
        "Megatron-Core checks the model's shape against the layout when verl builds the actor and the ref, inside "
        "every training worker after the cluster is up: ValueError or AssertionError, and the job stops; the "
        "rollout engine (vLLM) asserts the same for its attention heads when it loads the model. Setting "
        "any ref.megatron.override_transformer_config key replaces the dict the ref inherits, so the actor's "
        "first/last pipeline stage sizes do not reach the ref. verl's FSDP engine asserts the same for Ulysses "
        "sequence parallelism. The shape is read from --model-config DIR, or the model path's config.json under "
        "--profile current, else from the shipped table of reference models; an unknown model is not checked."
    )
    ground_truth = (
        "megatron-core 0.16.1: transformer/transformer_config.py:924-946 (heads and query groups vs TP), "
        ":974-980 (Gated DeltaNet heads vs TP), :982-986 (Gated DeltaNet without context parallel; gone in "
        "0.18.0, so checked on GPU only, where the scripts run megatron-core 0.16), "
        ":1359-1433 (first/last stage sizes, middle stages, VPP), "
        "transformer/transformer_block.py:129-132 (uneven split), :155-157 (layers % PP) and :174-177 "
        "(layers per stage % VPP), "
        "transformer/moe/moe_layer.py:101 (experts % EP); verl 0.9.1 models/transformers/monkey_patch.py:343-350 "
        "(heads vs ulysses_sequence_parallel_size), trainer/ppo/utils.py:75-79 (the ref exists only with a KL "
        "loss or KL in the reward); vLLM vllm/model_executor/models/qwen3_moe.py Qwen3MoeAttention.__init__ "
        "(commit 002456df: attention heads divisible by the rollout's TP, KV heads a multiple or a divisor of it)"
    )
    bad = (
        "Qwen3-235B-A22B (94 layers): ...actor.megatron.pipeline_model_parallel_size=16 without "
        "num_layers_in_first/last_pipeline_stage"
    )
    good = (
        "...pipeline_model_parallel_size=16 "
        "+...override_transformer_config.num_layers_in_first_pipeline_stage=5 "
        "+...override_transformer_config.num_layers_in_last_pipeline_stage=5"
    )

    def check_launch(self, view, ctx):
        layout = lay.known_layout(view, ctx)
        if layout is None:
            return []
        shape = layout.shape
        out = []
        model = f"{shape.name} ({shape.told_by})"
        if layout.engine == "megatron":
            actor = _megatron(shape, layout.actor, view.target)
            ref = _megatron(shape, layout.ref, view.target) if layout.ref_used else []
            for key, text, at_most in actor:
                who = "actor and ref" if (key, text, at_most) in ref else "actor"
                message = f"{model}, {who}: {text}"
                out.append(self.finding(_where(view, "actor", key), message, f"{ARF}.actor.{key}", at_most=at_most))
            for key, text, at_most in ref:
                if (key, text, at_most) in actor:
                    continue
                loc = _where(view, "ref", key)
                if key.endswith("pipeline_model_parallel_size") and _stage_sizes_lost(layout):
                    text += (
                        " (a ref.megatron.override_transformer_config key replaces the dict the ref inherits: "
                        "the actor's first/last stage sizes do not reach it)"
                    )
                    loc = _first_ref_otc(view) or loc
                out.append(self.finding(loc, f"{model}, ref: {text}", f"{ARF}.ref.{key}", at_most=at_most))
        else:
            actor = _ulysses(view, shape, "actor")
            ref = _ulysses(view, shape, "ref") if layout.ref_used else []
            for key, text in actor:
                who = "actor and ref" if any(t == text for _, t in ref) else "actor"
                out.append(self.finding(view.where(key), f"{model}, {who}: {text}", key))
            for key, text in ref:
                if not any(t == text for _, t in actor):
                    out.append(self.finding(view.where(key), f"{model}, ref: {text}", key))
        tp = layout.rollout_tp
        if tp and tp > 1:
            key = f"{ARF}.rollout.tensor_model_parallel_size"
            heads, kv = shape.attention_heads, shape.query_groups
            if heads and heads % tp:
                text = f"{model}, rollout: {heads} attention heads are not divisible by the rollout's TP {tp}"
                out.append(self.finding(view.where(key), text, key))
            if kv and kv % tp and tp % kv:
                text = f"{model}, rollout: {kv} KV heads are neither a multiple nor a divisor of the rollout's TP {tp}"
                out.append(self.finding(view.where(key), text, key))
        return out


def _ulysses(view, shape, role) -> list[tuple[str, str]]:
    """(key, problem) for the FSDP engine's Ulysses sequence parallel size of one role (verl
    copies the deprecated role-level size into fsdp_config when it is above 1)."""
    own = f"{ARF}.{role}.ulysses_sequence_parallel_size"
    fsdp = f"{ARF}.{role}.fsdp_config.ulysses_sequence_parallel_size"
    sp, key = view.int_value(own), own
    if not sp or sp <= 1:
        sp, key = view.int_value(fsdp), fsdp
    if not sp or sp <= 1:
        return []
    if view.setting(key) is None and role == "ref":  # inherited from the actor: report it there
        key = key.replace(".ref.", ".actor.")
    heads, kv = shape.attention_heads, shape.query_groups
    out = []
    if heads and heads % sp:
        out.append((key, f"{heads} attention heads are not divisible by ulysses_sequence_parallel_size {sp}"))
    if kv and kv % sp and sp % kv:
        out.append((key, f"{kv} KV heads are neither a multiple nor a divisor of ulysses_sequence_parallel_size {sp}"))
    return out


def _megatron(shape, role, target) -> list[tuple[str, str, str | None]]:
    """(key under the role, problem, at_most) for one Megatron model: at_most "warning" where the
    problem turns on a part of the launch's target that nothing decides."""
    if role is None:
        return []
    out = []
    if shape.layers:
        problem = lay.pipeline_problem(shape.layers, role)
        if problem:
            even = lay.stage_layers(shape.layers, role.pp, role.first, role.last) is not None
            key = "virtual_pipeline_model_parallel_size" if even else "pipeline_model_parallel_size"
            out.append((f"megatron.{key}", problem, None))
    for text in lay.head_problems(shape, role.tp):
        out.append(("megatron.tensor_model_parallel_size", text, None))
    core = target.stack.version("megatron-core")
    if shape.gdn and role.cp > 1 and not target.on_npu and version_tuple(core) < (0, 18):
        text = (
            f"Gated DeltaNet layers do not run with context parallel (CP={role.cp}) in "
            f"{target.stack.names('megatron-core')} (0.18 lifts it; MindSpeed swaps in its own on Ascend)"
        )
        at_most = None
        if not target.device.known:
            text = f"on GPU, {text}; the device is not known ({target.device.why})"
            at_most = "warning"
        elif target.stack.assumed("megatron-core"):
            at_most = "warning"
        out.append(("megatron.context_parallel_size", text, at_most))
    if shape.experts and shape.experts % role.ep:
        out.append(
            ("megatron.expert_model_parallel_size", f"{shape.experts} experts are not divisible by EP={role.ep}", None)
        )
    return out


def _where(view, role, key):
    """The role's own override of `key`, else the actor's (the ref inherits it), else the launch."""
    full = f"{ARF}.{role}.{key}"
    if view.setting(full) is None and role == "ref":
        full = f"{ARF}.actor.{key}"
    return view.where(full)


def _stage_sizes_lost(layout) -> bool:
    a, r = layout.actor, layout.ref
    return a is not None and r is not None and (a.first, a.last) != (None, None) and (r.first, r.last) == (None, None)


def _first_ref_otc(view):
    prefix = f"{ARF}.ref.megatron.override_transformer_config"
    locs = [s.loc for k, s in view.last.items() if k == prefix or k.startswith(prefix + ".")]
    return min(locs, key=lambda loc: (loc.path, loc.line, loc.col)) if locs else None
