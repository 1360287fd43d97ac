"""Versions named in a script's MindSpeed-Bridge header must match requirements-ascend.txt."""

from __future__ import annotations

import os

from ...core.findings import Finding
from ...target.stack import drift, find_upwards, header_components, requirement_branches, requirement_refs
from .. import Rule


class StackDrift(Rule):
    id = "stack-drift"
    severity = "warning"
    stage = "policy"
    scope = "script"
    summary = "versions in the script header differ from requirements-ascend.txt"
    why = "The header tells users what to install; requirements-ascend.txt is what they install."
    bad = "#   - Megatron-Bridge v0.4.0   (requirements pin v0.5.0)"
    good = "#   - Megatron-Bridge v0.5.0"
    default_params = {"requirements": "requirements-ascend.txt"}

    def check_script(self, ctx):
        script = ctx.main_script
        header = header_components(script.source.decode("utf-8", "replace"))
        if not header:
            return []
        req = find_upwards(
            os.path.dirname(script.path) or ".", self.params.get("requirements", "requirements-ascend.txt")
        )
        if req is None:
            return []
        text = ctx.read_text(req)
        if text is None:
            return []
        pins = requirement_refs(text)
        out = []
        for name, ref, pinned, line in drift(header, pins, requirement_branches(text)):
            what = f"pinned at {pinned}" if pinned else "not pinned"
            out.append(
                Finding(
                    script.path,
                    line,
                    1,
                    self.id,
                    self.severity,
                    f"the header names {name} {ref}, {os.path.basename(req)} has it {what}",
                )
            )
        return out
