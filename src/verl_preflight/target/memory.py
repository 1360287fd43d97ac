"""Memory per device of a verl launch, per pipeline stage: pure arithmetic over a model's
shape (Arch) and a parallel layout. No I/O; layout.py reads the launch and the shapes into
these inputs, the memory-estimate rule and `render` show the results.

Parameters (counted from the shape, as the checkpoint holds them; no biases unless noted):
* full attention layer: q (x2 with Qwen3.5's output gate) h x heads x head_dim, k and v
  h x kv_heads x head_dim each, o heads x head_dim x h; q/k norms head_dim each.
* Gated DeltaNet layer (Qwen3.5): in_proj_qkv h x (2 nk dk + nv dv), in_proj_z h x nv dv,
  in_proj_a/b h x nv each, conv1d (2 nk dk + nv dv) x kernel, A_log and dt_bias nv each,
  gated norm dv, out_proj nv dv x h.
* MoE block: routed experts E x 3 h moe_ffn (SwiGLU: gate, up, down), router h x E, shared
  expert 3 h shared_ffn and its gate h x 1; a dense MLP 3 h ffn. Two RMSNorms of h a layer,
  a final norm h.
* embedding V x h (first stage) and LM head V x h (last stage; with tied embeddings one
  matrix, which the last stage also holds when PP > 1).
* vision tower (Qwen3-VL style, first stage): patch embedding in_ch x t x p x p x vh + vh,
  position embedding positions x vh, each block two LayerNorms (weight and bias), qkv and
  proj, fc1 and fc2 (with biases), merger LayerNorm + fc1 (vh m^2)^2 + fc2 vh m^2 x out.
* active (a text token): everything but the vision tower, with top_k of the routed experts.

Sharding as Megatron-Core builds it: attention, GDN, shared expert, dense MLP, embedding and
LM head (vocabulary-parallel) over TP; norms, the router and the shared-expert gate on every
TP rank; routed experts over EP x ETP; layers over the pipeline stages; the vision tower over
TP on the first stage (an estimate: Megatron-Bridge builds it with the language model's TP).

Per device and stage, the actor update (all resident at once: verl loads the optimizer before
the forward-backward when it offloads it between steps; with LoRA the base weights are frozen:
no gradients or optimizer states for them, the adapters are not counted):
* weights 2 B (bf16) and gradients 4 B (fp32 main grads: verl's DDP config sets
  grad_reduce_in_fp32) a parameter on the device;
* optimizer 12 B a parameter (fp32 master weights, Adam m and v), sharded by the distributed
  optimizer over the data-parallel ranks (with CP: world / (TP x PP)) for dense parameters
  and over the expert-data-parallel ranks (world / (ETP x EP x PP)) for experts, times
  (1 - optimizer_offload_fraction) with Megatron's CPU optimizer;
* activations (estimate): a layer holds T x h x (18 + 4 ffn / h) / TP bytes for T tokens of
  a micro batch on the device (Megatron's theoretical_memory_usage, from Korthikanti et al.
  2022, Table 2, sequence parallel), ffn = top_k x moe_ffn + shared_ffn for an MoE layer.
  Full recompute keeps the 2 T h / TP bytes of each recomputed chunk's input per micro batch
  in flight and rebuilds one chunk at a time (uniform: chunks of recompute_num_layers;
  block: the first recompute_num_layers layers of the stage). Under 1F1B stage s of PP holds
  min(PP - s, micro batches) micro batches; the interleaved schedule multiplies by
  1 + (PP - 1) / (PP x VPP) (Megatron's penalty for the first stage, used for every stage);
* logits on the last stage (estimate): 10 B for each of T x V / TP entries: the bf16 output
  of the LM head, its fp32 copy for the vocabulary-parallel cross-entropy, and the fp32
  gradient in the backward.
A forward-only pass (old log-probs, the reference model): bf16 weights, one layer's
activations, and 6 B a logit (bf16 and the fp32 copy).

Rollout (vLLM / SGLang) per device: weights over the rollout TP (with rollout EP the routed
experts over EP, the rest over TP), the KV cache (2 x kv_heads per device (vLLM keeps at least
one) x head_dim x 2 B a token for each full-attention layer) and, for Gated DeltaNet layers, a
state per sequence (estimate: nv / TP x dk x dv fp32 and the conv window, kernel - 1 entries
of the qkv width). The engine refuses to start when one max_model_len sequence does not fit
in gpu_memory_utilization x device memory after its weights. Not counted: the engine's
activation workspace and graph captures, the NCCL buffers, the allocator's fragmentation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

BF16, FP32, ADAM = 2, 4, 12  # bytes a parameter: bf16 weight, fp32 gradient, fp32 master + Adam m, v
LOGIT_TRAIN, LOGIT_FORWARD = 10, 6  # bytes a logit entry: bf16 + fp32 copy + fp32 grad; bf16 + fp32 copy
GB = 1e9


# --------------------------------------------------------------------------
# Shapes
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class Vision:
    depth: int
    hidden: int
    intermediate: int
    patch: int
    temporal_patch: int
    merge: int  # spatial_merge_size
    in_channels: int
    positions: int  # num_position_embeddings
    out_hidden: int

    def params(self) -> int:
        vh, vi = self.hidden, self.intermediate
        patch = self.in_channels * self.temporal_patch * self.patch * self.patch * vh + vh
        block = 4 * vh + (3 * vh * vh + 3 * vh) + (vh * vh + vh) + (vh * vi + vi) + (vi * vh + vh)
        merged = vh * self.merge * self.merge
        merger = 2 * vh + (merged * merged + merged) + (merged * self.out_hidden + self.out_hidden)
        return patch + self.positions * vh + self.depth * block + merger


@dataclass(frozen=True)
class Arch:
    """A decoder's shape (Hugging Face config names in the comments)."""

    layers: int  # num_hidden_layers
    hidden: int  # hidden_size
    vocab: int  # vocab_size
    heads: int  # num_attention_heads
    kv_heads: int  # num_key_value_heads
    head_dim: int  # head_dim
    tied: bool = False  # tie_word_embeddings
    experts: int = 0  # num_experts (0: dense)
    top_k: int = 0  # num_experts_per_tok
    moe_ffn: int = 0  # moe_intermediate_size
    shared_ffn: int = 0  # shared_expert_intermediate_size
    ffn: int = 0  # intermediate_size of a dense MLP
    gated_attention: bool = False  # attn_output_gate
    qk_norm: bool = False
    full_attention_interval: int | None = None  # None: every layer full attention
    gdn_k_heads: int = 0  # linear_num_key_heads
    gdn_v_heads: int = 0  # linear_num_value_heads
    gdn_k_dim: int = 0  # linear_key_head_dim
    gdn_v_dim: int = 0  # linear_value_head_dim
    gdn_conv: int = 0  # linear_conv_kernel_dim
    vision: Vision | None = None

    def full_attention(self, i: int) -> bool:
        """Layer i (0-based) has softmax attention; the others are Gated DeltaNet."""
        n = self.full_attention_interval
        return n is None or (i + 1) % n == 0

    @property
    def full_attention_layers(self) -> int:
        return sum(self.full_attention(i) for i in range(self.layers))

    @property
    def gdn_qkv(self) -> int:
        return 2 * self.gdn_k_heads * self.gdn_k_dim + self.gdn_v_heads * self.gdn_v_dim


