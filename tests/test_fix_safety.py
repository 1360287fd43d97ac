"""`--fix` writes only regular files inside the paths given, links resolved, and in place
(issue 24, item 4; fix_files.py).

Outside the tree (a link out of it, a file a script sources from elsewhere) the edit is
refused with a note at the word and the file is left as it is; the other edits still apply.
A file written keeps its inode: hard links, the mode, extended attributes and the owner stay.
"""

from __future__ import annotations

import errno
import json
import os

import pytest
from conftest import run_cli as run

from verl_preflight.app.fix_files import NOT_REGULAR, NotWritten, Tree, read, write_in_place

APPEND = 'python3 -m verl.trainer.main_ppo +trainer.val_before_train=False "$@"\n'
FIXED = 'python3 -m verl.trainer.main_ppo trainer.val_before_train=False "$@"\n'
LIB = "A=( +trainer.val_before_train=False )\n"
LIB_FIXED = "A=( trainer.val_before_train=False )\n"


@pytest.fixture
def here(tmp_path, monkeypatch):
    """tmp_path as the working directory, with `tree/` (the path given) and `outside/`."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tree").mkdir()
    (tmp_path / "outside").mkdir()
    return tmp_path


def text(path) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def notes(out: str) -> list[str]:
    return [line for line in out.splitlines() if "note: not fixed" in line]


def test_a_symlinked_file_pointing_outside_is_not_written_through(here, capsys):
    (here / "outside" / "run.sh").write_text(APPEND)
    os.symlink("../outside/run.sh", here / "tree" / "run.sh")
    (here / "tree" / "ok.sh").write_text(APPEND)  # the other edit still applies
    code, out, err = run(capsys, "--fix", "tree")
    assert text(here / "outside" / "run.sh") == APPEND
    assert text(here / "tree" / "ok.sh") == FIXED
    assert notes(out) == [
        f"tree/run.sh:1:34: note: not fixed [override-append-existing]: a symlink to outside the tree "
        f"(tree/run.sh -> {here / 'outside' / 'run.sh'})"
    ], out
    assert "fixed 1 finding in 1 file" in out
    assert os.path.islink(here / "tree" / "run.sh")
    # --diff shows what --fix would do: the same refusal, no diff of the link
    (here / "tree" / "ok.sh").write_text(APPEND)
    code, out, err = run(capsys, "--diff", "tree")
    assert "+++ tree/ok.sh" in out and "tree/run.sh" not in out
    assert "a symlink to outside the tree" in err and "would fix 1 finding in 1 file" in err


def test_a_symlinked_file_named_on_the_command_line_is_written_in_its_target(here, capsys):
    """The user named it: its target is the file given; the link stays a link."""
    (here / "outside" / "run.sh").write_text(APPEND)
    os.symlink("../outside/run.sh", here / "tree" / "run.sh")
    code, out, _ = run(capsys, "--fix", "tree/run.sh")
    assert text(here / "outside" / "run.sh") == FIXED and os.path.islink(here / "tree" / "run.sh")
    assert "fixed 1 finding in 1 file" in out and not notes(out)


def test_a_symlinked_folder_pointing_outside_is_neither_walked_nor_written_through(here, capsys):
    (here / "outside" / "run.sh").write_text(APPEND)
    (here / "outside" / "lib.sh").write_text(LIB)
    os.symlink("../outside", here / "tree" / "sub")
    # a script of the tree that sources a file through the link
    (here / "tree" / "main.sh").write_text('source ./sub/lib.sh\npython3 -m verl.trainer.main_ppo "${A[@]}" "$@"\n')
    code, out, err = run(capsys, "--fix", "tree")
    assert text(here / "outside" / "run.sh") == APPEND and text(here / "outside" / "lib.sh") == LIB
    assert f"tree/sub: note: not followed: a symlink to {here / 'outside'}, outside tree" in err
    assert "tree/sub/run.sh" not in out  # not walked
    assert notes(out) == [
        f"tree/sub/lib.sh:1:5: note: not fixed [override-append-existing]: a symlink to outside the tree "
        f"(tree/sub -> {here / 'outside'})"
    ], out


def test_a_symlinked_folder_inside_the_tree_is_walked_once(here, capsys):
    (here / "tree" / "real").mkdir()
    (here / "tree" / "real" / "run.sh").write_text(APPEND)
    os.symlink("real", here / "tree" / "alias")
    code, out, err = run(capsys, "--format", "json", "tree")
    assert "not followed" not in err
    assert len(json.loads(out)["scripts"]) == 1


def test_an_absolute_source_target_outside_is_refused_until_named(here, capsys):
    lib = here / "outside" / "lib.sh"
    lib.write_text(LIB)
    (here / "tree" / "main.sh").write_text(f'source {lib}\npython3 -m verl.trainer.main_ppo "${{A[@]}}" "$@"\n')
    code, out, _ = run(capsys, "--fix", "tree")
    assert text(lib) == LIB
    assert notes(out) == [
        "outside/lib.sh:1:5: note: not fixed [override-append-existing]: outside the paths given "
        "(name it on the command line to let --fix write it)"
    ], out
    assert "fixed 0 findings in 0 files" in out
    code, out, _ = run(capsys, "--fix", "tree", str(lib))
    assert text(lib) == LIB_FIXED and "fixed 1 finding in 1 file" in out


def test_the_tree_is_asked_once_a_file_and_refuses_each_of_its_findings(here, capsys, monkeypatch):
    lib = here / "outside" / "lib.sh"
    lib.write_text("A=( +trainer.val_before_train=False +trainer.total_epochs=1 )\n")
    (here / "tree" / "main.sh").write_text(f'source {lib}\npython3 -m verl.trainer.main_ppo "${{A[@]}}" "$@"\n')
    asked = []
    refuses = Tree.refuses
    monkeypatch.setattr(Tree, "refuses", lambda self, path: asked.append(path) or refuses(self, path))
    code, out, err = run(capsys, "--diff", "tree")
    assert asked == ["outside/lib.sh"], asked
    assert out == "" and [line.split(": note: ")[0] for line in notes(err)] == ["outside/lib.sh:1:5", "outside/lib.sh:1:37"]


def test_a_file_sourced_from_beside_a_script_given_is_written(here, capsys):
    """A file given brings the folder holding it: its sourced helpers sit there."""
    (here / "tree" / "lib.sh").write_text(LIB)
    (here / "tree" / "main.sh").write_text('source ./lib.sh\npython3 -m verl.trainer.main_ppo "${A[@]}" "$@"\n')
    code, out, _ = run(capsys, "--fix", "tree/main.sh")
    assert text(here / "tree" / "lib.sh") == LIB_FIXED and "fixed 1 finding in 1 file" in out


def test_a_hard_linked_file_is_written_in_its_inode(here, capsys):
    script = here / "tree" / "run.sh"
    script.write_text(APPEND)
    other = here / "outside" / "same.sh"  # the other name of the same file
    os.link(script, other)
    before = os.stat(script)
    code, out, _ = run(capsys, "--fix", "tree/run.sh")
    after = os.stat(script)
    assert text(script) == FIXED and text(other) == FIXED
    assert (after.st_ino, after.st_dev, after.st_nlink) == (before.st_ino, before.st_dev, 2)
    assert os.stat(other).st_ino == after.st_ino


def test_mode_owner_and_extended_attributes_are_kept(here, capsys):
    script = here / "tree" / "run.sh"
    script.write_text(APPEND)
    os.chmod(script, 0o751)
    try:
        os.setxattr(script, "user.verl-preflight", b"kept")
        xattr = True
    except OSError as err:
        if err.errno not in (errno.ENOTSUP, errno.EPERM, errno.EOPNOTSUPP):
            raise
        xattr = False
    before = os.stat(script)
    code, out, _ = run(capsys, "--fix", "tree")
    after = os.stat(script)
    assert text(script) == FIXED
    assert (after.st_mode, after.st_uid, after.st_gid, after.st_ino) == (
        before.st_mode, before.st_uid, before.st_gid, before.st_ino)
    if not xattr:
        pytest.skip("this filesystem refuses user.* extended attributes (mode and owner were checked)")
    assert os.getxattr(script, "user.verl-preflight") == b"kept"


# ---- fix_files: the tree and the write ------------------------------------------------


def test_the_tree_refuses_a_fifo_and_allows_what_it_holds(here):
    os.mkfifo(here / "tree" / "pipe.sh")
    (here / "tree" / "run.sh").write_text(APPEND)
    tree = Tree.of(["tree"])
    assert tree.refuses("tree/pipe.sh") == NOT_REGULAR
    assert tree.refuses("tree/run.sh") is None and tree.refuses(str(here / "tree" / "run.sh")) is None
    assert tree.refuses("outside/x.sh").startswith("outside the paths given")
    assert tree.refuses("-") is None  # --diff of standard input writes nothing


@pytest.mark.parametrize("change", ["same size", "longer", "replaced"])
def test_a_file_that_changed_between_read_and_write_is_not_written(here, change):
    path = here / "tree" / "run.sh"
    path.write_text(APPEND)
    old, stamp = read(str(path))
    edited = APPEND.replace("False", "Fals3") if change == "same size" else APPEND + "# more\n"
    if change == "replaced":  # another file renamed over the name (an editor's save)
        (here / "tree" / "new.sh").write_text(APPEND)
        os.replace(here / "tree" / "new.sh", path)
        edited = APPEND
    else:
        path.write_text(edited)
    with pytest.raises(NotWritten, match="changed while it was checked"):
        write_in_place(str(path), old, FIXED.encode(), stamp)
    assert text(path) == edited


def test_fix_reads_a_file_as_the_run_does(here):
    """fix_files.read is source.read_stamped: the stamp is the open descriptor's, a FIFO is
    refused without blocking, --max-bytes bounds it, a link as the last name is resolved first."""
    path = here / "tree" / "run.sh"
    path.write_text(APPEND)
    os.symlink("run.sh", here / "tree" / "link.sh")
    old, stamp = read(str(here / "tree" / "link.sh"))
    st = os.stat(path)
    assert old == APPEND.encode() and (stamp.ino, stamp.size, stamp.mtime_ns) == (st.st_ino, st.st_size, st.st_mtime_ns)
    with pytest.raises(NotWritten, match="larger than --max-bytes"):
        read(str(path), max_bytes=len(APPEND) - 1)
    os.mkfifo(here / "tree" / "pipe.sh")
    with pytest.raises(NotWritten, match=f"^{NOT_REGULAR}$"):
        read(str(here / "tree" / "pipe.sh"))
    with pytest.raises(NotWritten, match="^cannot read: No such file"):
        read(str(here / "tree" / "gone.sh"))


def test_a_read_only_file_is_refused_on_what_was_opened(here):
    """The write bits are those of the open descriptor (fstat), not of a stat made before it."""
    path = here / "tree" / "run.sh"
    path.write_text(APPEND)
    old, stamp = read(str(path))
    os.chmod(path, 0o444)
    with pytest.raises(PermissionError, match="read-only|Permission denied"):  # root: ours; others: open
        write_in_place(str(path), old, FIXED.encode(), stamp)
    assert text(path) == APPEND


def test_a_write_in_place_shortens_and_lengthens_the_file(here):
    path = here / "tree" / "run.sh"
    path.write_text(APPEND)
    old, stamp = read(str(path))
    write_in_place(str(path), old, b"short\n", stamp)
    assert text(path) == "short\n"
    old, stamp = read(str(path))
    write_in_place(str(path), old, b"x" * 100_000, stamp)
    assert os.path.getsize(path) == 100_000
