#!/usr/bin/env bash
# override-sweep: a bare comma list for trainer.logger reads as a Hydra sweep.
set -euo pipefail

MODEL_PATH=${MODEL_PATH:-Qwen/Qwen2.5-7B-Instruct}
TRAIN_FILE=${TRAIN_FILE:-$HOME/data/gsm8k/train.parquet}

TRAINER=(
    trainer.project_name=verl_grpo_gsm8k
    trainer.experiment_name=qwen2_5_7b_grpo
    trainer.logger=console,wandb  # expect: override-sweep
    trainer.n_gpus_per_node=8
    trainer.total_epochs=10
)

python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=grpo \
    data.train_files="$TRAIN_FILE" \
    data.train_batch_size=256 \
    actor_rollout_ref.model.path="$MODEL_PATH" \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    "${TRAINER[@]}"
