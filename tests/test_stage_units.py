"""Unit tables for the stages after the shell: launches (argv -> Hydra arguments) and
policies over a hand-built view (no script, no composition), so a failure names its stage."""

from __future__ import annotations

import pytest

from verl_preflight.hydra_stage.grammar import grammar_text
from verl_preflight.pipeline.launches import launch_of, read_launch
from verl_preflight.rules.policy.parallelism import Parallelism
from verl_preflight.rules.policy.rollout_expert_parallel import RolloutExpertParallel
from verl_preflight.rules.policy.use_mbridge import UseMbridge
from verl_preflight.rules.view import LaunchView, Setting
from verl_preflight.shell.words import Field
from verl_preflight.core.values import Loc, Profile, Unknown

LOC = Loc("run.sh", 1, 1)


def argv(*words):
    return [Field((w,), LOC) if isinstance(w, Unknown) else Field.of(w, LOC) for w in words]


@pytest.mark.parametrize(
    "words,module,config_name,overrides",
    [
        (["python3", "-m", "verl.trainer.main_ppo", "a=1"], "verl.trainer.main_ppo", None, ["a=1"]),
        (
            ["python3", "-u", "-m", "verl.trainer.main_ppo", "--config-name", "x", "b=2"],
            "verl.trainer.main_ppo",
            "x",
            ["b=2"],
        ),
        (["python3", "-mverl.trainer.main_ppo", "--config-name=y"], "verl.trainer.main_ppo", "y", []),
        (["uv", "run", "python3", "-m", "verl.trainer.main_ppo", "c=3"], "verl.trainer.main_ppo", None, ["c=3"]),
        # `uv run -m X` runs `python -m X` (NovaSky-AI/SkyRL's skyrl-agent scripts)
        (["uv", "run", "--isolated", "-m", "verl.trainer.main_ppo", "d=4"], "verl.trainer.main_ppo", None, ["d=4"]),
        (
            ["torchrun", "--nproc-per-node=8", "-m", "verl.trainer.fsdp_sft_trainer"],
            "verl.trainer.fsdp_sft_trainer",
            None,
            [],
        ),
    ],
)
def test_launches(words, module, config_name, overrides):
    spec = read_launch(launch_of(argv(*words), LOC))
    assert (spec.module, spec.config_name, [o.text for o in spec.overrides]) == (module, config_name, overrides)


@pytest.mark.parametrize(
    "words",
    [["echo", "python3", "-m", "verl.trainer.main_ppo"], ["python3", "-m", "json.tool"], ["run", "-m", "verl.x"], []],
)
def test_not_launches(words):
    assert launch_of(argv(*words), LOC) is None


def test_an_unknown_argument_keeps_what_the_script_wrote():
    spec = read_launch(launch_of(argv("python3", "-m", "verl.trainer.main_ppo", Unknown("$EXTRA", "x")), LOC))
    (o,) = spec.overrides
    assert o.display == "$EXTRA" and o.key is None and grammar_text(o.field) is None


def view(settings: dict, tree: dict | None = None, profile: Profile | None = None) -> LaunchView:
    """A launch view built by hand: settings as the script wrote them, over a composed tree."""
    spec = read_launch(launch_of(argv("python3", "-m", "verl.trainer.main_ppo"), LOC))
    items = [Setting(k, v, LOC, "change", f"{k}={v}", str(v)) for k, v in settings.items()]
    return LaunchView(spec, "ppo_trainer", profile or Profile(), items, tree or {})


MEGATRON = {"model_engine": "megatron"}


def test_sourcing_cann_is_read_from_the_text_the_pipeline_gives():
    """The script's text comes from the pipeline (a script on stdin has no file to open)."""
    from verl_preflight.target.launch_target import Forced, ScriptSignals, decide_device

    plain = ScriptSignals.read("-", {"-": "python3 -m verl.trainer.main_ppo\n"}, lambda p: None)
    assert decide_device(Forced(), Profile(), {}, {}, plain).kind is None
    text = "source /usr/local/Ascend/ascend-toolkit/set_env.sh\npython3 -m verl.trainer.main_ppo\n"
    cann = ScriptSignals.read("-", {"-": text}, lambda p: None)
    device = decide_device(Forced(), Profile(), {}, {}, cann)
    assert device.kind == "npu" and device.loc.line == 1


