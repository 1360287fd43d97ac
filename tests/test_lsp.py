"""The language server (`validate-scripts lsp`), driven over standard input and output by a real
LSP client (pytest-lsp): initialize, open, diagnostics, code action, change, hover, a sourced
file's findings on that file, the workspace's settings, a failure as one diagnostic.

One server for the module, started as an editor starts it (`python -m verl_preflight lsp`), with
three workspace folders: `plain`, `configured` (its pyproject.toml makes use-mbridge a warning),
`broken` (its pyproject.toml has an unknown key). Each test opens documents of its own. Waiting
for a notification has a generous timeout (a stuck server fails the test, a slow one does not).
"""

from __future__ import annotations

import os
import shutil
import sys

import pytest
from conftest import FIXTURES
from lsprotocol import types

pytest_lsp = pytest.importorskip("pytest_lsp")
from pygls.protocol import default_converter  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402
from pytest_lsp import ClientServerConfig  # noqa: E402
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, LanguageClient, register_lsp_features  # noqa: E402

pytestmark = pytest.mark.asyncio(loop_scope="module")

LSP_FIXTURES = os.path.join(FIXTURES, "lsp")
WAIT = 300  # seconds: a server that publishes nothing in this time is stuck, not slow


def _client() -> LanguageClient:
    """pytest-lsp's client, also keeping every publishDiagnostics in order (with its version)."""
    client = LanguageClient(converter_factory=default_converter)
    client.published = []

    def publish(client: LanguageClient, params: types.PublishDiagnosticsParams):
        client.diagnostics[params.uri] = params.diagnostics
        client.published.append(params)

    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish})
    return client


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("workspace")
    for name in ("plain", "configured", "broken"):
        os.makedirs(root / name)
        for script in ("bad.sh", "run.sh", "common.sh"):
            shutil.copy(os.path.join(LSP_FIXTURES, script), root / name / script)
    (root / "configured" / "pyproject.toml").write_text(
        '[tool.validate-scripts]\nseverity = {use-mbridge = "warning"}\n'
    )
    (root / "broken" / "pyproject.toml").write_text('[tool.validate-scripts]\nseverty = {use-mbridge = "warning"}\n')
    return root


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "verl_preflight", "lsp", "--no-cache"], client_factory=_client
    ),
)
async def client(lsp_client: LanguageClient, workspace):
    folders = [
        types.WorkspaceFolder(uri=from_fs_path(str(workspace / n)), name=n) for n in ("plain", "configured", "broken")
    ]
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=from_fs_path(str(workspace)),
            workspace_folders=folders,
        )
    )
    yield
    await lsp_client.shutdown_session()


def _text(name: str) -> str:
    with open(os.path.join(LSP_FIXTURES, name), encoding="utf-8") as fh:
        return fh.read()


def _open(client, path, text: str, version: int = 1, language: str = "shellscript") -> str:
    uri = from_fs_path(str(path))
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id=language, version=version, text=text)
        )
    )
    return uri


def _change(client, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def _published(client, uri: str, version: int | None = None, after: int = 0, where=None) -> list:
    """The diagnostics of the first publish for `uri` (at `version`, when given; that `where`
    accepts, when given) among those received after the `after`-th publish: waits for it."""
    import asyncio

    while True:
        for params in client.published[after:]:
            if params.uri == uri and (version is None or params.version == version):
                if where is None or where(params.diagnostics):
                    return list(params.diagnostics)
        await asyncio.wait_for(client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), WAIT)


def _line_of(text: str, needle: str) -> int:
    """The 0-based line of the first line holding `needle`."""
    return next(i for i, line in enumerate(text.splitlines()) if needle in line)


def _word(text: str, needle: str) -> types.Range:
    """The range of the blank-free word holding `needle` (0-based, the line's characters)."""
    n = _line_of(text, needle)
    line = text.splitlines()[n]
    start = len(line) - len(line.lstrip())
    word = line.strip().split()[0]
    return types.Range(
        start=types.Position(line=n, character=start), end=types.Position(line=n, character=start + len(word))
    )


