# shellcheck shell=bash
# Sourced helper (not a fixture): data paths. Sourced by lib_common.sh.
DATA_DIR=${DATA_DIR:-$HOME/data/gsm8k}
TRAIN_FILE=$DATA_DIR/train.parquet
VAL_FILE=$DATA_DIR/test.parquet