@pytest.mark.parametrize(
    "rule,settings,fires",
    [
        (UseMbridge(), {**MEGATRON, "actor_rollout_ref.actor.megatron.use_mbridge": False}, True),
        (UseMbridge(), {**MEGATRON, "actor_rollout_ref.actor.megatron.use_mbridge": True}, False),
        (UseMbridge(), {"model_engine": "fsdp", "actor_rollout_ref.actor.megatron.use_mbridge": False}, False),
        (UseMbridge(), {**MEGATRON, "actor_rollout_ref.actor.megatron.use_mbridge": Unknown("$MB", "x")}, False),
        (
            RolloutExpertParallel(),
            {
                "actor_rollout_ref.rollout.tensor_model_parallel_size": 8,
                "actor_rollout_ref.rollout.data_parallel_size": 1,
                "actor_rollout_ref.rollout.expert_parallel_size": 64,
            },
            True,
        ),
        (
            RolloutExpertParallel(),
            {
                "actor_rollout_ref.rollout.name": "trtllm",
                "actor_rollout_ref.rollout.tensor_model_parallel_size": 8,
                "actor_rollout_ref.rollout.data_parallel_size": 1,
                "actor_rollout_ref.rollout.expert_parallel_size": 64,
            },
            False,
        ),
        (
            Parallelism(),
            {
                **MEGATRON,
                "trainer.nnodes": 1,
                "trainer.n_gpus_per_node": 8,
                "actor_rollout_ref.actor.megatron.tensor_model_parallel_size": 3,
                "actor_rollout_ref.actor.megatron.pipeline_model_parallel_size": 1,
                "actor_rollout_ref.actor.megatron.context_parallel_size": 1,
            },
            True,
        ),
        (
            Parallelism(),
            {
                "trainer.nnodes": 2,
                "trainer.n_gpus_per_node": 8,
                "actor_rollout_ref.rollout.tensor_model_parallel_size": 16,
            },
            False,  # a rollout replica may span nodes when it fills them
        ),
        (
            Parallelism(),
            {
                "trainer.nnodes": 2,
                "trainer.n_gpus_per_node": 8,
                "actor_rollout_ref.rollout.tensor_model_parallel_size": 12,
            },
            True,
        ),
    ],
)
def test_policies_over_a_hand_built_view(rule, settings, fires):
    found = rule.check_launch(view(settings), ctx=None)
    assert bool(found) == fires, found


def compositions(monkeypatch) -> list:
    """The (config name, group overrides) of each real composition from now on, in a process
    that has composed nothing yet, with no compositions shipped (store/released.py)."""
    import verl_preflight.hydra_stage.tree as tree
    from verl_preflight.store import released

    composed = []
    real = tree.compose_raw
    monkeypatch.setattr(released, "compositions", lambda *_: None)  # (none shipped for a release's tree)

    def counting(*args):
        composed.append(args[1:])
        return real(*args)

    monkeypatch.setattr(tree, "compose_raw", counting)
    tree.composed_once.cache_clear()
    return composed


def test_workers_of_one_run_compose_a_config_once(tmp_path, monkeypatch):
    """-j workers share compositions through the run's folder: the first composes and
    publishes, the next reads the same snapshot instead of composing again."""
    import verl_preflight.hydra_stage.tree as tree

    composed = compositions(monkeypatch)  # two workers: two processes, nothing composed yet
    first, second = (tree.ConfigCache(tree.locate(None), use_disk=False) for _ in range(2))
    first.shared_dir = second.shared_dir = str(tmp_path)
    a = first.snapshot("ppo_trainer", ())
    b = second.snapshot("ppo_trainer", ())
    assert a == b and "tree" in a
    assert composed == [("ppo_trainer", [])]


def test_a_worker_composes_itself_when_the_one_that_claimed_it_never_publishes(tmp_path, monkeypatch):
    import verl_preflight.hydra_stage.tree as tree

    monkeypatch.setattr(tree.SharedSnapshots, "WAIT", 0.05)
    key = '["ppo_trainer", []]'
    cache = tree.ConfigCache(tree.locate(None), use_disk=False)
    tree.SharedSnapshots(str(tmp_path), cache.digest + key).claim()  # claimed by a worker that then died
    cache.shared_dir = str(tmp_path)
    assert "tree" in cache.snapshot("ppo_trainer", ())


