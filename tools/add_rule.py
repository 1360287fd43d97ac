#!/usr/bin/env python3
"""Scaffold a new rule: its module (id, severity, doc, check) and its two fixtures.

    python tools/add_rule.py policy my-rule-id [--severity warning] [--scope launch|script]

Adding a rule touches one module and two fixtures; the registry finds the class,
`--explain` and docs/rules.md read it (run `make docs`), and a policy rule is
enabled by adding `- id: my-rule-id` to src/verl_preflight/rules/schema.yaml.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RULES = os.path.join(ROOT, "src", "verl_preflight", "rules")
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "rules")

CHECKS = {
    "launch": '''    def check_launch(self, view, ctx):
        """One launch in one profile: view.value(key), view.setting(key), view.where(key)."""
        out = []
        key = "trainer.total_epochs"
        if view.value(key) == 0:
            out.append(self.finding(view.where(key), "TODO: what goes wrong", key))
        return out
''',
    "script": '''    def check_script(self, ctx):
        """The whole script: ctx.scripts() (parsed files), ctx.launch_sites()."""
        return []
''',
}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("stage", choices=["bash", "hydra", "policy", "tool"])
    p.add_argument("id", help="kebab-case rule id, e.g. rollout-expert-parallel")
    p.add_argument("--severity", choices=["error", "warning", "info"], default="error")
    p.add_argument("--scope", choices=["launch", "script"], default="launch")
    args = p.parse_args(argv)
    if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", args.id):
        p.error("the id is kebab-case: lower-case words joined by '-'")
    module = os.path.join(RULES, args.stage, args.id.replace("-", "_") + ".py")
    fixture_dir = os.path.join(FIXTURES, args.id)
    if os.path.exists(module) or os.path.exists(fixture_dir):
        p.error(f"{args.id} exists already")
    class_name = "".join(part.capitalize() for part in args.id.split("-"))
    policy = args.stage == "policy"
    body = [
        '"""TODO: one line that states the rule."""',
        "",
        "from __future__ import annotations",
        "",
        "from .. import Rule",
        "",
        "",
        f"class {class_name}(Rule):",
        f'    id = "{args.id}"',
        f'    severity = "{args.severity}"',
        f'    stage = "{args.stage}"',
    ]
    if policy:
        body.append(f'    scope = "{args.scope}"')
    body += [
        '    summary = "TODO: what it finds, in one line"',
        '    why = "TODO: what happens at launch when it is wrong"',
        '    ground_truth = "TODO: project version path/to/file.py:LINE that fails"',
        '    bad = "TODO: a line that fails"',
        '    good = "TODO: the same line, fixed"',
    ]
    text = "\n".join(body) + "\n"
    if policy:
        text += "\n" + CHECKS[args.scope]
    with open(module, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.makedirs(fixture_dir)
    for name, note in (("bad.sh", f"# expect: {args.id}"), ("good.sh", "")):
        with open(os.path.join(fixture_dir, name), "w", encoding="utf-8") as fh:
            fh.write(
                "#!/usr/bin/env bash\n"
                f"# {args.id}{' (fixed)' if name == 'good.sh' else ''}: TODO\n"
                "set -euo pipefail\n\n"
                "python3 -m verl.trainer.main_ppo \\\n"
                "    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 \\\n"
                f'    "$@"  {note}\n'.replace("  \n", "\n")
            )
    print(f"created {os.path.relpath(module, ROOT)}")
    print(
        f"created {os.path.relpath(fixture_dir, ROOT)}/bad.sh and good.sh (mark the failing line: # expect: {args.id})"
    )
    if policy:
        print(f"enable it: add '  - id: {args.id}' to src/verl_preflight/rules/schema.yaml; then make docs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
