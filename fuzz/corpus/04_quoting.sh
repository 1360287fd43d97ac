#!/bin/bash
# Quoting: single quotes, double quotes, $'...' ANSI-C strings, backslash escapes, adjacent concatenation, "" kept vs unquoted empty dropped.
# profiles: none
PROJECT='verl fixtures'                 # single quotes keep the space
EMPTY=""

# Count how many arguments survive: "" and '' and "$EMPTY" are kept, bare $EMPTY is dropped.
count_args() { ARGC=$#; }
count_args "" $EMPTY "$EMPTY" '' $EMPTY    # -> 3

python3 -m verl.trainer.main_ppo \
    "data.train_batch_size"=72 \
    data.train_files=$'/data/gsm8k\x2ftrain.parquet' \
    data.val_files="$HOME"'/data/gsm8k/test.parquet' \
    actor_rollout_ref.model.path=Qwen/"Qwen2.5"'-0.5B'-Instruct \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    actor_rollout_ref.actor.ppo_mini_batch_size=32 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 \
    trainer.logger='["console"]' \
    trainer.project_name="$PROJECT" \
    trainer.experiment_name=\"exp\ one-\$HOME\" \
    trainer.default_local_dir="'/ckpt/$PROJECT'" \
    $EMPTY \
    trainer.nnodes=$ARGC \
    critic.model.path=$'tab\tinside' \
    actor_rollout_ref.rollout.name='vllm' \
    "$@"