def test_workers_share_a_composition_only_of_the_same_tree(tmp_path):
    """Two config trees (the installed verl's, a project's copy with another default) compose
    `ppo_trainer` in one -j run: each gets its own, never the other's published snapshot."""
    import shutil

    import verl_preflight.hydra_stage.tree as tree

    source = tree.locate(None)
    copy = tmp_path / "verl" / "trainer" / "config"
    shutil.copytree(source.path, copy)
    text = (copy / "ppo_trainer.yaml").read_text()
    (copy / "ppo_trainer.yaml").write_text(text + "\nproject_only_key: 1\n")
    shared = tmp_path / "shared"
    shared.mkdir()
    first = tree.ConfigCache(source, use_disk=False)
    from verl_preflight.core.config_location import from_dir

    second = tree.ConfigCache(tree.ConfigSource(*from_dir(str(copy), "--verl-config")), use_disk=False)
    for cache in (first, second):
        cache.shared_dir = str(shared)
    assert "project_only_key" not in first.snapshot("ppo_trainer", ())["tree"]
    assert "project_only_key" in second.snapshot("ppo_trainer", ())["tree"]


def test_a_worker_that_fails_to_compose_lets_the_others_compose(tmp_path, monkeypatch):
    """The claiming worker raised while composing (not a Hydra error: a bug of ours): the
    waiting worker composes at once instead of waiting out SharedSnapshots.WAIT."""
    import time

    import verl_preflight.hydra_stage.tree as tree

    key = '["ppo_trainer", []]'
    claimer = tree.SharedSnapshots(str(tmp_path), key)
    assert claimer.claim() is None
    claimer.publish(None)
    start = time.monotonic()
    assert tree.SharedSnapshots(str(tmp_path), key).claim() is None
    assert time.monotonic() - start < tree.SharedSnapshots.WAIT / 2


def test_a_snapshot_that_cannot_be_written_lets_the_others_compose(tmp_path):
    import time

    import verl_preflight.hydra_stage.tree as tree

    key = '["ppo_trainer", []]'
    claimer = tree.SharedSnapshots(str(tmp_path), key)
    assert claimer.claim() is None
    claimer.publish({"tree": {b"bytes": 1}})  # not JSON: not published
    start = time.monotonic()
    assert tree.SharedSnapshots(str(tmp_path), key).claim() is None
    assert time.monotonic() - start < tree.SharedSnapshots.WAIT / 2


def test_a_process_composes_a_tree_once_for_all_its_runs_and_again_when_it_changes(tmp_path, monkeypatch):
    """The runs of one process (the language server's, `--verl A --verl B`) share what they
    composed, keyed by the tree's content: an edited tree is composed anew."""
    import shutil

    import verl_preflight.hydra_stage.tree as tree

    composed = compositions(monkeypatch)
    folder = tmp_path / "config"
    shutil.copytree(tree.locate(None).path, folder)
    source = tree.locate(str(folder))
    for _ in range(3):  # three runs, each with its own cache
        tree.ConfigCache(source, use_disk=False).composed("ppo_trainer", ())
    assert composed == [("ppo_trainer", [])]
    trainer = folder / "ppo_trainer.yaml"
    trainer.write_text(trainer.read_text() + "\nextra_key_of_this_edit: 1\n")
    cfg = tree.ConfigCache(tree.locate(str(folder)), use_disk=False).composed("ppo_trainer", ())
    assert len(composed) == 2 and cfg.extra_key_of_this_edit == 1


def test_the_extractors_walk_a_module_in_ast_walks_order():
    """_pyast.walk gives the nodes ast.walk gives, in its order (the extractors take the first
    match of a walk: the order is part of what they find), on the project's own Python."""
    import ast
    import glob
    import os

    from verl_preflight.sources._pyast import walk

    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src", "verl_preflight")
    files = sorted(glob.glob(os.path.join(src, "**", "*.py"), recursive=True))
    assert len(files) > 20
    for path in files:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        assert list(walk(tree)) == list(ast.walk(tree)), path
    ragged = ast.parse("x = 1")
    del ragged.body[0].type_comment  # a field not set: skipped, as ast.walk does
    assert list(walk(ragged)) == list(ast.walk(ragged))


