"""A launch should end with "$@" so users can override anything from the command line."""

from __future__ import annotations

import re

from ...hydra_stage.tree import OWN_OPTIONS
from .. import Rule

# "$@", and "${@:N}": the arguments from the Nth on (${@:1} is all of them; a script that reads its
# first arguments itself, ENGINE=$1, forwards the rest, and the user's overrides go after those)
FORWARDS = re.compile(r'"?\$(?:@|\{@(?::[1-9][0-9]*)?\})"?')


class LaunchPassesArgs(Rule):
    id = "launch-passes-args"
    severity = "warning"
    stage = "policy"
    scope = "script"
    summary = 'a verl launch that does not end with "$@"'
    why = (
        "Without it users cannot override a setting from the command line. Only Hydra launches are asked for it: "
        "a verl module that parses its own options (verl.model_merger) takes no overrides, and the script's "
        "arguments would break it."
    )
    ground_truth = "verl 0.9.1 verl/model_merger/base_model_merger.py:35 (argparse, not @hydra.main)"
    bad = 'python3 -m verl.trainer.main_ppo "${ARGS[@]}"'
    good = 'python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"'

    def check_script(self, ctx):
        out = []
        for launch in ctx.launch_sites():
            if launch.argv[launch.entry].value in OWN_OPTIONS:
                continue
            if FORWARDS.fullmatch(launch.last_word):
                continue
            if _forwards_earlier(ctx, launch):
                message = (
                    'the script\'s arguments ("$@") come before the last overrides of this launch: those win, '
                    "and a user cannot override them on the command line"
                )
            else:
                message = (
                    'this launch does not end with "$@": users cannot add or override settings on the command line'
                )
            out.append(self.finding(launch.loc, message))
        return out


def _forwards_earlier(ctx, launch) -> bool:
    """Whether a word of the launch's command before its last one is `"$@"` (Hydra applies
    overrides in order: what follows it wins over the user's)."""
    script = {s.path: s for s in ctx.scripts()}.get(launch.loc.path)
    node, _ = script.word_at(launch.loc) if script is not None else (None, None)
    while node is not None and node.type != "command":
        node = node.parent
    if node is None:
        return False
    words = [script.text(c) for i, c in enumerate(node.children) if node.field_name_for_child(i) == "argument"]
    return any(FORWARDS.fullmatch(w) for w in words[:-1])
