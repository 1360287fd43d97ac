"""Why a script that names a verl entry point has no checked launch (a note, not a finding).

A script that says `python3 -m verl.trainer.main_ppo` and yet hands the Hydra stage
no launch it could compose passes with nothing checked. Reports say so, with the
reason: every profile exits before the launch (at which line, on what), the
evaluator cannot follow the script (an `eval` of text known only at run time), the
text is in a here-document or a function nothing calls, or the launch is reached
but its config is not here (`--config-path` to a folder that is absent, a recipe
whose source is not beside the verl checked against).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.values import Loc
from ..hydra_stage.tree import OWN_OPTIONS, in_verl

# `-m MODULE` (any verl module but those with their own options), or an entry point's name
# anywhere in a word (`ENTRY=verl.trainer.main_ppo`, `"-m verl.trainer.sft_trainer"`)
_WITH_M = re.compile(r"(?<![\w.-])-m\s*((?:[A-Za-z_][\w-]*\.)*(?:verl|recipe)(?:\.[A-Za-z_]\w*)+)")
_ENTRY = re.compile(
    r"(?<![\w.])((?:[A-Za-z_][\w-]*\.)*verl\.trainer\.(?:main_\w+|\w*trainer\w*)|recipe\.\w+\.main_\w+)(?![\w.])"
)
_TEXT_NODES = ("word", "string_content", "raw_string", "heredoc_content", "heredoc_body", "ansi_c_string")


@dataclass(frozen=True)
class Unchecked:
    """The script names `module` at `loc`; `why` no launch of it is checked."""

    loc: Loc
    module: str
    why: str

    @property
    def message(self) -> str:
        return f"names {self.module} at line {self.loc.line} but {self.why}"

    def as_json(self) -> dict:
        return {
            "line": self.loc.line,
            "column": self.loc.col,
            "module": self.module,
            "why": self.why,
            "message": self.message,
        }


def named_entry(script):
    """(module, Loc, node) of the first verl entry point the script's text names outside a
    comment; None when it names none."""
    if b"verl" not in script.source and b"recipe" not in script.source:
        return None  # (both patterns need one of the two words: no walk of a large script)
    stack = [script.root]
    while stack:
        node = stack.pop()
        if node.type == "comment":
            continue
        if node.type in _TEXT_NODES or node.child_count == 0:
            text = script.text(node)
            for pattern in (_WITH_M, _ENTRY):
                m = pattern.search(text)
                if m and in_verl(m.group(1)) is not None and in_verl(m.group(1)) not in OWN_OPTIONS:
                    offset = node.start_byte + len(text[: m.start(1)].encode())
                    return m.group(1), script.loc_at(offset), node
            if node.type in _TEXT_NODES:
                continue
        stack.extend(reversed(node.children))
    return None


@dataclass(frozen=True)
class NoLaunch:
    """No profile of the script launches verl; `runs`: what it runs instead that could hold a
    training launch, ((program, kind, (line, ...)), ...), kind "python" (a Python program that
    is not a verl entry point, given overrides), "python-absent" (one whose file is not here), "followed" (another shell script, followed:
    it launches none either) or "absent" (another shell script that is not here)."""

    runs: tuple = ()
    read_by: tuple = ()  # --dependents: the scripts checked that read it (a sourced helper)

    KINDS = {
        "python": "a Python program, not a verl entry point: what it starts is not checked",
        "python-absent": "a Python program that is not here: what it starts is not checked",
        "followed": "another script, followed: no verl launch there either",
        "absent": "another script, not found from here",
    }

    @property
    def message(self) -> str:
        if self.read_by:
            return f"no verl launch of its own; read by {', '.join(self.read_by)}, whose launches are checked"
        said = "no verl launch in any profile: nothing was checked"
        parts = [
            f"{program} (line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}), {self.KINDS[kind]}"
            for program, kind, lines in self.runs
        ]
        return f"{said}; it runs {'; '.join(parts)}" if parts else said

    def as_json(self) -> dict:
        runs = [{"program": p, "kind": k, "lines": list(lines)} for p, k, lines in self.runs]
        return {"runs": runs, "message": self.message}


def why_no_launch(profiles, runs: dict) -> NoLaunch | None:
    """The note for a script none of whose `profiles` launches verl (an installer, a wrapper);
    `runs`: {(program, kind): [Loc, ...]} of what it runs that might have held one."""
    if not profiles or not all(p.status in ("no-launch", "rejected") for p in profiles):
        return None
    return NoLaunch(tuple((program, kind, tuple(sorted({loc.line for loc in locs}))) for (program, kind), locs in runs.items()))


def why_unchecked(script, profiles) -> Unchecked | None:
    """The note for a script that names a verl entry point and has no checked launch in any of
    its `profiles` (validate.ProfileResult); None when it names none or one launch is checked."""
    if any(la.unchecked is None for p in profiles for la in p.launches):
        return None
    launches = [la for p in profiles for la in p.launches]
    if launches:  # reached, none checked: said of the first launch (whatever its module's name)
        first = min(launches, key=lambda la: la.line)
        loc = Loc(script.path, first.line, 1)
        return Unchecked(loc, first.module, _launches_unchecked(launches, loc))
    named = named_entry(script)
    if named is None:
        return None
    module, loc, node = named
    return Unchecked(loc, module, "no profile reaches it: " + _not_reached(script, node, loc, profiles))


def _launches_unchecked(launches, loc: Loc) -> str:
    lines = sorted({la.line for la in launches})
    reasons = "; ".join(dict.fromkeys(la.unchecked for la in launches))
    if lines == [loc.line]:
        return f"its launch there is not checked: {reasons}"
    if len(lines) == 1:
        return f"its launch (line {lines[0]}) is not checked: {reasons}"
    return f"its launches (lines {', '.join(map(str, lines))}) are not checked: {reasons}"


def _not_reached(script, node, loc: Loc, profiles) -> str:
    """Why no profile runs the command that names the entry point."""
    stopped = [p.stopped for p in profiles if p.stopped is not None]
    if stopped:  # what the evaluator could not follow may be what launches it
        where, message = stopped[0]
        if "eval of text that is not known statically" in message:
            if _inside(node, ("variable_assignment",)) or where.line == loc.line:
                return f"the launch is built by eval of text known only at run time (line {where.line})"
            return f"the script evals text known only at run time at line {where.line}, which may launch it"
        return f"the script cannot be followed past line {where.line} ({_after_colon(message)})"
    context = _context(script, node)
    if context is not None:
        return context
    ends = [p.ended for p in profiles if p.status == "rejected" and p.ended is not None]
    if ends and len(ends) == len(profiles):
        return _exits(ends, every=True)
    if ends:
        return _exits(ends, every=False) + "; the others end without reaching it"
    return f"every profile ends without reaching line {loc.line}"


def _inside(node, types) -> bool:
    while node is not None:
        if node.type in types:
            return True
        node = node.parent
    return False


def _exits(ends, every: bool) -> str:
    shown = list(dict.fromkeys(_exit_text(e) for e in ends))
    head = "every profile exits" if every else "profiles exit"
    return f"{head} at {shown[0]}" if len(shown) == 1 else f"{head} before it: at " + "; at ".join(shown)


def _exit_text(ended) -> str:
    where, why, via = ended
    text = f"line {where.line} ({why}"
    if via is not None:
        text += f", in {via[0]}() called at line {via[1].line}"
    return text + ")"


def _after_colon(message: str) -> str:
    return message.split(": ", 1)[1] if message.startswith("cannot follow the script here: ") else message


def _context(script, node) -> str | None:
    """What the text that names the entry point is part of, when that is why it never runs:
    a here-document, a function nothing calls, a command that only prints it."""
    cur = node
    while cur is not None:
        if cur.type in ("heredoc_body", "heredoc_redirect"):
            return f"it is in a here-document (line {script.loc(cur).line}): text the script writes, not a command"
        if cur.type == "command":
            name = cur.child_by_field_name("name")
            program = script.text(name) if name is not None else ""
            if program in ("echo", "printf", "cat"):
                return f"it is only printed (`{program}` at line {script.loc(cur).line})"
        if cur.type == "function_definition":
            name = cur.child_by_field_name("name")
            called = script.text(name) if name is not None else None
            if called and not _calls(script, called):
                return f"it is in function {called} (line {script.loc(cur).line}), which the script never calls"
        cur = cur.parent
    return None


def _calls(script, function: str) -> bool:
    """Whether the script uses `function`'s name anywhere but in its definition (a command,
    `trap f EXIT`, an array holding it): taken as a call."""
    stack = [script.root]
    while stack:
        node = stack.pop()
        if node.type == "word" and script.text(node) == function:
            if node.parent is None or node.parent.type != "function_definition":
                return True
        stack.extend(node.children)
    return False
