"""preflight: the model folder and data files a launch names, missing on nodes of the Ray cluster."""

from __future__ import annotations

import os

from ...core.values import is_unknown
from ...target.cluster import NO_FIXTURE, of_run
from .. import Rule

MODEL_KEYS = ("actor_rollout_ref.model.path", "critic.model.path")
DATA_KEYS = ("data.train_files", "data.val_files")


class ClusterPaths(Rule):
    id = "cluster-paths"
    severity = "error"
    stage = "policy"
    scope = "launch"
    summary = (
        "preflight: a model folder (actor_rollout_ref.model.path, critic.model.path) missing or without its "
        "config.json on a node of the Ray cluster, or a data file (data.train_files, data.val_files) on none of them "
        "(an error) or on some only (a warning)"
    )
    why = (
        "Every worker loads the model from the path as written, on its own node: a folder that exists on the "
        "head node only fails the workers of the other nodes (transformers reads a path it cannot find as a "
        "Hugging Face hub id, and fails to download it or downloads another model). The data files are read by "
        "verl's TaskRunner, a Ray actor placed on any node: a file on some nodes only fails the runs where it "
        "lands elsewhere. Absolute paths only (a relative one resolves in each worker's own folder; `org/name` "
        "is a hub id)."
    )
    ground_truth = (
        "verl 0.9.1 utils/fs.py:195-230 (copy_to_local returns a local path as is), trainer/main_ppo.py:92 "
        "(TaskRunner.remote(): no node named); transformers AutoConfig.from_pretrained (a missing folder is a hub id)"
    )
    bad = "actor_rollout_ref.model.path=/data/models/Qwen3-8B, present on the head node only"
    good = "the model folder on shared storage every node mounts"
    no_fixture = NO_FIXTURE

    def check_launch(self, view, ctx):
        cluster, nodes = of_run(ctx)
        if not nodes:
            return []
        wanted = {key: _paths(view.value(key)) for key in (*MODEL_KEYS, *DATA_KEYS)}
        cluster.path_facts([p for paths in wanted.values() for p in paths])
        found = []
        for key, paths in wanted.items():
            for path in paths:
                facts = {node.label: node.paths.get(path) for node in nodes}
                if any(f is None for f in facts.values()):
                    continue  # (a node did not answer the second round: not known)
                absent = [label for label, f in facts.items() if not (f["exists"] and f["readable"])]
                if key in MODEL_KEYS:
                    bare = [label for label, f in facts.items() if label not in absent and "config" not in f]
                    if absent:
                        found.append(
                            self._missing(
                                view,
                                key,
                                path,
                                absent,
                                cluster,
                                "its workers there fail to load the model (transformers takes the path for a hub id)",
                            )
                        )
                    elif bare:
                        found.append(
                            self._missing(
                                view,
                                key,
                                path,
                                bare,
                                cluster,
                                "the folder has no config.json there: the workers fail to load the model",
                                what="config.json",
                            )
                        )
                elif absent:
                    everywhere = len(absent) == len(facts)
                    outcome = (
                        "verl's TaskRunner fails to read it wherever Ray places it"
                        if everywhere
                        else "verl's TaskRunner, placed by Ray on any node, fails where it lands there"
                    )
                    found.append(
                        self._missing(
                            view, key, path, absent, cluster, outcome, at_most=None if everywhere else "warning"
                        )
                    )
        return found

    def _missing(self, view, key, path, labels, cluster, outcome, what="path", at_most=None):
        where = "node " + labels[0] if len(labels) == 1 else "nodes " + ", ".join(labels)
        subject = f"{path}/config.json" if what == "config.json" else path
        message = (
            f"{key}={path}: {subject} is not readable on {where} of the Ray cluster at {cluster.address}: {outcome}"
        )
        return self.finding(view.where(key), message, key, at_most=at_most)


def _paths(value) -> list[str]:
    """The absolute paths a value names (a path, a list of them, or `[a,b]` as Hydra reads it)."""
    items = value if isinstance(value, (list, tuple)) else [value]
    out = []
    for item in items:
        if isinstance(item, str) and not is_unknown(item) and os.path.isabs(item) and "${" not in item:
            out.append(os.path.normpath(item))
    return out
