# shellcheck shell=bash
# Sourced helper (not a fixture): common overrides; sources lib_paths.sh in turn.
source ./lib_paths.sh

COMMON_ARGS=(
    algorithm.adv_estimator=grpo
    data.train_files=$TRAIN_FILE
    data.val_files=$VAL_FILE
    data.train_batch_size=64
    actor_rollout_ref.actor.ppo_mini_batch_size=32
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2
    trainer.logger='["console"]'
)

add_arg() {
    COMMON_ARGS+=("$@")
}