def _apply(text: str, edit: types.TextEdit) -> str:
    lines = text.splitlines(True)

    def offset(p):
        return sum(len(x) for x in lines[: p.line]) + p.character

    return text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]


async def test_open_fix_change_hover(client: LanguageClient, workspace):
    text = _text("bad.sh")
    uri = _open(client, workspace / "plain" / "bad.sh", text)
    diagnostics = await _published(client, uri, 1)

    got = sorted((d.code, d.range.start.line, d.range.start.character, d.range.end.character) for d in diagnostics)
    want = sorted(
        (code, r.start.line, r.start.character, r.end.character)
        for code, r in (
            ("use-mbridge", _word(text, "megatron.use_mbridge=False")),
            ("override-missing-key", _word(text, "ppo_epoch=1")),
            ("override-missing-key", _word(text, "total_epocs=10")),
        )
    )
    assert got == want
    assert all(d.source == "validate-scripts" for d in diagnostics)
    assert all(d.severity == types.DiagnosticSeverity.Error for d in diagnostics)
    mbridge = next(d for d in diagnostics if d.code == "use-mbridge")
    assert "use_mbridge=True" in mbridge.message

    # the quick fix at the misspelt key: the exact edit --fix makes
    typo = next(d for d in diagnostics if "total_epocs" in d.message)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=typo.range,
            context=types.CodeActionContext(diagnostics=[typo]),
        )
    )
    assert [a.kind for a in actions] == [types.CodeActionKind.QuickFix]
    (edit,) = actions[0].edit.changes[uri]
    n = _line_of(text, "trainer.total_epocs=10")
    assert edit.range.start == types.Position(line=n, character=4)
    assert edit.range.end == types.Position(line=n, character=4 + len("trainer.total_epocs"))
    assert edit.new_text == "trainer.total_epochs"
    assert actions[0].diagnostics[0].code == "override-missing-key"

    # every quick fix applied: the text the editor then has is clean
    fixed = text
    for d in sorted(diagnostics, key=lambda d: (d.range.start.line, d.range.start.character), reverse=True):
        (action,) = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=d.range,
                context=types.CodeActionContext(diagnostics=[d]),
            )
        )
        (one,) = action.edit.changes[uri]
        fixed = _apply(fixed, one)
    assert "use_mbridge=True" in fixed and "ppo_epochs=1" in fixed and "total_epochs=10" in fixed
    _change(client, uri, 2, fixed)
    assert await _published(client, uri, 2) == []

    # hover over the override whose value depends on DEVICE: each profile's value
    n = _line_of(fixed, "tensor_model_parallel_size")
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=n, character=30)
        )
    )
    assert hover.contents.kind == types.MarkupKind.Markdown
    assert "actor_rollout_ref.actor.megatron.tensor_model_parallel_size" in hover.contents.value
    assert "DEVICE=gpu → `4`" in hover.contents.value
    assert "DEVICE=npu → `2`" in hover.contents.value
    assert hover.contents.value.splitlines()[-1].startswith("Checked against verl ")  # and what it met
    assert hover.range.start == types.Position(line=n, character=4)

    # a word that is no override has no hover
    blank = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=_line_of(fixed, "set -euo"), character=1),
        )
    )
    assert blank is None


async def test_an_unsafe_fix_is_offered_saying_why_and_not_preferred(client: LanguageClient, workspace):
    """Issue 44, item 5, in the editor: the quick fix --fix leaves as unsafe says why in its title."""
    from test_fix import GDN_TWICE

    uri = _open(client, workspace / "plain" / "gdn_twice.sh", GDN_TWICE)
    diagnostics = await _published(client, uri, 1)
    append = next(d for d in diagnostics if d.code == "override-append-existing")
    (action,) = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=append.range,
            context=types.CodeActionContext(diagnostics=[append]),
        )
    )
    assert action.title.endswith("(unsafe: line 6, which this finding involves, has another finding [gdn-flag-gate])")
    assert action.is_preferred is False


