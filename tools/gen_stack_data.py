#!/usr/bin/env python3
"""Write src/verl_preflight/data/stack/*.json from the stack's real sources.

Input: a directory laid out like ../shared/data/stack/ —
  megatron-core/core_v<version>/megatron/core/{model_parallel_config.py,transformer/transformer_config.py}
  mindspeed/<branch>/mindspeed/features_manager/**.py
and, with --megatron-wheels DIR, the megatron-core releases on PyPI (the wheels
`make setup` downloads: megatron_core-<version>-*.whl), for the versions the
directory above has no tag of.
Output, one file per version or branch:
  megatron-core-<version>.json  the TransformerConfig / MLATransformerConfig /
                                ModelParallelConfig fields with their annotations
  mindspeed-<branch>.json       the argument dests MindSpeed's features register

The sources are read with `ast` (see verl_preflight/sources/); nothing is
imported. `--check` compares instead of writing and exits 1 when a file is
stale, missing or extra.

    python tools/gen_stack_data.py [--stack DIR] [--megatron-wheels DIR] [--out DIR] [--check]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

from verl_preflight.sources.megatron import SOURCE_FILES, extract_classes, normalize_version  # noqa: E402
from verl_preflight.sources.mindspeed import FEATURES_DIR, extract_args  # noqa: E402

DEFAULT_STACK = os.path.join(os.path.dirname(ROOT), "shared", "data", "stack")
DEFAULT_OUT = os.path.join(ROOT, "src", "verl_preflight", "data", "stack")
GENERATOR = "tools/gen_stack_data.py"


def _dump(document: dict) -> str:
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


def render(stack_dir: str) -> dict[str, str]:
    """{file name: JSON text} for every megatron-core tag and MindSpeed branch under stack_dir."""
    out: dict[str, str] = {}
    mc_dir = os.path.join(stack_dir, "megatron-core")
    for tag in sorted(os.listdir(mc_dir)) if os.path.isdir(mc_dir) else []:
        classes = extract_classes(os.path.join(mc_dir, tag))
        if classes is None:
            raise SystemExit(f"{mc_dir}/{tag}: no TransformerConfig dataclass found")
        version = normalize_version(tag)
        out[f"megatron-core-{version}.json"] = _dump(
            {
                "megatron_core": version,
                "source": f"Megatron-LM tag {tag}: megatron/core/model_parallel_config.py, "
                "megatron/core/transformer/transformer_config.py",
                "generator": GENERATOR,
                "classes": classes,
            }
        )
    ms_dir = os.path.join(stack_dir, "mindspeed")
    for branch in sorted(os.listdir(ms_dir)) if os.path.isdir(ms_dir) else []:
        features = os.path.join(ms_dir, branch, FEATURES_DIR)
        if not os.path.isdir(features):
            raise SystemExit(f"{features}: missing")
        out[f"mindspeed-{branch}.json"] = _dump(
            {
                "mindspeed": branch,
                "source": f"MindSpeed branch {branch}: register_args of mindspeed/features_manager/**",
                "generator": GENERATOR,
                "args": extract_args(features),
            }
        )
    return out


WHEEL = re.compile(r"megatron_core-(\d+\.\d+\.\d+)-.*\.whl$")
WHEEL_SOURCE = "megatron-core {version} wheel from PyPI"


def render_wheels(wheels_dir: str, have: set[str]) -> dict[str, str]:
    """{file name: JSON text} for each megatron-core wheel in wheels_dir whose version `have` lacks."""
    out: dict[str, str] = {}
    for name in sorted(os.listdir(wheels_dir)):
        m = WHEEL.match(name)
        if not m or f"megatron-core-{m.group(1)}.json" in have:
            continue
        with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(os.path.join(wheels_dir, name)) as wheel:
            for parts in SOURCE_FILES:
                member = "/".join(parts)
                if member in wheel.namelist():
                    wheel.extract(member, tmp)
            classes = extract_classes(tmp)
        if classes is None:
            raise SystemExit(f"{wheels_dir}/{name}: no TransformerConfig dataclass found")
        out[f"megatron-core-{m.group(1)}.json"] = _dump(
            {
                "megatron_core": m.group(1),
                "source": WHEEL_SOURCE.format(version=m.group(1))
                + ": megatron/core/model_parallel_config.py, megatron/core/transformer/transformer_config.py",
                "generator": GENERATOR,
                "classes": classes,
            }
        )
    return out


def _from_wheel(path: str) -> bool:
    try:
        with open(path, encoding="utf-8") as fh:
            return "wheel from PyPI" in json.load(fh).get("source", "")
    except (OSError, ValueError):
        return False


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--stack", default=DEFAULT_STACK, help="the sources (default: ../shared/data/stack)")
    p.add_argument("--megatron-wheels", metavar="DIR", help="megatron-core wheels from PyPI (megatron_core-X-*.whl)")
    p.add_argument("--out", default=DEFAULT_OUT, help="where the JSON files go")
    p.add_argument("--check", action="store_true", help="compare with the files in --out; write nothing")
    args = p.parse_args(argv)
    if not os.path.isdir(args.stack):
        print(f"gen_stack_data: {args.stack} is not a directory", file=sys.stderr)
        return 2
    files = render(args.stack)
    if args.megatron_wheels:
        files.update(render_wheels(args.megatron_wheels, set(files)))
    present = {f for f in os.listdir(args.out) if f.endswith(".json")} if os.path.isdir(args.out) else set()
    ours = {f for f in present if f.startswith(("megatron-core-", "mindspeed-"))}
    if not args.megatron_wheels:  # the files made from wheels are not this run's to judge
        ours = {f for f in ours if not _from_wheel(os.path.join(args.out, f))}
    if args.check:
        bad = []
        for name, text in files.items():
            path = os.path.join(args.out, name)
            try:
                with open(path, encoding="utf-8") as fh:
                    if fh.read() != text:
                        bad.append(f"{name}: stale")
            except FileNotFoundError:
                bad.append(f"{name}: missing")
        bad += [f"{name}: not generated from {args.stack}" for name in sorted(ours - set(files))]
        for line in bad:
            print(f"gen_stack_data: {line}", file=sys.stderr)
        return 1 if bad else 0
    os.makedirs(args.out, exist_ok=True)
    for name in sorted(ours - set(files)):
        os.remove(os.path.join(args.out, name))
    for name, text in files.items():
        with open(os.path.join(args.out, name), "w", encoding="utf-8") as fh:
            fh.write(text)
        print(f"wrote {os.path.relpath(os.path.join(args.out, name), ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
