"""A launch should end with "$@" so users can override anything from the command line."""

from __future__ import annotations

from ...findings import Finding

SCOPE = "script"
FORWARDS = {'"$@"', "$@", '"${@}"', "${@}"}


def check(policy, ctx) -> list[Finding]:
    out = []
    for launch in ctx.launch_sites():
        if launch.last_word not in FORWARDS:
            out.append(
                Finding.at(
                    launch.loc,
                    policy.id,
                    policy.severity,
                    'this launch does not end with "$@": users cannot add or override settings on the command line',
                )
            )
    return out
