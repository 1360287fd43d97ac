"""The parallel layout must fit the world, as Megatron-Core and verl's rollout compute it.

Training: megatron/core/parallel_state.py `initialize_model_parallel` raises
unless `world_size % (TP * PP * CP) == 0` and `world_size % (ETP * EP * PP) == 0`,
with a null ETP meaning ETP = TP (verl passes None; Megatron then uses TP). The
world is trainer.nnodes x trainer.n_gpus_per_node. The ref uses the actor's
layout unless it sets its own (verl's `${oc.select:...}` defaults): a layout
the ref inherits is reported once, on the actor's key.

Rollout: a replica has TP x DP x PP devices and may span nodes; verl asserts
that a replica larger than one node fills whole nodes
(verl/workers/rollout/replica.py).

A training TP wider than one node (TP > trainer.n_gpus_per_node) is a warning:
nothing refuses it, Megatron-Core builds tensor-parallel groups of consecutive
ranks, so each group spans nodes and every layer's all-reduce crosses the
inter-node network (it runs, slowly). The rollout's TP may span nodes (a
multi-node vLLM or SGLang server, verl 0.9.1 workers/rollout/replica.py:107-117).
"""

from __future__ import annotations

from .. import Rule
from ..evaluation import said_by_verl

ROLES = ("actor_rollout_ref.actor.megatron", "actor_rollout_ref.ref.megatron")
ROLLOUT = "actor_rollout_ref.rollout"
LAYOUT = ("tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size")
EXPERT = ("expert_model_parallel_size", "expert_tensor_parallel_size")


class Parallelism(Rule):
    id = "parallelism"
    severity = "error"
    stage = "policy"
    scope = "launch"
    summary = (
        "TP x PP x CP and ETP x EP x PP must divide the world; a rollout replica must fill whole nodes; "
        "a training TP wider than a node is a warning"
    )
    why = (
        "Megatron-Core's parallel_state.initialize_model_parallel raises RuntimeError when world_size % (TP*PP*CP) "
        "or world_size % (ETP*EP*PP) is not 0 (a null ETP is TP); this happens inside every training worker after "
        "the cluster is up. verl's rollout replica asserts that its TP x DP x PP devices fill whole nodes when it "
        "spans more than one."
    )
    ground_truth = (
        "megatron-core 0.16.1 megatron/core/parallel_state.py:786-795 (same in 0.18.0), :562 (rank order "
        "tp-cp-ep-dp-pp: a TP group is consecutive ranks, which verl places node by node); "
        "verl 0.9.1 verl/workers/rollout/replica.py:107-116 and verl/workers/engine_workers.py:655-660 (world_size % "
        "(TP x DP x PP)); verl v0.4.1 verl/workers/fsdp_workers.py:406 (world_size % infer_tp)"
    )
    bad = "trainer.nnodes=1 trainer.n_gpus_per_node=8 ...tensor_model_parallel_size=3"
    good = "trainer.nnodes=1 trainer.n_gpus_per_node=8 ...tensor_model_parallel_size=2"

    def check_launch(self, view, ctx):
        nnodes = view.int_value("trainer.nnodes")
        per_node = view.int_value("trainer.n_gpus_per_node")
        if not nnodes or not per_node:
            return []
        world = nnodes * per_node
        out = []

        def report(key, message, at_most=None):
            out.append(self.finding(view.where(key), message, key, at_most=at_most))

        if view.training_engine == "megatron":
            said = said_by_verl(view)
            for role in ROLES:
                if role != ROLES[0] and not any(view.setting(f"{role}.{k}") for k in LAYOUT + EXPERT):
                    continue  # the ref inherits the actor's layout: reported on the actor's keys
                self._training(view, role, world, nnodes, per_node, report, said)
        self._rollout(view, world, per_node, report)
        return out

    @staticmethod
    def _training(view, role, world, nnodes, per_node, report, said=frozenset()) -> None:
        tp, pp, cp = (view.int_value(f"{role}.{k}") for k in LAYOUT)
        ep = view.int_value(f"{role}.expert_model_parallel_size")
        etp_set = view.int_value(f"{role}.expert_tensor_parallel_size")
        etp = etp_set or tp
        if None in (tp, pp, cp) or min(tp, pp, cp) < 1:
            return
        name = role.split(".")[-2]
        fails = bool(world % (tp * pp * cp))
        if fails and not {f"{role}.{k}" for k in LAYOUT} <= said:
            report(
                f"{role}.tensor_model_parallel_size",
                f"{name}: TP x PP x CP = {tp}x{pp}x{cp} = {tp * pp * cp} does not divide "
                f"the world of {world} devices ({nnodes} node{'s' * (nnodes != 1)} x {per_node})",
            )
        if tp > per_node and not fails:  # (a layout that fails is said once, as failing)
            report(
                f"{role}.tensor_model_parallel_size",
                f"{name}: TP {tp} is wider than one node's {per_node} devices: each tensor-parallel group spans "
                "nodes and every layer's all-reduce crosses the network between them (it runs, slowly); keep TP "
                f"<= {per_node} and use PP or EP across nodes",
                "warning",
            )
        # with EP=1 and ETP following TP this is the TP x PP check again: report it once
        if ep and etp and (ep > 1 or etp_set) and world % (etp * ep * pp):
            shown = f"{etp}" if etp_set else f"{etp} (null: TP)"
            report(
                f"{role}.expert_model_parallel_size",
                f"{name}: ETP x EP x PP = {shown}x{ep}x{pp} = {etp * ep * pp} does not divide "
                f"the world of {world} devices",
            )

    @staticmethod
    def _rollout(view, world, per_node, report) -> None:
        tp = view.int_value(f"{ROLLOUT}.tensor_model_parallel_size")
        dp = view.int_value(f"{ROLLOUT}.data_parallel_size") or 1
        pp = view.int_value(f"{ROLLOUT}.pipeline_model_parallel_size") or 1
        if not tp or min(tp, dp, pp) < 1:
            return
        replica = tp * dp * pp
        if world % replica:
            shown = f"TP x DP x PP = {tp}x{dp}x{pp} = {replica}" if replica != tp else f"TP {tp}"
            own = view.setting(f"{ROLLOUT}.tensor_model_parallel_size") is not None
            default = "" if own else " (verl's default TP)"
            report(
                f"{ROLLOUT}.tensor_model_parallel_size" if own else "trainer.n_gpus_per_node",
                f"the rollout's {shown}{default} does not divide the world of {world} devices: verl asserts "
                "rollout world_size % infer_tp == 0 when its workers start",
            )
            return
        on_one_node = min(per_node, replica)
        if replica % on_one_node:
            report(
                f"{ROLLOUT}.tensor_model_parallel_size",
                f"a rollout replica of TP x DP x PP = {tp}x{dp}x{pp} = {replica} devices spans nodes of "
                f"{per_node} but does not fill whole nodes (verl asserts it)",
            )
