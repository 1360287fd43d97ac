#!/bin/bash
# for loops over literal lists: appending overrides to an array and to a string; loop variable keeps its last value.
# profiles: none
MICRO=4
ARGS=()
for kv in data.train_batch_size=64 actor_rollout_ref.actor.ppo_mini_batch_size=32 data.max_prompt_length=512 "trainer.experiment_name=for loop"; do
    ARGS+=("$kv")
done

for comp in actor.ppo_micro_batch_size_per_gpu ref.log_prob_micro_batch_size_per_gpu rollout.log_prob_micro_batch_size_per_gpu; do
    ARGS+=(actor_rollout_ref.$comp=$MICRO)
done

N=0
for sample in a b c d
do
    N=$((N + 1))
done

EXTRA=""
for split in train val; do EXTRA="$EXTRA data.${split}_files=$HOME/data/gsm8k/$split.parquet"; done

for arg in "$@"; do      # no script arguments: zero iterations
    ARGS+=("$arg")
done

python3 -m verl.trainer.main_ppo \
    "${ARGS[@]}" \
    $EXTRA \
    actor_rollout_ref.rollout.n=$N \
    trainer.project_name=last_$sample \
    "$@"
