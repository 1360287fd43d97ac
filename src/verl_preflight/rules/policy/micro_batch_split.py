"""A GPU's share of the mini batch must be positive and split into micro batches, as the launch's verl computes it.

The per-GPU arithmetic differs by version, and the rule runs the launch's
verl code for it (sources/verl_batches.py):

- Legacy workers (verl v0.4, and v0.7 unless trainer.use_legacy_worker_impl=disable).
  Each worker's constructor normalizes the batch sizes: ppo_mini_batch_size
  x rollout.n divided by the data-parallel size (FSDP: world // Ulysses SP;
  Megatron: world // (TP x PP x CP)), a deprecated global micro batch size
  divided the same way; FSDP workers then assert the normalized mini batch is
  positive and divisible by the per-GPU micro batch, whenever a per-GPU micro
  batch size is set, with dynamic batch size on or off. The constructors are
  run over the launch's config: a failing assert, a division by zero, or a
  log-prob / forward micro batch that normalization makes 0 (used when that
  section's dynamic batch size is off) is an error. Megatron workers then
  iterate a data-parallel rank's batch (train_batch_size x rollout.n / DP) in
  normalized mini batches at the first update, which `DataProto.make_iterator`
  asserts divide it (run); and with a virtual pipeline each step's micro batches
  per rank (the log-prob batch / log_prob_micro_batch_size_per_gpu, a mini batch
  / ppo_micro_batch_size_per_gpu) go to Megatron-Core's interleaved schedule,
  whose checks are run from the megatron-core release the stack names (a
  warning when the release is the default, not named). Left to verl's driver-side
  validate_config, which fails first (the `verl-check` rule): with dynamic batch
  size off, an assert that reads no normalized value, and a division by zero from
  a deprecated micro batch size (validate_config asserts micro x SP >= GPUs).
- Engine workers (verl 0.8 on; v0.7 with use_legacy_worker_impl=disable). The
  trainer hands update_actor ppo_mini_batch_size x rollout.n rows (its
  `_update_actor`, run), and the worker asserts that they split over the
  engine's data-parallel ranks (its `get_data_parallel_size`, run); without
  dynamic batch size the engine asserts that a GPU's mini batch splits into
  ppo_micro_batch_size_per_gpu, and that a GPU's share of the log-prob batch
  (train_batch_size x rollout.n / DP) splits into log_prob_micro_batch_size_per_gpu.
"""

from __future__ import annotations

from ...sources.megatron_schedule import interleaved_failure, schedule
from ...sources.pyeval import UNKNOWN, V
from ...sources.verl_batches import (
    engine_asserts,
    engine_data_parallel,
    legacy_workers,
    megatron_ranks,
    micro_batching,
    mini_batch_failure,
    mini_batches,
    normalization,
    trainer_mini_batch,
)
from ...target import layout as lay
from .. import Rule
from .config_field import _package_root

ARF = "actor_rollout_ref"
ROLES = (
    ("actor/rollout", "ActorRolloutRefWorker", ARF, "actor_rollout"),
    ("ref", "ActorRolloutRefWorker", ARF, "ref"),
    ("critic", "CriticWorker", "critic", "critic"),
)
# the dynamic batch switch of the section a batch key belongs to
SWITCHES = (
    (f"{ARF}.rollout.", f"{ARF}.rollout.log_prob_use_dynamic_bsz"),
    (f"{ARF}.ref.", f"{ARF}.ref.log_prob_use_dynamic_bsz"),
    (f"{ARF}.actor.", f"{ARF}.actor.use_dynamic_bsz"),
    ("critic.", "critic.use_dynamic_bsz"),
)
UPDATE_ROLES = {"actor/rollout": "actor", "critic": "critic"}
VPP = "virtual_pipeline_model_parallel_size"
STEP_SWITCHES = {
    "compute_log_prob": f"{ARF}.rollout.log_prob_use_dynamic_bsz",
    "update_actor": f"{ARF}.actor.use_dynamic_bsz",
}
STEP_NAMES = {"compute_log_prob": "log-prob step", "update_actor": "update of a mini batch"}
DEPRECATED = ("ppo_micro_batch_size", "log_prob_micro_batch_size", "forward_micro_batch_size")
USED_WHEN_STATIC = ("log_prob_micro_batch_size_per_gpu", "forward_micro_batch_size_per_gpu")


