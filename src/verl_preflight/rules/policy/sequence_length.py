"""Prompt + response must fit every length budget the launch's verl and its vLLM engine enforce.

Decided by the code of the launch's verl, read from its tree (sources/verl_lengths.py):

- Dynamic batch size. With a role's dynamic batch size on, verl's
  `rearrange_micro_batches` asserts that the role's `*max_token_len_per_gpu`
  times the parallel size the workers multiply it by (Ulysses SP on FSDP, CP
  on Megatron, as that version's code multiplies) is at least the batch's
  sequence length: the padded width prompt + response (an error), or, where
  the version's trainer hands the workers nested (unpadded) batches, the
  longest sample (a warning: the first batch with a sample longer than the
  budget fails). Roles: the actor's update (actor.ppo_max_token_len_per_gpu),
  its old log-probs (rollout.log_prob_max_token_len_per_gpu), the ref
  (ref.log_prob_max_token_len_per_gpu) when verl builds one, the critic's
  (critic.*max_token_len_per_gpu) when it builds one; a key is checked only
  where that version's workers read it. A budget inherited by interpolation
  is reported once, on the key it comes from. None is checked where the launch
  turns trainer.val_only on and the version's fit returns after its first
  validation (no training step runs; sources/verl_batches.validation_only).
- The vLLM rollout. verl's own code that builds vLLM's engine arguments is run
  over the launch's config and the model's config (`--model-config DIR`, the
  model path's config.json under `--profile current`, or the shipped table):
  what verl refuses there (verl 0.4's sync rollout asserts the model's
  max_position_embeddings holds prompt + response unless rope scaling is set;
  later versions refuse a max_model_len above it) is an error; then vLLM's own
  checks on what it gets: max_model_len above the model's length (rope scaling
  multiplies it) fails unless VLLM_ALLOW_LONG_MAX_MODEL_LEN is exported, and
  with chunked prefill off max_num_batched_tokens below max_model_len fails
  (where that version of verl does not raise it itself). A max_model_len below
  prompt + response runs and cuts the responses (a warning). Two settings
  that do nothing are warnings too: rollout.max_model_len where the version
  replaces it with max_position_embeddings (v0.7), and
  enable_chunked_prefill=False where the version turns the engine arguments into
  command-line flags and leaves a False one out (v0.7, 0.8: vLLM keeps chunked
  prefill on).
"""

from __future__ import annotations

from ...sources.verl_batches import ulysses_size, validation_only
from ...sources.verl_lengths import MODEL_KEY, token_budget
from ...target import layout as lay
from .. import Rule
from .config_field import _package_root

ARF = "actor_rollout_ref"
ROLLOUT = f"{ARF}.rollout"

# (who, budget key, its dynamic batch switch, the section whose model and parallel size it is)
BUDGETS = (
    ("actor update", f"{ARF}.actor.ppo_max_token_len_per_gpu", f"{ARF}.actor.use_dynamic_bsz", f"{ARF}.actor"),
    (
        "actor log-prob",
        f"{ROLLOUT}.log_prob_max_token_len_per_gpu",
        f"{ROLLOUT}.log_prob_use_dynamic_bsz",
        f"{ARF}.actor",
    ),
    ("ref", f"{ARF}.ref.log_prob_max_token_len_per_gpu", f"{ARF}.ref.log_prob_use_dynamic_bsz", f"{ARF}.ref"),
    ("critic update", "critic.ppo_max_token_len_per_gpu", "critic.use_dynamic_bsz", "critic"),
    ("critic forward", "critic.forward_max_token_len_per_gpu", "critic.use_dynamic_bsz", "critic"),
    ("critic forward", "critic.ppo_infer_max_token_len_per_gpu", "critic.use_dynamic_bsz", "critic"),
)
VLLM_CHECKS = (
    "vLLM vllm/config.py ModelConfig `_get_and_verify_max_len` (ValueError for a max_model_len above the model's "
    "derived length, which rope scaling multiplies, unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1) and SchedulerConfig "
    "(vllm/config/scheduler.py `verify_max_model_len` at commit 01230b40: ValueError when max_num_batched_tokens "
    "< max_model_len with chunked prefill off)"
)


