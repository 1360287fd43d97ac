"""Unit tables for the abstract bash interpreter, one table per stage.

Each row is a tiny script or expression evaluated through the public API
(`parse_script`, `evaluate`, `profiles`), with the exact result bash gives, so a
failing row names the stage that broke: expansion (word -> fields), arithmetic
(expression -> value or error), conditions ([ ] / [[ ]] -> status), profiles
(script -> dimensions).
"""

from __future__ import annotations

import ast
import os

import pytest

from verl_preflight.shell import profiles as prof
from verl_preflight.shell.evaluate import evaluate
from verl_preflight.shell.notes import NoteKind
from verl_preflight.shell.parse import parse_script
from verl_preflight.core.values import OTHER


def run(text: str, env: dict | None = None, ambient: dict | None = None):
    """The outcomes of `text`; every `probe ARGS` is recorded as a launch of its argv.
    `ambient` is the whole environment (None: unknown, each variable may be exported)."""

    def on_command(argv, loc, last_word, environment=None):
        if argv and argv[0].value == "probe":
            return [f.display if not f.known else f.value for f in argv[1:]]
        return None

    script = parse_script("unit.sh", text.encode())
    return evaluate(script, env or {}, set(), on_command, ambient=ambient)


def probed(text: str, env: dict | None = None) -> list:
    """The argv of each `probe` on the single path through `text` (in an empty environment)."""
    outcomes = run(text, env, ambient={})
    assert len(outcomes) == 1, [o.assumptions for o in outcomes]
    return outcomes[0].launches


# ---- expansion: word -> fields --------------------------------------------
EXPANSION = [
    ("plain", "probe a b", ["a", "b"]),
    ("escaped blank starts a word", r"probe a \ b", ["a", " b"]),
    ("escaped blanks and an expansion", r"X=1; probe \ \ $X", ["  1"]),
    ("escaped blank then # is no comment", "probe a=1 \\ #b c=2", ["a=1", " #b", "c=2"]),
    ("escaped backslash then # is a comment", "probe a=1 \\\\ #b c=2", ["a=1", "\\"]),
    ("escaped tab then # is no comment", "probe a=1 \\\t#b c=2", ["a=1", "\t#b", "c=2"]),
    ("escaped blanks start words in an array", r'A=(a \ b \ #c); probe "${A[@]}"', ["a", " b", " #c"]),
    ("escaped blank starts a word in $( )", r'probe "$(echo a \ b)"', ["a  b"]),
    ("quoted blank", 'probe "a b"', ["a b"]),
    ("single quotes", "probe 'a $X'", ["a $X"]),
    ("ansi-c", r"probe $'a\tb'", ["a\tb"]),
    ("split unquoted", 'X="a  b"; probe $X', ["a", "b"]),
    ("no split quoted", 'X="a  b"; probe "$X"', ["a  b"]),
    ("empty unquoted vanishes", "X=; probe $X", []),
    ("empty quoted stays", 'X=; probe "$X"', [""]),
    ("default", "probe ${X:-d}", ["d"]),
    ("default on set", "X=v; probe ${X:-d}", ["v"]),
    ("assign default", "probe ${X:=d} $X", ["d", "d"]),
    ("alternate", "X=v; probe ${X:+alt} ${Y:+alt}", ["alt"]),
    ("length", "X=abcd; probe ${#X}", ["4"]),
    ("prefix removal", "X=a/b/c; probe ${X#*/} ${X##*/}", ["b/c", "c"]),
    ("suffix removal", "X=a/b/c; probe ${X%/*} ${X%%/*}", ["a/b", "a"]),
    ("substitute", "X=aXbXc; probe ${X/X/-} ${X//X/-}", ["a-bXc", "a-b-c"]),
    ("slice", "X=abcdef; probe ${X:1:3} ${X: -2}", ["bcd", "ef"]),
    ("case ops", "X=aBc; probe ${X^^} ${X,,}", ["ABC", "abc"]),
    ("array all quoted", 'A=(x "y z"); probe "${A[@]}"', ["x", "y z"]),
    ("array element", "A=(x y z); probe ${A[1]} ${A[-1]}", ["y", "z"]),
    ("array length", "A=(x y z); probe ${#A[@]}", ["3"]),
    ("assoc", "declare -A M; M[k]=v; probe ${M[k]}", ["v"]),
    ("positional", 'set -- a "b c"; probe "$@" $#', ["a", "b c", "2"]),
    ("star joined", 'set -- a b; probe "$*"', ["a b"]),
    ("indirect", "N=X; X=v; probe ${!N}", ["v"]),
    ("concatenation", 'A=x; probe "$A"/y${A}z', ["x/yxz"]),
    ("escaped", r"probe a\ b", ["a b"]),
    ("command output known", 'probe "$(basename /a/b.sh .sh)"', ["b"]),
    ("command output unknown", "probe $(uname)", ["$(uname)"]),
    ("IFS", "IFS=:; X=a:b; probe $X", ["a", "b"]),
    ("append", "X=a; X+=b; probe $X", ["ab"]),
    ("local restores", "f() { local X=in; probe $X; }; X=out; f; probe $X", ["in"]),
]