class MicroBatchSplit(Rule):
    id = "micro-batch-split"
    severity = "error"
    stage = "policy"
    scope = "launch"
    reads_verls_workers = True
    summary = (
        "the per-GPU mini batch verl computes (mini x rollout.n / data-parallel ranks) must be positive, divide a "
        "rank's batch and split into the micro batches, as the launch's verl version (and Megatron-Core's pipeline "
        "schedule) normalizes and checks it"
    )
    why = (
        "Each training worker turns the global batch sizes into per-GPU ones when it starts (legacy workers) or at "
        "the first update (engine workers) and asserts they divide; a wrong one stops every worker after the "
        "cluster is up. The arithmetic differs by version (verl v0.4 checks the normalized mini batch against "
        "the micro batch even with dynamic batch size on; verl 0.9 splits the mini batch over the data-parallel "
        "ranks), so the rule runs the launch's verl code."
    )
    ground_truth = (
        "verl v0.4.1 workers/fsdp_workers.py:154-175 (ActorRolloutRefWorker: mini x n // (world // SP), assert > "
        "0, assert % ppo_micro_batch_size_per_gpu == 0; deprecated micro // (world // SP)), :858-869 (CriticWorker), "
        "workers/megatron_workers.py:135-153 (// mpu data-parallel size; the ref asserts a micro batch size is "
        "set); verl v0.7.0 workers/fsdp_workers.py:240-275, workers/megatron_workers.py:332-356, "
        "trainer/main_ppo.py:128-131 (engine workers with use_legacy_worker_impl=disable); verl 0.9.1 "
        "workers/engine_workers.py:267 (assert mini_batch_size % data-parallel size == 0), "
        "trainer/ppo/ray_trainer.py:1352-1363 (mini_batch_size = ppo_mini_batch_size x rollout.n), "
        "verl 0.4.0 workers/megatron_workers.py:124-125 (normalized mini batch), workers/actor/megatron_actor.py:274 "
        "and protocol.py:606 (make_iterator asserts the rank's batch % mini batch == 0), megatron_workers.py:422, "
        ":515 and megatron_actor.py:307-313, 453 (micro batches handed to get_forward_backward_func); megatron-core "
        "0.12.0 pipeline_parallel/schedules.py:777-798 (interleaved schedule: ValueError below the pipeline size, "
        "RuntimeError for a short final group), model_parallel_config.py:389-390 (group size = pipeline size); "
        "workers/engine/utils.py:123-126 (a GPU's batch % micro_batch_size_per_gpu == 0 without dynamic batch "
        "size), workers/engine/fsdp/transformer_impl.py:651-652 and engine/megatron/transformer_impl.py:756-760 "
        "(data-parallel size)"
    )
    bad = (
        "verl v0.4.1, 16 GPUs: ppo_mini_batch_size=16 rollout.n=4 ppo_micro_batch_size_per_gpu=3 "
        "(normalized mini batch 4 is not divisible by 3)"
    )
    good = "... ppo_micro_batch_size_per_gpu=2"

    def check_launch(self, view, ctx):
        root = _package_root(view.source)
        if root is None:
            return []
        version = view.verl_version
        out: list = []
        self._legacy(view, root, version, out)
        self._engine(view, root, version, out)
        return out

    # ---- legacy workers --------------------------------------------------------

    def _legacy(self, view, root, version, out) -> None:
        roles = [r for r in ROLES if _builds(view, r[0])]
        seen = set()
        for result in normalization(view, root, roles):
            rewritten = {a.key for a in result.assigned}
            f = result.failure
            if f is not None and not _validate_first(view, f, rewritten):
                key = _report_key(view, f.keys)
                text = (
                    f"the {result.worker} worker of verl {version} stops when it starts ({result.path}:{f.line}, "
                    f"{f.kind}): {f.text}{_trace(view, result.assigned)}"
                )
                if (text, key) not in seen:
                    seen.add((text, key))
                    out.append(self.finding(view.where(key), text, key))
            if f is not None:
                continue
            self._mini_batches(view, root, version, result, out)
            self._pipeline(view, root, version, result, out)
            for a in _last_values(result.assigned):
                name = a.key.rsplit(".", 1)[-1]
                if a.value != 0 or isinstance(a.value, bool):
                    continue
                if name in USED_WHEN_STATIC and view.value(_switch(a.key)) is not False:
                    continue
                if name not in USED_WHEN_STATIC and name != "ppo_mini_batch_size":
                    continue
                key = _report_key(view, a.keys)
                text = (
                    f"the {result.worker} worker of verl {version} normalizes {a.key.split('.', 1)[-1]} to 0 per GPU "
                    f"({result.path}:{a.line}){_trace(view, result.assigned, a.key)}: its first batch cannot be split "
                    "(a batch of 0); give at least one sample a GPU"
                )
                if (text, key) not in seen:
                    seen.add((text, key))
                    out.append(self.finding(view.where(key), text, key))

    def _mini_batches(self, view, root, version, result, out) -> None:
        """A legacy Megatron worker's first update iterates its rank's batch in normalized mini batches."""
        role = UPDATE_ROLES.get(result.worker)
        facts = mini_batches(root, role) if role and result.path.endswith("megatron_workers.py") else None
        batches = _rank_batches(view, result, role) if facts is not None else None
        if batches is None:
            return
        per_rank, mini, ranks = batches
        failure = mini_batch_failure(view, facts, per_rank, V(mini.value, tuple(mini.keys)))
        if failure is None:
            return
        key = _report_key(view, mini.keys) or mini.key
        text = (
            f"verl {version}'s {result.worker} worker splits a rank's {per_rank.value} samples (train_batch_size x "
            f"rollout.n / {ranks.value} DP ranks) into mini batches of {mini.value} (ppo_mini_batch_size x rollout.n "
            f"/ {ranks.value}, {result.path}:{mini.line}) and asserts they divide at its first update ({facts.check}, "
            f"{failure.kind}): {failure.text}"
        )
        out.append(self.related(view, key, text, ("data.train_batch_size",)))

    def _pipeline(self, view, root, version, result, out) -> None:
        """With a virtual pipeline, each step's micro batches per rank go to Megatron's interleaved
        schedule, which refuses fewer than it needs (megatron-core's own checks, evaluated)."""
        section = f"{ARF}.actor.megatron"
        pp, vpp = view.int_value(f"{section}.pipeline_model_parallel_size"), view.int_value(f"{section}.{VPP}")
        steps = micro_batching(root, result.path) if result.worker == "actor/rollout" and vpp else ()
        batches = _rank_batches(view, result, "actor") if steps and pp else None
        stack = view.target.stack if view.target is not None else None
        found = schedule(stack.version("megatron-core")) if batches is not None and stack is not None else None
        if found is None:
            return
        per_rank, mini, _ = batches
        group = view.int_value(f"{section}.override_transformer_config.microbatch_group_size_per_vp_stage")
        for step in steps:
            if view.value(STEP_SWITCHES[step.method]) is not False:
                continue  # dynamic batch size: another split (rearrange_micro_batches), not read here
            micro = _normalized(view, result, step.key)
            rows = per_rank.value if step.method == "compute_log_prob" else mini.value
            if not micro or micro < 1:
                continue
            count = -(-rows // micro)
            failure = interleaved_failure(view, found, pp, vpp, count, group)
            if failure is None:
                continue
            where = stack.names("megatron-core")
            said = failure.text.split(". ")[0]
            text = (
                f"verl {version}'s {STEP_NAMES[step.method]} hands Megatron {count} micro batch"
                f"{'es' if count != 1 else ''} a rank ({rows} samples / {step.key.rsplit('.', 1)[-1]} {micro}); the "
                f"interleaved schedule (PP {pp} x VPP {vpp}) of {where} refuses it (schedules.py:{failure.line}, "
                f"{failure.kind}): {said}"
            )
            at_most = "warning" if stack.assumed("megatron-core") else None
            out.append(self.related(view, step.key, text, (f"{section}.{VPP}",), at_most))

    def related(self, view, key: str, text: str, others: tuple, at_most=None):
        """A finding at `key` that names the other settings of the relation the launch sets."""
        finding = self.finding(view.where(key), text, key, at_most=at_most)
        shown = [k for k in others if k != key and view.setting(k) is not None]
        return finding.with_related((view.where(k), k) for k in shown)

    # ---- engine workers ----------------------------------------------------------

    def _engine(self, view, root, version, out) -> None:
        facts = engine_asserts(root)
        if facts is None or facts.mini_split is None:
            return
        if legacy_workers(view, root, view.value(f"{ARF}.actor.strategy")) is not None:
            return
        mini = trainer_mini_batch(view, root)
        dp = engine_data_parallel(view, root, f"{ARF}.actor")
        if not _ints(mini, dp) or dp.value < 1:
            return
        mini_key = _report_key(view, mini.keys) or f"{ARF}.actor.ppo_mini_batch_size"
        if mini.value % dp.value:
            text = (
                f"verl {version} splits the actor's mini batch of ppo_mini_batch_size x rollout.n = {mini.value} over "
                f"{dp.value} data-parallel ranks and asserts it divides ({facts.mini_split}; the trainer's "
                f"{facts.trainer_at}): the first update fails"
            )
            out.append(self.finding(view.where(mini_key), text, mini_key))
            return
        if facts.micro_split is None:
            return
        per_gpu = mini.value // dp.value
        checks = [
            (f"{ARF}.actor.use_dynamic_bsz", f"{ARF}.actor.ppo_micro_batch_size_per_gpu", per_gpu, "mini batch", dp),
        ]
        rows = _log_prob_rows(view)
        if rows is not None:
            for section, switch in ((f"{ARF}.rollout", f"{ARF}.rollout.log_prob_use_dynamic_bsz"),):
                checks.append((switch, f"{section}.log_prob_micro_batch_size_per_gpu", None, "log-prob batch", dp))
            if lay.ref_used(view):
                rdp = engine_data_parallel(view, root, f"{ARF}.ref")
                if _ints(rdp) and rdp.value >= 1:
                    checks.append(
                        (
                            f"{ARF}.ref.log_prob_use_dynamic_bsz",
                            f"{ARF}.ref.log_prob_micro_batch_size_per_gpu",
                            None,
                            "ref log-prob batch",
                            rdp,
                        )
                    )
        for switch, micro_key, share, what, ranks in checks:
            if view.value(switch) is not False:
                continue
            micro = view.int_value(micro_key)
            if not micro or micro < 1:
                continue
            if share is None:
                if rows % ranks.value:
                    continue  # the dispatch fails first (batch-dispatch)
                share = rows // ranks.value
            if share % micro:
                where = micro_key if view.setting(micro_key) is not None else mini_key
                text = (
                    f"a GPU's {what} of {share} samples is not divisible by {micro_key.split('.', 1)[-1]} {micro}: "
                    f"verl {version} asserts it without dynamic batch size ({facts.micro_split})"
                )
                out.append(self.finding(view.where(where), text, micro_key))


def _rank_batches(view, result, role: str):
    """(a data-parallel rank's samples, the normalized mini batch (Assigned), the ranks) of a legacy
    Megatron worker's training batch; None when not known or when the dispatch's split fails first."""
    section = f"{ARF}.actor" if role == "actor" else "critic"
    mini = next((a for a in reversed(result.assigned) if a.key == f"{section}.ppo_mini_batch_size"), None)
    ranks = megatron_ranks(view, section)
    train, n = view.int_value("data.train_batch_size"), view.int_value(f"{ARF}.rollout.n")
    if mini is None or ranks is None or not train or not n or not _ints(V(mini.value)) or mini.value < 1:
        return None
    rows = train * n
    if rows % ranks.value:
        return None  # the dispatch's equal split fails first (batch-dispatch, verl-check)
    per_rank = V(rows // ranks.value, ("data.train_batch_size", f"{ARF}.rollout.n", *ranks.keys))
    return per_rank, mini, ranks


def _normalized(view, result, key: str):
    """A batch size as the worker left it: its last normalized value, else the launch's."""
    last = next((a.value for a in reversed(result.assigned) if a.key == key), None)
    value = last if last is not None else view.int_value(key)
    return lay.int_or_none(value)


def _builds(view, worker: str) -> bool:
    if worker == "ref":
        return lay.ref_used(view)
    if worker == "critic":
        return lay.critic_used(view) is True
    return True


def _switch(key: str) -> str:
    for prefix, switch in SWITCHES:
        if key.startswith(prefix):
            return switch
    return f"{ARF}.actor.use_dynamic_bsz"


def _validate_first(view, failure, rewritten: set) -> bool:
    """Whether verl's driver-side validate_config fails on this first (see the module doc)."""
    section_switches = {_switch(k) for k in failure.keys if k.startswith((ARF, "critic"))}
    static = all(view.value(s) is False for s in section_switches) if section_switches else False
    if not static:
        return False
    if not any(k in rewritten for k in failure.keys):
        return True
    return failure.kind == "ZeroDivisionError" and any(k.rsplit(".", 1)[-1] in DEPRECATED for k in failure.keys)


def _report_key(view, keys) -> str | None:
    """The first key behind a value that the launch sets (itself or the key it inherits from)."""
    for key in keys:
        source = view.source_key(key)
        if view.setting(source) is not None:
            return source
    return next((k for k in keys if not k.startswith("trainer.")), None)


def _last_values(assigned):
    last = {}
    for a in assigned:
        last[a.key] = a
    return list(last.values())


def _trace(view, assigned, only: str | None = None) -> str:
    """How verl rewrote the batch sizes before, e.g. ` (normalized: actor.ppo_mini_batch_size 16 -> 64 -> 4)`."""
    chains: dict = {}
    for a in assigned:
        if only is not None and a.key != only:
            continue
        if a.value is UNKNOWN:
            continue
        if a.key not in chains:
            first = view.value(a.key)
            chains[a.key] = [first] if lay.int_or_none(first) is not None else []
        chains[a.key].append(a.value)
    if not chains:
        return ""
    parts = [f"{k.split('.', 1)[-1]} {' -> '.join(str(v) for v in vs)}" for k, vs in chains.items()]
    return " (normalized: " + "; ".join(parts) + ")"


def _ints(*values) -> bool:
    return all(lay.int_or_none(v.value) is not None for v in values)


def _log_prob_rows(view):
    train, n = view.int_value("data.train_batch_size"), view.int_value(f"{ARF}.rollout.n")
    return train * n if train and n else None
