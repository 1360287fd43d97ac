#!/bin/bash
# if/elif/else with [ ], [[ ]], test; = == != -n -z -eq -ne -lt -le -gt -ge; [[ $X == gs*k ]] patterns; && || !.
# profiles: MODE=small,large,medium
MODE=${MODE:-small}
GPUS=8
DATASET=gsm8k
MODEL=Qwen/Qwen2.5-7B-Instruct
WANDB_KEY=""
CKPT_DIR=""
unset UNSET_VAR

if [ "$MODE" = small ]; then
    BATCH=32
elif [[ $MODE == large ]]; then
    BATCH=256
else
    BATCH=64
fi

if test $GPUS -ge 8; then TP=4; else TP=1; fi
if [ $GPUS -lt 4 ] || [ $GPUS -gt 64 ]; then NODES=2; else NODES=1; fi
if [[ $MODEL == Qwen/*7B* ]]; then LR=1e-6; else LR=5e-6; fi
if [[ $DATASET == gs*k ]]; then PROMPT=512; else PROMPT=1024; fi
if [[ $DATASET == "gs*k" ]]; then RESP=2048; else RESP=1024; fi     # quoted: literal compare, false
if [ -n "$WANDB_KEY" ]; then LOGGER='["console","wandb"]'; else LOGGER='["console"]'; fi
if [ -z "$CKPT_DIR" ]; then CKPT_DIR=/ckpt/default; fi
[ $NODES -eq 1 ] && SAVE=-1 || SAVE=10
[ "$TP" -ne 1 ] && ! [ "$MODE" != small ] && MICRO=2 || MICRO=4      # small -> 2, else 4
if [[ ! $MODE == large && $BATCH -le 64 ]]; then EPOCHS=3; else EPOCHS=1; fi
if [ "$MODE" == medium ] && [[ -z $UNSET_VAR || $GPUS -gt 100 ]]; then N=8; else N=5; fi

python3 -m verl.trainer.main_ppo \
    data.train_batch_size=$BATCH \
    data.max_prompt_length=$PROMPT \
    data.max_response_length=$RESP \
    actor_rollout_ref.model.path=$MODEL \
    actor_rollout_ref.actor.optim.lr=$LR \
    actor_rollout_ref.actor.ppo_mini_batch_size=16 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=$MICRO \
    actor_rollout_ref.rollout.tensor_model_parallel_size=$TP \
    actor_rollout_ref.rollout.n=$N \
    trainer.logger=$LOGGER \
    trainer.default_local_dir=$CKPT_DIR \
    trainer.save_freq=$SAVE \
    trainer.nnodes=$NODES \
    trainer.total_epochs=$EPOCHS \
    "$@"