class SequenceLength(Rule):
    id = "sequence-length"
    severity = "error"
    stage = "policy"
    scope = "launch"
    summary = (
        "prompt + response within each dynamic-batch token budget (x SP / CP), the model's "
        "max_position_embeddings and vLLM's max_num_batched_tokens, as the launch's verl checks them"
    )
    why = (
        "verl's dynamic batching asserts that a micro-batch budget holds a whole sequence, in every training "
        "worker at the first step; verl's vLLM rollout refuses a context longer than the model's, and vLLM refuses "
        "max_num_batched_tokens below max_model_len without chunked prefill. These fail after the cluster is up. "
        "Which checks run, what they compare and whether verl adjusts a value itself differs by version: the rule "
        "runs the launch's verl code to decide."
    )
    ground_truth = (
        "verl 0.9.1 utils/seqlen_balancing.py:384 (assert max_token_len >= max_seq_len; :377 nested inputs: the "
        "longest sample), workers/engine/utils.py:111 (x sp_size), engine/fsdp/transformer_impl.py:726 (Ulysses "
        "SP), engine/megatron/transformer_impl.py:836 (CP), trainer/ppo/ray_trainer.py:1255 (nested batches), "
        "workers/rollout/vllm_rollout/vllm_async_server.py:1101-1119 (max_model_len defaults to "
        "max_position_embeddings, ValueError above it; verl raises max_num_batched_tokens itself without chunked "
        "prefill); verl 0.8.0 vllm_async_server.py:810-819 (no raise of max_num_batched_tokens), "
        "workers/rollout/vllm_rollout/utils.py:341-346 (a False flag is left out of vLLM's arguments); verl v0.7.0 "
        "vllm_async_server.py:198 (max_model_len is always max_position_embeddings), :362-365 (a False flag is left "
        "out), seqlen_balancing.py:382, "
        "trainer/ppo/ray_trainer.py:1144-1147 (nested only with use_legacy_worker_impl=disable); verl v0.4.1 "
        "utils/seqlen_balancing.py:263 (padded width), workers/actor/dp_actor.py:324,424 (x Ulysses SP), "
        "workers/actor/megatron_actor.py:178,537 (x CP), workers/rollout/vllm_rollout/vllm_rollout_spmd.py:112-131 "
        "(assert max_position_embeddings >= prompt + response unless rope_scaling; ValueError when chunked prefill "
        f"is on and max_num_batched_tokens < max_model_len); {VLLM_CHECKS}"
    )
    bad = (
        "data.max_prompt_length=1024 data.max_response_length=8192 actor_rollout_ref.actor.use_dynamic_bsz=True "
        "actor_rollout_ref.actor.ppo_max_token_len_per_gpu=8192"
    )
    good = "... actor_rollout_ref.actor.ppo_max_token_len_per_gpu=16384 (at least prompt + response)"

    def check_launch(self, view, ctx):
        root = _package_root(view.source)
        if root is None:
            return []
        version = view.verl_version
        prompt, response = (lay.rollout_length(view, *keys) for keys in lay.LENGTHS)
        if prompt is None or response is None:
            return []
        out = []
        self._budgets(view, root, version, prompt, response, out)
        if view.value(f"{ROLLOUT}.name") == "vllm":
            self._vllm(view, ctx, version, prompt, response, out)
        return out

    # ---- dynamic batch size ------------------------------------------------------

    def _budgets(self, view, root, version, prompt, response, out) -> None:
        tb = token_budget(root)
        if tb is None or validation_only(view, root) is not None:
            return  # (trainer.val_only: fit returns after validation, no training step splits a batch)
        total = prompt[0] + response[0]
        padded = _padded(view, tb)
        critic = lay.critic_used(view)
        groups: dict = {}
        for who, key, switch, section in BUDGETS:
            name = key.rsplit(".", 1)[-1]
            if name not in tb.keys or view.raw(key) is None and view.setting(key) is None:
                continue
            if view.value(switch) is not True:
                continue
            if section.endswith(".ref") and not lay.ref_used(view):
                continue
            if section == "critic" and critic is not True:
                continue
            budget = view.int_value(key)
            if budget is None:
                continue
            factor = _factor(view, tb, section)
            if factor is None:
                continue
            size, size_name, size_key = factor
            if budget * size >= total:
                continue
            source = view.source_key(key)
            groups.setdefault((source, budget, size, size_name), []).append((who, key, size_key))
        for (source, budget, size, size_name), roles in groups.items():
            names = " and ".join(dict.fromkeys(who for who, _, _ in roles))
            times = f" x {size_name.split('_')[0]} {size}" if size > 1 else ""
            short = source.rsplit(".", 1)[-1]
            text = f"{names}: {short} {budget}{times} < prompt + response {total}"
            if padded is True:
                text += f" (the padded width): verl {version} asserts max_token_len >= max_seq_len ({tb.check})"
                at_most = None
            else:
                how = "nested batches count their longest sample" if padded is False else "padding not known here"
                text += f": the first batch with a longer sample fails verl {version}'s assert ({tb.check}; {how})"
                at_most = "warning"
            text += f"; set it >= {-(-total // size)}"
            loc_key = source if view.setting(source) is not None else _length_key(view, prompt, response)
            out.append(self.finding(view.where(loc_key), text, source, at_most=at_most))

    # ---- vLLM ----------------------------------------------------------------------

    def _vllm(self, view, ctx, version, prompt, response, out) -> None:
        try:
            shape = lay.model_shape(view, ctx)
        except lay.ModelConfigError:
            shape = None
        known = shape is not None and shape.max_position_embeddings is not None and shape.rope_known
        mpe = shape.max_position_embeddings if known else None
        rope = shape.rope_scaling if known else None
        length = lay.rollout_max_model_len(view, shape)  # verl's own engine arguments, as the memory estimate's
        engine = length.engine
        if engine is None:
            return
        total = prompt[0] + response[0]
        model = (
            f"{shape.name}, {'config.json' if shape.source != 'models.yaml' else 'shipped shapes'}" if known else None
        )
        if engine.failure is not None:
            f = engine.failure
            key = _failure_key(view, f.keys) or _length_key(view, prompt, response)
            about = f" [{model}]" if model and MODEL_KEY in f.keys else ""
            text = (
                f"verl {version} refuses the vLLM rollout at start ({engine.failure_at}, {f.kind}): {f.text}{about}"
            )
            out.append(self.finding(view.where(key), text, key))
            return
        tokens, chunked = (engine.values[k].value for k in ("max_num_batched_tokens", "enable_chunked_prefill"))
        mml = length.value
        raised = _rewrite(engine, "max_num_batched_tokens")
        mml_key = f"{ROLLOUT}.max_model_len"
        given = view.value(mml_key) if view.setting(mml_key) is not None else None
        # (verl's value equals the script's: the launch runs with what the script asked for, nothing to say)
        if length.rewrite is not None and given is not None and not (isinstance(mml, int) and given == mml):
            text = (
                f"verl {version} replaces rollout.max_model_len with {length.rewrite_to} ({length.rewrite}): "
                "this setting does nothing"
            )
            out.append(self.finding(view.where(mml_key), text, mml_key, at_most="warning"))
        # what verl set it to itself, for the messages below; the key that sets it, where one does
        by_verl = length.rewrite if length.key is None else None
        whose = "the model's" if length.source == lay.MODEL_LEN else length.source
        how = f" ({whose}, set by verl {version} at {by_verl})" if by_verl is not None else ""
        mml_at = length.key or mml_key
        # vLLM: max_model_len above the model's own length
        derived = _derived_max_len(mpe, rope) if known else None
        allowed = str(view.exported("VLLM_ALLOW_LONG_MAX_MODEL_LEN") or "").lower() in ("1", "true")
        if isinstance(mml, int) and derived is not None and mml > derived and not allowed:
            where = mml_at if view.setting(mml_at) is not None else _length_key(view, prompt, response)
            text = (
                f"vLLM refuses max_model_len {mml} above the model's length {derived} [{model}"
                f"{', rope scaling' if rope else ''}] when the rollout starts (ValueError; verl {version} passes it at "
                f"{engine.built_at}) unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is exported"
            )
            out.append(self.finding(view.where(where), text, where))
            return
        # a False flag verl never hands to vLLM
        switch = f"{ROLLOUT}.enable_chunked_prefill"
        if chunked is False and engine.drops_false is not None:
            if view.setting(switch) is not None:
                text = (
                    f"verl {version} drops a False flag from vLLM's arguments ({engine.drops_false}): vLLM keeps "
                    "chunked prefill on and this setting does nothing"
                )
                out.append(self.finding(view.where(switch), text, switch, at_most="warning"))
            chunked = None
        # vLLM's scheduler without chunked prefill
        if chunked is False and raised is None and isinstance(tokens, int):
            tokens_key = f"{ROLLOUT}.max_num_batched_tokens"
            where = tokens_key if view.setting(tokens_key) is not None else switch
            if isinstance(mml, int) and tokens < mml:
                text = (
                    f"with chunked prefill off vLLM refuses max_num_batched_tokens {tokens} < max_model_len {mml}{how} "
                    f"when the rollout starts (ValueError); set it >= {mml} or enable chunked prefill"
                )
                out.append(self.finding(view.where(where), text, tokens_key))
            elif mml is None and by_verl is not None:
                text = (
                    f"with chunked prefill off vLLM refuses max_num_batched_tokens {tokens} below max_model_len, which "
                    f"verl {version} sets to {length.source} ({by_verl}), unknown here "
                    "(--model-config DIR); raise it or set max_model_len"
                )
                out.append(self.finding(view.where(where), text, tokens_key, at_most="warning"))
        # responses cut at max_model_len
        if isinstance(mml, int) and mml < total:
            where = mml_at if view.setting(mml_at) is not None else _length_key(view, prompt, response)
            text = (
                f"vLLM's max_model_len {mml}{how} < prompt + response {total}: generation stops at {mml} tokens, "
                "so long responses are cut short of data.max_response_length"
            )
            out.append(self.finding(view.where(where), text, where, at_most="warning"))


