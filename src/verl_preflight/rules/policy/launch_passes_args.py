"""A launch should end with "$@" so users can override anything from the command line."""

from __future__ import annotations

from .. import Rule

FORWARDS = {'"$@"', "$@", '"${@}"', "${@}"}


class LaunchPassesArgs(Rule):
    id = "launch-passes-args"
    severity = "warning"
    stage = "policy"
    scope = "script"
    summary = 'a verl launch that does not end with "$@"'
    why = "Without it users cannot override a setting from the command line."
    bad = 'python3 -m verl.trainer.main_ppo "${ARGS[@]}"'
    good = 'python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"'

    def check_script(self, ctx):
        out = []
        for launch in ctx.launch_sites():
            if launch.last_word not in FORWARDS:
                out.append(
                    self.finding(
                        launch.loc,
                        'this launch does not end with "$@": users cannot add or override settings on the command line',
                    )
                )
        return out
