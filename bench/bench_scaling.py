#!/usr/bin/env python3
"""Scaling: 1, 10, 100, 1,000 scripts (variants of the examples), cold and warm.

Each run is a subprocess (interpreter start included); wall time and the peak
resident memory of the run (the largest of the process and its workers) are
printed as a table, with seconds per script and per profile, so that linear
growth can be read off. Nothing is asserted.

    python bench/bench_scaling.py [--sizes 1,10,100,1000] [--jobs N] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

from page import write_page

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(ROOT, "tools", "validate_scripts.py")
EXAMPLES = os.path.join(ROOT, "examples")


def make_corpus(dest: str, n: int) -> None:
    sources = sorted(
        os.path.join(d, f)
        for d, _, files in os.walk(EXAMPLES)
        for f in files
        if f.endswith(".sh") and not f.startswith("install_")  # launch scripts only: the installer has no launch
    )
    for i in range(n):
        src = sources[i % len(sources)]
        with open(src, encoding="utf-8") as fh:
            text = fh.read()
        # a different default per copy, so no two scripts are the same text
        text = text.replace("TOTAL_EPOCHS:-", f"TOTAL_EPOCHS:-{i % 50 + 1}", 1)
        with open(os.path.join(dest, f"s{i:04d}_{os.path.basename(src)}"), "w", encoding="utf-8") as fh:
            fh.write(text)


def measure(cmd, env) -> tuple[float, float, subprocess.CompletedProcess]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, max(peak, before) / 1024, proc


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1,10,100,1000")
    ap.add_argument("--jobs", default="0", help="-j for the validator (0: CPU count)")
    ap.add_argument("--markdown", metavar="FILE", help="also write the table as a Markdown page (make bench: docs/)")
    args = ap.parse_args()
    rows = []
    for n in [int(x) for x in args.sizes.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            corpus = os.path.join(tmp, "corpus")
            os.makedirs(corpus)
            make_corpus(corpus, n)
            env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache"))
            jobs = ["-j", args.jobs] if args.jobs != "0" else []  # no -j: the CPU count
            cmd = [sys.executable, TOOL, *jobs, "--format", "json", corpus]
            cold, cold_mem, proc = measure(cmd, env)
            if proc.returncode not in (0, 1):
                sys.exit(f"validate-scripts failed ({proc.returncode}): {proc.stderr.strip()}")
            profiles = sum(len(s["profiles"]) for s in json.loads(proc.stdout)["scripts"])
            warm, warm_mem, _ = measure(cmd, env)
            rows.append((n, profiles, cold, warm, cold_mem, warm_mem))
            shutil.rmtree(corpus)
    print(f"{'scripts':>7} {'profiles':>8} {'cold s':>7} {'warm s':>7} {'warm ms/profile':>15} {'peak MB':>8}")
    for n, profiles, cold, warm, cold_mem, warm_mem in rows:
        print(
            f"{n:>7} {profiles:>8} {cold:>7.2f} {warm:>7.2f} {1000 * warm / profiles:>15.1f} "
            f"{max(cold_mem, warm_mem):>8.0f}"
        )
    print("(peak MB: the largest resident set of any process measured so far in this run)")
    if args.markdown:
        about = (
            "bench/bench_scaling.py: variants of the examples' launch scripts, each run a subprocess with an empty "
            "cache, -j the CPU count; peak MB is the largest resident set of any process measured so far in the run"
        )
        header = ["scripts", "profiles", "cold s", "warm s", "warm ms/profile", "peak MB"]
        table = [
            [f"{n:,}", f"{p:,}", f"{c:.2f}", f"{w:.2f}", f"{1000 * w / p:.1f}", f"{max(cm, wm):.0f}"]
            for n, p, c, w, cm, wm in rows
        ]
        write_page(args.markdown, ROOT, "Scaling", about, header, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
