"""`--fix` and `--diff`: rewrite the word of the script that wrote a mechanical mistake.

A fixable rule attaches a `Fix` to its finding: characters [start, end) of the
override, as checked, become `replacement` (drop the `+` of `+key=v`, add one to
`key=v`, rename a misspelt key, set a value). The pipeline then ties each fix to
the source (`resolve`): the word at the finding's location is found again in
the parsed file that wrote it (the script, a file it sources, an array element
far from the launch), its literal text is read back with bash's quoting
(`"..."`, `'...'`, backslashes) and must write exactly this override, with the
key (and whatever changes) literal, not built from variables. Only the
characters that change are rewritten, inside the quotes they sit in; comments,
layout and every other byte stay.

A fix is applied only when it holds everywhere its word goes: every launch, in
every profile (and every script, `plan`), that receives the word must report
the same finding with the same rewrite. Otherwise it is refused and says why.
Profiles the run did not see (a capped or an unfinished evaluation) refuse all.

A fix that holds is safe, and applied, only when nothing else of the run is said about the
words it depends on: no other finding at its word, none at the overrides its finding names as
related (the earlier `+key` a duplicate `+key` collides with), no other finding naming its word
as related, and no doubt of its rule's own (`Fix.unsafe`: the repair makes another key fail).
Otherwise it is unsafe (ruff's term): `--unsafe-fixes` applies it, and without that flag the
report says why it was left.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field, replace

from ..core.edits import Fix, SourceEdit
from ..core.values import Loc
from ..shell.literal import literal_chars

__all__ = ["Fix", "LaunchFindings", "Plan", "SourceEdit", "locate", "plan", "resolve"]


# ---- the word in the source ------------------------------------------------


def locate(script, loc: Loc, fix: Fix, field_) -> tuple[SourceEdit | None, str | None]:
    """(the edit in the file, None) or (None, why the word cannot be rewritten)."""
    node, offset = script.word_at(loc)
    if node is None:
        return None, "the override is not one word of the source here (eval, printf, read or a command wrote it)"
    chars: list = []
    whole = literal_chars(script, node, chars)
    if not chars or offset not in (node.start_byte, chars[0][1]):
        return None, "the key or the text to change is built from variables, not literal in the source"
    written = "".join(c[0] for c in chars)
    known = field_.pieces[0] if field_.pieces and isinstance(field_.pieces[0], str) else ""
    if whole and written != field_.value or not whole and not known.startswith(written):
        return None, "the word here writes more than this override (it is split or joined by the shell)"
    if len(written) < fix.anchor or known[: fix.anchor] != fix.text[: fix.anchor]:
        return None, "the key or the text to change is built from variables, not literal in the source"
    if fix.start == fix.end:
        at = chars[fix.start][1] if fix.start < len(chars) else chars[-1][2]
        return SourceEdit(script.path, at, at, fix.replacement), None
    span = chars[fix.start : fix.end]
    if not all(c[3] for c in span) or any(x[2] != y[1] for x, y in zip(span, span[1:], strict=False)):
        return None, "the text to change is written with escapes"
    return SourceEdit(script.path, span[0][1], span[-1][2], fix.replacement), None


# ---- one script: every launch, every profile ----------------------------------


@dataclass
class LaunchFindings:
    """One launch in one profile and the findings the checks made for it."""

    profile: object  # values.Profile
    spec: object  # launches.LaunchSpec
    findings: list = field(default_factory=list)


def resolve(
    findings: list, launches: list[LaunchFindings], scripts: dict, unseen: str | None = None, elsewhere=None
) -> list:
    """The findings with each fix tied to the source or refused. `scripts`: path -> parsed
    Script of every file the run read; `unseen`: why some launches were not seen (refuse all);
    `elsewhere`: Loc of a word -> a program other than verl that gets it too (refuse there)."""
    elsewhere = elsewhere or {}
    reach: dict[Loc, set[int]] = defaultdict(set)
    for n, la in enumerate(launches):
        for f in la.spec.argv:
            if f.loc is not None:
                reach[f.loc].add(n)
    located: dict[int, tuple] = {}  # id(finding) -> (word, edit, why not)
    votes: dict[tuple, set[int]] = defaultdict(set)  # (word, edit) -> launches that ask for it
    for n, la in enumerate(launches):
        for f in la.findings:
            if f.fix is None:
                continue
            word = Loc(f.path, f.line, f.column)
            edit, why = _locate_in_launch(la.spec, word, f.fix, scripts)
            located[id(f)] = (word, edit, why)
            if edit is not None:
                votes[(word, edit)].add(n)
    out = []
    for f in findings:
        if f.fix is None:
            out.append(f)
            continue
        word, edit, why = located.get(id(f), (None, None, "the finding is not about one launch"))
        if unseen:
            edit, why = None, unseen
        elif edit is not None and word in elsewhere:
            edit, why = (
                None,
                f"the word also reaches {elsewhere[word]}, a program that is not verl",
            )
        elif edit is not None:
            others = sorted(reach[word] - votes[(word, edit)])
            if others:
                where = "; ".join(dict.fromkeys(launches[n].profile.describe() for n in others))
                edit, why = None, f"the word also reaches a launch where this fix does not hold (profile {where})"
        out.append(replace(f, fix=replace(f.fix, edit=edit, refused=why)))
    return out


def _locate_in_launch(spec, word: Loc, fix: Fix, scripts: dict):
    matches = {o.field for o in spec.overrides if o.loc == word and o.key == fix.key}
    if len(matches) != 1:
        return None, "the word writes more than one override"
    script = scripts.get(word.path)
    if script is None:
        return None, "the override does not come from a file of the script"
    return locate(script, word, fix, matches.pop())


# ---- the run: every script ---------------------------------------------------------


def _word_key(path: str, line: int, col: int) -> tuple:
    return (os.path.realpath(path), line, col)


def _edit_key(edit: SourceEdit) -> tuple:
    """An edit by the file it changes, whatever name (a symlink, another path) it was reached by."""
    return (edit.path if edit.path == "-" else os.path.realpath(edit.path), edit.start, edit.end, edit.replacement)


@dataclass
class Plan:
    """The edits one pass makes, by file (as reported), and what it fixes or refuses."""

    edits: dict = field(default_factory=dict)  # path -> [SourceEdit] in file order, none overlapping
    fixed: list = field(default_factory=list)  # findings whose edit is in the plan
    refused: list = field(default_factory=list)  # (finding, why)
    unsafe: list = field(default_factory=list)  # (finding, why): edits that hold but were not asked for

    def __bool__(self) -> bool:
        return bool(self.edits)


def plan(results, refuses=None, unsafe_fixes: bool = False) -> Plan:
    """The edits the findings of a run ask for, where every script that passes the word agrees;
    `refuses(path)`: why a file may not be written, or None (fix_files.Tree.refuses), asked once
    per file: its findings are refused with that reason. Unsafe edits (`why_unsafe`) only with
    `unsafe_fixes`."""
    asked: dict[tuple, set[int]] = defaultdict(set)
    for i, r in enumerate(results):
        for f in r.findings:
            if f.fix is not None and f.fix.edit is not None:
                asked[(_word_key(f.path, f.line, f.column), _edit_key(f.fix.edit))].add(i)
    reached = [{_word_key(*w) for w in r.reached} for r in results]
    said = said_of(results)
    out = Plan()
    chosen: dict[str, dict[SourceEdit, list]] = defaultdict(dict)
    names: dict[str, str] = {}  # a file's real path -> the name its edits go by (the first reported)
    barred: dict[str, str | None] = {}  # that name -> why it may not be written (None: it may)
    for r in results:
        for f in r.findings:
            if f.fix is None:
                continue
            if f.fix.edit is None:
                out.refused.append((f, f.fix.refused))
                continue
            word = _word_key(f.path, f.line, f.column)
            agree = asked[(word, _edit_key(f.fix.edit))]
            others = [results[j].path for j, w in enumerate(reached) if word in w and j not in agree]
            if others:
                out.refused.append((f, f"{others[0]} also passes this word to verl, and there this fix does not hold"))
                continue
            doubt = why_unsafe(f, said)
            if doubt is not None and not unsafe_fixes:
                out.unsafe.append((f, doubt))
                continue
            name = names.setdefault(_edit_key(f.fix.edit)[0], f.fix.edit.path)
            if name not in barred:
                barred[name] = refuses(name) if refuses is not None else None
            if barred[name]:
                out.refused.append((f, barred[name]))
                continue
            if name != f.fix.edit.path:  # one file, one list of edits made in one write
                f = replace(f, fix=replace(f.fix, edit=replace(f.fix.edit, path=name)))
            chosen[name].setdefault(f.fix.edit, []).append(f)
    out.unsafe = list({(id(f), why): (f, why) for f, why in out.unsafe}.values())
    for path, by_edit in chosen.items():
        kept: list[SourceEdit] = []
        for edit in sorted(by_edit, key=lambda e: (e.start, e.end)):
            if kept and (edit.start < kept[-1].end or edit.start == kept[-1].start):
                continue  # overlaps a kept edit: left for the next pass
            kept.append(edit)
            out.fixed.extend(by_edit[edit])
        out.edits[path] = kept
    return out




def said_of(results) -> dict:
    """What the run says at each word: word -> [(finding, the words it names as related)], of
    every finding but the notes (info)."""
    out: dict = defaultdict(list)
    for r in results:
        for f in r.findings:
            if f.severity == "info" or not f.line:
                continue
            out[_word_key(f.path, f.line, f.column)].append(f)
            for path, line, col, _key in f.related:
                out[_word_key(path, line, col)].append(f)
    return out


def why_unsafe(f, said: dict) -> str | None:
    """Why applying `f`'s fix may leave the script wrong, or None (module docstring): the rule's
    own doubt, another finding at its word, or at a word its finding or the other depends on."""
    if f.fix.unsafe:
        return f.fix.unsafe
    mine = (f.rule, f.key)
    own = (f.path, f.line, f.column)
    for path, line, col in [own] + [(path, line, col) for path, line, col, _key in f.related]:
        for g in said.get(_word_key(path, line, col), ()):
            if (g.rule, g.key) == mine:
                continue
            if (path, line, col) != own:
                return f"line {line}, which this finding involves, has another finding [{g.rule}]"
            if (g.path, g.line, g.column) == own:
                return f"another finding is at this word [{g.rule}]"
            return f"the finding at line {g.line} [{g.rule}] involves this word"
    return None
