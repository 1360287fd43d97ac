"""A rule's documentation, from its class: `--explain RULE`, `--list-rules` and docs/rules.md."""

from __future__ import annotations

import difflib

from ..rules import all_rules, get, registry


def explain(rule_id: str) -> str | None:
    r = get(rule_id)
    if r is None:
        return None
    parts = [f"{r.id} ({_level(r)}, {r.stage}{', fixable' if r.fixable else ''}): {r.summary}", "", r.why]
    if r.ground_truth:
        parts += ["", f"Ground truth: {r.ground_truth}"]
    parts += ["", fix_text(r)]
    parts += ["", "Fails:", _indent(r.bad), "", "Passes:", _indent(r.good)]
    return "\n".join(parts) + "\n"


def nearest(rule_id: str) -> list[str]:
    return difflib.get_close_matches(rule_id, list(registry()), n=3, cutoff=0.5)


def fix_text(r) -> str:
    """Whether `--fix` repairs a rule's findings, and how."""
    if not r.fixable:
        return "Fix: none; --fix leaves it to you."
    return f"Fix: --fix {r.fix_doc}"


def _level(r) -> str:
    """The severity a rule reports at; `off` for an opt-in rule (it reports only where turned on)."""
    return f"off (opt-in, {r.severity})" if r.opt_in else r.severity


def listing() -> str:
    """One rule a line: id, severity (`off` for an opt-in rule), `fixable` where --fix repairs it, summary."""
    width = max(len(r.id) for r in all_rules())
    return "".join(
        f"{r.id.ljust(width)}  {'off' if r.opt_in else r.severity:<7}  {'fixable' if r.fixable else '':<7}  "
        f"{r.summary}\n"
        for r in all_rules()
    )


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


_STAGE_TITLES = {
    "bash": "Bash: what bash itself refuses or stops on",
    "hydra": "Hydra: what main_ppo's Hydra refuses",
    "policy": "Policy: what composes but fails (or misbehaves) when verl starts",
    "tool": "The run itself",
}


def markdown() -> str:
    out = [
        "# Rules",
        "",
        "Generated from the rule classes (`src/verl_preflight/rules/<stage>/<rule>.py`) by `make docs`; "
        "do not edit by hand.",
        "",
        "Silence one finding with `# validate-scripts: disable=RULE[,RULE]` on its line or the line "
        "above, or a whole file with `# validate-scripts: disable-file=RULE`.",
        "",
        "Rules marked *fixable* are repaired in the script by `--fix` (`--diff` shows the change); "
        "the others are left to you.",
        "",
        "Rules marked *opt-in* find a matter of style, not a launch that fails: they report only where "
        "turned on, with `--enable RULE` or a severity for the rule under `[tool.validate-scripts] severity`.",
        "",
    ]
    stage = None
    for r in all_rules():
        if r.stage != stage:
            stage = r.stage
            out += [f"## {_STAGE_TITLES[stage]}", ""]
        tag = _level(r) + (", fixable" if r.fixable else "")
        out += [f"### `{r.id}` ({tag})", "", r.summary[:1].upper() + r.summary[1:] + ".", "", r.why, ""]
        if r.ground_truth:
            out += [f"Ground truth: {r.ground_truth}", ""]
        if r.fixable:
            out += [fix_text(r), ""]
        out += ["Fails:", "", "```bash", r.bad, "```", "", "Passes:", "", "```bash", r.good, "```", ""]
    return "\n".join(out)
