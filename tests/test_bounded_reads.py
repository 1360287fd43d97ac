"""Bounded on every byte it reads (issue 45): the files a project plants where the tool reads
them (a vendored verl's sources, the cache folder) are read by one bounded reader
(bounded_read.py): a link to /dev/zero or a FIFO is refused and named, never read or waited on.

Each case runs the command as a user does, under an address-space limit and a timeout: before
the reader, the /dev/zero link took 3.8 GB and ended in an internal error, a FIFO hung the run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT

from verl_preflight.core.config_location import installed_root

TOOL = os.path.join(ROOT, "tools", "validate_scripts.py")
LAUNCH = (
    "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 "
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 trainer.total_epochs=2\n"
)
LIMIT = 1_500_000_000  # bytes of address space: the run needs a fifth of it


def _bounded(argv, env) -> subprocess.CompletedProcess:
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))

    return subprocess.run(
        [sys.executable, TOOL, *argv], capture_output=True, text=True, env=env, timeout=120, preexec_fn=limit
    )


@pytest.fixture
def planted(tmp_path):
    """A project that vendors verl, with actor.py a link to /dev/zero and rollout.py a FIFO."""
    project = tmp_path / "proj"
    shutil.copytree(installed_root(), project / "verl", ignore=shutil.ignore_patterns("__pycache__"))
    (project / ".git").mkdir()
    config = project / "verl" / "workers" / "config"
    (config / "actor.py").unlink()
    os.symlink("/dev/zero", config / "actor.py")
    (config / "rollout.py").unlink()
    os.mkfifo(config / "rollout.py")
    (project / "run.sh").write_text(LAUNCH)
    return project


def test_a_vendored_source_that_is_a_device_or_a_fifo_is_named_not_read(planted, tmp_path):
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    for _ in range(2):  # cold, then warm from the cache: the same notes
        proc = _bounded([str(planted / "run.sh")], env)
        assert proc.returncode == 0 and "internal error" not in proc.stderr, proc.stderr
        for name in ("actor.py", "rollout.py"):
            assert f"{planted}/verl/workers/config/{name}: note: not read: not a regular file" in proc.stdout, proc.stdout


def test_a_fifo_in_the_cache_folder_is_a_miss(tmp_path):
    """A CI cache restored from a tar keeps FIFOs: an entry that is one is a miss, not a hang."""
    script = tmp_path / "run.sh"
    script.write_text(LAUNCH)
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    first = _bounded([str(script)], env)
    root = tmp_path / "cache" / "verl-preflight"
    entries = [p for p in root.rglob("*.json") if p.is_file()]
    assert first.returncode == 0 and entries, first.stderr
    for entry in entries:
        entry.unlink()
        os.mkfifo(entry)
    again = _bounded([str(script)], env)
    assert (again.returncode, again.stdout.splitlines()[-1].split(" (")[0]) == (
        0, first.stdout.splitlines()[-1].split(" (")[0]
    ), again.stderr


def test_a_cache_subfolder_replaced_by_a_link_is_not_written_through(tmp_path):
    """`results/` (and the others) replaced by a link to a folder of the attacker's choosing:
    the tool writes nothing there and still reports as before."""
    script = tmp_path / "run.sh"
    script.write_text(LAUNCH)
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    first = _bounded([str(script)], env)
    root = tmp_path / "cache" / "verl-preflight"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    linked = [p for p in root.iterdir() if p.is_dir()]
    assert linked, list(root.iterdir())
    for folder in linked:
        shutil.rmtree(folder)
        os.symlink(elsewhere, folder)
    script.write_text(LAUNCH.replace("total_epochs=2", "total_epochs=3"))  # a new result to keep
    again = _bounded([str(script)], env)
    assert again.returncode == first.returncode and "internal error" not in again.stderr, again.stderr
    assert list(elsewhere.iterdir()) == []


def _vendored_config(tmp_path):
    project = tmp_path / "proj"
    shutil.copytree(os.path.join(installed_root(), "trainer", "config"), project / "verl" / "trainer" / "config")
    (project / "verl" / "__init__.py").write_text("")  # a package: what `import verl` there loads
    (project / ".git").mkdir()
    (project / "run.sh").write_text(LAUNCH)
    return project, project / "verl" / "trainer" / "config"


def test_a_yaml_alias_bomb_in_a_vendored_config_is_refused_by_name(tmp_path):
    """8 levels of 10 aliases: 10**8 nodes from 300 bytes; Hydra's compose hung on it (over 120 s)."""
    project, config = _vendored_config(tmp_path)
    bomb = ["bomb0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    bomb += [f"bomb{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    with open(config / "ppo_trainer.yaml", "a", encoding="utf-8") as fh:
        fh.write("\n" + "\n".join(bomb) + "\n")
    proc = _bounded(["--no-cache", str(project / "run.sh")], dict(os.environ))
    assert proc.returncode == 1 and "internal error" not in proc.stderr, proc.stderr
    assert f"{config}/ppo_trainer.yaml: not read: its aliases expand past 1,000,000 nodes" in proc.stdout, proc.stdout


def test_a_yaml_file_that_is_a_fifo_is_refused_by_name(tmp_path):
    project, config = _vendored_config(tmp_path)
    (config / "actor" / "actor.yaml").unlink()
    os.mkfifo(config / "actor" / "actor.yaml")
    proc = _bounded(["--no-cache", str(project / "run.sh")], dict(os.environ))
    assert "internal error" not in proc.stderr, proc.stderr
    assert f"{config}/actor/actor.yaml: not read: not a regular file" in proc.stdout, proc.stdout


def test_aliases_are_counted_not_expanded():
    from verl_preflight.core.yaml_read import MAX_EXPANDED_NODES, expanded_nodes

    # the mapping, key a, [1, 2] (3 nodes), key b, and [*x, *x]: 1 + 3 + 3
    assert expanded_nodes("a: &x [1, 2]\nb: [*x, *x]\n") == 1 + 1 + 3 + 1 + 7
    assert expanded_nodes("a: &x [*x]\n") is None  # a document that contains itself
    wide = "a0: &a0 [" + ", ".join(["x"] * 100) + "]\n" + "a1: &a1 [" + ", ".join(["*a0"] * 100) + "]\n"
    assert expanded_nodes(wide) is not None
    assert expanded_nodes(wide + "a2: &a2 [" + ", ".join(["*a1"] * 100) + "]\n") is None  # 10**6 < its nodes
    assert MAX_EXPANDED_NODES == 1_000_000


# ---- the evaluator of verl's checks counts size, not only steps (item 2) --------------------

GROWING = [
    'x = "{:>2000000000}".format("")',
    'x = f"{1:>2000000000}"',
    'x = "%02000000000d" % 1',
    "x = 2 ** 64\nfor _ in range(30):\n    x = x * x",
    "x = 3\nfor _ in range(12):\n    x = x ** 64",
    's = "ab"\nfor _ in range(60):\n    s = s + s',
    "s = [1, 2]\nfor _ in range(60):\n    s = s + s",
    's = "abcdefgh" * 1000\nt = s.replace("", s)',
    "r = list(range(10 ** 9))",
]


@pytest.mark.parametrize("code", GROWING, ids=range(len(GROWING)))
def test_a_value_that_grows_past_the_budget_is_unknown_not_built(code):
    """Each of these took gigabytes or minutes (issue 45's table); under a 1.5 GB limit, each
    is now an unknown, within the step budget, and the check goes on (`done` is set after)."""
    import resource

    body = "def f(self):\n" + "".join("    " + ln + "\n" for ln in (code + "\ndone = 1").splitlines())
    script = "import ast\n" + (
        "from verl_preflight.sources.pyeval import UNKNOWN, Evaluator, Obj, V\n"
        "class View:\n    tree = {}\n    def raw(self, k): return None\n    def value(self, k): return None\n"
        "    def setting(self, k): return None\n"
        f"code = {body!r}\n"
        "ev = Evaluator(View())\n"
        "ev.run(ast.parse(code).body[0].body, {'self': V(Obj({}))})\n"
        "big = [k for k, v in ev.locals.items() if v.value is not UNKNOWN and len(repr(v.value)) > 2_000_000]\n"
        "print(ev.locals['done'].value, big)\n"
    )

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))

    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, preexec_fn=limit,
        env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src")),
    )
    assert proc.returncode == 0 and proc.stdout.split() == ["1", "[]"], proc.stderr[-2000:]


