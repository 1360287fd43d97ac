"""A model's shape and the arithmetic of a parallel layout over it.

Shared by the `model-shape` and `memory-estimate` rules, `validate-scripts
render`'s summary and tests/test_reference_suite.py, so that they cannot drift.

Shapes come from a model's own `config.json` (Hugging Face names; a nested
`text_config` is read for multimodal wrappers) or from the shipped table
src/verl_preflight/data/models.yaml, matched on the last component of the
model path (case-insensitive substring, longest name wins).

Pipeline split (megatron-core 0.16.1): layers % PP == 0 unless
num_layers_in_first/last_pipeline_stage are set; then the stages between
share the rest evenly; with a virtual pipeline size each stage's layers are
divisible by it.

Memory, an estimate (bf16 = 2 bytes a parameter):
* rollout weights per device: 2 x total_B / TP with rollout EP <= 1; with
  rollout EP > 1 the routed experts are spread over EP devices and the rest,
  bounded high by the active parameters, over TP:
  2 x (active_B / TP + (total_B - active_B) / EP) GB.
* actor optimizer-step peak per device (Adam, Megatron distributed optimizer):
  bf16 weights (2 bytes) + fp32 grads (4) + fp32 master weights and Adam m, v
  (12, sharded). The device holds dense = active_B x s / TP and
  experts = (total_B - active_B) x s / (EP x ETP) billion parameters,
  s = (layers of its largest pipeline stage) / layers. Dense optimizer states
  are sharded over world / (TP x PP) ranks (data x context parallel), expert
  states over world / (ETP x EP x PP). Megatron's CPU optimizer keeps the
  fraction optimizer_offload_fraction (Megatron's default 0.0) of the
  12-byte states on the host;
  verl's param_offload / optimizer_offload bring everything back for the step.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache

DEVICE_MEMORY_GB = {"gpu": 80.0, "npu": 64.0}  # stated defaults: an 80 GB GPU, a 64 GB Ascend die
BF16, FP32_GRAD, ADAM_STATES = 2, 4, 12  # bytes a parameter


@dataclass(frozen=True)
class Shape:
    name: str
    source: str  # "models.yaml" or the config.json read
    layers: int | None = None
    attention_heads: int | None = None
    query_groups: int | None = None
    gdn_qk_heads: int | None = None
    gdn_v_heads: int | None = None
    experts: int = 0  # routed experts per MoE layer; 0 for a dense model
    gdn: bool = False  # has Gated DeltaNet (linear attention) layers
    total_params_b: float | None = None
    active_params_b: float | None = None
    max_position_embeddings: int | None = None  # None: not known
    rope_scaling: dict | None = None
    rope_known: bool = False  # whether rope_scaling (None: no scaling) is known

    @property
    def has_params(self) -> bool:
        return bool(self.total_params_b) and self.active_params_b is not None


@dataclass(frozen=True)
class Role:
    """One Megatron model's layout (actor or ref); etp is resolved (None in verl means TP)."""

    tp: int
    pp: int
    cp: int
    ep: int
    etp: int
    first: int | None = None  # num_layers_in_first_pipeline_stage
    last: int | None = None  # num_layers_in_last_pipeline_stage
    vpp: int | None = None  # virtual_pipeline_model_parallel_size
    counted: int = 0  # the embedding and the loss counted as layers (account_for_*_in_pipeline_split)
    given_layout: bool = False  # pipeline_model_parallel_layout names each stage's layers itself


