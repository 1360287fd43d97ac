"""The same key twice in one array literal: the later one wins, the earlier is dead.

Only one array literal is looked at, so an addition in a device arm
(`ACTOR+=(...)`) that overrides an earlier value is not reported.
"""

from __future__ import annotations

from .. import Rule


def _key(text: str) -> str | None:
    if "=" not in text or "$" in text.split("=", 1)[0]:
        return None
    key = text.split("=", 1)[0].lstrip("+~").strip("\"'")
    return key or None


class DuplicateKey(Rule):
    id = "duplicate-key"
    severity = "warning"
    stage = "policy"
    scope = "script"
    summary = "the same key twice in one array literal: the later one wins"
    why = "The earlier value is dead text that misleads readers. Additions in device arms are not reported."
    bad = "ACTOR=(\n  actor_rollout_ref.actor.optim.lr=1e-6\n  actor_rollout_ref.actor.optim.lr=2e-6\n)"
    good = "ACTOR=(\n  actor_rollout_ref.actor.optim.lr=1e-6\n)"

    def check_script(self, ctx):
        out = []
        for script in ctx.scripts():
            stack = [script.root]
            while stack:
                node = stack.pop()
                if node.type == "array":
                    seen: dict[str, int] = {}
                    for element in node.named_children:
                        if element.type == "comment":
                            continue
                        key = _key(script.text(element))
                        if key is None:
                            continue
                        if key in seen:
                            out.append(
                                self.finding(
                                    script.loc(element),
                                    f"{key} is already set on line {seen[key]} of this array; the later value wins",
                                    key,
                                )
                            )
                        else:
                            seen[key] = script.loc(element).line
                stack.extend(node.children)
        return out
