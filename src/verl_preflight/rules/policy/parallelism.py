"""The parallel layout must fit the world, as Megatron-Core computes it.

Follows megatron/core/parallel_state.py `initialize_model_parallel`
(megatron-core 0.16): `world_size % (TP * PP * CP) == 0`, and for experts
`world_size % (ETP * EP * PP) == 0` with ETP defaulting to TP. The world is
trainer.nnodes x trainer.n_gpus_per_node. The rollout's tensor parallel size
must divide the world and fit in one node. The ref uses the actor's layout
unless it sets its own (verl's `${oc.select:...}` defaults).
"""

from __future__ import annotations

from .. import Rule

ROLES = ("actor_rollout_ref.actor.megatron", "actor_rollout_ref.ref.megatron")


class Parallelism(Rule):
    id = "parallelism"
    severity = "error"
    stage = "policy"
    scope = "launch"
    summary = "TP x PP x CP and ETP x EP x PP must divide the world; rollout TP must fit a node"
    why = (
        "Megatron-Core's parallel_state.initialize_model_parallel raises RuntimeError when world_size % (TP*PP*CP) "
        "or world_size % (ETP*EP*PP) is not 0; this happens inside every training worker after the cluster is up."
    )
    ground_truth = "megatron-core 0.16.1 megatron/core/parallel_state.py:786-795 (same in 0.18.0)"
    bad = "trainer.nnodes=1 trainer.n_gpus_per_node=8 ...tensor_model_parallel_size=3"
    good = "trainer.nnodes=1 trainer.n_gpus_per_node=8 ...tensor_model_parallel_size=2"

    def check_launch(self, view, ctx):
        if view.engine != "megatron":
            return []
        nnodes = view.int_value("trainer.nnodes")
        per_node = view.int_value("trainer.n_gpus_per_node")
        if not nnodes or not per_node:
            return []
        world = nnodes * per_node
        out = []

        def report(key, message):
            out.append(self.finding(view.where(key), message, key))

        layout = ("tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size")
        experts = ("expert_model_parallel_size", "expert_tensor_parallel_size")

        def inherits(role, names) -> bool:
            """The ref takes these from the actor (`${oc.select:...}`) unless the script sets them:
            a bad actor value is then reported once, on the actor's key."""
            return role != ROLES[0] and all(
                view.setting(f"{role}.{n}") is None and view.interpolated(f"{role}.{n}") for n in names
            )

        def key_set(role, names) -> str:
            """The key to report on: the first of `names` the script set for this role."""
            for n in names:
                if view.setting(f"{role}.{n}") is not None:
                    return f"{role}.{n}"
            return f"{role}.{names[0]}"

        for role in ROLES:
            tp, pp, cp = (
                view.int_value(f"{role}.{k}")
                for k in ("tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size")
            )
            ep = view.int_value(f"{role}.expert_model_parallel_size")
            etp_set = view.int_value(f"{role}.expert_tensor_parallel_size")
            etp = etp_set or tp
            if None in (tp, pp, cp) or min(tp, pp, cp) < 1:
                continue
            if world % (tp * pp * cp) and not inherits(role, layout):
                report(
                    key_set(role, layout),
                    f"{role.split('.')[-2]}: TP x PP x CP = {tp}x{pp}x{cp} = {tp * pp * cp} does not divide "
                    f"the world of {world} devices ({nnodes} nodes x {per_node})",
                )
            # with EP=1 and ETP following TP this is the TP x PP check again: report it once
            if ep and etp and (ep > 1 or etp_set) and world % (etp * ep * pp) and not inherits(role, layout + experts):
                report(
                    key_set(role, experts + layout),
                    f"{role.split('.')[-2]}: ETP x EP x PP = {etp}x{ep}x{pp} = {etp * ep * pp} does not divide "
                    f"the world of {world} devices",
                )
        rollout_tp = view.int_value("actor_rollout_ref.rollout.tensor_model_parallel_size")
        if rollout_tp and rollout_tp >= 1:
            if world % rollout_tp:
                report(
                    "actor_rollout_ref.rollout.tensor_model_parallel_size",
                    f"rollout tensor parallel size {rollout_tp} does not divide the world of {world} devices",
                )
            elif rollout_tp > per_node:
                report(
                    "actor_rollout_ref.rollout.tensor_model_parallel_size",
                    f"rollout tensor parallel size {rollout_tp} does not fit in one node of {per_node} devices",
                )
        return out