# --------------------------------------------------------------------------
# Shapes
# --------------------------------------------------------------------------
@lru_cache(maxsize=1)
def models() -> dict:
    """The shipped table: name -> entry (see the comments in models.yaml)."""
    from importlib.resources import files

    import yaml

    text = files("verl_preflight.data").joinpath("models.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)["models"]


def model_for(path: str) -> str | None:
    """The table's name for a model path (its last component), or None."""
    leaf = str(path).rstrip("/").rsplit("/", 1)[-1].lower()
    if not leaf:
        return None
    hits = [(len(m), name) for name, entry in models().items() for m in entry["match"] if m.lower() in leaf]
    return max(hits)[1] if hits else None


def shape_from_table(name: str, path: str | None = None) -> Shape:
    """The table's shape of `name`; a `variants` entry whose text is in the path's last
    component overrides the fields it names (checkpoints of one architecture that differ in
    their context length)."""
    e = dict(models()[name])
    leaf = str(path or "").rstrip("/").rsplit("/", 1)[-1].lower()
    for text, fields in (e.get("variants") or {}).items():
        if text.lower() in leaf:
            e.update(fields)
    return Shape(
        name=name,
        source="models.yaml",
        layers=e["layers"],
        attention_heads=e["attention_heads"],
        query_groups=e["query_groups"],
        gdn_qk_heads=e.get("gdn_qk_heads"),
        gdn_v_heads=e.get("gdn_v_heads"),
        experts=e.get("experts") or 0,
        gdn="gdn_qk_heads" in e or "gdn_v_heads" in e,
        total_params_b=e.get("total_params_b"),
        active_params_b=e.get("active_params_b"),
        max_position_embeddings=e.get("max_position_embeddings"),
        rope_scaling=e.get("rope_scaling"),
        rope_known="rope_scaling" in e,
    )


class ModelConfigError(Exception):
    pass


@lru_cache(maxsize=32)
def shape_from_config(directory: str) -> Shape:
    """The shape a model's config.json states. Parameter counts: the table's when the
    directory's name matches a model there, else estimated from the config for a
    softmax-attention model (None for a hybrid one, e.g. with Gated DeltaNet layers)."""
    path = os.path.join(directory, "config.json")
    try:
        with open(path, encoding="utf-8") as fh:
            cfg = json.load(fh)
    except (OSError, ValueError) as err:
        raise ModelConfigError(f"cannot read {path}: {err}") from err
    if not isinstance(cfg, dict):
        raise ModelConfigError(f"{path}: not a JSON object")
    text = cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else cfg

    def num(*names):
        for n in names:
            v = text.get(n, cfg.get(n))
            if isinstance(v, int) and not isinstance(v, bool):
                return v
        return None

    heads = num("num_attention_heads")
    experts = num("num_experts", "n_routed_experts", "num_local_experts") or 0
    gdn_qk, gdn_v = num("linear_num_key_heads"), num("linear_num_value_heads")
    name = model_for(directory)
    if name is not None and models()[name].get("total_params_b"):
        total, active = models()[name]["total_params_b"], models()[name]["active_params_b"]
    elif gdn_qk is None and gdn_v is None:
        total, active = _estimate_params(text, cfg, heads, experts)
    else:
        total = active = None
    return Shape(
        name=name or os.path.basename(os.path.normpath(directory)),
        source=path,
        layers=num("num_hidden_layers", "num_layers"),
        attention_heads=heads,
        query_groups=num("num_key_value_heads") or heads,
        gdn_qk_heads=gdn_qk,
        gdn_v_heads=gdn_v,
        experts=experts,
        gdn=gdn_qk is not None or gdn_v is not None or "linear_attention" in (text.get("layer_types") or []),
        total_params_b=total,
        active_params_b=active,
        max_position_embeddings=num("max_position_embeddings"),
        rope_scaling=_rope_scaling(text, cfg),
        rope_known=True,
    )


def _rope_scaling(text: dict, cfg: dict) -> dict | None:
    """The config's rope_scaling (transformers' `rope_parameters` in newer configs); a default
    rope type is no scaling."""
    for holder in (text, cfg):
        for key in ("rope_scaling", "rope_parameters"):
            value = holder.get(key)
            if isinstance(value, dict):
                kind = value.get("rope_type", value.get("type"))
                return None if kind in (None, "default") and "factor" not in value else value
    return None


def _estimate_params(text: dict, cfg: dict, heads, experts) -> tuple[float | None, float | None]:
    """Billions of parameters (total, active) of a decoder with softmax attention, every
    layer MoE when the config has experts: q, k, v, o projections, a gated MLP (3 matrices),
    the router, input and output embeddings. Norms and biases are left out."""

    def get(name):
        v = text.get(name, cfg.get(name))
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    h, layers, vocab = get("hidden_size"), get("num_hidden_layers"), get("vocab_size")
    if not (h and layers and vocab and heads):
        return None, None
    head_dim = get("head_dim") or h // heads
    kv = get("num_key_value_heads") or heads
    attention = 2 * h * heads * head_dim + 2 * h * kv * head_dim
    embeddings = vocab * h * (1 if text.get("tie_word_embeddings", cfg.get("tie_word_embeddings")) else 2)
    if experts:
        inter, active_experts = get("moe_intermediate_size"), get("num_experts_per_tok")
        if not (inter and active_experts):
            return None, None
        shared = 3 * h * (get("shared_expert_intermediate_size") or 0)
        common = attention + shared + h * experts
        total = layers * (common + experts * 3 * h * inter) + embeddings
        active = layers * (common + active_experts * 3 * h * inter) + embeddings
    else:
        inter = get("intermediate_size")
        if not inter:
            return None, None
        total = active = layers * (attention + 3 * h * inter) + embeddings
    return round(total / 1e9, 2), round(active / 1e9, 2)


# --------------------------------------------------------------------------
# Pipeline split
# --------------------------------------------------------------------------
def stage_layers(layers: int, pp: int, first: int | None, last: int | None) -> list[int] | None:
    """Layers on each pipeline stage, or None where Megatron-Core would refuse the split."""
    if pp == 1:
        return [layers]
    if first is None and last is None:
        return [layers // pp] * pp if layers % pp == 0 else None
    if (first is not None and first <= 0) or (last is not None and last <= 0):
        return None
    inner = pp - (first is not None) - (last is not None)
    rest = layers - (first or 0) - (last or 0)
    if rest < 0 or bool(inner) != bool(rest) or (inner and rest % inner):
        return None
    middle = [rest // inner] * inner if inner else []
    return ([first] if first is not None else []) + middle + ([last] if last is not None else [])


def pipeline_problem(layers: int, role: Role) -> str | None:
    """Why Megatron-Core refuses this split of `layers`, or None (megatron-core 0.16.1
    transformer/transformer_block.py:140-152 get_num_layers_to_build: the embedding and the loss
    count as layers with account_for_*_in_pipeline_split; a pipeline_model_parallel_layout
    places the layers itself)."""
    if role.given_layout:
        return None
    if role.counted and role.first is None and role.last is None:
        counted = layers + role.counted
        if counted % role.pp:
            return (
                f"{layers} layers and {role.counted} counted for the embedding and loss do not split evenly over "
                f"PP={role.pp} ({counted} % {role.pp} = {counted % role.pp})"
            )
        layers = counted
    stages = stage_layers(layers, role.pp, role.first, role.last)
    if stages is None:
        if role.first is None and role.last is None:
            return f"{layers} layers do not split evenly over PP={role.pp} ({layers} % {role.pp} = {layers % role.pp})"
        rest = layers - (role.first or 0) - (role.last or 0)
        inner = role.pp - (role.first is not None) - (role.last is not None)
        return (
            f"{layers} layers do not split over PP={role.pp} with first stage {role.first} and last stage "
            f"{role.last}: {rest} layers left for {inner} stages between"
        )
    if role.vpp and role.vpp > 1 and role.pp > 1:
        odd = sorted({n for n in stages if n % role.vpp})
        if odd:
            return (
                f"stages of {'/'.join(map(str, odd))} layers (split {_brief(stages)}) are not divisible by the "
                f"virtual pipeline size {role.vpp}"
            )
    return None


def _brief(stages: list[int]) -> str:
    out, i = [], 0
    while i < len(stages):
        j = i
        while j + 1 < len(stages) and stages[j + 1] == stages[i]:
            j += 1
        out.append(f"{j - i + 1}x{stages[i]}" if j > i else str(stages[i]))
        i = j + 1
    return " + ".join(out)


def head_problems(shape: Shape, tp: int) -> list[str]:
    """Megatron-Core's TransformerConfig checks of heads against TP."""
    out = []
    if shape.attention_heads and shape.attention_heads % tp:
        out.append(f"{shape.attention_heads} attention heads are not divisible by TP={tp}")
    qg = shape.query_groups
    if qg and qg % tp and tp % qg:
        out.append(f"{qg} query groups (KV heads) are neither a multiple nor a divisor of TP={tp}")
    for label, n in (
        ("Gated DeltaNet key heads", shape.gdn_qk_heads),
        ("Gated DeltaNet value heads", shape.gdn_v_heads),
    ):
        if n and n % tp:
            out.append(f"{n} {label} are not divisible by TP={tp}")
    return out


# --------------------------------------------------------------------------
# Memory
# --------------------------------------------------------------------------
def rollout_weights_gb(total_b: float, active_b: float, tp: int, ep: int) -> float:
    if ep <= 1:
        return BF16 * total_b / tp
    return BF16 * (active_b / tp + (total_b - active_b) / ep)


def rollout_weights_text(total_b: float, active_b: float, tp: int, ep: int) -> str:
    gb = rollout_weights_gb(total_b, active_b, tp, ep)
    if ep <= 1:
        return f"2 B x {_n(total_b)}B / TP {tp} = {gb:.1f} GB"
    return f"2 B x ({_n(active_b)}B / TP {tp} + {_n(total_b - active_b)}B experts / EP {ep}) = {gb:.1f} GB"


@dataclass(frozen=True)
class StepEstimate:
    """The actor's optimizer-step peak per device, in GB, with its parts."""

    dense_b: float  # billions of dense parameters on the device
    experts_b: float  # billions of expert parameters on the device
    dense_shards: int
    expert_shards: int
    cpu_fraction: float
    weights: float
    grads: float
    states: float

    @property
    def total(self) -> float:
        return self.weights + self.grads + self.states

    def text(self) -> str:
        host = f" x (1 - {self.cpu_fraction:g} on the host: CPU optimizer)" if self.cpu_fraction else ""
        return (
            f"bf16 weights {self.weights:.1f} + fp32 grads {self.grads:.1f} + Adam states {self.states:.1f} "
            f"(12 B x ({self.dense_b:.2f}B dense / {self.dense_shards} + {self.experts_b:.2f}B experts / "
            f"{self.expert_shards}){host}) = {self.total:.1f} GB"
        )


def optimizer_step(layers: int, total_b: float, active_b: float, role: Role, world: int, cpu_fraction: float):
    stages = stage_layers(layers, role.pp, role.first, role.last) or [layers / role.pp]
    share = max(stages) / layers
    dense = active_b * share / role.tp
    experts = (total_b - active_b) * share / (role.ep * role.etp)
    dense_shards = max(world // (role.tp * role.pp), 1)
    expert_shards = max(world // (role.etp * role.ep * role.pp), 1)
    states = ADAM_STATES * (dense / dense_shards + experts / expert_shards) * (1.0 - cpu_fraction)
    return StepEstimate(
        dense,
        experts,
        dense_shards,
        expert_shards,
        cpu_fraction,
        BF16 * (dense + experts),
        FP32_GRAD * (dense + experts),
        states,
    )


def optimizer_peak_gb(
    layers: int, total_b: float, active_b: float, role: Role, world: int, cpu_fraction: float
) -> float:
    return optimizer_step(layers, total_b, active_b, role, world, cpu_fraction).total


def _n(x: float) -> str:
    return f"{x:g}"


# --------------------------------------------------------------------------
# One launch, as the rules see it (a rules.view.LaunchView in one profile)
# --------------------------------------------------------------------------
ARF = "actor_rollout_ref"
OPTIM = f"{ARF}.actor.optim.override_optimizer_config."


@dataclass
class LaunchLayout:
    engine: str | None
    device: str | None  # the target's: gpu, npu, or None when not known
    memory_gb: float
    memory_from: str  # "--device-memory" or "default for <device>"
    nnodes: int | None
    per_node: int | None
    actor: Role | None
    ref: Role | None
    ref_used: bool  # verl builds a ref only for a KL loss or KL in the reward (or when not known)
    rollout_tp: int | None
    rollout_dp: int | None
    rollout_ep: int | None
    rollout_pp: int | None
    rollout_util: float | None
    cpu_fraction: float
    shape: Shape | None

    @property
    def world(self) -> int | None:
        return self.nnodes * self.per_node if self.nnodes and self.per_node else None


def _int(view, key):
    v = view.int_value(key)
    return v if v is not None and v >= 1 else None


def transformer_config(view, role: str) -> dict:
    """The override_transformer_config the role's Megatron model gets: its own keys, except
    that the ref inherits the actor's whole dict unless any ref key is set (which replaces it)."""
    own = _otc(view, role)
    if role == "ref" and not own and not _otc_set(view, "ref"):
        return _otc(view, "actor")
    return own


def _otc_set(view, role: str) -> bool:
    prefix = f"{ARF}.{role}.megatron.override_transformer_config"
    return any(k == prefix or k.startswith(prefix + ".") for k in view.last)


def _otc(view, role: str) -> dict:
    prefix = f"{ARF}.{role}.megatron.override_transformer_config"
    out: dict = {}
    base = view.raw(prefix)
    if isinstance(base, dict):
        out.update(base)
    for key, s in view.last.items():
        if key == prefix and s.kind != "delete" and isinstance(s.value, dict):
            out = dict(s.value)
        elif key.startswith(prefix + "."):
            name = key[len(prefix) + 1 :]
            if s.kind == "delete":
                out.pop(name, None)
            else:
                out[name] = s.value
    return out


def role_layout(view, role: str) -> Role | None:
    base = f"{ARF}.{role}.megatron."
    tp, pp, cp, ep = (
        _int(view, base + k)
        for k in (
            "tensor_model_parallel_size",
            "pipeline_model_parallel_size",
            "context_parallel_size",
            "expert_model_parallel_size",
        )
    )
    if None in (tp, pp, cp, ep):
        return None
    etp = view.value(base + "expert_tensor_parallel_size")
    if etp is not None:
        etp = _int(view, base + "expert_tensor_parallel_size")
        if etp is None:
            return None
    vpp = view.value(base + "virtual_pipeline_model_parallel_size")
    if vpp is not None:
        vpp = _int(view, base + "virtual_pipeline_model_parallel_size")
        if vpp is None:
            return None
    otc = transformer_config(view, role)
    first, last = (otc.get(f"num_layers_in_{w}_pipeline_stage") for w in ("first", "last"))
    if any(v is not None and (isinstance(v, bool) or not isinstance(v, int)) for v in (first, last)):
        return None  # not known statically
    flags = [otc.get(f"account_for_{w}_in_pipeline_split") for w in ("embedding", "loss")]
    if any(f is not None and not isinstance(f, bool) for f in flags):
        return None  # not known statically
    counted = sum(1 for f in flags if f is True)
    given = otc.get("pipeline_model_parallel_layout") is not None
    return Role(tp, pp, cp, ep, etp or tp, first, last, vpp, counted, given)


def device_memory(device: str | None, given: float | None) -> tuple[float, str]:
    """(GB of one device, where that figure comes from): --device-memory, else the device's
    default; where the device is not known, the larger default (an Ascend die has less)."""
    if given:
        return float(given), "--device-memory"
    if device in DEVICE_MEMORY_GB:
        return DEVICE_MEMORY_GB[device], f"default for {device}"
    return max(DEVICE_MEMORY_GB.values()), "device not known"


def model_shape(view, opts) -> Shape | None:
    """--model-config DIR; else, under --profile current, the model path's config.json when it
    exists; else the shipped table by the model path's name; else None."""
    directory = getattr(opts, "model_config", None)
    if directory:
        return shape_from_config(directory)
    path = view.value(f"{ARF}.model.path")
    if getattr(opts, "current", False) and isinstance(path, str) and os.path.isfile(os.path.join(path, "config.json")):
        try:
            return shape_from_config(path)
        except ModelConfigError:
            pass
    shown = view.shown(f"{ARF}.model.path")
    name = model_for(shown) if shown else None
    return shape_from_table(name, shown) if name else None


def known_layout(view, opts) -> LaunchLayout | None:
    """The launch's layout when its model's shape is known (a rule has nothing to say
    otherwise); None when there is no shape or --model-config cannot be read."""
    try:
        layout = launch_layout(view, opts)
    except ModelConfigError:
        return None
    return layout if layout.shape is not None else None


def launch_layout(view, opts) -> LaunchLayout:
    device = view.target.device.kind if view.target is not None else None
    memory_gb, memory_from = device_memory(device, getattr(opts, "device_memory", None))
    util = view.value(f"{ARF}.rollout.gpu_memory_utilization")
    if isinstance(util, bool) or not isinstance(util, (int, float)):
        util = None
    cpu_fraction = 0.0
    if view.value(OPTIM + "optimizer_cpu_offload") is True:
        fraction = view.value(OPTIM + "optimizer_offload_fraction")
        if fraction is None:
            cpu_fraction = 0.0  # Megatron's default optimizer_offload_fraction
        elif isinstance(fraction, (int, float)) and not isinstance(fraction, bool):
            cpu_fraction = min(max(float(fraction), 0.0), 1.0)
    kl_loss, kl_reward = view.value(f"{ARF}.actor.use_kl_loss"), view.value("algorithm.use_kl_in_reward")
    return LaunchLayout(
        engine=view.training_engine,
        device=device,
        memory_gb=memory_gb,
        memory_from=memory_from,
        nnodes=_int(view, "trainer.nnodes"),
        per_node=_int(view, "trainer.n_gpus_per_node"),
        actor=role_layout(view, "actor"),
        ref=role_layout(view, "ref"),
        ref_used=not (kl_loss is False and kl_reward in (False, None)),
        rollout_tp=_int(view, f"{ARF}.rollout.tensor_model_parallel_size"),
        rollout_dp=_int(view, f"{ARF}.rollout.data_parallel_size"),
        rollout_ep=_int(view, f"{ARF}.rollout.expert_parallel_size"),
        rollout_pp=_int(view, f"{ARF}.rollout.pipeline_model_parallel_size") or 1,
        rollout_util=float(util) if util is not None else None,
        cpu_fraction=cpu_fraction,
        shape=model_shape(view, opts),
    )


def summary(lay: LaunchLayout) -> list[str]:
    """What `render` prints above a launch: devices, parallel layouts, the memory estimate."""
    out = []
    memory = f"{lay.memory_gb:g} GB each, {lay.memory_from}"
    world = lay.world
    kind = f"{lay.device.upper()}s" if lay.device else "devices (GPU or NPU: not known)"
    if world:
        nodes = f"{lay.nnodes} node{'s' * (lay.nnodes > 1)}"
        out.append(f"devices: {nodes} x {lay.per_node} = {world} {kind} ({memory})")
    else:
        out.append(f"devices: not known statically ({kind}, {memory})")
    a = lay.actor
    if lay.engine == "megatron" and a is not None:
        dp = world // (a.tp * a.pp * a.cp) if world and world % (a.tp * a.pp * a.cp) == 0 else "?"
        stages = ""
        if a.first is not None or a.last is not None:
            stages = f" (first stage {a.first}, last stage {a.last} layers)"
        vpp = f", VPP {a.vpp}" if a.vpp else ""
        text = f"trainer (megatron): TP {a.tp}, PP {a.pp}{vpp}, CP {a.cp}, EP {a.ep}, ETP {a.etp}, DP {dp}{stages}"
        if lay.ref_used and lay.ref is not None and lay.ref != a:
            r = lay.ref
            text += f"; ref: TP {r.tp}, PP {r.pp}, CP {r.cp}, EP {r.ep}, ETP {r.etp}"
            if r.first is not None or r.last is not None:
                text += f" (first stage {r.first}, last stage {r.last} layers)"
        out.append(text)
    elif lay.engine == "megatron":
        out.append("trainer (megatron): layout not known statically")
    else:
        out.append(f"trainer ({lay.engine or 'fsdp'}): data parallel over {world or '?'} devices")
    if lay.rollout_tp:
        dp, ep, pp = lay.rollout_dp or 1, lay.rollout_ep or 1, lay.rollout_pp or 1
        size = lay.rollout_tp * dp * pp
        count = world // size if world and world % size == 0 else 0
        replicas = f", {count} replica{'s' * (count > 1)} of {size} devices" if count else ""
        out.append(f"rollout: TP {lay.rollout_tp}, DP {dp}, EP {ep}{f', PP {pp}' if pp > 1 else ''}{replicas}")
    shape = lay.shape
    if shape is None:
        out.append("memory: not estimated (model not identified; --model-config DIR gives its config.json)")
        return out
    where = "config.json" if shape.source != "models.yaml" else "shipped shape table"
    out.append(f"model: {shape.name} ({where})")
    if not shape.has_params:
        out.append("memory: not estimated (parameter counts not known)")
        return out
    if lay.rollout_tp:
        ep = lay.rollout_ep or 1
        text = rollout_weights_text(shape.total_params_b, shape.active_params_b, lay.rollout_tp, ep)
        budget = (
            f" of {lay.rollout_util:g} x {lay.memory_gb:g} = {lay.rollout_util * lay.memory_gb:.1f} GB"
            if lay.rollout_util
            else ""
        )
        out.append(f"memory estimate, rollout weights per device: {text}{budget}")
    if lay.engine == "megatron" and a is not None and world and shape.layers:
        step = optimizer_step(shape.layers, shape.total_params_b, shape.active_params_b, a, world, lay.cpu_fraction)
        out.append(f"memory estimate, actor optimizer step per device: {step.text()} of {lay.memory_gb:g} GB")
    return out


# --------------------------------------------------------------------------
# Which models a launch builds, and the sizes verl multiplies batches by
# --------------------------------------------------------------------------
def ref_used(view) -> bool:
    """verl builds a ref model for a KL loss or KL in the reward (0.9.1 trainer/ppo/utils.py:75-79
    need_reference_policy; v0.4.1 main_ppo the same test); True when not known."""
    kl_loss, kl_reward = view.value(f"{ARF}.actor.use_kl_loss"), view.value("algorithm.use_kl_in_reward")
    return not (kl_loss is False and kl_reward in (False, None))


def critic_used(view) -> bool | None:
    """verl builds a critic when critic.enable says so, else for GAE (0.9.1 trainer/ppo/utils.py
    need_critic; v0.4.1 ray_trainer.py:345-356 by adv_estimator alone); None when not known."""
    enable = view.value("critic.enable")
    if isinstance(enable, bool):
        return enable
    adv = view.value("algorithm.adv_estimator")
    return adv == "gae" if isinstance(adv, str) else None


def world_size(view) -> int | None:
    nnodes, per_node = _int(view, "trainer.nnodes"), _int(view, "trainer.n_gpus_per_node")
    return nnodes * per_node if nnodes and per_node else None
