#!/bin/bash
# Word splitting: an unquoted expansion splits on spaces/tabs/newlines (runs collapse); quoted stays one argument.
# profiles: none
DATA_ARGS="data.train_batch_size=32 data.max_prompt_length=256"      # unquoted -> 2 args
SPACED="  actor_rollout_ref.rollout.n=4		trainer.total_epochs=3
   trainer.nnodes=1  "                                               # spaces, 2 tabs, newline -> 3 args
ONE_ARG="trainer.experiment_name=split me not"                        # quoted -> 1 arg
NAME="my run"
LOGGER='["console"]'          # unquoted: a glob pattern that matches no file, so it stays literal
NL=$'\n'
LR_ARGS="actor_rollout_ref.actor.optim.lr=1e-6${NL}critic.optim.lr=1e-5"   # newline inside -> 2 args
MIXED="data.max_response_length=512 "                                   # trailing space only

python3 -m verl.trainer.main_ppo \
    $DATA_ARGS \
    $SPACED \
    "$ONE_ARG" \
    trainer.project_name="$NAME" \
    trainer.logger=$LOGGER \
    $LR_ARGS \
    $MIXED\
    actor_rollout_ref.model.path=Qwen/Qwen2.5-0.5B-Instruct \
    actor_rollout_ref.actor.ppo_mini_batch_size=16 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 \
    "$@"

# the same variable quoted vs unquoted in a second launch
TWO="data.train_batch_size=16 data.max_prompt_length=128"
python3 -m verl.trainer.main_ppo $TWO "trainer.experiment_name='$TWO'" \
    actor_rollout_ref.actor.ppo_mini_batch_size=8 actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 "$@"
