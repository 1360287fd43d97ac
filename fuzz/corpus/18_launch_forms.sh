#!/bin/bash
# Launch forms: `python -m`, two-word `--config-path config --config-name NAME`, model_engine=megatron group selection, "$@" last, $* (empty).
# profiles: none
COMMON="data.train_batch_size=32 trainer.total_epochs=1"

# 1) plain python3, "$@" last (no script arguments -> contributes nothing)
python3 -m verl.trainer.main_ppo $COMMON trainer.experiment_name=plain \
    actor_rollout_ref.actor.ppo_mini_batch_size=16 actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 "$@"

# 2) `python` instead of `python3`, and $* unquoted (also nothing)
# validate-scripts: disable=launch-passes-args
python -m verl.trainer.main_ppo $COMMON $* trainer.experiment_name=python_launcher \
    actor_rollout_ref.actor.ppo_mini_batch_size=16 actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2

# 3) two-word config options
python3 -m verl.trainer.main_ppo --config-path config --config-name ppo_megatron_trainer \
    $COMMON \
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2 \
    trainer.experiment_name=twoword \
    actor_rollout_ref.actor.ppo_mini_batch_size=16 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 \
    "$@"

# 4) config-group selection instead of a config name
python3 -m verl.trainer.main_ppo \
    model_engine=megatron \
    actor_rollout_ref.actor.megatron.use_mbridge=True \
    $COMMON \
    actor_rollout_ref.actor.ppo_mini_batch_size=16 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 \
    trainer.experiment_name=group_${#}_args \
    "$@"
