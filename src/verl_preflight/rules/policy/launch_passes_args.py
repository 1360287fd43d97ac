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
    opt_in = True  # a launch without it runs as written: a matter of style, off unless turned on
    stage = "policy"
    scope = "script"
    summary = 'a verl launch that does not end with "$@"'
    why = (
        "Without it users cannot override a setting from the command line. The launch itself runs as "
        "written, so the rule is off unless turned on (`--enable launch-passes-args`, or a severity for it in "
        "[tool.validate-scripts]). Only Hydra launches of scripts that leave their arguments alone are asked "
        "for it: a verl module that parses its own options (verl.model_merger) takes no overrides, and a "
        "script that reads its own arguments (`$1`, `shift`, `getopts`, `$#`) would hand Hydra its options."
    )
    ground_truth = "verl 0.9.1 verl/model_merger/base_model_merger.py:35 (argparse, not @hydra.main)"
    bad = 'python3 -m verl.trainer.main_ppo "${ARGS[@]}"'
    good = 'python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"'

    def check_script(self, ctx):
        out = []
        own = None  # whether the script reads its own arguments (asked once, where it matters)
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
                if own is None:
                    own = any(_reads_own_arguments(s) for s in ctx.scripts())
                if own:
                    continue  # its arguments are its own options: forwarding them to Hydra would break the launch
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


_OWN_ARGUMENT_COMMANDS = frozenset({"shift", "getopts", "getopt"})


def _reads_own_arguments(script) -> bool:
    """Whether a script handles its arguments itself: it reads `$1`..`$9` (with a default or not),
    counts them (`$#`), or parses them (`shift`, `getopts`, `getopt`)."""
    stack = [script.root]
    while stack:
        node = stack.pop()
        t = node.type
        if t == "special_variable_name" and script.text(node) == "#":
            return True
        if t == "variable_name" and node.parent is not None and node.parent.type in ("simple_expansion", "expansion"):
            if script.text(node).isdigit() and script.text(node) != "0":
                return True
        if t == "command":
            name = node.child_by_field_name("name")
            if name is not None and script.text(name) in _OWN_ARGUMENT_COMMANDS:
                return True
        stack.extend(node.children)
    return False