def _length_key(view, prompt, response) -> str:
    """Where to report a length problem with no key of its own: the response length's override,
    else the prompt length's."""
    for _, key in (response, prompt):
        if view.setting(key) is not None:
            return key
    return response[1]


def _padded(view, tb):
    """True: the assert compares with the padded width; False: with the longest sample of
    nested inputs; None: not known."""
    if tb.longest_sample is None or not tb.nested_at:
        return True
    if tb.nested_test_unknown:
        return None
    if tb.nested_when is None:
        return False
    key, values, default = tb.nested_when
    value = view.value(key)
    if value is None:
        value = default
    if not isinstance(value, str | int | bool):
        return None
    return value not in values


def _factor(view, tb, section: str):
    """(size, its name, its key) the workers multiply the section's budget by; None when not
    known statically, or when the version's code multiplies by something this rule does not read
    and the sizes are not all 1."""
    strategy = view.value(f"{section}.strategy")
    engine = "megatron" if strategy == "megatron" else "fsdp"
    names = set(tb.factors.get(engine, {}))
    sp, sp_key = ulysses_size(view, section)
    cp_key = f"{section}.megatron.context_parallel_size"
    cp = view.int_value(cp_key) if view.value(cp_key) is not None else 1
    if sp is None or cp is None or sp < 1 or cp < 1:
        return None  # (a size below 1 is no parallel size: nothing to multiply the budget by)
    if engine == "fsdp" and "ulysses_sequence_parallel_size" in names:
        return sp, "ulysses_sequence_parallel_size", sp_key
    if engine == "megatron" and "context_parallel_size" in names:
        return cp, "context_parallel_size", cp_key
    if (engine == "fsdp" and sp == 1) or (engine == "megatron" and cp == 1):
        return 1, "", None
    return None


def _failure_key(view, keys) -> str | None:
    """The last key behind a failure that the launch sets (itself or through the key it inherits from)."""
    found = None
    for key in keys:
        source = view.source_key(key)
        if view.setting(source) is not None:
            found = source
    return found


def _rewrite(engine, name: str):
    """(value, where) of verl's own rewrite of a rollout key, or None."""
    for key, value, cite in engine.rewrites:
        if key.rsplit(".", 1)[-1] == name:
            return value, cite
    return None


def _derived_max_len(mpe: int, rope: dict | None) -> int:
    """vLLM's length of a model: max_position_embeddings, times a rope scaling factor (yarn:
    original_max_position_embeddings x factor); su, longrope and llama3 scaling leave it."""
    if not isinstance(rope, dict):
        return mpe
    kind = rope.get("rope_type", rope.get("type"))
    if kind in ("su", "longrope", "llama3"):
        return mpe
    factor = rope.get("factor", 1.0)
    base = rope.get("original_max_position_embeddings", mpe) if kind == "yarn" else mpe
    try:
        return int(base * float(factor))
    except (TypeError, ValueError):
        return mpe
