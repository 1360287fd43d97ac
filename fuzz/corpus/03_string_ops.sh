#!/bin/bash
# String operators: ${#V} ${#ARR[@]} ${V//a/b} ${V/a/b} ${V%.*} ${V%%.*} ${V#*/} ${V##*/}.
# profiles: none
MODEL_PATH=/models/Qwen/Qwen2.5-7B-Instruct
MODEL_NAME=${MODEL_PATH##*/}          # Qwen2.5-7B-Instruct   (longest prefix up to /)
MODEL_REL=${MODEL_PATH#*/}            # models/Qwen/Qwen2.5-7B-Instruct (shortest prefix)
TRAIN_FILE=$HOME/data/gsm8k/train.v2.parquet
VAL_FILE=${TRAIN_FILE/train/test}     # first occurrence only
STEM=${TRAIN_FILE%.*}                 # .../train.v2       (shortest suffix)
BASE=${TRAIN_FILE##*/}                # train.v2.parquet
SHORT=${BASE%%.*}                     # train              (longest suffix)
EXP=${MODEL_NAME//./_}                # Qwen2_5-7B-Instruct (all occurrences)
EXP=${EXP/-/_}                        # Qwen2_5_7B-Instruct (first occurrence)
DASHES=a-b-c-d
GPU_IDS=(0 1 2 3)

python3 -m verl.trainer.main_ppo \
    data.train_files=$TRAIN_FILE \
    data.val_files=$VAL_FILE \
    data.max_prompt_length=${#MODEL_NAME} \
    data.max_response_length=${#DASHES} \
    actor_rollout_ref.model.path=$MODEL_PATH \
    actor_rollout_ref.actor.ppo_mini_batch_size=128 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 \
    trainer.n_gpus_per_node=${#GPU_IDS[@]} \
    trainer.total_epochs=${#SHORT} \
    trainer.project_name=${DASHES//-/} \
    trainer.experiment_name=${EXP}_${SHORT}_${STEM##*.} \
    trainer.default_local_dir=/ckpt/${MODEL_REL%/*} \
    "$@"
