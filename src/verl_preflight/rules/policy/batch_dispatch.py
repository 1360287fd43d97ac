"""Batches verl splits evenly over ranks or workers must divide by their number, as the launch's verl splits them.

verl's dispatch cuts a batch into equal parts and asserts that it can
(`DataProto.chunk`, protocol.py: unless padding is enabled with the
VERL_AUTO_PADDING variable; `chunk_tensordict` for the engine workers'
batches). What is cut, and into how many parts, differs by version; the rule
follows the launch's verl code (sources/verl_batches.py):

- Generation. The trainer's `fit` is followed from the dataloader's batch
  (data.train_batch_size rows) to the generate_sequences call the launch takes:
  verl v0.4's sync rollout hands the train batch to the worker group, which
  splits it over every rank (`Dispatch.DP_COMPUTE_PROTO`: train_batch_size %
  world); verl 0.7 on repeats it rollout.n times first (and REMAX adds a greedy
  copy) and the agent loop splits it over rollout.agent.num_workers.
- Training. The actor's log-prob and update batches (train_batch_size x
  rollout.n rows) are split over its data-parallel ranks (legacy FSDP workers:
  every rank; Megatron: world / (TP x PP x CP); engine workers: the engine's
  data-parallel size). Where the version's validate_config checks the same
  split for this launch (its real_train_batch_size % minimal batch assert,
  without dynamic batch size), that check reports it (the `verl-check` rule);
  this rule reports the split with dynamic batch size on.
Validation batches are padded by verl to the divisor and never fail here.
"""

from __future__ import annotations

from ...sources.pyeval import UNKNOWN
from ...sources.verl_batches import generation_split, training_split
from .. import Rule
from ..evaluation import said_by_verl
from .config_field import _package_root

ARF = "actor_rollout_ref"


class BatchDispatch(Rule):
    id = "batch-dispatch"
    severity = "error"
    stage = "policy"
    scope = "launch"
    summary = (
        "the batch a generation or training step splits must divide by the ranks or agent-loop workers it is split "
        "over, as the launch's verl splits it"
    )
    why = (
        "verl's dispatch asserts an equal split (DataProto.chunk: 'only support equal chunk') at the first step, "
        "after the cluster is up and the model is loaded; the split differs by version (verl v0.4 splits the train "
        "batch over every rank for generation, verl 0.7 on splits train_batch_size x rollout.n over the agent loop "
        "workers), and with dynamic batch size nothing checks the training split at start."
    )
    ground_truth = (
        "verl 0.9.1 protocol.py:870-873 (DataProto.chunk asserts len % chunks unless padding is enabled; "
        ":55-58 VERL_AUTO_PADDING), experimental/agent_loop/agent_loop.py:1210-1213 (rollout.agent.num_workers "
        "workers), :1247 (prompts.chunk(len(self.agent_loop_workers))), trainer/ppo/ray_trainer.py:1490-1513 "
        "(train batch repeated rollout.n times, REMAX adds a greedy copy), utils/tensordict_utils.py:341 "
        "(chunk_tensordict), utils/config.py:103-125 (validate_config checks train_batch_size x rollout.n only "
        "without dynamic batch size); verl v0.7.0 agent_loop.py:918-949, ray_trainer.py:1352-1363; verl v0.4.1 "
        "protocol.py:662-663, single_controller/base/decorator.py:369-378 (DP_COMPUTE_PROTO splits over the "
        "world), workers/fsdp_workers.py:646-648 (generate_sequences), trainer/ppo/ray_trainer.py:982-983 (the "
        "train batch, before repeat), :649 (validation padded)"
    )
    bad = "verl 0.9.1: data.train_batch_size=20 actor_rollout_ref.rollout.n=5 (100 samples over 8 agent loop workers)"
    good = "data.train_batch_size=16 actor_rollout_ref.rollout.n=5 (80 samples: 10 a worker)"

    def check_launch(self, view, ctx):
        root = _package_root(view.source)
        if root is None:
            return []
        version = view.verl_version
        out = []
        split = generation_split(view, root)
        if split is not None and not _padding(view, split.padding_env):
            self._generation(view, version, split, out)
        self._training(view, root, version, out)
        return out

    def _generation(self, view, version, split, out) -> None:
        if split.parts == "world":
            nnodes, per_node = view.int_value("trainer.nnodes"), view.int_value("trainer.n_gpus_per_node")
            parts = nnodes * per_node if nnodes and per_node else None
            what, key = "ranks (every GPU)", "trainer.n_gpus_per_node"
        else:
            parts = view.int_value(split.parts)
            what, key = "agent loop workers", split.parts
        if not parts or parts < 1 or split.rows % parts == 0:
            return
        if split.parts == "world" and {"data.train_batch_size", "trainer.n_gpus_per_node"} <= said_by_verl(view):
            return  # verl's start-up check refuses the same batch over the same world first (verl-check)
        train_key = "data.train_batch_size"
        where = train_key if view.setting(train_key) is not None else key
        train, n = view.int_value(train_key), view.int_value(f"{ARF}.rollout.n")
        if split.rows == train:
            rows = f"train_batch_size = {split.rows}"
        elif n and split.rows == train * n:
            rows = f"train_batch_size x rollout.n = {split.rows}"
        else:
            rows = f"{split.rows} samples"
        text = (
            f"verl {version} splits the generation batch ({rows}) over {parts} {what} ({split.at}) and asserts equal "
            f"parts ({split.check}): the first step fails; make it divisible by {parts}"
        )
        if split.padding_env:
            text += f" or export {split.padding_env}=1"
        out.append(self.finding(view.where(where), text, train_key))

    def _training(self, view, root, version, out) -> None:
        if view.value(f"{ARF}.actor.use_dynamic_bsz") is not True:
            return
        train, n = view.int_value("data.train_batch_size"), view.int_value(f"{ARF}.rollout.n")
        if not train or not n:
            return
        split = training_split(view, root)
        if split is None or split.validated is not None:
            return
        ranks = split.ranks.value
        if ranks is UNKNOWN or not isinstance(ranks, int) or ranks < 1:
            return
        rows = train * n
        if rows % ranks == 0 or _padding(view, split.padding_env):
            return
        key = "data.train_batch_size"
        text = (
            f"with dynamic batch size verl {version} splits the actor's batch (train_batch_size x rollout.n = {rows}) "
            f"over {ranks} data-parallel ranks and asserts an equal split ({split.check}), unchecked at start: make "
            f"it divisible by {ranks}"
        )
        out.append(self.finding(view.where(key), text, key))


def _padding(view, env: str | None) -> bool:
    if not env:
        return False
    value = view.exported(env)
    return isinstance(value, str) and value.upper() in ("TRUE", "1")