# ---- line breaks in what the command says of its own (item 6) ------------------------------


def test_a_path_with_a_line_break_cannot_start_a_workflow_command(capsys):
    from verl_preflight.app.cli import main

    assert main(["--format", "github", "no\n::error::such.sh"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no\\n::error::such.sh" in err, err


def test_a_version_with_a_final_line_break_is_no_version(capsys):
    from verl_preflight.app.cli import main

    assert main(["--verl", "0.9.1\n", os.path.join(ROOT, "examples")]) == 2
    assert "--verl '0.9.1\\n': not a version number" in capsys.readouterr().err


def test_a_vendored_module_nested_past_the_parser_is_that_modules_not_the_scripts(tmp_path):
    """`X = 1+1+...` 200,000 times in a vendored actor.py: ast.parse raises RecursionError. It was
    reported as the script's ('not checked: the script nests too deeply'); the module is named
    as not read, cold and when the result is replayed from the cache."""
    project = tmp_path / "proj"
    shutil.copytree(installed_root(), project / "verl", ignore=shutil.ignore_patterns("__pycache__"))
    (project / ".git").mkdir()
    actor = project / "verl" / "workers" / "config" / "actor.py"
    actor.write_text(actor.read_text() + "\nX = " + "+".join(["1"] * 200_000) + "\n")
    (project / "run.sh").write_text(LAUNCH)
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    note = f"{actor}: note: not read: it nests too deeply for Python's parser (the checks that need it are skipped)"
    for _ in range(2):  # cold, then warm
        proc = _bounded([str(project / "run.sh")], env)
        assert proc.returncode == 0 and "nests too deeply to follow" not in proc.stdout, proc.stdout + proc.stderr
        assert proc.stdout.count(note) == 1, proc.stdout


# ---- the language server ends when told (item 5, in part) -----------------------------------


def _frame(obj) -> bytes:
    import json

    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


@pytest.mark.slow
def test_the_language_server_exits_when_told_and_refuses_requests_after_shutdown(tmp_path):
    """`exit` while a long check runs (a script of 700,000 commands: seconds of work) ends the
    server then, not when the check ends: the check keeps no result. A request after `shutdown`
    gets InvalidRequest (-32600); pygls left it unanswered."""
    import json

    script = tmp_path / "long.sh"
    script.write_text(":;" * 700_000 + "\n" + LAUNCH)
    uri = script.as_uri()
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"), PYTHONPATH=os.path.join(ROOT, "src"))
    server = subprocess.Popen(
        [sys.executable, "-m", "verl_preflight", "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, env=env, cwd=tmp_path,
    )
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "shellscript", "version": 1, "text": script.read_text()}}},
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
        {"jsonrpc": "2.0", "id": 3, "method": "textDocument/hover",
         "params": {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    out, _ = server.communicate(b"".join(_frame(m) for m in messages), timeout=120)
    assert server.returncode == 0
    replies = {}
    for chunk in out.split(b"Content-Length: ")[1:]:
        body = json.loads(chunk.split(b"\r\n\r\n", 1)[1])
        if "id" in body:
            replies[body["id"]] = body
    assert replies[2].get("result", "") is None
    assert replies[3]["error"]["code"] == -32600, replies
    results = tmp_path / "cache" / "verl-preflight" / "results"
    assert not (results.is_dir() and list(results.glob("*.json"))), "the check ran to its end after exit"


def test_a_message_declared_larger_than_the_cap_is_answered_with_an_error(tmp_path):
    """`Content-Length: 99999999999999`: pygls allocated it (MemoryError, the server gone, exit
    2); the body is read past, never held, and the request gets InvalidRequest with its id."""
    import json

    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    hello = _frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}})
    huge = b"Content-Length: 99999999999999\r\n\r\n" + b'{"jsonrpc": "2.0", "id": 7, "method": "textDocument/hover"}'
    server = subprocess.run(
        [sys.executable, "-m", "verl_preflight", "lsp", "--no-cache"], input=hello + huge, capture_output=True,
        env=env, cwd=tmp_path, timeout=120, preexec_fn=lambda: __import__("resource").setrlimit(
            __import__("resource").RLIMIT_AS, (LIMIT, LIMIT)),
    )
    assert "MemoryError" not in server.stderr.decode(), server.stderr[-500:]
    last = json.loads(server.stdout.split(b"\r\n\r\n")[-1])
    assert last["id"] == 7 and last["error"]["code"] == -32600, last


