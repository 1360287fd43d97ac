#!/bin/bash
# Arrays: X=(...), X+=(...), "${X[@]}", ${X[0]}, ${X[i]} with a variable index, "${X[*]}", empty "${E[@]}", launcher array.
# profiles: none
LAUNCH=(python3)                              # the launcher itself lives in an array
MODELS=(Qwen/Qwen2.5-0.5B-Instruct Qwen/Qwen2.5-7B-Instruct Qwen/Qwen2.5-32B-Instruct)
i=1
TAGS=(gsm8k grpo "v 1")
EMPTY=()

# the override array is built here and expanded in the launch further down
DATA=(data.train_batch_size=64 "data.max_prompt_length=512")
DATA+=("data.max_response_length=1024")
DATA+=(data.train_files="$HOME/data/train.parquet" data.val_files=$HOME/data/test.parquet)

ROLLOUT=()
ROLLOUT+=(actor_rollout_ref.rollout.name=vllm)
ROLLOUT+=("actor_rollout_ref.rollout.n=${#TAGS[@]}")

ACTOR=(actor_rollout_ref.actor.ppo_mini_batch_size=32 actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2)

TP_BY_SIZE=(1 2 8)
j=2

"${LAUNCH[@]}" -m verl.trainer.main_ppo \
    "${DATA[@]}" \
    "${EMPTY[@]}" \
    "${ROLLOUT[@]}" \
    "${ACTOR[@]}" \
    actor_rollout_ref.model.path=${MODELS[i]} \
    actor_rollout_ref.rollout.tensor_model_parallel_size=${TP_BY_SIZE[$j]} \
    trainer.project_name=${TAGS[0]} \
    trainer.experiment_name="${TAGS[*]}" \
    trainer.total_epochs=${TP_BY_SIZE[i-1]} \
    "$@"

# a second launcher array that includes the module
LAUNCH+=(-m verl.trainer.main_ppo)
"${LAUNCH[@]}" "${DATA[0]}" ${DATA[1]} actor_rollout_ref.model.path=${MODELS[0]} trainer.experiment_name=${TAGS[2]// /_} \
    "${ACTOR[@]}" "$@"
