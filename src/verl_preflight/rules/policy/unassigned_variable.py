"""A variable a launch's override reads that nothing assigns: without `set -u` it is empty."""

from __future__ import annotations

import re

from .. import Rule

_ENV = "environment variable "
_NOUNSET = re.compile(r"^\s*set\s+(?:-[a-zA-Z]*u|-o\s+nounset)", re.M)


class UnassignedVariable(Rule):
    id = "unassigned-variable"
    severity = "warning"
    stage = "policy"
    scope = "script"
    summary = "an override reads a variable that the script never assigns and gives no default"
    why = (
        "Without `set -u` bash expands a variable nobody set to nothing: `actor_rollout_ref.model.path=$BASE_MODEL` "
        "reaches verl as `actor_rollout_ref.model.path=` (an empty path), and the run fails later, often deep in "
        "a worker. An `export BASE_MODEL=...` in another shell does not reach a script started with `bash`. A "
        "warning: the variable may be exported by whoever starts the script. Variables bash always sets (HOME, "
        "USER, ...), Slurm's in a batch script, and the profile's switches are not reported; under `set -u` the "
        "bash rules say it instead."
    )
    ground_truth = (
        "bash: an unset variable expands to the empty string unless `set -u`; Jiayi-Pan/TinyZero#52 (verl 0.1: "
        "an empty actor_rollout_ref.model.path fails in copy_local_path_from_hdfs with IndexError)"
    )
    bad = "python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path=$BASE_MODEL"
    good = (
        'BASE_MODEL=${BASE_MODEL:-Qwen/Qwen2.5-0.5B}\n'
        'python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path="$BASE_MODEL"'
    )

    def check_script(self, ctx):
        if any(_NOUNSET.search(s.source.decode("utf-8", "replace")) for s in ctx.scripts()):
            return []
        info = ctx.switches
        known = set(info.assigned) | set(info.inputs) | set(info.tested) if info is not None else set()
        out, seen = [], set()
        for launch in ctx.launch_sites():
            for f in launch.argv[launch.entry + 1 :]:
                for piece in f.pieces:
                    label = getattr(piece, "label", "")
                    if not label.startswith(_ENV):
                        continue
                    name = label[len(_ENV) :]
                    if name in known or name in ctx.always_set or name in seen:
                        continue
                    seen.add(name)  # once a variable: its first use
                    shown = f.display.split("=", 1)[0]
                    message = (
                        f"{name} is never assigned and has no default: unless the environment exports it, "
                        f"it expands to nothing in {shown}"
                    )
                    out.append(self.finding(f.loc or launch.loc, message, shown.lstrip("+~")))
        return out
