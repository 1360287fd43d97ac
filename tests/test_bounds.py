"""The evaluator's bounds reach inside one operation (issue 24, item 3): no script stalls or exhausts
the host. One test per measured case, each asserting a counted outcome (the value bash gives, the
`incomplete` note naming the bound, the work counted), never the clock; inputs are sized from the
bounds themselves (shell/limits.py), so the tests stay small if a bound changes.

The six hostile inputs, at a size that stays under 64 KB, are fuzz/seeds/script/bound_*.sh.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess

import pytest
from conftest import ROOT

from verl_preflight.shell import limits, parse
from verl_preflight.shell.ere import regex_search
from verl_preflight.shell.evaluate import Allowance, Budget, evaluate
from verl_preflight.shell.notes import NoteKind
from verl_preflight.shell.parse import parse_script
from verl_preflight.pipeline.validate import Options, validate_script
from verl_preflight.core.values import Loc

SEEDS = os.path.join(ROOT, "fuzz", "seeds", "script")
BASH = shutil.which("bash")


def run(text: str, budget: Budget | None = None):
    """(outcomes, allowance) of `text` in an empty environment; `probe ARGS` records its argv
    (an unknown word as its display text)."""

    def on_command(argv, loc, last_word, environment=None):
        if argv and argv[0].value == "probe":
            return [f.value if f.known else None for f in argv[1:]]
        return None

    allowance = Allowance(budget or Budget())
    script = parse_script("bounds.sh", text.encode())
    outcomes = evaluate(script, {}, set(), on_command, ambient={}, allowance=allowance)
    return outcomes, allowance


def only(text: str, budget: Budget | None = None):
    outcomes, allowance = run(text, budget)
    assert len(outcomes) == 1, [o.status for o in outcomes]
    return outcomes[0], allowance


def stops(outcome, kind=NoteKind.INCOMPLETE) -> list[str]:
    return [n.message for n in outcome.notes if n.kind == kind]


def doubled(name: str, size: int) -> str:
    """Shell text that makes $name `size` (a power of two) characters long, by doubling."""
    return f"{name}=a\n" + f"{name}=${name}${name}\n" * int(math.log2(size))


# ---- case 1: pattern matching is linear in the text ---------------------------------------
def test_pattern_operators_on_a_long_value_are_exact_and_linear():
    n = 16_000
    outcome, allowance = only(
        f"x={'a' * n}\n"
        "y=${x//a/b}\n"
        'probe "${#y}" "${y:0:3}" "${x%%a*b}" "${x#*b}" "${x##*a}" "${x/#a*a/c}" "${x/%a/c}"\n'
        "case $x in *b*) probe arm b ;; *a*a*a) probe arm a ;; esac\n"
        "[[ $x == *a?a[ab]*b ]] && probe glob\n"
    )
    assert outcome.status == "launches" and not outcome.notes
    a = "a" * n
    assert outcome.launches == [[str(n), "bbb", a, a, "", "c", a[:-1] + "c"], ["arm", "a"]]
    # the old matcher tried every (start, end) pair: n**2 / 2 = 128 million for `${x//a/b}` alone;
    # each operation now costs (text + 1) x (pattern + 1), a few times n for the whole script
    assert allowance.work < 40 * n


def test_a_starred_replacement_is_the_one_bash_makes():
    outcome, _ = only(
        "x=''\n"
        'probe "${x//*/X}" "${x/*/X}" "${x//**/X}" "${x//a*/X}" "${x//*a/X}"\n'
        "x=abcabc\n"
        'probe "${x//b*/X}" "${x//*b/X}" "${x//a*b/X}" "${x/a*b/X}" "${x//?b/X}" "${x//c*/X}" "${x//*/X}"\n'
    )
    # as bash 5.2 gives them: on an empty text `*` matches (once); a match with a star runs to the
    # tail's last place, so there is never a second one
    assert outcome.launches == [["X", "X", "X", "", ""], ["aX", "Xc", "Xc", "Xc", "XcXc", "abX", "X"]]


def test_a_pattern_compiles_what_its_operation_uses_once(monkeypatch):
    import re

    from verl_preflight.shell import glob

    compiled = []

    class Counting:
        def __getattr__(self, name):
            return getattr(re, name)

        @staticmethod
        def compile(text, flags=0):
            compiled.append(text)
            return re.compile(text, flags)

    monkeypatch.setattr(glob, "re", Counting())
    outcome, _ = only('x=aXbXc\nprobe "${x#?X*}" "${x%?c}" "${x##*X?}"\n')
    assert outcome.launches == [["bXc", "aXb", ""]]
    # each segment once, no reversed regex beside it; a suffix of a pattern with no star needs
    # no reversed pattern (`*X?` does: its segments reversed, `.X`)
    assert compiled == [".X", ".c", "X.", ".X"]


def test_a_match_past_its_bound_is_unknown_and_said():
    size = limits.MAX_VALUE_CHARS
    atoms = limits.MAX_MATCH_COST // size + 1  # (size + 1) x (atoms + 1) is past MAX_MATCH_COST
    pattern = "?" * atoms
    text = f'y=${{x//{pattern}/b}}\nprobe "$y"\n[[ $x == *{pattern} ]] && probe matched\n'
    outcomes, _ = run(doubled("x", size) + text)
    assert {o.status for o in outcomes} == {"incomplete"}
    assert sorted(len(o.launches) for o in outcomes) == [1, 2]  # the test is unknown: both ways are followed
    for o in outcomes:
        assert o.launches[0] == [None]  # the replacement's value is unknown
        assert any("past the tool's bound of" in m and "for one match" in m for m in stops(o))
    outcomes, _ = run(doubled("x", size) + f"case $x in {pattern}*) probe arm ;; *) probe other ;; esac\n")
    assert sorted(o.launches for o in outcomes) == [[["arm"]], [["other"]]]  # the arm may or may not match
    assert all(o.status == "incomplete" and any("for one match" in m for m in stops(o)) for o in outcomes)


def test_a_pattern_with_no_star_costs_its_width_not_the_texts_length_times_it():
    size = limits.MAX_VALUE_CHARS
    literal = "a" * (limits.MAX_MATCH_COST // size + 1)  # x its length would be past the bound
    outcome, allowance = only(
        doubled("x", size) + f'y=${{x#{literal}}}; z=${{x%"{literal}"}}\nprobe "${{#y}}" "${{#z}}"\n'
        f'[[ $x == "$x" ]] && probe same\ncase $x in "$x") probe arm ;; esac\n'
    )
    assert outcome.status == "launches" and not outcome.notes  # exact: no bound passed
    assert outcome.launches == [[str(size - len(literal))] * 2, ["same"], ["arm"]]
    assert allowance.work < 16 * size  # each a few passes over x, not x times the pattern


def test_a_bound_passed_before_a_command_runs_is_said_on_every_path_after_it():
    size = limits.MAX_VALUE_CHARS
    pattern = "?" * (limits.MAX_MATCH_COST // size + 1)  # too costly against x: ${x//...} is unknown
    text = f"case ${{x//{pattern}/b}} in a) probe A ;; b) probe B ;; *) probe C ;; esac\nprobe end\n"
    outcomes, _ = run(doubled("x", size) + text)
    assert sorted(o.launches[0] for o in outcomes) == [["A"], ["B"], ["C"]]  # an unknown subject: every arm
    for o in outcomes:  # the subject was unknown on each of them, not only on the first arm's
        assert o.status == "incomplete" and o.launches[1] == ["end"]
        assert any("for one match" in m for m in stops(o))


def test_building_a_pattern_is_counted_and_bounded_before_it_is_done():
    read = limits.MAX_MATCH_COST // limits.PATTERN_WORK  # unquoted characters Python code reads, at most
    outcomes, allowance = run(doubled("x", 2 * read) + "x=$x?\ncase a in $x) probe arm ;; *) probe other ;; esac\n")
    assert sorted(o.launches for o in outcomes) == [[["arm"]], [["other"]]]  # unknown: both ways
    assert all(any("building a pattern of" in m for m in stops(o)) for o in outcomes)
    assert allowance.work < limits.MAX_MATCH_COST  # refused before it was read
    # a quoted part next to a `?`: one segment, compiled into a regular expression, refused before
    outcomes, allowance = run(doubled("x", read) + '[[ a == "$x"? ]] && probe yes\nprobe end\n')
    assert sorted(len(o.launches) for o in outcomes) == [1, 2]
    assert all(any("building a pattern of" in m for m in stops(o)) for o in outcomes)
    assert allowance.work < limits.MAX_MATCH_COST


def test_a_pattern_is_built_once_when_short_and_each_time_when_long(monkeypatch):
    from verl_preflight.shell import glob

    built = []
    real = glob._built
    monkeypatch.setattr(glob, "_built", lambda parts, size: built.append(size) or real(parts, size))
    outcome, _ = only('for i in 1 22 x3; do case $i in [0-9]*) probe "$i" ;; esac; done\n')
    assert outcome.launches == [["1"], ["22"]] and built == [6]  # one pattern, read and compiled once
    built.clear()
    size = 2 * limits.BUILT_ONCE
    outcome, allowance = only(doubled("x", size) + 'for i in 1 2 3; do [[ a == "$x" ]] || probe $i; done\n')
    assert outcome.launches == [["1"], ["2"], ["3"]] and built == [size] * 3  # never kept: built each time
    assert allowance.work >= 3 * size  # and each time counted


# ---- case 2: regular expressions never backtrack ---------------------------------------
def test_a_regex_that_backtracks_exponentially_is_answered_exactly():
    outcome, allowance = only(
        "[[ " + "a" * 40 + "c =~ ^(a|a)*b$ ]] && probe yes\n[[ aaab =~ ^(a|a)*b$ ]] && probe no\nprobe done\n"
    )
    assert outcome.launches == [["no"], ["done"]] and not outcome.notes
    # a backtracking engine tries 2**40 ways; the automaton a few states per character
    assert allowance.work < 200 * 45 * 64


def test_a_regex_match_past_its_bound_is_unknown_and_said():
    text = "a" * 700  # (a|b){1,600}c keeps hundreds of states alive at each of its positions
    outcomes, _ = run(f"x={text}\n[[ $x =~ (a|b){{1,600}}c ]] && probe matched\nprobe done\n")
    assert sorted(len(o.launches) for o in outcomes) == [1, 2]  # unknown: both branches are followed
    for o in outcomes:
        assert o.status == "incomplete"
        assert any(f"bound of {limits.MAX_REGEX_STEPS:,} steps" in m for m in stops(o))
    outcomes, _ = run(f"[[ a =~ a{{{limits.MAX_REGEX_STATES + 1}}} ]] && probe matched\nprobe done\n")
    assert all(any(f"bound of {limits.MAX_REGEX_STATES:,} states" in m for m in stops(o)) for o in outcomes)


def test_a_regex_is_refused_by_its_length_and_read_once_when_it_fails():
    size = 2 * limits.MAX_REGEX_CHARS  # a power of two, past the bound
    outcomes, allowance = run(doubled("x", size) + "[[ a =~ $x ]] && probe yes\nprobe end\n")
    said = f"a regular expression of {size:,} characters is longer than the tool's bound"
    assert len(outcomes) == 2 and all(any(said in m for m in stops(o)) for o in outcomes)
    assert allowance.work < 4 * size  # made, never read
    size = 2 * limits.MAX_REGEX_STATES  # a regex of as many `a`s: read, then past the bound of states
    outcomes, allowance = run(doubled("x", size) + "for i in 1 2 3; do [[ a =~ $x ]] && probe $i; done\n")
    assert len(outcomes) == 8 and all(any("states" in m for m in stops(o)) for o in outcomes)  # on 8 paths
    read = size * limits.REGEX_CHAR_WORK
    assert read <= allowance.work < 2 * read  # its failure was kept: read once, not on each of the 7 forks


ERE_CASES = [
    ("aaab", "^(a|a)*b$"),
    ("a" * 30 + "c", "^(a|a)*b$"),
    ("abc", "^a.c$"),
    ("a-1", r"^\w+$"),
    ("a_1", r"^\w+$"),
    ("foo bar", r"\<bar\>"),
    ("foobar", r"\Bbar"),
    ("5", r"^\d$"),
    ("d", r"^\d$"),
    ("aa", "a{2}"),
    ("a", "a{,2}"),
    ("x", "()"),
    ("abc", "a|"),
    ("]", "[]]"),
    ("-", "[a-]"),
    ("B", "[[:upper:]]"),
    ("x", "[[:foo:]]"),
    ("a", "a{3,2}"),
    ("a", "*a"),
    ("a)", "a)"),
    ("a", "(a"),
    ("b", "[a-c-e]"),
    ("abcd", "^(ab|a)(c|bcd)(d*)$"),
    ("v1.2.3", r"^v[0-9]+\.[0-9]+\.[0-9]+$"),
    ("qwen3-8b", "^(qwen|llama)[0-9.]*-([0-9]+)b$"),
]


@pytest.mark.skipif(BASH is None, reason="no bash on this machine")
def test_regex_matches_as_bash_does():
    script = 'while IFS= read -r -d "" t && IFS= read -r -d "" r; do [[ $t =~ $r ]] 2>/dev/null; echo $?; done'
    data = "".join(f"{t}\0{r}\0" for t, r in ERE_CASES).encode()
    env = {"LC_ALL": "C.UTF-8", "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    statuses = subprocess.run([BASH, "-c", script], input=data, capture_output=True, env=env).stdout.split()
    assert len(statuses) == len(ERE_CASES)
    got = [regex_search(r, t) for t, r in ERE_CASES]
    assert got == [s == b"0" for s in statuses], list(zip(ERE_CASES, statuses, got, strict=True))


# ---- case 3: arithmetic wraps at 64 bits -------------------------------------------------
ARITH_CASES = [
    "7**99999999999",
    "(7**99999999999) ** 99999999999",
    "7**99",
    "3**40",
    "2**63",
    "2**64",
    "(-2)**63",
    "0**0",
    "(-9223372036854775807 - 1) / -1",
    "(-9223372036854775807 - 1) % -1",
    "9223372036854775807 + 1",
    "9223372036854775807 * 3",
    "2**62 * 4",
    "1 << 63",
    "1 << 64",
    "1 << -1",
    "-1 >> 70",
    "-7 / 2",
    "-7 % 2",
    "99999999999999999999",
    "9" * 5000,
    "0x1ffffffffffffffff",
    "64#" + "z" * 40,
]


def test_power_wraps_and_ends():
    outcome, _ = only("probe $((7**99999999999)) $(( (7**99999999999) ** 99999999999 ))\n")
    assert outcome.launches == [["-744213426008379977", "-1354751414362210297"]]  # as bash gives them
    outcome, _ = only("(( x = 2 ** -1 )); probe $? ${x:-unset}\n")
    assert outcome.launches == [["1", "unset"]]
    assert any("exponent less than 0" in n.message for n in outcome.notes)


@pytest.mark.skipif(BASH is None, reason="no bash on this machine")
def test_arithmetic_wraps_as_bash_does():
    text = "".join(f"probe $(( {e} ))\n" for e in ARITH_CASES)
    outcome, _ = only(text)
    ours = [la[0] for la in outcome.launches]
    theirs = subprocess.run([BASH, "-c", text.replace("probe", "echo")], capture_output=True, text=True).stdout.split()
    assert ours == theirs, list(zip(ARITH_CASES, ours, theirs, strict=False))


# ---- case 4: a value or an array past its size bound is unknown -------------------------------
def test_a_value_doubled_forty_times_becomes_unknown_once():
    outcome, allowance = only("x=a\n" + "x=$x$x\n" * 40 + 'probe "${#x}" "$x"\n')
    assert outcome.status == "incomplete" and outcome.launches == [[None, None]]
    [message] = stops(outcome)  # the unknown doubled again is still one unknown: one note
    past = 2 * limits.MAX_VALUE_CHARS
    assert message == (
        f"cannot follow the script here: a value of {past:,} characters is longer than the tool's bound "
        f"of {limits.MAX_VALUE_CHARS:,}; what it gives is unknown"
    )
    assert next(n.loc.line for n in outcome.notes if n.kind == NoteKind.INCOMPLETE) == 1 + int(math.log2(past))
    assert allowance.work < 4 * limits.MAX_VALUE_CHARS  # built up to the bound, never past it


def test_a_replacement_that_grows_a_value_past_its_bound_is_unknown_once():
    size = limits.MAX_VALUE_CHARS
    text = 'y=${x/#a/$x}; z=${x//a/aa}; w=${x/%a*/$x$x}\nprobe "${#y}" "${#z}" "${#w}"\n'
    outcome, _ = only(doubled("x", size) + text)
    assert outcome.status == "incomplete" and outcome.launches == [[None, None, None]]
    said = stops(outcome)
    assert len(said) == 3 and all("is longer than the tool's bound" in m for m in said)
    assert f"a value of {2 * size - 1:,} characters" in said[0]  # /#: made, then one unknown piece
    assert f"a value of {2 * size:,} characters" in said[1]  # //: counted before it is made


def test_an_array_doubled_past_its_bound_and_a_sparse_index_are_unknown():
    steps = int(math.log2(limits.MAX_ELEMENTS)) + 1
    outcome, _ = only(
        "a=(x)\n" + 'a=("${a[@]}" "${a[@]}")\n' * steps + 'probe "${#a[@]}" "${a[3]}"\n'
        "b[999999999]=1\nprobe ${b[999999999]}\n"
    )
    assert outcome.status == "incomplete" and outcome.launches == [[None, None], [None]]
    said = stops(outcome)
    assert any(f"a list of {2 * limits.MAX_ELEMENTS:,} words is past" in m for m in said)
    assert any("array b of 1,000,000,000 elements is past" in m for m in said)


def test_an_array_read_at_run_time_has_an_unknown_count_as_one_past_a_bound_has():
    outcome, _ = only(
        "read -a A; read -ra B <<< 'x y'; mapfile -t C < f; readarray D < f; read x; read -r y z\n"
        'probe "${#A[@]}" "${#B[@]}" "${#C[@]}" "${#D[*]}" "${A[1]}" "${C[2]}"\n'
        'probe "${#x[@]}" "${#y[@]}" "${x[1]}"\n'
    )
    assert outcome.launches == [[None] * 6, ["1", "1", ""]]  # a scalar read is one element, as in bash


def test_a_list_past_its_bound_is_unknown_where_it_becomes_a_value_and_the_path_goes_on():
    words = 2 * limits.MAX_ELEMENTS
    outcome, _ = only(
        doubled("x", words) + "x=${x//a/a }\n"  # x: `words` words
        'y=$(echo $x)\nprobe "$y"\nfor w in $x; do probe "$w"; done\nprobe $x\nprobe end\n'
    )
    assert outcome.status == "incomplete"
    # y and the loop's items are unknown; the command of too many words is not run; the path goes on
    assert outcome.launches == [[None], [None], ["end"]]
    said = stops(outcome)
    assert len(said) == 3 and all(f"of {words + 1:,} words is past the tool's bound" in m for m in said[::2])
    assert f"a list of {words:,} words is past the tool's bound" in said[1]  # the loop's items


def test_work_past_the_scripts_budget_ends_every_path():
    size = limits.MAX_VALUE_CHARS // 2
    # each pass is a new state (n counts), so only the work budget ends the loop
    outcome, allowance = only(doubled("x", size) + "while true; do y=$x.; n=$((n+1)); done\nprobe never\n")
    assert outcome.launches == [] and outcome.status == "incomplete"
    [message] = stops(outcome, NoteKind.BUDGET)
    assert f"budget of {limits.WORK:,} units of work" in message
    assert limits.WORK < allowance.work <= limits.WORK + size + 1  # it ends at the first step past it
    assert allowance.steps < limits.LOOP_ITERATIONS  # long before the loop's own bound


# ---- case 5: a location costs the same on a long line ----------------------------------------
def test_columns_of_a_long_line_are_counted_once_per_line(monkeypatch):
    counted = []
    real = parse._line_columns
    monkeypatch.setattr(parse, "_line_columns", lambda line: counted.append(len(line)) or real(line))
    words = [f"w{i}é" for i in range(3000)]
    text = "x=1; probe " + " ".join(words) + "\nprobe end\n"
    outcome, _ = only(text)
    assert outcome.launches == [words, ["end"]]
    assert len(counted) == 2  # one per line, not one per word
    script = parse_script("t.sh", text.encode())
    line = text.split("\n")[0]
    for i in range(0, len(words), 97):
        start = line.index(f" {words[i]} " if i + 1 < len(words) else f" {words[i]}") + 1
        node = script.root.descendant_for_byte_range(len(line[:start].encode()), len(line[:start].encode()))
        assert script.loc(node).col == start + 1  # characters, not bytes (each é is two)


def test_columns_of_a_long_line_that_is_not_utf8_cost_a_bisection():
    class Watched(bytes):  # counts the slices taken of the line (a decoding of a prefix takes one)
        sliced = 0

        def __getitem__(self, key):
            Watched.sliced += 1
            return bytes.__getitem__(self, key)

    words = [f"w{i}é" for i in range(3000)]
    line = b"probe \xff " + " ".join(words).encode()
    script = parse_script("t.sh", line + b"\n")
    script._lines = [Watched(line), b""]
    looked = 0
    for i in range(0, len(words), 7):
        start = line.index(f" {words[i]}".encode()) + 1
        node = script.root.descendant_for_byte_range(start, start)
        assert script.loc(node).col == len(line[:start].decode("utf-8", "replace")) + 1
        looked += 1
    assert looked > 400 and Watched.sliced == 0  # no decoding up to the column, per location


def test_the_byte_of_a_location_is_found_by_a_bisection_and_starts_a_character():
    words = [(b"\xff" if i % 3 == 0 else "é".encode()) + str(i).encode() for i in range(3000)]  # \xff: not UTF-8
    line = b"probe " + b" ".join(words)
    script = parse_script("t.sh", line + b"\n")
    for i in range(0, len(words), 7):
        start = line.index(b" " + words[i] + b" ") + 1
        node = script.root.descendant_for_byte_range(start, start)
        loc = script.loc(node)
        assert script.offset(loc) == start
        after = Loc(loc.path, loc.line, loc.col + 1)  # the character after the word's first one
        assert script.offset(after) == start + (1 if i % 3 == 0 else 2)  # never a byte inside é
    chars = len(line.decode("utf-8", "replace"))
    assert script.offset(Loc("t.sh", 1, chars + 1)) == len(line) and script.offset(Loc("t.sh", 1, chars + 2)) is None


def test_a_long_line_of_commands_ends_at_the_step_budget(tmp_path):
    path = tmp_path / "long.sh"
    path.write_text("; ".join(f"x{i % 100}={i}" for i in range(3000)) + "; python3 -m verl.trainer.main_ppo\n")
    result = validate_script(str(path), None, Options(budget=Budget(steps=1000)))
    [stop] = [f for f in result.findings if f.rule == "budget"]
    assert "budget of 1000 steps is used up" in stop.message and stop.line == 1
    assert stop.column == len("; ".join(f"x{i % 100}={i}" for i in range(1000))) + 3  # the 1001st command


# ---- case 6: a large array is linear to read, and bounded ----------------------------------
def test_an_array_of_many_elements_is_read_in_one_pass(monkeypatch):
    counted = []
    real = parse._line_columns
    monkeypatch.setattr(parse, "_line_columns", lambda line: counted.append(len(line)) or real(line))
    n = limits.MAX_ELEMENTS
    outcome, allowance = only("a=(" + " ".join(str(i) for i in range(n)) + ')\nprobe "${#a[@]}" "${a[-1]}"\n')
    assert outcome.launches == [[str(n), str(n - 1)]] and not outcome.notes
    assert len(counted) == 2
    assert allowance.work < 8 * n * limits.ELEMENT_WORK  # a few passes over the elements, not n of them


def test_an_array_past_its_bound_is_unknown_without_being_read():
    n = limits.MAX_ELEMENTS + 1
    outcome, allowance = only("a=(" + "x " * n + ')\nprobe "${#a[@]}" "${a[5]}" "${a[@]}"\n')
    assert outcome.status == "incomplete" and outcome.launches == [[None, None, None]]
    assert stops(outcome) == [
        f"cannot follow the script here: an array of {n:,} elements is past the tool's bound of "
        f"{limits.MAX_ELEMENTS:,}; what it gives is unknown"
    ]
    assert allowance.work < n  # its words were never expanded


# ---- the seeds -----------------------------------------------------------------------------
def test_the_hostile_seeds_are_small_and_end_with_their_bound(tmp_path):
    seeds = sorted(f for f in os.listdir(SEEDS) if f.startswith("bound_"))
    assert len(seeds) == 6
    said = {}
    for name in seeds:
        path = os.path.join(SEEDS, name)
        assert os.path.getsize(path) < 64 * 1024, name
        result = validate_script(path, None, Options())
        assert not result.fatal and all(f.rule != "internal-error" for f in result.findings), name
        said[name] = " ".join(f.message for f in result.findings if f.rule in ("incomplete", "budget"))
    assert "bound of" in said["bound_2_regex_backtracking.sh"]
    assert "longer than the tool's bound" in said["bound_4_doubling.sh"]
    assert "past the tool's bound" in said["bound_6_big_array.sh"]


def test_a_word_of_text_alone_is_expanded_once_and_its_work_counted_each_time(monkeypatch):
    from verl_preflight.shell import expand

    grouped = []
    real = expand.Expander.group_chunks
    monkeypatch.setattr(expand.Expander, "group_chunks", lambda self, g, *a, **k: grouped.append(g) or real(self, g, *a, **k))
    word = "{a,b}" + "x" * 50
    _, once = only(f"probe {word}")
    grouped.clear()
    outcome, allowance = only(f'for i in 1 2 3 4; do probe {word} "$i"; done')
    assert outcome.launches == [["a" + "x" * 50, "b" + "x" * 50, str(i)] for i in range(1, 5)]
    texts = [tuple(n.type for n in g if not isinstance(n, str)) for g in grouped]
    assert texts.count(("concatenation",)) == 1  # the brace word: expanded on its first pass only
    assert texts.count(("string",)) == 4  # "$i": each pass
    assert allowance.work >= 4 * once.work  # and the text's work counted on every pass


def test_a_commands_words_are_read_once_a_script_and_its_notes_given_each_time(monkeypatch):
    from verl_preflight.shell import commands

    read = []
    real = commands.word_groups
    monkeypatch.setattr(commands, "word_groups", lambda *a, **k: read.append(a[0]) or real(*a, **k))
    outcome, _ = only('for i in 1 2 3; do probe a \\ #b "$i"; done')
    assert outcome.launches == [["a", " #b", str(i)] for i in (1, 2, 3)]
    assert len(read) == 1  # the command's words, read from the source on its first pass only
    assert [n.loc.line for n in outcome.notes if n.kind == NoteKind.ESCAPED_BLANK] == [1, 1, 1]


def test_a_loop_compares_each_pass_with_the_one_before_only(monkeypatch):
    # a loop whose state changes every pass: finding a pass that came back unchanged costs the
    # same on each pass, not a look at every pass before it
    from verl_preflight.shell.state import State

    compared = []
    real = State.same_path
    monkeypatch.setattr(State, "same_path", lambda self, other: compared.append(1) or real(self, other))
    passes = 2_000
    outcome, _ = only(f"i=0\nwhile [ $i -lt {passes} ]; do i=$((i + 1)); done\nprobe $i\n")
    assert outcome.launches == [[str(passes)]]
    assert len(compared) <= 2 * passes
