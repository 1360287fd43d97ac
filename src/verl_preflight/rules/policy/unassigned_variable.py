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
    summary = "an override reads a variable that nothing in the script or its repository sets"
    why = (
        "Without `set -u` bash expands a variable nobody set to nothing: `actor_rollout_ref.model.path=$BASE_MODEL` "
        "reaches verl as `actor_rollout_ref.model.path=` (an empty path), and the run fails later, often deep in "
        "a worker. A variable the repository gives a value elsewhere is an input, not a slip: its README or docs "
        "export it (`export N_GPUS=8`), a script of the project that runs this one exports it, or a CI workflow, "
        "Dockerfile or .env file sets it; such variables are listed once in the script's note (`inputs: ...`) and "
        "not reported. One that nothing sets is a warning, with the variable of the script it most resembles. "
        "Variables bash always sets (HOME, USER, ...), Slurm's in a batch script, and the profile's switches are "
        "not reported; under `set -u` the bash rules say it instead."
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
        out = []
        for name, f, launch in _unassigned(ctx):
            if name in ctx.documented:
                continue  # an input: listed in the script's note (inputs_of)
            shown = f.display.split("=", 1)[0]
            message = (
                f"{name} is never assigned and has no default, and nothing in the repository exports or documents "
                f"it: it expands to nothing in {shown}"
            )
            close = _nearest(name, ctx)
            if close:
                message += f"; the script sets {close}"
            out.append(self.finding(f.loc or launch.loc, message, shown.lstrip("+~")))
        return out


def inputs_of(ctx) -> list[tuple[str, str]]:
    """(name, where the project gives it) of each variable a launch reads that the script never
    assigns but the repository exports or documents (repository.Repository.documented_inputs):
    the script's inputs, said once in its note and no warning."""
    unassigned = _unassigned(ctx)
    return [(name, ctx.documented[name]) for name, _, _ in unassigned if name in ctx.documented] if unassigned else []


def _unassigned(ctx) -> list:
    """(name, word, launch) of each variable a launch's argument reads that the script never
    assigns, gives no default nor tests, bash does not set, at its first use; [] under `set -u`
    (the bash rules say it there)."""
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
                out.append((name, f, launch))
    return out


def _nearest(name: str, ctx) -> str | None:
    """The variable the script assigns that `name` most resembles (a slip: TRAIN_DATA_DIR for DATA_DIR)."""
    import difflib

    info = ctx.switches
    assigned = sorted(set(info.assigned) | set(info.inputs)) if info is not None else []
    close = difflib.get_close_matches(name, [a for a in assigned if a != name], n=1, cutoff=0.6)
    return close[0] if close else None
