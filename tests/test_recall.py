"""Recall on launch mistakes verl users really reported (tests/recall/).

Each case is a minimal script of our own, rebuilt from a public report, at the
verl release it fails on; the line that writes the mistake carries
`# recall: error` (or `# recall: warning`). tests/recall/cases.yaml says where
each was reported and how we confirmed that it fails:

- `hydra`: the script's launch arguments (taken from real bash, with a stub
  `python3`) do not compose against that release's config tree, and they do
  once the marked overrides are left out;
- `code: PKG VERSION path:LINE`: the launch composes on that release, and that
  line of the package's wheel is the assert or raise that fires (which check
  fires first was read from the code, not run);
- `reads: verl VERSION path:LINE`: for a mistake no check of verl catches (an
  empty value from an unset variable, a misspelt boolean, a scalar where a
  section belongs): the launch composes on that release, and that line of the
  wheel is where the marked setting's value goes wrong: it names the setting,
  and either takes a branch on it, does arithmetic it breaks, or declares the
  dataclass field its value does not fit.

`test_recall` runs the validator on every in-reach case with `--verl VERSION`
(offline: VERL_PREFLIGHT_WHEELS is .venv/wheels) and counts a case caught when
a finding of at least the marked severity is on a marked line. It prints the
recall overall and by family (`pytest -s`) and holds it at or above FLOOR, a
ratchet to raise as checks are added. Wheels come from `make setup`; a case
whose wheel is not there is skipped with a one-line reason.
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import zipfile

import pytest
import yaml
from conftest import ROOT

pytestmark = pytest.mark.slow  # the slow tier (make test-slow): the reported launch mistakes, each checked

RECALL = os.path.join(ROOT, "tests", "recall")
CASES_DIR = os.path.join(RECALL, "cases")
WHEELS = os.path.join(ROOT, ".venv", "wheels")
FAMILIES = {
    "hydra-key",
    "batch",
    "micro-batch",
    "layout",
    "seqlen",
    "registry-value",
    "value-type",
    "backend-option",
    "bash",
    "other",
}
SEVERITY = {"info": 0, "warning": 1, "error": 2}
MARK = re.compile(r"#\s*recall:\s*(error|warning)\b")
CODE = re.compile(r"^code: (verl|megatron-core) (\S+) (\S+):(\d+)$")
READS = re.compile(r"^reads: verl (\S+) (\S+):(\d+)$")

# Cases caught when this ratchet was last raised (measured with test_recall).
FLOOR = 40

with open(os.path.join(RECALL, "cases.yaml"), encoding="utf-8") as fh:
    MANIFEST = yaml.safe_load(fh)["cases"]
IN_REACH = [c for c in MANIFEST if c["in_reach"]]


def _script(case: dict) -> str:
    return os.path.join(CASES_DIR, case["id"] + ".sh")


def _marks(path: str) -> dict[int, str]:
    """Line number -> marked severity."""
    marks = {}
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            m = MARK.search(line)
            if m:
                marks[number] = m.group(1)
    return marks


def _verl_wheel(version: str) -> str | None:
    found = sorted(glob.glob(os.path.join(WHEELS, f"verl-{version}-*.whl")))
    return found[0] if found else None


def _megatron_wheel(version: str) -> str | None:
    found = sorted(glob.glob(os.path.join(WHEELS, "megatron-core", f"megatron_core-{version}-*.whl")))
    return found[0] if found else None


def _need_verl(version: str) -> str:
    wheel = _verl_wheel(str(version))
    if wheel is None:
        pytest.skip(f"no verl {version} wheel in .venv/wheels (make setup downloads it)")
    return wheel


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory):
    """verl/ of a release's wheel, unpacked once per version into a temporary folder."""
    roots: dict[str, str] = {}

    def get(version: str) -> str:
        if version not in roots:
            wheel = _need_verl(version)
            root = str(tmp_path_factory.mktemp(f"verl-{version}"))
            with zipfile.ZipFile(wheel) as zf:
                zf.extractall(root, [m for m in zf.namelist() if m.startswith("verl/")])
            roots[version] = root
        return roots[version]

    return get