@pytest.mark.parametrize("text,fields", [r[1:] for r in EXPANSION], ids=[r[0] for r in EXPANSION])
def test_expansion(text, fields):
    assert probed(text)[0] == fields


def test_local_is_restored_after_the_function():
    assert probed("f() { local X=in; }; X=out; f; probe $X") == [["out"]]


# ---- arithmetic: expression -> value, or error -------------------------------
ARITHMETIC = [
    ("1 + 2 * 3", "7"),
    ("(1 + 2) * 3", "9"),
    ("7 / 2", "3"),
    ("-7 / 2", "-3"),
    ("-7 % 3", "-1"),
    ("2 ** 10", "1024"),
    ("1 << 4", "16"),
    ("0x10 + 010", "24"),
    ("2#101", "5"),
    ("3 > 2 && 1", "1"),
    ("0 || 0", "0"),
    ("5 == 5 ? 10 : 20", "10"),
    ("X + 1", "4"),  # X=3 below
    ("$X * 2", "6"),
    ("Y = X + 1, Y * 2", "8"),
    ("9223372036854775807 + 1", "-9223372036854775808"),
]


@pytest.mark.parametrize("expr,value", ARITHMETIC, ids=[r[0] for r in ARITHMETIC])
def test_arithmetic_value(expr, value):
    assert probed(f'X=3; probe "$(({expr}))"') == [[value]]


ARRAY_ARITHMETIC = [
    ("associative element", 'declare -A T; T[a]=5; probe $(( T[a] + 1 )) $(( T["a"] * 2 ))', ["6", "10"]),
    ("indexed element, arithmetic index", "A=(1 2 3); i=1; probe $(( A[i+1] + A[0] ))", ["4"]),
    ("unset element is 0", "A=(1 2 3); probe $(( A[7] + 1 ))", ["1"]),
    ("element assigned", 'A=(3 4); ((A[1]+=1)); ((A[0]=A[1]*2)); probe "${A[@]}"', ["10", "5"]),
    ("element incremented", 'A=(3 4); i=0; ((A[i]++)); probe $(( --A[1] )) "${A[@]}"', ["3", "4", "3"]),
    ("element index that assigns is not read", "A=(1 2); i=0; probe $(( A[i++] += 5 ))", ["$(( A[i++] += 5 ))"]),
    ("element assigned in an expansion", 'declare -A T; probe $(( T[k] = 7 )) "${T[k]}"', ["7", "7"]),
]


@pytest.mark.parametrize("text,argv", [r[1:] for r in ARRAY_ARITHMETIC], ids=[r[0] for r in ARRAY_ARITHMETIC])
def test_arithmetic_reads_array_elements(text, argv):
    assert probed(text) == [argv]


def test_an_element_of_an_array_read_at_run_time_is_unknown():
    """`read -ra ADDR <<<"$ip"; ${ADDR[1]}` (verl v0.7.0 examples/sapo_trainer/run_qwen30b_sapo.sh):
    the input decides how many elements there are, so ${ADDR[1]} is not the empty string."""
    (outcome,) = run('read -ra ADDR <<<"$(hostname -I)"; probe "${ADDR[1]}"', ambient={})
    assert outcome.launches == [["${ADDR[1]}"]]


def test_arithmetic_on_an_unknown_element_is_unknown_and_quick():
    """logic-rl math_eval/auto_test_aime.sh: `$((current_time - T["$gpu_id"]))` with both unknown
    once recursed to Python's limit for every evaluation (4 s for the script)."""
    (outcome,) = run('declare -A T; T[$G]=$(date +%s); probe $(( $(date +%s) - T["$G"] ))')
    assert outcome.launches == [['$(( $(date +%s) - T["$G"] ))']]  # unknown: shown as the script wrote it


