"""The policy schema: shipped default, --schema replace/extend, errors with file:line, pyproject."""

from __future__ import annotations

import os

import pytest
from conftest import ROOT

from verl_preflight.app.cli import main
from verl_preflight.rules import registry
from verl_preflight.rules.schema import DEFAULT_SCHEMA, SchemaError, load_schema

Q35 = os.path.join(ROOT, "examples", "grpo_trainer", "run_qwen3_5_35b_megatron.sh")


def test_shipped_schema_loads_and_every_policy_is_documented():
    schema = load_schema()
    assert schema.path == DEFAULT_SCHEMA
    ids = [p.id for p in schema.policies]
    assert {
        "use-mbridge",
        "gdn-flag-gate",
        "ascend-gdn-needs-triton-off",
        "qwen35-gpu-bshd",
        "transformer-config-key",
        "parallelism",
        "verl-check",
    } <= set(ids)
    assert all(i in registry() for i in ids)
    assert schema.backends == {}  # MindSpeed's keys come from its sources (verl_preflight.sources), not a list


@pytest.mark.parametrize(
    "text,line,needle",
    [
        ("version: 2\npolicies: []\n", 1, "version: 1"),
        ("version: 1\npolicies:\n  - id: a\n    kind: nope\n", 4, "unknown kind"),
        ("version: 1\npolicies:\n  - id: a\n    rule: nope\n", 4, "unknown rule"),
        ("version: 1\npolicies:\n  - id: a\n    kind: required-value\n", 3, "needs `keys`"),
        ("version: 1\npolicies:\n  - {id: parallelism}\n  - {id: parallelism}\n", 4, "twice"),
        ("version: 1\npolicies:\n  - {id: parallelism, rule: verl-check}\n", 3, "unknown rule"),
        ("version: 1\npolicies: [\n", 3, "not valid YAML"),
    ],
)
def test_bad_schema_names_file_and_line(tmp_path, text, line, needle):
    path = tmp_path / "s.yaml"
    path.write_text(text)
    with pytest.raises(SchemaError) as err:
        load_schema(str(path))
    assert str(err.value).startswith(f"{path}:{line}: ")
    assert needle in str(err.value)


def test_bad_schema_exits_2(tmp_path, capsys):
    path = tmp_path / "s.yaml"
    path.write_text("version: 1\npolicies:\n  - id: x\n")
    assert main(["--schema", str(path), Q35]) == 2
    assert f"{path}:3:" in capsys.readouterr().err


def test_a_schema_that_is_not_utf8_is_a_usage_error(tmp_path, capsys):
    path = tmp_path / "s.yaml"
    path.write_bytes(b"version: 1\npolicies: [\xff]\n")
    assert main(["--schema", str(path), Q35]) == 2
    err = capsys.readouterr().err
    assert f"{path}: cannot read the schema: not UTF-8" in err and "internal error" not in err


def test_the_schema_is_keyed_by_the_bytes_it_was_read_from(tmp_path):
    import hashlib

    path = tmp_path / "s.yaml"
    path.write_bytes(b"version: 1\r\npolicies: []\r\n")
    assert load_schema(str(path)).digest == hashlib.sha256(path.read_bytes()).hexdigest()


def test_replace_and_extend(tmp_path):
    only = tmp_path / "only.yaml"
    only.write_text("version: 1\npolicies:\n  - {id: parallelism, rule: parallelism}\n")
    assert [p.id for p in load_schema(str(only)).policies] == ["parallelism"]
    more = tmp_path / "more.yaml"
    more.write_text(
        "extends: default\nversion: 1\nbackends:\n  mine: {transformer_config_keys: [my_knob]}\n"
        "policies:\n  - id: ref-offload\n    kind: required-value\n"
        "    keys: {actor_rollout_ref.ref.megatron.param_offload: true}\n"
    )
    schema = load_schema(str(more))
    assert "use-mbridge" in [p.id for p in schema.policies] and schema.policies[-1].id == "ref-offload"
    assert "my_knob" in schema.backend_keys(["mine"])


def test_user_policy_applies(tmp_path, capsys):
    """A data policy written by a user is enforced like the shipped ones."""
    schema = tmp_path / "s.yaml"
    schema.write_text(
        "extends: default\nversion: 1\npolicies:\n  - id: no-offload\n    kind: required-value\n"
        "    severity: warning\n    keys: {actor_rollout_ref.actor.megatron.param_offload: false}\n"
    )
    code = main(["--format", "json", "--schema", str(schema), "--profile", "DEVICE=gpu", Q35])
    import json

    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert [f["rule"] for f in doc["findings"]] == ["no-offload"]


def test_pyproject_names_the_schema(tmp_path, capsys, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.validate-scripts]\nschema = "policy.yaml"\n')
    (tmp_path / "policy.yaml").write_text("version: 1\npolicies: [\n")
    import shutil

    script = shutil.copy(Q35, tmp_path / "run.sh")  # settings are found from the script (issue 44)
    assert main([str(script)]) == 2
    assert "policy.yaml" in capsys.readouterr().err


def test_pyproject_paths_excludes_and_severity(tmp_path, capsys, monkeypatch):
    scripts = tmp_path / "scripts"
    (scripts / "old").mkdir(parents=True)
    body = (
        "#!/usr/bin/env bash\nA=(trainer.total_epochs=1 trainer.total_epochs=2)\n"
        'python3 -m verl.trainer.main_ppo "${A[@]}" actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 critic.ppo_micro_batch_size_per_gpu=1 "$@"\n'
    )
    (scripts / "run.sh").write_text(body)
    (scripts / "old" / "legacy.sh").write_text(body.replace("total_epochs=1", "total_epoch=1"))
    (tmp_path / "pyproject.toml").write_text(
        '[tool.validate-scripts]\npaths = ["scripts"]\nexclude = ["*/old"]\nseverity = {duplicate-key = "error"}\n'
    )
    monkeypatch.chdir(tmp_path)
    code = main(["--format", "json"])
    import json

    doc = json.loads(capsys.readouterr().out)
    assert [os.path.basename(s["path"]) for s in doc["scripts"]] == ["run.sh"]
    assert code == 1 and [(f["rule"], f["severity"]) for f in doc["findings"]] == [("duplicate-key", "error")]
    assert main(["--format", "json", "scripts/run.sh", "--strict"]) == 1  # flags still work


def test_the_shipped_schema_is_read_on_first_use_and_is_the_same():
    from verl_preflight.rules.schema import ShippedSchema

    shipped = ShippedSchema()
    assert shipped._schema is None and shipped.path == DEFAULT_SCHEMA  # the cache key needs only these
    eager = load_schema()
    assert [p.id for p in shipped.policies] == [p.id for p in eager.policies]
    assert shipped.backends == eager.backends