async def test_changes_are_checked_at_their_newest_version(client: LanguageClient, workspace):
    """Changes sent one after the other, none awaited: the last publish is of the last version and
    its text; no publish goes back to an older version than one already published."""
    text = _text("bad.sh")
    path = workspace / "plain" / "versions.sh"
    path.write_text(text)
    uri = _open(client, path, text)
    await _published(client, uri, 1)
    start = len(client.published)
    fixed = text.replace("use_mbridge=False", "use_mbridge=True")
    _change(client, uri, 2, text.replace("total_epocs", "total_epoks"))
    _change(client, uri, 3, text)
    _change(client, uri, 4, fixed)
    last = await _published(client, uri, 4, after=start)
    assert sorted(d.code for d in last) == ["override-missing-key", "override-missing-key"]
    versions = [p.version for p in client.published[start:] if p.uri == uri]
    assert versions == sorted(versions) and versions[-1] == 4


async def test_a_sourced_files_findings_are_on_that_file(client: LanguageClient, workspace):
    folder = workspace / "plain"
    common = from_fs_path(str(folder / "common.sh"))
    start = len(client.published)
    run = _open(client, folder / "run.sh", _text("run.sh"))
    assert await _published(client, run, 1, after=start) == []
    (typo,) = await _published(client, common, after=start)
    assert typo.code == "override-missing-key"
    assert "clip_ratoi" in typo.message
    assert typo.range == _word(_text("common.sh"), "clip_ratoi")
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=common),
            range=typo.range,
            context=types.CodeActionContext(diagnostics=[typo]),
        )
    )
    (edit,) = actions[0].edit.changes[common]
    assert edit.new_text == "actor_rollout_ref.actor.clip_ratio"

    # the sourced file's unsaved buffer is what run.sh sources: fixed there, the finding is gone
    start = len(client.published)
    _open(client, folder / "common.sh", _apply(_text("common.sh"), edit))
    assert await _published(client, run, 1, after=start) == []
    assert await _published(client, common, after=start, where=lambda found: not found) == []
    assert "clip_ratoi" in (folder / "common.sh").read_text()  # nothing was written


async def test_the_workspace_settings_apply(client: LanguageClient, workspace):
    uri = _open(client, workspace / "configured" / "bad.sh", _text("bad.sh"))
    diagnostics = await _published(client, uri, 1)
    severity = {d.code: d.severity for d in diagnostics}
    assert severity["use-mbridge"] == types.DiagnosticSeverity.Warning
    assert severity["override-missing-key"] == types.DiagnosticSeverity.Error


async def test_settings_that_cannot_be_used_are_one_diagnostic(client: LanguageClient, workspace):
    uri = _open(client, workspace / "broken" / "bad.sh", _text("bad.sh"))
    (failure,) = await _published(client, uri, 1)
    assert failure.severity == types.DiagnosticSeverity.Error
    assert "unknown key 'severty'" in failure.message and "did you mean 'severity'" in failure.message
    # the server goes on: another document is checked
    again = _open(client, workspace / "plain" / "after-broken.sh", _text("bad.sh").replace("False", "True"))
    assert len(await _published(client, again, 1)) == 2


async def test_a_buffer_with_no_file_is_checked_as_standard_input(client: LanguageClient, workspace):
    uri = "untitled:Untitled-1"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="shellscript", version=1, text=_text("bad.sh"))
        )
    )
    diagnostics = await _published(client, uri, 1)
    assert sorted(d.code for d in diagnostics) == ["override-missing-key", "override-missing-key", "use-mbridge"]


async def test_the_log_says_what_each_check_was_checked_against(client: LanguageClient, workspace):
    """A check that finds nothing still says which verl it checked against (the editor's log)."""
    uri = _open(client, workspace / "plain" / "run.sh", _text("run.sh"))
    await _published(client, uri, 1)
    said = [m.message for m in client.log_messages if "checked against" in m.message]
    assert any(m.endswith("run.sh: checked against verl 0.9.1 (installed) (1 launch)") for m in said), said