def test_a_defaults_text_is_typed_as_yaml_types_it_with_or_without_pyyaml():
    """An `${oc.select:key,default}` default is typed as yaml.safe_load types it; null, the
    booleans, decimal integers, words and interpolations are read without importing PyYAML,
    and typed the same: every text of three characters from a mixed alphabet, YAML 1.1's
    special words, numbers in its other notations, and thousands of interpolation-like texts."""
    import itertools
    import math
    import random

    import yaml

    from verl_preflight.rules.view import _literal

    words = "~ null Null NULL nULL None yes Yes YES yES y n on On ON oN off OFF true True TRUE tRUE false FALSE"
    numbers = "0 -0 +0 00 01 012 7 -1 +1 10 1_000 1e3 1.0 -2.5 .inf -.inf .nan 0x1f 0o17 0b101 1:20 2024-01-01"
    other = (
        "fsdp vllm bf16 a.b a-b _a A1 a:b [1] {} 'x' \"x\" -a é ١ ² 12345678901234567890 - . a#b = x=1 True1 yes. a-"
    )
    texts = ["", "a b", " a", "a: b", "a #b", *words.split(), *numbers.split(), *other.split()]
    texts += ["".join(t) for t in itertools.product("aZ0_.-+:", repeat=3)]
    rng = random.Random(7)
    alphabet = "${}:,.#a0-_[]'\"!&*|>%@` \t\\?="
    texts += ["${" + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8))) + "}" for _ in range(3000)]
    texts += ["${oc.select:a.b,null}", "${oc.env:HOME,/tmp}", "${a:}", "${a}:", "${a,#b}"]
    for text in texts:
        try:
            want = yaml.safe_load(text)
        except yaml.YAMLError:
            want = text
        got = _literal(text)
        assert type(got) is type(want) and (
            got == want or (isinstance(got, float) and math.isnan(got) and math.isnan(want))
        ), text


def test_yaml_read_with_libyaml_gives_what_pyyamls_safe_load_gives():
    """The shipped model table and schema, and every config of the installed verl, load to the
    same values (and the schema to nodes on the same lines) with libyaml's parser as with
    PyYAML's Python one; a broken document fails with a mark either way."""
    import glob
    import importlib.util
    import os

    import yaml

    from verl_preflight.core import yaml_read
    from verl_preflight.rules.schema import DEFAULT_SCHEMA

    if yaml.__with_libyaml__:
        assert yaml_read.SAFE_LOADER is yaml.CSafeLoader
    data = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(yaml_read.__file__))), "data")
    files = [os.path.join(data, "models.yaml"), DEFAULT_SCHEMA]
    spec = importlib.util.find_spec("verl")
    if spec is not None and spec.origin:
        files += sorted(glob.glob(os.path.join(os.path.dirname(spec.origin), "trainer", "config", "**", "*.yaml"), recursive=True))
        assert len(files) > 20
    for path in files:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        assert yaml_read.load(text) == yaml.safe_load(text), path
    with open(DEFAULT_SCHEMA, encoding="utf-8") as fh:
        text = fh.read()

    def lines(node) -> list:
        children = node.value if isinstance(node, yaml.CollectionNode) else []
        flat = [n for item in children for n in (item if isinstance(item, tuple) else (item,))]
        return [node.start_mark.line, *(lines(n) for n in flat)]

    assert lines(yaml_read.compose(text)) == lines(yaml.compose(text, Loader=yaml.SafeLoader))
    with pytest.raises(yaml.YAMLError) as err:
        yaml_read.load("version: 1\npolicies: [\n")
    assert err.value.problem_mark is not None


_SPAN_CASES = (
    "import os\r\n"
    "x = 1; y = [\r\n"
    "    2]; z = 3\r\n"
    "@staticmethod\n"
    "@ property\n"
    "def top(a):\n"
    "    return a\n"
    "class A:\n"
    "\tclass B:\n"
    "\t\tdef m(self):\n"
    "\t\t\tif self:  # a comment\n"
    "\t\t\t\treturn 1\n"
    "\t\t\telif not self:\n"
    "\t\t\t\treturn 2\n"
    "\t\t\treturn 3\n"
    "s = 'é'; t = 'ü'\n"
    "if x: u = 1\n"
)


def _statements(tree):
    import ast

    return [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]


