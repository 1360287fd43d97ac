#!/bin/bash
# Arithmetic: $((...)) with + - * / % on variables, nested parens, $((A*B)), $(( ${A} / 2 )), (( N = A * 2 )), (( N++ )).
# profiles: none
GPUS=8
NODES=2
PER_GPU=4
TOTAL=$((GPUS*NODES))                    # 16
BATCH=$(( (TOTAL * PER_GPU) * 2 ))       # 128
MINI=$(( ${BATCH} / 4 ))                 # 32
MICRO=$((MINI / GPUS % 3 + 1))           # 32/8=4, 4%3=1, +1 -> 2
TP=$(( GPUS / (NODES * (1 + 1)) ))       # 8/(2*2) -> 2
PROMPT=$(( 1024 - 256 + $PER_GPU * 64 )) # 1024
RESP=$(( 7 / 2 * 512 ))                  # integer division: 3*512 -> 1536
(( N = PER_GPU * 2 ))                    # 8
(( N++ ))                                # 9
EPOCHS=$(( -7 / 2 + 5 ))                 # truncates toward zero: -3+5 -> 2

python3 -m verl.trainer.main_ppo \
    data.train_batch_size=$BATCH \
    data.max_prompt_length=$PROMPT \
    data.max_response_length=$RESP \
    actor_rollout_ref.actor.ppo_mini_batch_size=$MINI \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=$MICRO \
    actor_rollout_ref.rollout.tensor_model_parallel_size=$TP \
    actor_rollout_ref.rollout.n=$N \
    trainer.total_epochs=$EPOCHS \
    trainer.n_gpus_per_node=$((TOTAL / NODES)) \
    trainer.nnodes=$NODES \
    trainer.save_freq=$(( (BATCH % 100) * 2 )) \
    "$@"