@dataclass(frozen=True)
class LayerParams:
    tp: int  # split over tensor parallel
    replicated: int  # on every TP rank (norms, router, shared-expert gate)
    experts: int  # routed experts, split over EP x ETP
    active_experts: int  # the routed experts one token uses


def layer_params(a: Arch, i: int) -> LayerParams:
    h = a.hidden
    replicated = 2 * h  # input and post-attention norms
    if a.full_attention(i):
        q = h * a.heads * a.head_dim * (2 if a.gated_attention else 1)
        kv = 2 * h * a.kv_heads * a.head_dim
        mixer = q + kv + a.heads * a.head_dim * h
        replicated += 2 * a.head_dim if a.qk_norm else 0
    else:
        nv_dv = a.gdn_v_heads * a.gdn_v_dim
        mixer = h * a.gdn_qkv + h * nv_dv + 2 * h * a.gdn_v_heads + a.gdn_qkv * a.gdn_conv + 2 * a.gdn_v_heads
        mixer += nv_dv * h
        replicated += a.gdn_v_dim
    if a.experts:
        expert = 3 * h * a.moe_ffn
        tp = mixer + 3 * h * a.shared_ffn
        replicated += h * a.experts + (h if a.shared_ffn else 0)
        return LayerParams(tp, replicated, a.experts * expert, a.top_k * expert)
    return LayerParams(mixer + 3 * h * a.ffn, replicated, 0, 0)


