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
    Rule("bash-syntax", "error", "bash cannot parse this part of the script",
         'if [ "$DEVICE" = npu ]; then\n  TP=2', 'if [ "$DEVICE" = npu ]; then\n  TP=2\nfi',
         "tree-sitter-bash reports an error node; bash would refuse the script or run something else."),
    Rule("override-syntax", "error", "an argument that Hydra's override grammar rejects",
         "trainer.logger=[console,wandb", "trainer.logger='[console,wandb]'",
         "main_ppo parses every override before it composes; one bad one stops the job at start."),
    Rule("override-sweep", "error", "a comma list in a value: Hydra reads it as a sweep and refuses it in a run",
         "trainer.logger=console,wandb", "trainer.logger='[console,wandb]'",
         "Without --multirun Hydra stops with 'Ambiguous value'."),
    Rule("override-missing-key", "error", "`key=value` on a key verl's config does not have",
         "actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn=True",
         "+actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn=True",
         "In struct mode Hydra only overrides existing keys; a new key needs `+` (or `++`)."),
    Rule("override-append-existing", "error", "`+key=value` on a key that already has a value",
         "+actor_rollout_ref.actor.megatron.use_mbridge=True",
         "actor_rollout_ref.actor.megatron.use_mbridge=True",
         "`+` adds a key; Hydra refuses it over an existing non-null value. Drop the `+`, or use `++`."),
    Rule("override-delete-missing", "error", "`~key` on a key that does not exist (or is null)",
         "~trainer.no_such_key", "~trainer.val_before_train",
         "Hydra refuses to delete what is not there."),
    Rule("override-error", "error", "OmegaConf refused the override",
         "hydra.job.chdir=maybe", "hydra.job.chdir=True",
         "Typed nodes (such as Hydra's own) validate values; the message is OmegaConf's."),
    Rule("config-group", "error", "a config-group selection that does not compose",
         "model_engine=megatorn", "model_engine=megatron",
         "The option must exist in the group's folder of verl's config tree."),
    Rule("config-name", "error", "--config-name names a root config verl does not have",
         "--config-name=ppo_megatron", "--config-name=ppo_megatron_trainer",
         "Hydra cannot find the primary config and stops."),
    Rule("config-path", "warning", "--config-path points away from verl's config tree; not checked",
         "--config-path=/my/configs", "--config-path=config",
         "The validator checks against verl's tree only."),
    Rule("hydra-argument", "error", "an option main_ppo's Hydra command line does not accept",
         "python3 -m verl.trainer.main_ppo --nnodes 2", "python3 -m verl.trainer.main_ppo trainer.nnodes=2",
         "Hydra's argparse refuses unknown options; flags like --cfg change what the run does."),
    Rule("unknown-entry", "warning", "a verl module that is not a Hydra entry point here",
         "python3 -m verl.trainer.no_such_main", "python3 -m verl.trainer.main_ppo",
         "Its arguments cannot be checked against a config."),
    Rule("unknown-argument", "info", "an argument whose text is not known statically",
         'python3 -m verl.trainer.main_ppo $EXTRA_ARGS', 'python3 -m verl.trainer.main_ppo "$@"',
         "It comes from the environment or a command substitution; it is not checked."),
    Rule("incomplete", "warning", "the evaluator cannot follow the script past this point",
         "source <(curl -s http://host/env.sh)", "source ./env.sh",
         "Nothing is ever executed: eval, sourcing unknown paths and the like are not followed."),
    Rule("budget", "warning", "an evaluation budget was used up (paths, steps, loop iterations)",
         "while true; do :; done", "for x in a b; do :; done",
         "Pathological input stays bounded; raise the budget or simplify the script."),
    Rule("unset-variable", "warning", "`set -u` and a variable nobody assigns: bash stops unless it is exported",
         "set -u\npython3 -m verl.trainer.main_ppo data.train_files=$TRAIN", 'set -u\nTRAIN=${TRAIN:-~/data/train.parquet}',
         "Under `set -u` an unset variable ends the script with 'unbound variable'."),
    Rule("unbound-variable", "warning", "in this profile bash stops here: the variable is unset under `set -u`",
         'set -u\n[ -n "$CKPT" ]', 'set -u\n[ -n "${CKPT:-}" ]',
         "The profile leaves it unset and `set -u` makes bash exit."),
    Rule("parameter-error", "warning", "`${VAR:?msg}` on an unset variable: bash stops here",
         "MODEL=${MODEL_PATH:?set MODEL_PATH}", "MODEL=${MODEL_PATH:-Qwen/Qwen3-8B}",
         "The profile leaves the variable unset."),
    Rule("arithmetic", "warning", "an arithmetic error (division by zero, bad operand)",
         "DP=$((WORLD / TP))  # TP=0", "DP=$((WORLD / TP))  # TP=2",
         "bash reports the error and the command fails."),
    Rule("test-syntax", "warning", "a malformed test expression",
         'TP=two\n[ "$TP" -gt 1 ]', 'TP=2\n[ "$TP" -gt 1 ]', "bash's test builtin prints an error and returns 2."),
    Rule("readonly", "warning", "assignment to a readonly variable",
         "readonly TP=2\nTP=4", "TP=${TP:-2}", "bash refuses it."),
    Rule("profiles-capped", "warning", "more profiles than --max-profiles; the rest were not checked",
         "six independent switches", "fewer switches, or --profile to pin some",
         "Profiles are the product of every switch's values."),
    Rule("file-too-large", "error", "a script larger than --max-bytes is not read",
         "a 40 MB generated script", "a script of normal size", "Keeps the linter bounded."),
]

BY_ID = {r.id: r for r in RULES}


def explain(rule_id: str) -> str | None:
    r = BY_ID.get(rule_id)
    if r is None:
        return None
    return (f"{r.id} ({r.severity}): {r.summary}\n\n{r.why}\n\nFails:\n{_indent(r.bad)}\n\n"
            f"Passes:\n{_indent(r.good)}\n")


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def markdown() -> str:
    out = ["# Rules", "", "Generated from `src/verl_preflight/rules.py`; do not edit by hand.", ""]
    for r in RULES:
        out += [f"## `{r.id}` ({r.severity})", "", r.summary + ".", "", r.why, "", "Fails:", "",
                "```bash", r.bad, "```", "", "Passes:", "", "```bash", r.good, "```", ""]
    return "\n".join(out)
