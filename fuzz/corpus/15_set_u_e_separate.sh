#!/bin/bash
# set -u and set -e given separately, toggled with set +e; ${V:?msg} on a set variable; (( N++ )) guarded with || true.
# profiles: USE_MINDSPEED_BRIDGE=False,True
set -u
USE_MINDSPEED_BRIDGE=${USE_MINDSPEED_BRIDGE:-False}
MODEL=${MODEL_PATH:-Qwen/Qwen2.5-7B-Instruct}
CHECKED=${MODEL:?MODEL must not be empty}
set -e

COUNT=0
(( COUNT++ )) || true                              # post-increment from 0 has status 1
(( COUNT++ ))                                      # from 1: status 0

set +e
false                                              # ignored while errexit is off
set -e

if [ "$USE_MINDSPEED_BRIDGE" = True ]; then
    OFFLOAD=actor_rollout_ref.actor.megatron.param_offload=True
else
    OFFLOAD=actor_rollout_ref.actor.megatron.param_offload=False
fi

python3 -m verl.trainer.main_ppo \
    model_engine=megatron \
    actor_rollout_ref.model.path=$CHECKED \
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=$COUNT \
    actor_rollout_ref.actor.ppo_mini_batch_size=128 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 \
    $OFFLOAD \
    trainer.experiment_name=bridge_${USE_MINDSPEED_BRIDGE} \
    "$@"