ARITH_COMMAND = [
    ("(( 1 ))", "0"),
    ("(( 0 ))", "1"),
    ("(( 2 > 1 ))", "0"),
    ("let 'Z = 0'", "1"),
    ("let 'Z = 4'", "0"),
    ("(( 1 / 0 ))", "1"),
    ("i=0; (( i++ )); echo; (( i ))", "0"),
]


@pytest.mark.parametrize("command,status", ARITH_COMMAND, ids=[r[0] for r in ARITH_COMMAND])
def test_arithmetic_command_status(command, status):
    assert probed(f"{command}; probe $?") == [[status]]


def test_arithmetic_error_in_a_command_fails_the_command():
    (outcome,) = run("(( 1 / 0 )); probe after", ambient={})
    assert outcome.launches == [["after"]]
    assert [n.kind for n in outcome.notes] == [NoteKind.ARITHMETIC]


def test_arithmetic_error_in_an_expansion_drops_the_rest_of_the_line():
    """bash 5.2 (not POSIX mode): the error drops what is left of the top-level command (the whole
    line), and the script goes on with the next line, $? 1."""
    (outcome,) = run("probe $((1 / 0)); probe same-line", ambient={})
    assert outcome.launches == [] and outcome.status == "no-launch"
    assert [n.kind for n in outcome.notes] == [NoteKind.ARITHMETIC]
    (outcome,) = run("X=5\nX=$((1 / 0)); probe same-line\nprobe next-line $X $?", ambient={})
    assert outcome.launches == [["next-line", "5", "1"]]


ARITH_DROPS = [
    "probe $((1 / 0))",
    "A=(1 2); probe ${A[1/0]}",
    "S=abc; probe ${S:1/0}",
    "probe ${X:-$((1 % 0))}",
]


@pytest.mark.parametrize("text", ARITH_DROPS)
def test_arithmetic_error_in_an_expansion_drops_the_line_everywhere(text):
    (outcome,) = run(f"{text}; probe after\nprobe next", ambient={})
    assert outcome.launches == [["next"]]
    assert [n.kind for n in outcome.notes] == [NoteKind.ARITHMETIC]


ARITH_FAILS = [
    "let 'x = 1 / 0'",
    "for ((i = 1 / 0; i < 2; i++)); do probe no; done",
    "(( x = 2 / 0 ))",
]


@pytest.mark.parametrize("text", ARITH_FAILS)
def test_arithmetic_error_in_a_command_fails_it_everywhere(text):
    (outcome,) = run(f"{text}; probe $?", ambient={})
    assert outcome.launches == [["1"]]
    assert [n.kind for n in outcome.notes] == [NoteKind.ARITHMETIC]


def test_arithmetic_on_an_unknown_value_is_unknown():
    (outcome,) = run("probe $((N + 1))")
    assert outcome.launches == [["$((N + 1))"]]


def test_c_style_for_counts():
    assert probed("for ((i = 0; i < 3; i++)); do probe $i; done") == [["0"], ["1"], ["2"]]


# ---- conditions: [ ] / [[ ]] -> status ----------------------------------------
CONDITIONS = [
    ("[ a = a ]", "0"),
    ("[ a = b ]", "1"),
    ("[ a != b ]", "0"),
    ('[ -z "" ]', "0"),
    ('[ -n "" ]', "1"),
    ("[ 3 -lt 10 ]", "0"),
    ("[ 3 -gt 10 ]", "1"),
    ("[ ! a = a ]", "1"),
    ("[ a = a -a b = c ]", "1"),
    ("[ a = a -o b = c ]", "0"),
    ("[ ]", "1"),
    ("[ x ]", "0"),
    ("test a b", "2"),
    ("[ 1 -eq x ]", "2"),
    ("test a = a", "0"),
    ("[[ abc == a* ]]", "0"),
    ('[[ abc == "a*" ]]', "1"),
    ("[[ abc != a* ]]", "1"),
    ("[[ abc =~ ^a.c$ ]]", "0"),
    ("[[ -n x && -z '' ]]", "0"),
    ("[[ -z x || a == b ]]", "1"),
    ("[[ ! a == b ]]", "0"),
    ("[[ 10 -gt 9 ]]", "0"),
    ("[[ b > a ]]", "0"),
]


@pytest.mark.parametrize("test,status", CONDITIONS, ids=[r[0] for r in CONDITIONS])
def test_condition_status(test, status):
    assert probed(f"{test}; probe $?") == [[status]]


