"""Write src/verl_preflight/data/verl_key_history.json: which verl releases have each config key.

Usage: python tools/verl_key_history.py [WHEELS_DIR]   (default .venv/wheels, which `make setup` fills)

For each verl wheel in the folder (never installed: its `verl/trainer/config` is unpacked to a
temporary folder), the root configs ppo_trainer and ppo_megatron_trainer are composed with Hydra
as a launch composes them (defaults only) and every key path of the result is recorded. The file
keeps, per root config, each key that some release lacks, with the first and last release (in
version order) that has it: what `override-missing-key` says of a key this verl lacks ("verl
0.2.0.post2 had it; removed in 0.3.0.post1"). tests/test_key_history.py checks the file against
the wheels.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))
OUT = os.path.join(ROOT, "src", "verl_preflight", "data", "verl_key_history.json")
ROOTS = ("ppo_trainer", "ppo_megatron_trainer")


def _version_key(v: str):
    from packaging.version import Version

    return Version(v)


def _keys(tree, prefix="") -> set[str]:
    out = set()
    if isinstance(tree, dict):
        for k, v in tree.items():
            if not isinstance(k, str) or (not prefix and k == "hydra"):
                continue
            path = f"{prefix}{k}"
            out.add(path)
            out |= _keys(v, path + ".")
    return out


def release_keys(wheel: str) -> dict[str, set[str]]:
    """{root config: every key path of its composition} of one release's wheel."""
    from omegaconf import OmegaConf

    from verl_preflight.hydra_stage.tree import Tree, compose_raw

    out = {}
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(wheel) as zf:
        zf.extractall(tmp, [n for n in zf.namelist() if n.startswith("verl/trainer/config/")])
        config = os.path.join(tmp, "verl", "trainer", "config")
        for name in ROOTS:
            if not os.path.isfile(os.path.join(config, f"{name}.yaml")):
                continue
            cfg = compose_raw(Tree(config), name, [])
            out[name] = _keys(OmegaConf.to_container(cfg, resolve=False, throw_on_missing=False))
    return out


def history(wheels_dir: str) -> dict:
    wheels = {}
    for f in os.listdir(wheels_dir):
        if f.startswith("verl-") and f.endswith(".whl"):
            wheels[f.split("-")[1]] = os.path.join(wheels_dir, f)
    releases = sorted(wheels, key=_version_key)
    keys = {v: release_keys(wheels[v]) for v in releases}
    doc = {"releases": releases, "keys": {}}
    for name in ROOTS:
        having = [v for v in releases if name in keys[v]]
        every = set().union(*(keys[v][name] for v in having)) if having else set()
        table = {}
        for key in sorted(every):
            has = [v for v in having if key in keys[v][name]]
            if len(has) < len(having):
                table[key] = [has[0], has[-1]]
        doc["keys"][name] = {"releases": having, "partial": table}
    return doc


def main(argv: list[str]) -> int:
    wheels_dir = argv[0] if argv else os.path.join(ROOT, ".venv", "wheels")
    doc = history(wheels_dir)
    with open(OUT, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=0, sort_keys=True)
        fh.write("\n")
    print(f"{OUT}: {len(doc['releases'])} releases, " + ", ".join(
        f"{n}: {len(d['partial'])} keys some release lacks" for n, d in doc["keys"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
