"""Unit tables that name their stage (issue 21, item 6): the override-application fast path, the
word a fix rewrites (fix.locate), and each renderer of a finding. No script is evaluated here
but the one-line sources the tables parse."""

from __future__ import annotations

import json

import pytest

from verl_preflight.core.edits import Fix
from verl_preflight.core.findings import Finding
from verl_preflight.pipeline.fix import locate
from verl_preflight.hydra_stage.check import FastApply, Fallback
from verl_preflight.hydra_stage.problems import HydraKind
from verl_preflight.report import github, json_report, text
from verl_preflight.shell.parse import parse_script
from verl_preflight.shell.words import Field
from verl_preflight.core.values import Loc

TREE = {"a": {"b": 1, "n": None, "d": {"x": 1}}, "t": "${a.b}"}


@pytest.mark.parametrize(
    "override,kind",
    [
        ("a.b=2", None),  # an existing key
        ("a.zz=2", HydraKind.MISSING_KEY),  # struct mode: no new key without +
        ("+a.zz=2", None),
        ("+a.b=2", HydraKind.APPEND_EXISTING),  # + over a value
        ("+a.n=2", None),  # + over a null is fine
        ("++a.b=2", None),
        ("~a.b", None),
        ("~a.zz", HydraKind.DELETE_MISSING),
        ("~a.b=5", HydraKind.DELETE_MISSING),  # delete with the wrong value
        ("q.r.s=1", HydraKind.MISSING_KEY),
    ],
)
def test_fast_path_applies_an_override_as_hydra_does(config_cache, override, kind):
    (rec,) = config_cache.parse([override])
    found = FastApply(TREE).run([(0, rec)])
    assert [p.kind for p in found] == ([kind] if kind else [])


@pytest.mark.parametrize("override", ["t.x=1", "a.d={y:2}", "hydra.job.chdir=true"])
def test_fast_path_hands_the_subtle_cases_to_hydra(config_cache, override):
    """An interpolation on the path, a dict merge, Hydra's typed node: Hydra's own code decides."""
    (rec,) = config_cache.parse([override])
    with pytest.raises(Fallback):
        FastApply(TREE).run([(0, rec)])


def _word(source: str):
    """The parsed one-line script and the Field of its second word, as the evaluator gives it."""
    script = parse_script("run.sh", source.encode())
    word_col = source.index(" ") + 2  # 1-based column of the word after the command
    return script, Loc("run.sh", 1, word_col)


@pytest.mark.parametrize(
    "source,value,fix,edited",
    [
        ("cmd +k.a=1\n", "+k.a=1", Fix.drop_plus("+k.a=1", "k.a"), "cmd k.a=1\n"),
        ('cmd "+k.a=1"\n', "+k.a=1", Fix.drop_plus("+k.a=1", "k.a"), 'cmd "k.a=1"\n'),
        ("cmd 'k.a=1'\n", "k.a=1", Fix.add_plus("k.a=1", "k.a"), "cmd '+k.a=1'\n"),
        ("cmd k.ab=1\n", "k.ab=1", Fix.rename_key("k.ab=1", "k.ab", "k.abc"), "cmd k.abc=1\n"),
        ('cmd k.a="$V"\n', None, Fix.add_plus("k.a=x", "k.a"), 'cmd +k.a="$V"\n'),  # the value is not touched
    ],
)
def test_locate_rewrites_only_the_characters_that_change(source, value, fix, edited):
    from verl_preflight.core.edits import apply_edits
    from verl_preflight.core.values import Unknown

    script, loc = _word(source)
    field = Field.of(value, loc) if value is not None else Field(("k.a=", Unknown("$V", "variable V")), loc)
    edit, why = locate(script, loc, fix, field)
    assert why is None, why
    assert apply_edits(source.encode(), [edit]).decode() == edited


@pytest.mark.parametrize(
    "source,value,why",
    [
        ('cmd "$K"=1\n', None, "built from variables"),  # the key is a variable
        ("cmd +k\\.a=1\n", "+k.a=1", "escapes"),  # the text to change is written with an escape
    ],
)
def test_locate_refuses_a_word_it_cannot_rewrite_exactly(source, value, why):
    from verl_preflight.core.values import Unknown

    script, loc = _word(source)
    field = Field.of(value, loc) if value is not None else Field((Unknown("$K", "variable K"), "=1"), loc)
    text = value or "k.a=1"
    fix = Fix.rename_key(text, "k.a", "k.b") if value is None else Fix.rename_key(text[1:], "k.a", "k.b")
    fix = Fix.drop_plus(text, "k.a") if value and value.startswith("+") and "escapes" not in why else fix
    if "escapes" in why:
        fix = Fix(text, 1, 4, "x.y", 4)  # change k\.a
    edit, reason = locate(script, loc, fix, field)
    assert edit is None and why in reason


FINDING = Finding(
    "run.sh", 12, 5, "verl-check", "error", "real_train_batch_size (256) must be divisible by 48", "data.train_batch_size",
    related=(("run.sh", 21, 5, "trainer.nnodes"),),
)


def test_text_renders_one_gcc_style_line_with_its_related_places():
    assert text.finding_line(FINDING) == (
        "run.sh:12:5: error: real_train_batch_size (256) must be divisible by 48 (see also line 21) [verl-check]"
    )


def test_json_renders_the_finding_with_its_related_overrides():
    obj = json_report.finding_obj(FINDING)
    assert (obj["path"], obj["line"], obj["column"], obj["rule"], obj["key"]) == (
        "run.sh", 12, 5, "verl-check", "data.train_batch_size"
    )
    assert obj["related"] == [{"path": "run.sh", "line": 21, "column": 5, "key": "trainer.nnodes"}]
    json.dumps(obj)  # plain data


def test_github_renders_an_annotation_command():
    line = github.render([], [FINDING]).strip()
    assert line.startswith("::error file=run.sh,line=12,col=5,title=verl-check::real_train_batch_size")


def test_sarif_renders_the_related_overrides_as_related_locations():
    from verl_preflight.report import sarif

    doc = sarif.document([], [FINDING], None)
    (result,) = doc["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": 12, "startColumn": 5}
    (related,) = result["relatedLocations"]
    assert related["physicalLocation"]["region"] == {"startLine": 21, "startColumn": 5}
    assert related["message"]["text"] == "trainer.nnodes"