@dataclass(frozen=True)
class Counts:
    """Parameters of the whole model."""

    total: int
    experts: int  # routed experts
    active: int  # a text token's: all but the vision tower and the routed experts it does not use
    embedding: int
    lm_head: int  # 0 when tied
    vision: int

    @property
    def non_expert(self) -> int:
        return self.total - self.experts


def counts(a: Arch) -> Counts:
    layers = [layer_params(a, i) for i in range(a.layers)]
    body = sum(p.tp + p.replicated for p in layers) + a.hidden  # final norm
    experts = sum(p.experts for p in layers)
    active_experts = sum(p.active_experts for p in layers)
    embedding = a.vocab * a.hidden
    lm_head = 0 if a.tied else embedding
    vision = a.vision.params() if a.vision else 0
    total = body + experts + embedding + lm_head + vision
    return Counts(total, experts, body + active_experts + embedding + lm_head, embedding, lm_head, vision)


# --------------------------------------------------------------------------
# Per device terms
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class Term:
    name: str
    gb: float
    estimated: bool = False  # from the workload (tokens, schedule), not from a parameter count
    detail: str = ""

    def text(self) -> str:
        mark = "~" if self.estimated else ""
        return f"{mark}{self.name} {self.gb:.1f}" + (f" ({self.detail})" if self.detail else "")


@dataclass(frozen=True)
class Stage:
    index: int  # 0-based
    of: int  # PP
    layers: int
    holds: tuple  # "embedding", "vision tower", "LM head"
    terms: tuple

    @property
    def total(self) -> float:
        return sum(t.gb for t in self.terms)

    def term(self, name: str) -> float:
        return sum(t.gb for t in self.terms if t.name == name)

    def label(self) -> str:
        extra = f", {', '.join(self.holds)}" if self.holds else ""
        return f"stage {self.index + 1}/{self.of} ({self.layers} layers{extra})"

    def text(self) -> str:
        return " + ".join(t.text() for t in self.terms) + f" = {self.total:.1f} GB"

    def short(self) -> str:
        """The terms without how each was counted (render shows that)."""
        return " + ".join(f"{'~' * t.estimated}{t.name} {t.gb:.1f}" for t in self.terms) + f" = {self.total:.1f} GB"


