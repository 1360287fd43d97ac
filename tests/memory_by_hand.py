"""Bottom-up memory arithmetic for the tests, written out by hand and apart from
src/verl_preflight/target/memory.py (it imports nothing from it): what a device holds, from the
shapes in models.yaml.

Kept simple on purpose. Parameters, per layer:
  full attention   (2 if the query carries an output gate else 1) h a d + 2 h kv d + a d h
  Gated DeltaNet   h (2 nk dk + nv dv) + h nv dv + nv dv h  (qkv, z and out projections)
  MoE              E x 3 h f routed, 3 h fs shared, h E router
  embedding / head V h each;  vision tower  depth (4 vh^2 + 2 vh vi) + (4 vh)^2 + 4 vh out
Left out: norms, biases, the GDN a/b projections, conv, A_log and dt_bias, the vision patch
and position embeddings: under 0.5% of any stage, whence the tests' 3% tolerances.

Per device (bytes): weights 2 and gradients 4 a parameter; Adam 12 a parameter over the
distributed optimizer's shards (dense: world / (TP PP); experts: world / (ETP EP PP)) times
(1 - the CPU optimizer's fraction); a layer's activations for T tokens T h (18 + 4 (k f + fs) / h)
/ TP (Megatron's theoretical_memory_usage); with full recompute of chunks of one layer, the
2 T h / TP input of each layer per micro batch in flight plus one layer rebuilt; logits 10 B
(train) or 6 B (forward only) for each of T x V / TP entries.
"""

from __future__ import annotations

GB = 1e9


def is_full(m: dict, i: int) -> bool:
    n = m.get("full_attention_interval")
    return n is None or (i + 1) % n == 0


def layer(m: dict, i: int) -> tuple[int, int, int]:
    """(TP-split, router, routed experts) parameters of layer i."""
    h, d, a, kv = m["hidden_size"], m["head_dim"], m["num_attention_heads"], m["num_key_value_heads"]
    if is_full(m, i):
        mixer = (2 if m.get("attn_output_gate") else 1) * h * a * d + 2 * h * kv * d + a * d * h
    else:
        k = m["linear_num_key_heads"] * m["linear_key_head_dim"]
        v = m["linear_num_value_heads"] * m["linear_value_head_dim"]
        mixer = h * (2 * k + v) + h * v + v * h
    shared = 3 * h * m.get("shared_expert_intermediate_size", 0)
    return mixer + shared, h * m["num_experts"], m["num_experts"] * 3 * h * m["moe_intermediate_size"]


def vision(m: dict) -> int:
    v = m.get("vision_config")
    if not v:
        return 0
    vh, vi = v["hidden_size"], v["intermediate_size"]
    return v["depth"] * (4 * vh * vh + 2 * vh * vi) + (4 * vh) ** 2 + 4 * vh * v["out_hidden_size"]


def whole(m: dict) -> dict:
    """Billions: total, routed experts, not in routed experts, active (a text token)."""
    dense = experts = 0
    for i in range(m["num_hidden_layers"]):
        t, r, e = layer(m, i)
        dense, experts = dense + t + r, experts + e
    emb = 2 * m["vocab_size"] * m["hidden_size"]
    total = dense + experts + emb + vision(m)
    active = dense + emb + experts * m["num_experts_per_tok"] / m["num_experts"]
    return {"total": total / GB, "experts": experts / GB, "non_expert": (total - experts) / GB, "active": active / GB}


def stage(m: dict, stages: list[int], s: int, tp: int, ep: int, etp: int) -> tuple[float, float]:
    """(parameters not in routed experts, routed expert parameters) on a device of stage s."""
    start = sum(stages[:s])
    split = router = experts = 0
    for i in range(start, start + stages[s]):
        t, r, e = layer(m, i)
        split, router, experts = split + t, router + r, experts + e
    emb = m["vocab_size"] * m["hidden_size"]
    if s == 0:
        split += emb + vision(m)
    if s == len(stages) - 1:
        split += emb
    return split / tp + router, experts / (ep * etp)


def update_gb(m, stages, s, tp, pp, ep, etp, world, cpu_fraction, tokens, in_flight, recompute_full) -> dict:
    """The actor update on a device of stage s, GB by term."""
    dense, experts = stage(m, stages, s, tp, ep, etp)
    h = m["hidden_size"]
    ffn = m["num_experts_per_tok"] * m["moe_intermediate_size"] + m.get("shared_expert_intermediate_size", 0)
    per_layer = tokens * h * (18 + 4 * ffn / h) / tp
    if recompute_full:
        act = stages[s] * 2 * tokens * h / tp * in_flight + per_layer
    else:
        act = stages[s] * per_layer * in_flight
    out = {
        "weights": 2 * (dense + experts) / GB,
        "grads": 4 * (dense + experts) / GB,
        "optimizer": 12
        * (dense / (world // (tp * pp)) + experts / (world // (etp * ep * pp)))
        * (1 - cpu_fraction)
        / GB,
        "activations": act / GB,
        "logits": 10 * tokens * m["vocab_size"] / tp / GB if s == len(stages) - 1 else 0.0,
    }
    out["total"] = sum(out.values())
    return out


def rollout_weights_gb(m: dict, tp: int, ep: int) -> float:
    w = whole(m)
    if ep > 1:
        return 2 * (w["non_expert"] / tp + w["experts"] / ep)
    return 2 * w["total"] / tp


def kv_gb(m: dict, tp: int, tokens: int) -> float:
    """KV cache of `tokens` tokens on a rollout device: full-attention layers x 2 x (at least one)
    KV head per device x head_dim x 2 B."""
    full = sum(is_full(m, i) for i in range(m["num_hidden_layers"]))
    return full * 2 * max(m["num_key_value_heads"] // tp, 1) * m["head_dim"] * 2 * tokens / GB