def test_unknown_condition_forks():
    outcomes = run('if [ "$(uname)" = Linux ]; then probe yes; else probe no; fi')
    assert sorted(o.launches[0][0] for o in outcomes) == ["no", "yes"]


def test_test_on_an_unknown_variable_assumes_each_side():
    outcomes = run('if [ "$MODE" = fast ]; then probe "$MODE"; else probe other; fi')
    assert sorted(o.launches[0][0] for o in outcomes) == ["fast", "other"]


def test_paths_that_go_on_alike_are_one_path():
    # twelve unknown checks that only print on one side: 4,096 paths if none joined, past the 64 followed
    text = "".join(f"command -v tool{n} >/dev/null || echo missing {n}\n" for n in range(12)) + "probe end\n"
    [outcome] = run(text, ambient={})
    assert outcome.status == "launches" and outcome.launches == [["end"]] and outcome.assumptions == ()
    assert not outcome.notes


def test_paths_that_differ_stay_apart():
    outcomes = run("command -v tool >/dev/null || X=missing\nprobe ${X-found}\n", ambient={})
    assert sorted(o.launches[0][0] for o in outcomes) == ["found", "missing"]


def test_a_wait_loop_is_followed_to_its_way_out():
    # the pass that finds no GPU comes back to the loop's head as it left it: it goes on as that did
    text = (
        "QUEUE=(ckpt)\n"
        "while [ ${#QUEUE[@]} -gt 0 ]; do\n"
        "  if ! nvidia-smi >/dev/null; then sleep 30; continue; fi\n"
        '  probe "${QUEUE[0]}"; QUEUE=("${QUEUE[@]:1}")\n'
        "done\n"
        "probe end\n"
    )
    [outcome] = run(text, ambient={})
    assert outcome.status == "launches" and outcome.launches == [["ckpt"], ["end"]] and not outcome.notes
    assert [str(a) for a in outcome.assumptions] == ["`nvidia-smi` succeeds"]


def test_a_loop_in_the_background_runs_there_and_the_script_goes_on():
    """`monitor &` (a GPU monitor, `while :; do ...; done &`): bash runs it in a subshell and goes on;
    a launch in the background counts; what the background assigns stays there."""
    text = (
        "mon() { while :; do sleep 5; done; }\n"
        "mon &\n"
        "( while :; do sleep 5; done ) &\n"
        "X=1 && probe background &\n"
        "X=2 &\n"
        'probe "after" "${X:-unset}"\n'
    )
    [outcome] = run(text, ambient={})
    assert outcome.status == "launches" and not outcome.notes
    assert outcome.launches == [["background"], ["after", "unset"]]


def test_a_loop_with_no_way_out_never_ends():
    [outcome] = run("while true; do sleep 10; done\nprobe never\n", ambient={})
    assert outcome.status == "incomplete" and outcome.launches == []
    assert [n.message for n in outcome.notes if n.kind == NoteKind.BUDGET] == [
        "cannot follow the script here: loop never ends: each pass comes back to the same state"
    ]


# ---- control flow ---------------------------------------------------------------
FLOW = [
    ("and-or", "false && probe no || probe yes", [["yes"]]),
    ("case", "X=b; case $X in a) probe A;; b|c) probe B;; *) probe Z;; esac", [["B"]]),
    ("case fallthrough", "X=a; case $X in a) probe A;& b) probe B;; esac", [["A"], ["B"]]),
    ("for", "for i in 1 2; do probe $i; done", [["1"], ["2"]]),
    ("break", "for i in 1 2 3; do [ $i = 2 ] && break; probe $i; done", [["1"]]),
    ("continue", "for i in 1 2 3; do [ $i = 2 ] && continue; probe $i; done", [["1"], ["3"]]),
    ("while", "i=0; while [ $i -lt 2 ]; do probe $i; i=$((i+1)); done", [["0"], ["1"]]),
    ("function args", 'f() { probe "$1" $#; }; f a b', [["a", "2"]]),
    ("return status", "f() { return 3; }; f; probe $?", [["3"]]),
    ("subshell keeps vars", "X=1; (X=2); probe $X", [["1"]]),
    ("pipeline", "echo | probe p", [["p"]]),
    ("negation", "! false; probe $?", [["0"]]),
    ("exit", "probe a; exit 0; probe b", [["a"]]),
    ("errexit", "set -e; false; probe no", []),
    ("eval", "eval 'probe e'", [["e"]]),
    ("export", "export X=1; probe $X", [["1"]]),
    ("readonly stops", "readonly X=1; X=2; probe no", []),
    ("unset", "X=1; unset X; probe ${X-gone}", [["gone"]]),
    ("shift", "set -- a b c; shift 2; probe $1", [["c"]]),
    ("printf -v", "printf -v X '%s-%s' a b; probe $X", [["a-b"]]),
    ("declare -i", "declare -i X=2*3; probe $X", [["6"]]),
    ("declare -a", "declare -a A; A+=(x); probe ${A[0]}", [["x"]]),
]