@pytest.mark.slow
def test_the_language_servers_memory_does_not_grow_with_checks(tmp_path):
    """A 20 MB document open while a script is edited: each check took a copy of it that the
    collector's thresholds kept, 20 MB a check (118 MB, then 961 MB after 40 checks). After the
    tenth check and after the 200th, the server's resident memory is within one copy."""
    import json
    import threading
    import time

    server = subprocess.Popen(
        [sys.executable, "-m", "verl_preflight", "lsp", "--no-cache"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, cwd=tmp_path, env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src")),
    )
    published: list = []

    def pump():
        buf = b""
        while chunk := server.stdout.read1(1 << 16):
            buf += chunk
            while b"\r\n\r\n" in buf:
                head, rest = buf.split(b"\r\n\r\n", 1)
                size = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
                if len(rest) < size:
                    break
                message, buf = json.loads(rest[:size]), rest[size:]
                if message.get("method") == "textDocument/publishDiagnostics":
                    published.append(message["params"].get("version"))

    def send(message):
        server.stdin.write(_frame(message))
        server.stdin.flush()

    def resident_mb() -> int:
        with open(f"/proc/{server.pid}/status", encoding="ascii") as fh:
            return int(next(ln for ln in fh if ln.startswith("VmRSS")).split()[1]) // 1024

    def checked(version):  # waits for the check's diagnostics (a bound, not a measure: 120 s)
        for _ in range(2400):
            if version in published:
                return
            time.sleep(0.05)
        raise AssertionError(f"no diagnostics for version {version}")

    threading.Thread(target=pump, daemon=True).start()
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}})
    send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": (tmp_path / "big.txt").as_uri(), "languageId": "plaintext", "version": 1,
        "text": "x" * (20 * 1024 * 1024)}}})
    uri = (tmp_path / "run.sh").as_uri()
    send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "shellscript", "version": 1, "text": LAUNCH}}})
    sizes = {}
    try:
        for version in range(2, 202):
            checked(version - 1)
            if version - 1 in (10, 200):
                sizes[version - 1] = resident_mb()
            send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": LAUNCH + f"# {version}\n"}]}})
    finally:
        server.kill()
        server.wait()
    assert sizes[200] - sizes[10] < 20, sizes