@dataclass(frozen=True)
class Parallel:
    """A Megatron model's layout (actor or ref) over `world` devices; stages: layers per stage."""

    tp: int
    pp: int
    cp: int
    ep: int
    etp: int
    world: int
    stages: tuple
    vpp: int | None = None
    distributed_optimizer: bool = True

    @property
    def dense_shards(self) -> int:
        return max(self.world // (self.tp * self.pp), 1) if self.distributed_optimizer else 1

    @property
    def expert_shards(self) -> int:
        return max(self.world // (self.etp * self.ep * self.pp), 1) if self.distributed_optimizer else 1

    @property
    def dp(self) -> int:
        return max(self.world // (self.tp * self.pp * self.cp), 1)


@dataclass(frozen=True)
class Recompute:
    granularity: str | None = None  # "full", "selective" or None
    method: str | None = None  # "uniform" or "block"
    num_layers: int | None = None

    @property
    def full(self) -> bool:
        return self.granularity == "full" and self.method in ("uniform", "block")


@dataclass(frozen=True)
class Workload:
    """One micro batch on one device: T tokens (after the CP split) and how many micro
    batches a mini batch makes on a data-parallel rank (None: not known, taken >= PP)."""

    tokens: int
    tokens_text: str
    micro_batches: int | None = None
    recompute: Recompute = field(default_factory=Recompute)
    cpu_optimizer_fraction: float = 0.0
    lora: bool = False  # LoRA: the base weights are frozen (no gradients, no optimizer states)


@dataclass(frozen=True)
class StageParams:
    dense: float  # parameters on the device that are not routed experts
    experts: float


def stage_ranges(stages) -> list[tuple[int, int]]:
    out, start = [], 0
    for n in stages:
        out.append((start, start + n))
        start += n
    return out


def stage_params(a: Arch, par: Parallel, s: int) -> StageParams:
    start, end = stage_ranges(par.stages)[s]
    first, last = s == 0, s == par.pp - 1
    tp = rep = experts = 0.0
    for i in range(start, end):
        p = layer_params(a, i)
        tp, rep, experts = tp + p.tp, rep + p.replicated, experts + p.experts
    embedding = a.vocab * a.hidden
    if first:
        tp += embedding + (a.vision.params() if a.vision else 0)
    if last:
        rep += a.hidden  # final norm
        if not a.tied or par.pp > 1:
            tp += embedding  # LM head (with tied embeddings a copy on the last stage when PP > 1)
    return StageParams(tp / par.tp + rep, experts / (par.ep * par.etp))


def _holds(a: Arch, par: Parallel, s: int) -> tuple:
    out = []
    if s == 0:
        out.append("embedding")
        if a.vision:
            out.append("vision tower")
    if s == par.pp - 1:
        out.append("LM head")
    return tuple(out)


def layer_activation_bytes(a: Arch, i: int, tokens: float, tp: int) -> float:
    """Megatron's per-layer activations for T tokens: T x h x (18 + 4 ffn / h) / TP."""
    ffn = (a.top_k * a.moe_ffn + a.shared_ffn) if a.experts else a.ffn
    return tokens * a.hidden * (18 + 4 * ffn / a.hidden) / tp


def stage_activation_bytes(a: Arch, par: Parallel, s: int, work: Workload) -> tuple[float, str]:
    """Activations of stage s at the peak of the schedule, and how they were counted."""
    start, end = stage_ranges(par.stages)[s]
    layers = list(range(start, end))
    t = work.tokens
    full = [layer_activation_bytes(a, i, t, par.tp) for i in layers]
    checkpoint = BF16 * t * a.hidden / par.tp
    rc = work.recompute
    if rc.full and layers:
        k = max(rc.num_layers or 1, 1)
        if rc.method == "uniform":
            chunks = [full[j : j + k] for j in range(0, len(full), k)]
            kept = len(chunks) * checkpoint
            working = max(sum(c) for c in chunks)
            how = f"full recompute, uniform chunks of {k}"
        else:  # block: the first k layers of the stage recomputed, the others keep everything
            kept = min(k, len(full)) * checkpoint + sum(full[k:])
            working = max(full[:k]) if full[:k] else 0.0
            how = f"full recompute of {min(k, len(full))} layers (block)"
    else:
        kept, working = sum(full), 0.0
        how = "no full recompute"
    in_flight = par.pp - s
    if work.micro_batches is not None:
        in_flight = max(min(in_flight, work.micro_batches), 1)
    penalty = 1.0
    if par.vpp and par.vpp > 1 and par.pp > 1:
        penalty = 1 + (par.pp - 1) / (par.pp * par.vpp)
    total = kept * in_flight * penalty + working
    flight = f"{in_flight} micro batch{'es' * (in_flight > 1)} in flight"
    if penalty != 1.0:
        flight += f" x {penalty:.2f} (VPP {par.vpp})"
    return total, f"{work.tokens_text}, {how}, {flight}"


def train_stages(a: Arch, par: Parallel, work: Workload) -> list[Stage]:
    out = []
    for s in range(par.pp):
        p = stage_params(a, par, s)
        params = p.dense + p.experts
        keep = 1.0 - work.cpu_optimizer_fraction
        states = ADAM * (p.dense / par.dense_shards + p.experts / par.expert_shards) * keep
        shards = f"over {par.dense_shards} / {par.expert_shards} DP shards"
        detail = f"{shards}, {work.cpu_optimizer_fraction:g} on the host" if work.cpu_optimizer_fraction else shards
        act, how = stage_activation_bytes(a, par, s, work)
        trained = 0.0 if work.lora else 1.0
        lora = "LoRA: the base is frozen, the adapters not counted"
        terms = [
            Term("weights", BF16 * params / GB),
            Term("grads", FP32 * params * trained / GB, detail=lora if work.lora else ""),
            Term("optimizer", states * trained / GB, detail="" if work.lora else detail),
            Term("activations", act / GB, True, how),
        ]
        if s == par.pp - 1:
            logits = LOGIT_TRAIN * work.tokens * a.vocab / par.tp
            terms.append(Term("logits", logits / GB, True, f"10 B x {work.tokens} x {a.vocab}/{par.tp}"))
        out.append(Stage(s, par.pp, par.stages[s], _holds(a, par, s), tuple(terms)))
    return out


def weights_gb(a: Arch, par: Parallel, s: int) -> float:
    """The bf16 weights a device of stage `s` holds, in GB."""
    p = stage_params(a, par, s)
    return BF16 * (p.dense + p.experts) / GB


def optimizer_gb(a: Arch, par: Parallel, s: int) -> float:
    """The Adam state (fp32 master weights, m and v) a device of stage `s` holds after the
    distributed optimizer's sharding, in GB (all of it, on the device or the host)."""
    p = stage_params(a, par, s)
    return ADAM * (p.dense / par.dense_shards + p.experts / par.expert_shards) / GB


def forward_stages(a: Arch, par: Parallel, tokens: int, tokens_text: str) -> list[Stage]:
    """A forward-only pass (log-probs): bf16 weights, one layer's activations, the logits."""
    out = []
    for s in range(par.pp):
        start, end = stage_ranges(par.stages)[s]
        act = max((layer_activation_bytes(a, i, tokens, par.tp) for i in range(start, end)), default=0.0)
        terms = [Term("weights", weights_gb(a, par, s)), Term("activations", act / GB, True, tokens_text)]
        if s == par.pp - 1:
            logits = LOGIT_FORWARD * tokens * a.vocab / par.tp
            terms.append(Term("logits", logits / GB, True, f"6 B x {tokens} x {a.vocab}/{par.tp}"))
        out.append(Stage(s, par.pp, par.stages[s], _holds(a, par, s), tuple(terms)))
    return out


def worst(stages: list[Stage]) -> Stage:
    return max(stages, key=lambda st: (st.total, -st.index))


# --------------------------------------------------------------------------
# Rollout
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class Rollout:
    weights: float  # GB a device
    kv_token: float  # bytes a token a device (full-attention layers)
    state_seq: float  # bytes a sequence a device (Gated DeltaNet state)
    max_model_len: int
    sequences: int  # sequences an attention group runs at once
    seq_tokens: int  # tokens a sequence reaches (prompt + response, at most max_model_len)

    @property
    def one_sequence(self) -> float:
        return (self.max_model_len * self.kv_token + self.state_seq) / GB

    @property
    def batch(self) -> float:
        return self.sequences * (self.seq_tokens * self.kv_token + self.state_seq) / GB


def rollout_weights_params(a: Arch, tp: int, ep: int, pp: int = 1) -> float:
    c = counts(a)
    if ep > 1:
        return (c.non_expert / tp + c.experts / ep) / pp
    return c.total / tp / pp


def rollout(a: Arch, tp: int, ep: int, pp: int, max_model_len: int, sequences: int, seq_tokens: int) -> Rollout:
    kv_per_device = max(a.kv_heads // tp, 1)
    full_layers = a.full_attention_layers / pp
    kv_token = full_layers * 2 * kv_per_device * a.head_dim * BF16
    gdn_layers = (a.layers - a.full_attention_layers) / pp
    state = 0.0
    if gdn_layers:
        heads = max(a.gdn_v_heads // tp, 1)
        state = gdn_layers * (heads * a.gdn_k_dim * a.gdn_v_dim * FP32 + (a.gdn_conv - 1) * a.gdn_qkv / tp * BF16)
    weights = BF16 * rollout_weights_params(a, tp, ep, pp) / GB
    return Rollout(weights, kv_token, state, max_model_len, sequences, min(seq_tokens, max_model_len))


def ceil_div(a: int, b: int) -> int:
    return -(-a // b) if b else a


def tokens_per_micro_batch(micro: int, seq: int, cp: int) -> int:
    return math.ceil(micro * seq / max(cp, 1))