# ---- declarations: one path, whether tree-sitter read a declaration or a command reached it
DECLARATIONS = [
    ("export then read", "export A=1 B; probe $A ${B-unset}", [["1", "unset"]]),
    ("command export", "command export A=1; probe $A", [["1"]]),
    ("builtin declare -x", 'V="A=2"; builtin declare -x "$V"; probe $A', [["2"]]),
    ("declare in a function is local", "f() { declare D=in; }; D=out; f; probe $D", [["out"]]),
    ("declare without value in a function", "f() { declare D; probe ${D-unset}; }; D=1; f", [["unset"]]),
    ("declare -g is global", "f() { declare -g G=in; }; f; probe $G", [["in"]]),
    ("declare -i expanded word", 'V="Y=3*2"; declare -i $V; probe $Y', [["6"]]),
    ("readonly then export fails", "readonly X=1; export X=2; probe $? $X", [["1", "1"]]),
    ("readonly then local fails", "readonly X=1; f() { local X=2; probe $?; }; f; probe $X", [["1"], ["1"]]),
    ("export of an existing variable", "X=1; export X; probe $X", [["1"]]),
]


@pytest.mark.parametrize("text,launches", [r[1:] for r in DECLARATIONS], ids=[r[0] for r in DECLARATIONS])
def test_declaration(text, launches):
    assert probed(text) == launches


@pytest.mark.parametrize("text,launches", [r[1:] for r in FLOW], ids=[r[0] for r in FLOW])
def test_flow(text, launches):
    assert probed(text) == launches


# ---- profiles: script -> dimensions ---------------------------------------------
PROFILES = [
    ("case on a default", "M=${M:-a}; case $M in a) ;; b) ;; esac", {"M": ["a", "b"]}),
    ("test without default", 'if [ "$E" = x ]; then :; fi', {"E": [None, "x"]}),
    ("only the default", 'F=${F:-true}; if [ "$F" = true ]; then :; fi', {"F": ["true", "false"]}),
    ("assigned is no input", "G=a; case $G in a) ;; b) ;; esac", {}),
    ("a loop's variable is no input", 'for E in vllm sglang; do [ "$E" = vllm ] && :; done', {}),
    ("alias", 'A=${B:-x}; [ "$A" = y ]', {"B": ["x", "y"]}),
    ("single literal default", 'H=${H:-fsdp}; [ "$H" = fsdp ]', {"H": ["fsdp", OTHER]}),
]


@pytest.mark.parametrize("text,dims", [r[1:] for r in PROFILES], ids=[r[0] for r in PROFILES])
def test_profile_dimensions(text, dims):
    info = prof.scan(parse_script("unit.sh", text.encode()), follow_sources=False)
    assert {d.name: d.values for d in prof.dimensions(info)} == dims


# ---- the interpreter's shape (issue 9): parts that stay small and self-contained -----
SHELL = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src", "verl_preflight", "shell")


