"""The same key twice in one array literal with two values: the later one wins, the earlier is dead.

Only one array literal is looked at, so an addition in a device arm
(`ACTOR+=(...)`) that overrides an earlier value is not reported. The same
key with the same text twice changes nothing: no finding.
"""

from __future__ import annotations

from .. import Rule


def _key(text: str) -> str | None:
    if "=" not in text or "$" in text.split("=", 1)[0]:
        return None
    key = text.split("=", 1)[0].lstrip("+~").strip("\"'")
    return key or None


def _value(text: str) -> str:
    """The value as written, quotes around the whole element set aside."""
    return text.strip("\"'").split("=", 1)[1].strip("\"'")


class DuplicateKey(Rule):
    id = "duplicate-key"
    severity = "warning"
    stage = "policy"
    scope = "script"
    summary = "the same key twice in one array literal with two values: the later one wins"
    why = (
        "The earlier value is dead text that misleads readers. Additions in device arms are not reported, nor "
        "is a key written twice with the same value."
    )
    bad = "ACTOR=(\n  actor_rollout_ref.actor.optim.lr=1e-6\n  actor_rollout_ref.actor.optim.lr=2e-6\n)"
    good = "ACTOR=(\n  actor_rollout_ref.actor.optim.lr=1e-6\n)"

    def check_script(self, ctx):
        out = []
        for script in ctx.scripts():
            stack = [script.root]
            while stack:
                node = stack.pop()
                if node.type == "array":
                    seen: dict[str, tuple[int, str]] = {}
                    for element in node.named_children:
                        if element.type == "comment":
                            continue
                        text = script.text(element)
                        key = _key(text)
                        if key is None:
                            continue
                        if key in seen and seen[key][1] != _value(text):
                            line = seen[key][0]
                            message = f"{key} is already set on line {line} of this array; the later value wins"
                            out.append(self.finding(script.loc(element), message, key))
                        seen[key] = (script.loc(element).line, _value(text))
                stack.extend(node.children)
        return out