def _launch_argv(path: str, tmp_path) -> list[str]:
    """What real bash hands python3 when the case script runs (a stub records it)."""
    stub_dir = tmp_path / "stub"
    stub_dir.mkdir()
    out = tmp_path / "argv"
    stub = stub_dir / "python3"
    stub.write_text('#!/bin/sh\nprintf \'%s\\0\' "$@" > "$RECALL_ARGV"\n')
    stub.chmod(0o755)
    env = {
        "PATH": f"{stub_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(tmp_path),
        "RECALL_ARGV": str(out),
    }
    subprocess.run(["bash", path], env=env, check=True, capture_output=True, timeout=60)
    return out.read_bytes().decode().split("\0")[:-1]


def _marked_words(path: str) -> set[str]:
    """The overrides the marked lines write (case scripts keep one plain word a line)."""
    words = set()
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    for number in _marks(path):
        word = lines[number - 1].split("#", 1)[0].strip()
        assert word and " " not in word, f"{path}:{number}: a marked line must hold one plain override"
        words.add(word)
    return words


def _compose(root: str, argv: list[str]) -> Exception | None:
    """Compose a `python3 -m MODULE ARGS` launch with Hydra as the entry point would."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    assert argv[0] == "-m", argv
    module, args = argv[1], argv[2:]
    config_path, config_name, overrides = "config", "ppo_trainer", []
    for arg in args:
        if arg.startswith("--config-path="):
            config_path = arg.split("=", 1)[1]
        elif arg.startswith("--config-name="):
            config_name = arg.split("=", 1)[1]
        else:
            overrides.append(arg)
    config_name = config_name.removesuffix(".yaml")
    module_dir = os.path.join(root, *module.split(".")[:-1])
    config_dir = os.path.join(module_dir, config_path)
    GlobalHydra.instance().clear()
    cwd = os.getcwd()
    os.chdir(root)  # searchpath entries like file://verl/trainer/config are relative to the launch folder
    try:
        with initialize_config_dir(config_dir=config_dir, version_base=None):
            compose(config_name=config_name, overrides=overrides)
    except Exception as err:  # noqa: BLE001 - any composition failure is the outcome we look for
        return err
    finally:
        os.chdir(cwd)
        GlobalHydra.instance().clear()
    return None


def test_manifest_and_cases_agree():
    ids = [c["id"] for c in IN_REACH]
    assert len(ids) == len(set(ids))
    on_disk = {os.path.basename(p)[:-3] for p in glob.glob(os.path.join(CASES_DIR, "*.sh"))}
    assert on_disk == set(ids)
    for case in MANIFEST:
        assert case["family"] in FAMILIES, case
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", case["source"]["repo"]), case
        assert case["source"]["url"].startswith("https://github.com/"), case
        if not case["in_reach"]:
            assert case.get("why") and "id" not in case, case
            continue
        assert case["confirmed"] == "hydra" or CODE.match(case["confirmed"]) or READS.match(case["confirmed"]), case
        assert _marks(_script(case)), f"{case['id']}: no `# recall:` line"
        with open(_script(case), encoding="utf-8") as fh:
            assert fh.read().rstrip().endswith('"$@"'), f'{case["id"]}: the launch does not end with "$@"'
    assert len(IN_REACH) >= 43


@pytest.mark.parametrize("case", [c for c in IN_REACH if c["confirmed"] == "hydra"], ids=lambda c: c["id"])
def test_hydra_confirmed_cases_do_not_compose(case, unpacked, tmp_path):
    root = unpacked(str(case["verl"]))
    argv = _launch_argv(_script(case), tmp_path)
    err = _compose(root, argv)
    assert err is not None, f"{case['id']}: composes on verl {case['verl']}"
    marked = _marked_words(_script(case))
    assert marked <= set(argv)
    assert _compose(root, [a for a in argv if a not in marked]) is None, "the marked overrides are not the cause"


@pytest.mark.parametrize("case", [c for c in IN_REACH if CODE.match(c["confirmed"])], ids=lambda c: c["id"])
def test_code_confirmed_cases_cite_an_assert_or_raise(case, unpacked, tmp_path):
    # the launch composes on its release, so what stops it is the cited check, past Hydra
    assert _compose(unpacked(str(case["verl"])), _launch_argv(_script(case), tmp_path)) is None
    package, version, path, line = CODE.match(case["confirmed"]).groups()
    wheel = _verl_wheel(version) if package == "verl" else _megatron_wheel(version)
    if wheel is None:
        pytest.skip(f"no {package} {version} wheel in .venv/wheels (make setup downloads it)")
    with zipfile.ZipFile(wheel) as zf:
        text = zf.read(path).decode("utf-8").splitlines()
    assert re.match(r"\s*(assert|raise)\b", text[int(line) - 1]), f"{path}:{line}: {text[int(line) - 1]!r}"


def _marked_keys(path: str) -> set[str]:
    """The last key component of each marked override (`a.b.c=v` and `+a.b.c=v` give `c`)."""
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    keys = set()
    for number in _marks(path):
        word = lines[number - 1].split("#", 1)[0].strip()
        keys.add(word.split("=", 1)[0].lstrip("+~").rsplit(".", 1)[-1])
    return keys


@pytest.mark.parametrize("case", [c for c in IN_REACH if READS.match(c["confirmed"])], ids=lambda c: c["id"])
def test_reads_confirmed_cases_cite_the_line_that_takes_the_value(case, unpacked, tmp_path):
    # the launch composes on its release; the cited line is where verl takes the marked setting
    assert _compose(unpacked(str(case["verl"])), _launch_argv(_script(case), tmp_path)) is None
    version, path, line = READS.match(case["confirmed"]).groups()
    assert version == str(case["verl"]), case
    with zipfile.ZipFile(_need_verl(version)) as zf:
        text = zf.read(path).decode("utf-8").splitlines()[int(line) - 1]
    keys = _marked_keys(_script(case))
    assert any(re.search(rf"\b{re.escape(k)}\b", text) for k in keys), f"{path}:{line} names none of {keys}: {text!r}"


def _caught(case: dict, findings: list[dict]) -> bool:
    """A finding of at least the marked severity at a marked line: its own place, or for a
    mistake of several settings (train_batch_size against the world) one of the related
    overrides it names."""
    marks = _marks(_script(case))
    script = _script(case)
    for f in findings:
        places = [(f["path"], f["line"])] + [(r["path"], r["line"]) for r in f.get("related", [])]
        for path, line in places:
            if os.path.abspath(path) == script and line in marks and SEVERITY[f["severity"]] >= SEVERITY[marks[line]]:
                return True
    return False


def test_recall(monkeypatch, capsys):
    from verl_preflight.app.cli import main

    monkeypatch.setenv("VERL_PREFLIGHT_WHEELS", WHEELS)
    monkeypatch.chdir(ROOT)  # case args name files relative to the repository
    results: dict[str, tuple[str, bool]] = {}
    skipped = []
    for case in IN_REACH:
        version = str(case["verl"])
        if _verl_wheel(version) is None:
            skipped.append(f"{case['id']}: no verl {version} wheel in .venv/wheels")
            continue
        code = main(["--format", "json", "--verl", version, *case.get("args", []), _script(case)])
        out = capsys.readouterr().out
        assert code in (0, 1), f"{case['id']}: the validator exited {code}"
        results[case["id"]] = (case["family"], _caught(case, json.loads(out)["findings"]))
    if not results:
        pytest.skip("no verl wheel in .venv/wheels (make setup downloads them)")
    caught = sum(ok for _, ok in results.values())
    with capsys.disabled():
        print(f"\nrecall: {caught}/{len(results)} in-reach reported mistakes caught at the marked line")
        for family in sorted({f for f, _ in results.values()}):
            rows = [ok for f, ok in results.values() if f == family]
            print(f"  {family:15} {sum(rows)}/{len(rows)}")
        for cid, (family, ok) in results.items():
            if not ok:
                print(f"  missed: {cid} ({family})")
        for line in skipped:
            print(f"  skipped: {line}")
    assert caught >= FLOOR
