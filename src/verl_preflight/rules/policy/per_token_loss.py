"""What the Megatron engine refuses when Megatron computes the loss per token, as the launch's verl checks it.

With `calculate_per_token_loss` on, the Megatron engine checks every micro batch's
loss (verl 0.9.0 workers/engine/megatron/transformer_impl.py:1440-1463,
`postprocess_micro_batch_func`): `loss_agg_mode=seq-mean-token-mean` without
dynamic context parallel raises ValueError (0.9.0; the guard is gone in 0.9.1),
and BSHD (`megatron.use_remove_padding=False`) raises ValueError (0.9.0, 0.9.1).
The rule runs that block of the launch's verl over the actor's config
(sources/verl_batches.py, sources/pyeval/), at the first update.

Whether Megatron computes the loss per token is the stack's: the launch turns it
on itself with `override_transformer_config.calculate_per_token_loss=True`
(verl hands the overrides to the bridge: an error), and Megatron-Bridge's model
provider turns it on at context parallel > 1 for the models whose provider does
so (Megatron-Bridge qwen_vl/qwen35_vl_provider.py `Qwen35VLModelProvider.finalize`:
Qwen3.5 and Qwen3-VL). The second is an assumption about the model and the
Megatron-Bridge release the tool cannot read here: a warning that says so.
"""

from __future__ import annotations

from ...sources.verl_batches import legacy_workers, per_token_loss, per_token_loss_failure
from .. import Rule
from .config_field import _package_root

ACTOR = "actor_rollout_ref.actor"
MEGATRON = f"{ACTOR}.megatron"
SWITCH = f"{MEGATRON}.override_transformer_config.calculate_per_token_loss"
CP = f"{MEGATRON}.context_parallel_size"


class PerTokenLoss(Rule):
    id = "per-token-loss"
    severity = "error"
    stage = "policy"
    scope = "launch"
    summary = (
        "the Megatron engine's checks on a per-token loss (calculate_per_token_loss) must pass, as the launch's "
        "verl runs them"
    )
    why = (
        "When Megatron computes the loss per token, verl's Megatron engine refuses a loss it cannot normalize that "
        "way (seq-mean-token-mean without dynamic context parallel, in verl 0.9.0) and BSHD inputs; the ValueError "
        "comes at the first update, after the cluster is up and the model is loaded. Megatron-Bridge turns the "
        "per-token loss on by itself at context parallel > 1 for some models, so the same launch fails only on "
        "that stack."
    )
    ground_truth = (
        "verl 0.9.0 workers/engine/megatron/transformer_impl.py:1440-1463 (seq-mean-token-mean without dynamic "
        "CP: ValueError at :1447; use_remove_padding=False: ValueError), :302-310 and :362-363 (verl's own and the "
        "launch's override_transformer_config reach the provider); verl 0.9.1 transformer_impl.py:1470-1480 "
        "(the BSHD check only); Megatron-Bridge src/megatron/bridge/models/qwen_vl/qwen35_vl_provider.py "
        "Qwen35VLModelProvider.finalize (calculate_per_token_loss = True when context_parallel_size > 1)"
    )
    bad = (
        "verl 0.9.0, model_engine=megatron: actor.loss_agg_mode=seq-mean-token-mean "
        "+actor.megatron.override_transformer_config.calculate_per_token_loss=True"
    )
    good = "actor.loss_agg_mode=token-mean"

    def check_launch(self, view, ctx):
        root = _package_root(view.source)
        if root is None or view.value(f"{ACTOR}.strategy") != "megatron":
            return []
        facts = per_token_loss(root)
        if facts is None or legacy_workers(view, root, "megatron") is not None:
            return []  # no such check in this verl, or the legacy workers run (no engine)
        certain = view.value(SWITCH) is True
        cp = view.int_value(CP)
        bridge = view.target.stack.bridge if view.target is not None else "megatron-bridge"
        if not certain and not (cp and cp > 1 and bridge == "megatron-bridge"):
            return []
        failure = per_token_loss_failure(view, facts, ACTOR)
        if failure is None:
            return []
        version = view.verl_version
        order = {s.key: i for i, s in enumerate(view.settings)}
        set_here = [k for k in failure.own if k in order]
        key = max(set_here, key=order.__getitem__) if set_here else (failure.own[0] if failure.own else CP)
        said = failure.text.split(". ")[0]
        cite = f"verl {version} {failure.path.rsplit('/', 1)[-1]}:{failure.line}"
        raises = f"raises {failure.kind} at the first update ({cite})"
        if certain:
            text, at_most = f"with the per-token loss on, the Megatron engine {raises}: {said}", None
        else:
            text = (
                f"if Megatron-Bridge turns calculate_per_token_loss on at CP {cp} (as for Qwen3.5), the engine "
                f"{raises}: {said}"
            )
            at_most = "warning"
        finding = self.finding(view.where(key), text, key, at_most=at_most)
        others = [k for k in (SWITCH, CP) if k != key and view.setting(k) is not None]
        return [finding.with_related((view.where(k), k) for k in others)]