VENDORED_LAUNCH = 'python3 -m verl.trainer.main_ppo trainer.total_epochs=2 "$@"\n'


def _vendoring(project):
    """A repository at `project` that vendors the installed verl, with run.sh launching it:
    (the folder, the script's text)."""
    from verl_preflight.core.config_location import installed_root

    shutil.copytree(installed_root(), project / "verl", ignore=shutil.ignore_patterns("__pycache__"))
    (project / ".git").mkdir()
    (project / "run.sh").write_text(VENDORED_LAUNCH)
    return project, VENDORED_LAUNCH


async def test_an_edit_of_a_vendored_config_tree_is_checked_at_the_next_change(client: LanguageClient, workspace):
    """Issue 46: with a vendored verl, deleting a key from its ppo_trainer.yaml left the
    diagnostics as they were until the server restarted (the tree's compositions were kept under
    the digest it had). The next check composes from the files as they are now."""
    project, text = _vendoring(workspace / "vendoring")
    uri = _open(client, project / "run.sh", text)
    assert not any(d.code == "override-missing-key" for d in await _published(client, uri, 1))
    config = project / "verl" / "trainer" / "config" / "ppo_trainer.yaml"
    yaml = config.read_text()
    assert "\n  total_epochs: 30\n" in yaml
    config.write_text(yaml.replace("\n  total_epochs: 30\n", "\n"))
    start = len(client.published)
    _change(client, uri, 2, text + "# edited\n")
    after = await _published(client, uri, 2, after=start)
    assert [d.code for d in after if d.severity == types.DiagnosticSeverity.Error] == ["override-missing-key"], after


async def test_an_edit_of_a_vendored_verl_module_is_checked_at_the_next_change(client: LanguageClient, workspace):
    """Issue 46: the facts, syntax trees and memos read from a vendored verl's Python outlived the
    check that read them; an assert added to its validate_config was not seen until the server
    restarted. A source changed since the last check makes the server forget what it read."""
    project, text = _vendoring(workspace / "vendoring-python")
    uri = _open(client, project / "run.sh", text)
    assert not any("edited check" in d.message for d in await _published(client, uri, 1))
    module = project / "verl" / "utils" / "config.py"
    code = module.read_text()
    anchor = '    """\n    # number of GPUs total'
    assert anchor in code
    module.write_text(code.replace(anchor, '    """\n    assert config.trainer.total_epochs > 5, "edited check"\n    # number of GPUs total', 1))
    start = len(client.published)
    _change(client, uri, 2, text + "# edited\n")
    after = await _published(client, uri, 2, after=start)
    assert any("edited check" in d.message and d.code == "verl-check" for d in after), after


async def test_an_edit_of_a_root_configs_searchpath_is_checked_at_the_next_change(client: LanguageClient, workspace):
    """A project's root config that searches verl's tree (`hydra: searchpath:`): after the list
    is taken out, the next check composes without it (the searchpath read from the file before
    was part of the check's memory, and it is forgotten with the tree's compositions)."""
    from verl_preflight.core.config_location import installed_root

    project = workspace / "searchpath"
    (project / "config").mkdir(parents=True)
    (project / ".git").mkdir()
    searched = f"hydra:\n  searchpath:\n    - file://{installed_root()}/trainer/config\n"
    root = project / "config" / "my.yaml"
    root.write_text(searched + "defaults:\n  - ppo_trainer\n  - _self_\n")
    text = f"python3 -m verl.trainer.main_ppo --config-path={project / 'config'} --config-name=my trainer.nope=1\n"
    uri = _open(client, project / "run.sh", text)
    assert [d.code for d in await _published(client, uri, 1)] == ["override-missing-key"]
    root.write_text("defaults:\n  - ppo_trainer\n  - _self_\n")
    start = len(client.published)
    _change(client, uri, 2, text + "# edited\n")
    after = await _published(client, uri, 2, after=start)
    assert [d.code for d in after] == ["config-group"], after