def test_a_statement_parsed_alone_is_the_statement_the_whole_module_gives(tmp_path):
    """_pyast.parsed_alone gives back, node for node with lines and columns, every statement of a
    module (decorated, tab-indented, after `;` on its line, after non-ASCII text, CRLF lines)
    but an `elif`, which statement_at then finds in the whole module; on verl's trainer and engine
    modules too, whose functions the batch checks keep as spans."""
    import ast
    import glob
    import importlib.util
    import os

    from verl_preflight.sources._pyast import Span, parsed_alone, statement_at

    path = tmp_path / "cases.py"
    path.write_bytes(_SPAN_CASES.encode())
    tree = ast.parse(_SPAN_CASES.encode())
    alone = {}
    for node in _statements(tree):
        span = Span.of(str(path), node)
        got = parsed_alone(span, _SPAN_CASES)
        alone[(node.lineno, node.col_offset)] = got is not None
        assert ast.dump(statement_at(span), include_attributes=True) == ast.dump(node, include_attributes=True)
    assert [at for at, ok in alone.items() if not ok] == [(13, 3)]  # the elif
    assert alone[(2, 7)] and alone[(3, 8)] and alone[(16, 10)] and alone[(6, 0)]  # after `;`, after "é" (bytes), decorated

    spec = importlib.util.find_spec("verl")
    if spec is None or not spec.origin:
        pytest.skip("verl is not installed here (make setup installs it)")
    root = os.path.dirname(spec.origin)
    modules = [os.path.join(root, "trainer", "ppo", "ray_trainer.py"), os.path.join(root, "protocol.py")]
    modules += glob.glob(os.path.join(root, "workers", "engine", "*", "transformer_impl.py"))
    for module in modules:
        with open(module, encoding="utf-8") as fh:
            text = fh.read()
        for node in _statements(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.ClassDef | ast.If | ast.Assign):
                got = statement_at(Span.of(module, node))
                assert ast.dump(got, include_attributes=True) == ast.dump(node, include_attributes=True), (module, node.lineno)


OVERRIDE_TEXTS = [
    "trainer.total_epochs=3",
    "+actor_rollout_ref.actor.megatron.override_transformer_config.recompute_method=uniform",
    "++data.max_prompt_length=1024",
    "a.b=",
    "a.b=null",
    "a.b=1e-6",
    "a.b=-1_000",
    "a.b=0123",
    "a.b=inf",
    "a.b=True",
    "a.b='x y'",
    'a.b="it\'s"',
    "a.b=[a,{b:1},[]]",
    "a.b={x:1,y:[2,3]}",
    "a.b=${oc.env:HOME}/ckpt",
    "a.b=$HOME/data",
    "a.b=x=y",
    "a.b=\\,x",
    "a.b= 1",
    "a.b=1 ",
    "a.b=1,2",
    "a.b=choice(1,2)",
    "a.b=range(3)",
    "a.b=int(3.5)",
    "a.b=}",
    "a.b=<path>",
    "a.b=qwen3_4b_grpo_8npu}",
    "a.b=[1,2",
    "a.b=ünïcode",
]


@pytest.mark.parametrize("text", OVERRIDE_TEXTS)
def test_an_override_with_a_plain_key_parses_as_hydra_parses_it_whole(text):
    from verl_preflight.hydra_stage import grammar

    assert grammar.parse_all([text], {}) == [grammar.parse_one(text)]


def test_a_value_is_parsed_once_whatever_key_it_is_given_to(monkeypatch):
    from verl_preflight.hydra_stage import grammar

    parsed = []
    real = grammar.parse_one
    monkeypatch.setattr(grammar, "_by_value", {})
    monkeypatch.setattr(grammar, "parse_one", lambda text: parsed.append(text) or real(text))
    records = grammar.parse_all(["a.b=[1,2]", "+c.d=[1,2]", "e=[1,2]", "a.b@pkg=[1,2]"], {})
    assert parsed == ["k=[1,2]", "a.b@pkg=[1,2]"]  # a key of another form is parsed whole
    assert [(r["kind"], r["key"], r["value"]) for r in records] == [
        ("change", "a.b", [1, 2]),
        ("add", "c.d", [1, 2]),
        ("change", "e", [1, 2]),
        ("change", "a.b", [1, 2]),
    ]
