#!/bin/bash
# { ...; } groups run in the current shell; ( ... ) subshells do not leak assignments; a launch inside a subshell still runs.
# profiles: none
BATCH=64
N=2

( BATCH=999; N=16; EXP=from_subshell )         # none of these survive
{ LR=1e-6; EPOCHS=3; }                          # both survive
{ TP=2; } && ( TP=8 ) && TP2=$TP                # TP2 sees 2
( exit 3 ) || NODES=2                           # subshell exit status drives ||
EXP=${EXP:-after_subshell}

(
    N=8
    BATCH=$((BATCH * 2))
    python3 -m verl.trainer.main_ppo \
        data.train_batch_size=$BATCH \
        actor_rollout_ref.rollout.n=$N \
        actor_rollout_ref.actor.ppo_mini_batch_size=64 \
        actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 \
        trainer.experiment_name=inside_subshell \
        "$@"
)

{
    python3 -m verl.trainer.main_ppo \
        data.train_batch_size=$BATCH \
        actor_rollout_ref.rollout.n=$N \
        actor_rollout_ref.actor.optim.lr=$LR \
        actor_rollout_ref.rollout.tensor_model_parallel_size=$TP2 \
        trainer.total_epochs=$EPOCHS \
        trainer.nnodes=${NODES:-1} \
        actor_rollout_ref.actor.ppo_mini_batch_size=32 \
        actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 \
        trainer.experiment_name=$EXP \
        "$@"
}