def _shell_classes():
    for name in sorted(os.listdir(SHELL)):
        if name.endswith(".py"):
            with open(os.path.join(SHELL, name), encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
            yield from ((name, node) for node in ast.walk(tree) if isinstance(node, ast.ClassDef))


def test_no_shell_class_over_400_lines():
    sizes = {f"{f}:{c.name}": c.end_lineno - c.lineno + 1 for f, c in _shell_classes()}
    assert {k: v for k, v in sizes.items() if v > 400} == {}


def test_shell_classes_call_only_what_they_define():
    """No method reached through `self` that the class does not define (no mixins that
    call into their host): collaborators are reached through an attribute."""
    unresolved = []
    for f, cls in _shell_classes():
        if any(not (isinstance(b, ast.Name) and b.id in ("Exception", "Protocol")) for b in cls.bases):
            continue  # a subclass of something outside the shell (Script, ShellExit)
        defined = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
        defined |= {n.target.id for n in cls.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
        for node in ast.walk(cls):
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            for target in targets:
                for t in ast.walk(target) if target is not None else ():
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        defined.add(t.attr)
        unresolved += [
            f"{f}:{cls.name}.{node.attr}"
            for node in ast.walk(cls)
            if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
            and node.attr not in defined
        ]
    assert unresolved == []


def test_no_catch_all_in_the_shell():
    for name in os.listdir(SHELL):
        if name.endswith(".py"):
            with open(os.path.join(SHELL, name), encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
            for node in ast.walk(tree):
                if isinstance(node, ast.ExceptHandler):
                    caught = node.type
                    names = [caught] if not isinstance(caught, ast.Tuple) else caught.elts
                    assert caught is not None and not any(
                        isinstance(n, ast.Name) and n.id in ("Exception", "BaseException") for n in names
                    ), f"{name}:{node.lineno}"


def test_expansion_needs_exactly_its_host_protocol():
    """Expansion reaches the interpreter only through ExpansionHost, and uses all of it."""
    from verl_preflight.shell.evaluate import Interpreter
    from verl_preflight.shell.expand import ExpansionHost

    protocol = set(ExpansionHost.__annotations__) | {
        n for n, v in vars(ExpansionHost).items() if callable(v) and not n.startswith("_")
    }
    used = set()
    for name in ("expand.py", "params.py", "substitution.py"):
        with open(os.path.join(SHELL, name), encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        used |= {
            n.attr
            for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Attribute) and n.value.attr == "host"
        }
    assert used == protocol
    assert all(hasattr(Interpreter, n) for n in protocol - {"script"})


# ---- the environment a launch gets ------------------------------------------


def launch_env(text: str) -> dict:
    """The exported variables each `probe` gets, as the script wrote them (one path)."""
    seen = []

    def on_command(argv, loc, last_word, environment=None):
        if argv and argv[0].value == "probe":
            seen.append({k: f.display for k, f in environment().items()})
            return argv
        return None

    (outcome,) = evaluate(parse_script("unit.sh", text.encode()), {}, set(), on_command, ambient={})
    assert len(seen) == 1
    return seen[0]


@pytest.mark.parametrize(
    "text,env",
    [
        ("export A=1; B=2; probe", {"A": "1"}),
        ("A=1; export A; probe", {"A": "1"}),
        ("declare -x A=1; probe", {"A": "1"}),
        ("export A=1; unset A; probe", {}),
        ("export A=1; A=2; probe", {"A": "2"}),  # an exported variable stays exported
        ("A=1 probe", {"A": "1"}),  # the command's own prefix
        ("export A=1; A=2 nohup probe", {"A": "2"}),
        ("export ARR=(1 2); probe", {}),  # bash exports no arrays
        ("A=1 true; probe", {}),  # a prefix is for its command only
        ('export A="$(hostname)"; probe', {"A": "$(hostname)"}),
        ("export A=1; export -n A; probe", {}),  # the export attribute taken away (real bash agrees)
        ("export A=1; export -n A=2; probe", {}),
        ("export A=1; declare +x A; probe", {}),
        ("declare -x A=1; typeset +x A=3; probe", {}),
        ("export A=1; f() { local +x A; }; f; probe", {"A": "1"}),  # a local of its own, gone at return
        ("set -a; A=1; set +a; B=2; probe", {"A": "1"}),  # allexport: assignments while it is on
        ("set -o allexport; A=1; set +o allexport; probe", {"A": "1"}),
        ("A=1; set -a; probe", {}),
        ("B=0; set -ea; B=1; A=(1 2); probe", {"B": "1"}),
        ("set -a; f() { local A=1; probe; }; f", {"A": "1"}),
        ("f() { probe; }; A=1 f", {"A": "1"}),  # a prefix before a function: exported while it runs
        ("A=1 eval probe", {"A": "1"}),
    ],
)
def test_the_environment_a_launch_gets(text, env):
    assert launch_env(text) == env


def test_a_prefix_before_a_function_holds_while_it_runs_only():
    """`MODE=fast train` where train() launches: bash gives the function MODE (and what it
    assigns to MODE is gone at return); after it, the old value is back."""
    text = "A=0; f() { probe $A; A=2; }; A=1 f; probe $A; B=1 . /dev/null; probe ${B-unset}"
    assert probed(text) == [["1"], ["0"], ["unset"]]
