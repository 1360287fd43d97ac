"""preflight: the model folder, data files and checkpoints a launch names, missing (or not writable) on nodes of the Ray cluster."""

from __future__ import annotations

import os

from ...core.values import is_unknown
from ...target.cluster import NO_FIXTURE, of_run
from .. import Rule

MODEL_KEYS = ("actor_rollout_ref.model.path", "critic.model.path")
DATA_KEYS = ("data.train_files", "data.val_files")
LATEST = "latest_checkpointed_iteration.txt"  # what resume_mode=auto looks for in default_local_dir (verl's find_latest_ckpt_path)


class ClusterPaths(Rule):
    id = "cluster-paths"
    severity = "error"
    stage = "policy"
    scope = "launch"
    summary = (
        "preflight: a model folder (actor_rollout_ref.model.path, critic.model.path) missing or without its "
        "config.json on a node of the Ray cluster, a data file (data.train_files, data.val_files) on none of them "
        "(an error) or on some only (a warning), the checkpoint trainer.resume_from_path names missing on a node, "
        "trainer.default_local_dir not writable on a node while trainer.save_freq saves there, or its checkpoint "
        "tracker on some nodes only under resume_mode=auto (a warning)"
    )
    why = (
        "Every worker loads the model from the path as written, on its own node: a folder that exists on the "
        "head node only fails the workers of the other nodes (transformers reads a path it cannot find as a "
        "Hugging Face hub id, and fails to download it or downloads another model). The data files are read by "
        "verl's TaskRunner, a Ray actor placed on any node: a file on some nodes only fails the runs where it "
        "lands elsewhere. Checkpoints are per node too: each worker loads its shards from "
        "resume_from_path/actor and saves them under default_local_dir on its own node; with resume_mode=auto "
        "the TaskRunner looks for latest_checkpointed_iteration.txt on the node it runs on, so a checkpoint on "
        "some nodes' local disks resumes or starts from scratch by where Ray places it. Absolute paths only (a "
        "relative one resolves in each worker's own folder; `org/name` is a hub id)."
    )
    ground_truth = (
        "verl 0.9.1 utils/fs.py:195-230 (copy_to_local returns a local path as is), trainer/main_ppo.py:92 "
        "(TaskRunner.remote(): no node named); transformers AutoConfig.from_pretrained (a missing folder is a hub "
        "id); trainer/ppo/ray_trainer.py:1052-1095 (_load_checkpoint: find_latest_ckpt_path of default_local_dir "
        "on the TaskRunner's node, 'Training from scratch' without it; resume_from_path + '/actor' loaded by every "
        "actor worker), :983-1030 and :1704 (_save_checkpoint by every worker when save_freq > 0); "
        "utils/checkpoint/checkpoint_manager.py:222-259 (the tracker latest_checkpointed_iteration.txt)"
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
        return found + self._checkpoints(view, cluster, nodes)

    def _checkpoints(self, view, cluster, nodes) -> list:
        """The checkpoint a launch resumes from, missing on nodes that run its workers; the folder
        it saves to, not writable there; `resume_mode=auto` finding a checkpoint on some nodes only."""
        mode = view.value("trainer.resume_mode")
        resume = _paths(view.value("trainer.resume_from_path")) if mode == "resume_path" else []
        saves = view.value("trainer.save_freq")
        local = _paths(view.value("trainer.default_local_dir"))
        latest = [os.path.join(p, LATEST) for p in local] if mode in ("auto", None) else []
        actor = [os.path.join(p, "actor") for p in resume]
        cluster.path_facts([*actor, *latest, *local])
        found = []
        for path in actor:
            facts = _facts(nodes, path)
            absent = [label for label, f in (facts or {}).items() if not (f["exists"] and f["readable"])]
            if absent:
                outcome = "the actor workers there fail to load the checkpoint (their load_checkpoint of this folder)"
                found.append(self._missing(view, "trainer.resume_from_path", path, absent, cluster, outcome))
        for path in latest:
            facts = _facts(nodes, path)
            has = sorted(label for label, f in (facts or {}).items() if f["exists"])
            if has and len(has) < len(facts):
                key = "trainer.default_local_dir"
                message = (
                    f"{key}={os.path.dirname(path)}: {LATEST} is there on node{'s' if len(has) > 1 else ''} "
                    f"{', '.join(has)} only, of the Ray cluster at {cluster.address}: with resume_mode=auto verl's "
                    "TaskRunner, placed by Ray on any node, resumes from it there and starts from scratch elsewhere "
                    "(and workers on nodes without the checkpoint fail to load it); keep checkpoints on storage "
                    "every node mounts, or name one with resume_mode=resume_path"
                )
                found.append(self.finding(view.where(key), message, key, at_most="warning"))
        if isinstance(saves, int) and not isinstance(saves, bool) and saves > 0:
            for path in local:
                facts = _facts(nodes, path)
                shut = [label for label, f in (facts or {}).items() if not f.get("writable", True)]
                if shut:
                    outcome = (
                        f"with trainer.save_freq={saves} every node's workers save their shards there, and the first "
                        "save fails (PermissionError)"
                    )
                    found.append(
                        self._missing(view, "trainer.default_local_dir", path, shut, cluster, outcome, what="writable")
                    )
        return found

    def _missing(self, view, key, path, labels, cluster, outcome, what="path", at_most=None):
        where = "node " + labels[0] if len(labels) == 1 else "nodes " + ", ".join(labels)
        subject = f"{path}/config.json" if what == "config.json" else path
        state = "not writable" if what == "writable" else "not readable"
        message = f"{key}={path}: {subject} is {state} on {where} of the Ray cluster at {cluster.address}: {outcome}"
        return self.finding(view.where(key), message, key, at_most=at_most)


def _facts(nodes, path: str) -> dict | None:
    """{node label: what the node found at `path`}, None when a node did not answer (not known)."""
    facts = {node.label: node.paths.get(path) for node in nodes}
    return None if any(f is None for f in facts.values()) else facts


def _paths(value) -> list[str]:
    """The absolute paths a value names (a path, a list of them, or `[a,b]` as Hydra reads it)."""
    items = value if isinstance(value, (list, tuple)) else [value]
    out = []
    for item in items:
        if isinstance(item, str) and not is_unknown(item) and os.path.isabs(item) and "${" not in item:
            out.append(os.path.normpath(item))
    return out
