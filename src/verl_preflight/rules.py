"""The rule registry: id, severity, one-line summary and doc with a bad and a good example.

`--explain RULE` prints an entry; docs/rules.md is generated from this table.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    id: str
    severity: str
    summary: str
    bad: str
    good: str
    why: str


RULES = [
    Rule(
        "bash-syntax",
        "error",
        "bash cannot parse this part of the script",
        'if [ "$DEVICE" = npu ]; then\n  TP=2',
        'if [ "$DEVICE" = npu ]; then\n  TP=2\nfi',
        "tree-sitter-bash reports an error node; bash would refuse the script or run something else.",
    ),
    Rule(
        "override-syntax",
        "error",
        "an argument that Hydra's override grammar rejects",
        "trainer.logger=[console,wandb",
        "trainer.logger='[console,wandb]'",
        "main_ppo parses every override before it composes; one bad one stops the job at start.",
    ),
    Rule(
        "override-sweep",
        "error",
        "a comma list in a value: Hydra reads it as a sweep and refuses it in a run",
        "trainer.logger=console,wandb",
        "trainer.logger='[console,wandb]'",
        "Without --multirun Hydra stops with 'Ambiguous value'.",
    ),
    Rule(
        "override-missing-key",
        "error",
        "`key=value` on a key verl's config does not have",
        "actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn=True",
        "+actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn=True",
        "In struct mode Hydra only overrides existing keys; a new key needs `+` (or `++`).",
    ),
    Rule(
        "override-append-existing",
        "error",
        "`+key=value` on a key that already has a value",
        "+actor_rollout_ref.actor.megatron.use_mbridge=True",
        "actor_rollout_ref.actor.megatron.use_mbridge=True",
        "`+` adds a key; Hydra refuses it over an existing non-null value. Drop the `+`, or use `++`.",
    ),
    Rule(
        "override-delete-missing",
        "error",
        "`~key` on a key that does not exist (or is null)",
        "~trainer.no_such_key",
        "~trainer.val_before_train",
        "Hydra refuses to delete what is not there.",
    ),
    Rule(
        "override-error",
        "error",
        "OmegaConf refused the override",
        "hydra.job.chdir=maybe",
        "hydra.job.chdir=True",
        "Typed nodes (such as Hydra's own) validate values; the message is OmegaConf's.",
    ),
    Rule(
        "config-group",
        "error",
        "a config-group selection that does not compose",
        "model_engine=megatorn",
        "model_engine=megatron",
        "The option must exist in the group's folder of verl's config tree.",
    ),
    Rule(
        "config-name",
        "error",
        "--config-name names a root config verl does not have",
        "--config-name=ppo_megatron",
        "--config-name=ppo_megatron_trainer",
        "Hydra cannot find the primary config and stops.",
    ),
    Rule(
        "config-path",
        "warning",
        "--config-path points away from verl's config tree; not checked",
        "--config-path=/my/configs",
        "--config-path=config",
        "The validator checks against verl's tree only.",
    ),
    Rule(
        "hydra-argument",
        "error",
        "an option main_ppo's Hydra command line does not accept",
        "python3 -m verl.trainer.main_ppo --nnodes 2",
        "python3 -m verl.trainer.main_ppo trainer.nnodes=2",
        "Hydra's argparse refuses unknown options; flags like --cfg change what the run does.",
    ),
    Rule(
        "unknown-entry",
        "warning",
        "a verl module that is not a Hydra entry point here",
        "python3 -m verl.trainer.no_such_main",
        "python3 -m verl.trainer.main_ppo",
        "Its arguments cannot be checked against a config.",
    ),
    Rule(
        "unknown-argument",
        "info",
        "an argument whose text is not known statically",
        "python3 -m verl.trainer.main_ppo $EXTRA_ARGS",
        'python3 -m verl.trainer.main_ppo "$@"',
        "It comes from the environment or a command substitution; it is not checked.",
    ),
    Rule(
        "incomplete",
        "warning",
        "the evaluator cannot follow the script past this point",
        "source <(curl -s http://host/env.sh)",
        "source ./env.sh",
        "Nothing is ever executed: eval, sourcing unknown paths and the like are not followed.",
    ),
    Rule(
        "budget",
        "warning",
        "an evaluation budget was used up (paths, steps, loop iterations)",
        "while true; do :; done",
        "for x in a b; do :; done",
        "Pathological input stays bounded; raise the budget or simplify the script.",
    ),
    Rule(
        "unset-variable",
        "warning",
        "`set -u` and a variable nobody assigns: bash stops unless it is exported",
        "set -u\npython3 -m verl.trainer.main_ppo data.train_files=$TRAIN",
        "set -u\nTRAIN=${TRAIN:-~/data/train.parquet}",
        "Under `set -u` an unset variable ends the script with 'unbound variable'.",
    ),
    Rule(
        "unbound-variable",
        "warning",
        "in this profile bash stops here: the variable is unset under `set -u`",
        'set -u\n[ -n "$CKPT" ]',
        'set -u\n[ -n "${CKPT:-}" ]',
        "The profile leaves it unset and `set -u` makes bash exit.",
    ),
    Rule(
        "parameter-error",
        "warning",
        "`${VAR:?msg}` on an unset variable: bash stops here",
        "MODEL=${MODEL_PATH:?set MODEL_PATH}",
        "MODEL=${MODEL_PATH:-Qwen/Qwen3-8B}",
        "The profile leaves the variable unset.",
    ),
    Rule(
        "arithmetic",
        "warning",
        "an arithmetic error (division by zero, bad operand)",
        "DP=$((WORLD / TP))  # TP=0",
        "DP=$((WORLD / TP))  # TP=2",
        "bash reports the error and the command fails.",
    ),
    Rule(
        "test-syntax",
        "warning",
        "a malformed test expression",
        'TP=two\n[ "$TP" -gt 1 ]',
        'TP=2\n[ "$TP" -gt 1 ]',
        "bash's test builtin prints an error and returns 2.",
    ),
    Rule(
        "readonly",
        "warning",
        "assignment to a readonly variable",
        "readonly TP=2\nTP=4",
        "TP=${TP:-2}",
        "bash refuses it.",
    ),
    Rule(
        "profiles-capped",
        "warning",
        "more profiles than --max-profiles; the rest were not checked",
        "six independent switches",
        "fewer switches, or --profile to pin some",
        "Profiles are the product of every switch's values.",
    ),
    Rule(
        "file-too-large",
        "error",
        "a script larger than --max-bytes is not read",
        "a 40 MB generated script",
        "a script of normal size",
        "Keeps the linter bounded.",
    ),
]

POLICY_RULES = [
    Rule(
        "use-mbridge",
        "error",
        "use_mbridge must be True for every Megatron role where the Megatron engine runs",
        "actor_rollout_ref.actor.megatron.use_mbridge=False",
        "actor_rollout_ref.actor.megatron.use_mbridge=True",
        "Since verl PR #4530 the Megatron engine asserts use_mbridge is True; False fails when the job starts "
        "(verl PR #6429 fixed two Ascend scripts that still passed it). Data policy `required-value`.",
    ),
    Rule(
        "gdn-flag-gate",
        "error",
        "the Ascend GDN flags only where DEVICE=npu and USE_MINDSPEED_BRIDGE=True",
        'case "${DEVICE}" in\n  npu)\n'
        "    ACTOR+=(+actor_rollout_ref.actor.megatron.override_transformer_config.use_ascend_gdn=True)",
        'case "${DEVICE}" in\n  npu)\n    if [ "${USE_MINDSPEED_BRIDGE}" = "True" ]; then\n'
        "      ACTOR+=(+actor_rollout_ref.actor.megatron.override_transformer_config.use_ascend_gdn=True)\n    fi",
        "use_ascend_gdn / use_triton_gdn select MindSpeed-Bridge's Ascend kernels (verl PR #7335); elsewhere "
        "they are wrong or silently ignored. A script without the switch counts as USE_MINDSPEED_BRIDGE=False. "
        "Data policy `allowed-only-when`.",
    ),
    Rule(
        "ascend-gdn-needs-triton-off",
        "error",
        "use_ascend_gdn=True needs use_triton_gdn=False in the same profile",
        "+...override_transformer_config.use_ascend_gdn=True",
        "+...override_transformer_config.use_triton_gdn=False\n+...override_transformer_config.use_ascend_gdn=True",
        "The two GDN paths exclude each other. Data policy `requires`.",
    ),
    Rule(
        "qwen35-gpu-bshd",
        "error",
        "Qwen3.5 on GPU runs BSHD: no remove-padding, no dynamic batch size",
        "actor_rollout_ref.model.path=Qwen/Qwen3.5-35B-A3B (DEVICE=gpu, remove padding left on)",
        "actor_rollout_ref.model.use_remove_padding=False\nactor_rollout_ref.actor.megatron.use_remove_padding=False\n"
        "actor_rollout_ref.actor.use_dynamic_bsz=False",
        "Megatron-LM has no packed-sequence (THD) support for Gated Delta Net. Data policy `required-value`.",
    ),
    Rule(
        "transformer-config-key",
        "error",
        "override_transformer_config keys must be TransformerConfig fields or backend keys",
        "+actor_rollout_ref.actor.megatron.override_transformer_config.recompute_granularty=full",
        "actor_rollout_ref.actor.megatron.override_transformer_config.recompute_granularity=full",
        "verl sets these with setattr on the model provider: a misspelled key is silently ignored. Fields are "
        "read with ast from the installed megatron-core (megatron/core/transformer/transformer_config.py and "
        "model_parallel_config.py); the schema lists backend keys (MindSpeed).",
    ),
    Rule(
        "parallelism",
        "error",
        "TP x PP x CP and ETP x EP x PP must divide the world; rollout TP must fit a node",
        "trainer.nnodes=1 trainer.n_gpus_per_node=8 ...tensor_model_parallel_size=3",
        "trainer.nnodes=1 trainer.n_gpus_per_node=8 ...tensor_model_parallel_size=2",
        "Megatron-Core's parallel_state.initialize_model_parallel raises when world_size % (TP*PP*CP) or "
        "world_size % (ETP*EP*PP) is not 0 (megatron/core/parallel_state.py, megatron-core 0.16).",
    ),
    Rule(
        "batch-arithmetic",
        "error",
        "the batch-size checks verl runs at start-up, where the values are static",
        "data.train_batch_size=64 actor_rollout_ref.actor.ppo_mini_batch_size=128",
        "data.train_batch_size=128 actor_rollout_ref.actor.ppo_mini_batch_size=64",
        "Mirrors verl/workers/config/actor.py ActorConfig.__post_init__ and ActorConfig.validate (verl 0.9.1).",
    ),
    Rule(
        "duplicate-key",
        "warning",
        "the same key twice in one array literal: the later one wins",
        "ACTOR=(\n  actor_rollout_ref.actor.optim.lr=1e-6\n  actor_rollout_ref.actor.optim.lr=2e-6\n)",
        "ACTOR=(\n  actor_rollout_ref.actor.optim.lr=1e-6\n)",
        "The earlier value is dead text that misleads readers. Additions in device arms are not reported.",
    ),
    Rule(
        "stack-drift",
        "warning",
        "versions in the script header differ from requirements-ascend.txt",
        "#   - Megatron-Bridge v0.4.0   (requirements pin v0.5.0)",
        "#   - Megatron-Bridge v0.5.0",
        "The header tells users what to install; requirements-ascend.txt is what they install.",
    ),
    Rule(
        "launch-passes-args",
        "warning",
        'a verl launch that does not end with "$@"',
        'python3 -m verl.trainer.main_ppo "${ARGS[@]}"',
        'python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"',
        "Without it users cannot override a setting from the command line.",
    ),
    Rule(
        "unused-suppression",
        "warning",
        "a `# validate-scripts: disable=` directive that silences nothing",
        "# validate-scripts: disable=duplicate-key\nTP=2",
        "TP=2",
        "Stale directives hide the next real finding.",
    ),
]
RULES = RULES + POLICY_RULES

BY_ID = {r.id: r for r in RULES}


def explain(rule_id: str) -> str | None:
    r = BY_ID.get(rule_id)
    if r is None:
        return None
    return f"{r.id} ({r.severity}): {r.summary}\n\n{r.why}\n\nFails:\n{_indent(r.bad)}\n\nPasses:\n{_indent(r.good)}\n"


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def markdown() -> str:
    out = [
        "# Rules",
        "",
        "Generated from `src/verl_preflight/rules.py`; do not edit by hand.",
        "",
        "Silence one finding with `# validate-scripts: disable=RULE[,RULE]` on its line or the line "
        "above, or a whole file with `# validate-scripts: disable-file=RULE`.",
        "",
    ]
    for r in RULES:
        out += [
            f"## `{r.id}` ({r.severity})",
            "",
            r.summary + ".",
            "",
            r.why,
            "",
            "Fails:",
            "",
            "```bash",
            r.bad,
            "```",
            "",
            "Passes:",
            "",
            "```bash",
            r.good,
            "```",
            "",
        ]
    return "\n".join(out)
