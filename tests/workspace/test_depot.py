"""The run's depot: checkouts hold exactly the committed bytes whatever any attribute says, what
attempts produce stays out of the user's repository, and a branch there gets its commit's
objects first, once, whole."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from pathlib import Path

import pytest

from taskhand import workspace
from taskhand.workspace import depot, git, refs
from tests.git_objects import added, broken, copies, held
from tests.workspace.conftest import agent_env, commit, depot_of, in_depot, make_repo, run, write
from tests.workspace.test_git import markers, trap


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "markers").mkdir()
    return make_repo(tmp_path / "repo")


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def on_disk(folder: Path) -> dict[str, tuple[str, str]]:
    """Every file and link under `folder` but .git: path -> (mode as git records it, blob id
    of its bytes or of its link's text)."""
    found = {}
    for top, folders, names in os.walk(folder):
        folders[:] = [f for f in folders if not (top == str(folder) and f == ".git")]
        for name in [*names, *(f for f in folders if Path(top, f).is_symlink())]:
            path = Path(top, name)
            key = str(path.relative_to(folder))
            if path.is_symlink():
                found[key] = ("120000", blob_id(os.fsencode(os.readlink(path))))
            else:
                mode = "100755" if path.stat().st_mode & stat.S_IXUSR else "100644"
                found[key] = (mode, blob_id(path.read_bytes()))
    return found


def in_tree(repo: Path, sha: str) -> dict[str, tuple[str, str]]:
    """Every entry of commit `sha`: path -> (mode, blob id)."""
    found = {}
    for line in in_depot(repo, "ls-tree", "-r", "--full-tree", sha).splitlines():
        info, path = line.split("\t", 1)
        mode, _, blob = info.split()
        found[path] = (mode, blob)
    return found


REWRITTEN = {
    "crlf.txt": b"one\ntwo\n",  # eol=crlf: git would write CRLF
    "auto.md": b"# notes\nline\n",  # the user's info/attributes: text eol=crlf
    "utf16.txt": "h\u00e9llo\n".encode(),  # working-tree-encoding=UTF-16: git would re-encode
    "ident.c": b"/* $Id$ */\n",  # ident: git would expand the $Id$
    "filtered.dat": b"the clean bytes\n",  # a smudge filter the user's configuration names
    "subst.txt": b"$Format:%H$\n",  # export-subst: only archives, but unset all the same
    "mac.txt": b"a\nb\n",  # a macro of the .gitattributes that turns text and eol=crlf on
}
ATTRIBUTES = (
    "[attr]dos text eol=crlf\n"
    "crlf.txt eol=crlf\nutf16.txt working-tree-encoding=UTF-16\nident.c ident\n"
    "filtered.dat filter=trap\nsubst.txt export-subst\nmac.txt dos\n"
)


def attributed(repo: Path, tmp_path: Path) -> str:
    """A commit whose files every kind of attribute would rewrite on checkout, the user's
    configuration and info/attributes adding theirs; a link and a script too."""
    for name, data in REWRITTEN.items():
        (repo / name).write_bytes(data)
    (repo / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "link").symlink_to("crlf.txt")
    commit(repo, "files")
    (repo / ".gitattributes").write_text(ATTRIBUTES)  # after the files, which it would rewrite
    run(repo, "add", ".gitattributes")
    run(repo, "commit", "-q", "-m", "attributes")
    sha = run(repo, "rev-parse", "HEAD")
    run(repo, "config", "core.autocrlf", "true")
    run(repo, "config", "filter.trap.smudge", trap(tmp_path, "smudge"))
    run(repo, "config", "filter.trap.clean", trap(tmp_path, "clean"))
    run(repo, "config", "filter.trap.required", "true")
    (repo / ".git" / "info" / "attributes").write_text("*.md text eol=crlf\n")
    return sha


def test_a_workspace_holds_exactly_the_committed_bytes(repo: Path, tmp_path: Path) -> None:
    sha = attributed(repo, tmp_path)
    plain = subprocess.run(
        ["git", "-C", str(repo), "show", f"{sha}:crlf.txt"], capture_output=True, check=True
    )
    assert plain.stdout == REWRITTEN["crlf.txt"]  # the blob holds LF: a checkout would not
    ws = workspace.prepare(depot_of(repo), tmp_path / "ws", tmp_path / "index", sha, None)
    assert on_disk(ws.path) == in_tree(repo, sha)
    for name, data in REWRITTEN.items():
        assert (ws.path / name).read_bytes() == data, name
    assert os.readlink(ws.path / "link") == "crlf.txt"
    assert markers(tmp_path) == []
    # Collected untouched, nothing changed: the bytes went out and came back as they were.
    assert workspace.collect(depot_of(repo), ws, sha, "nothing") is None
    # Reused for another commit (as a review copy is): still the bytes, nothing else.
    (ws.path / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    write(ws.path, {"left.txt": "x"})
    again = workspace.prepare(depot_of(repo), ws.path, ws.index, sha, None)
    assert on_disk(again.path) == in_tree(repo, sha)


def test_what_a_worker_writes_is_committed_byte_for_byte(repo: Path, tmp_path: Path) -> None:
    base = attributed(repo, tmp_path)
    ws = workspace.prepare(depot_of(repo), tmp_path / "ws", tmp_path / "index", base, None)
    written = {"crlf.txt": b"one\r\ntwo\r\n", "utf16.txt": b"no BOM, not UTF-16\n"}
    for name, data in written.items():
        (ws.path / name).write_bytes(data)
    sha = workspace.collect(depot_of(repo), ws, base, "the worker's bytes")
    assert sha is not None
    assert on_disk(ws.path) == in_tree(repo, sha)
    assert markers(tmp_path) == []


def test_a_candidate_stays_out_of_the_users_repository(repo: Path, tmp_path: Path) -> None:
    base = git.resolve(repo, "HEAD")
    before, objects = held(repo), copies(repo)
    ws = workspace.prepare(depot_of(repo), tmp_path / "ws", tmp_path / "index", base, "t")
    (ws.path / "big.bin").write_bytes(os.urandom(1 << 20))
    sha = workspace.collect(depot_of(repo), ws, base, "rejected, say")
    assert sha is not None
    assert held(repo) == before and copies(repo) == objects
    assert git.resolve(repo, sha) == sha  # the harness reads it all the same
    assert in_depot(repo, "cat-file", "-t", f"{sha}:big.bin") == "blob"
    # The workspace's own git reads it too, with the depot named as every process of the
    # attempt has it (its alternates name the user's objects alone).
    assert run(ws.path, "cat-file", "-t", sha, env=agent_env(repo)) == "commit"
    # and so does a git library that reads objects itself, from the alternates file alone
    # (aider's gitdb): the user's objects first, then the depot's
    assert run(ws.path, "cat-file", "-t", sha) == "commit"
    alternates = (ws.path / ".git/objects/info/alternates").read_text().splitlines()
    assert alternates == [
        str(git.common_dir(repo).resolve() / "objects"),
        str(depot_of(repo).objects.resolve()),
    ]


def test_a_branch_gets_its_commits_objects_first(repo: Path, tmp_path: Path) -> None:
    base = git.resolve(repo, "HEAD")
    ws = workspace.prepare(depot_of(repo), tmp_path / "ws", tmp_path / "index", base, "t")
    (ws.path / "landed.txt").write_text("landed\n")
    sha = workspace.collect(depot_of(repo), ws, base, "accepted")
    assert sha is not None
    new = added(depot_of(repo).path, sha)
    assert not new & held(repo)
    refs.create_branch(repo, "taskhand/T-001-x", sha)
    assert new <= held(repo)
    assert broken(repo) == ""  # plain git, without the depot, has everything
    assert "+landed" in run(repo, "log", "-p", "taskhand/T-001-x")
    counted = copies(repo)
    refs.move_branch(repo, "main", sha, base)  # the same commit again: nothing more copied
    assert copies(repo) == counted
    assert max(counted.values()) == 1


def test_a_copy_a_kill_cut_short_is_finished_once(repo: Path, tmp_path: Path) -> None:
    base = git.resolve(repo, "HEAD")
    ws = workspace.prepare(depot_of(repo), tmp_path / "ws", tmp_path / "index", base, "t")
    write(ws.path, {"a.txt": "a\n", "deep/b.txt": "b\n"})
    sha = workspace.collect(depot_of(repo), ws, base, "accepted")
    assert sha is not None
    # What a kill in the middle of the copy leaves: the commit there, its trees not.
    raw = subprocess.run(
        ["git", "--git-dir", str(depot_of(repo).path), "cat-file", "commit", sha],
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(
        ["git", "-C", str(repo), "hash-object", "-t", "commit", "-w", "--stdin"],
        input=raw,
        check=True,
        capture_output=True,
    )
    assert broken(repo) == "" and sha in held(repo)  # unreferenced: fsck does not mind yet
    refs.create_branch(repo, "taskhand/T-001-x", sha)  # a new process: nothing remembered
    assert broken(repo) == ""
    assert max(copies(repo).values()) == 1


def test_many_objects_arrive_as_one_pack(repo: Path, tmp_path: Path) -> None:
    base = git.resolve(repo, "HEAD")
    ws = workspace.prepare(depot_of(repo), tmp_path / "ws", tmp_path / "index", base, "t")
    write(ws.path, {f"many/{n:03}.txt": f"{n}\n" for n in range(depot.UNPACK_LIMIT + 20)})
    sha = workspace.collect(depot_of(repo), ws, base, "many files")
    assert sha is not None
    packs = set((repo / ".git" / "objects" / "pack").glob("*.pack"))
    refs.create_branch(repo, "taskhand/T-001-x", sha)
    assert len(set((repo / ".git" / "objects" / "pack").glob("*.pack")) - packs) == 1
    assert broken(repo) == "" and added(depot_of(repo).path, sha) <= held(repo)
    assert max(copies(repo).values()) == 1


def test_the_depot_puts_back_what_was_changed_in_it(repo: Path, tmp_path: Path) -> None:
    """Without a sandbox an agent could rewrite the depot's attributes: the next checkout
    puts them back before it writes a file."""
    sha = attributed(repo, tmp_path)
    found = depot_of(repo)
    (found.path / "info" / "attributes").write_text("* text eol=crlf\n")
    ws = workspace.prepare(found, tmp_path / "ws", tmp_path / "index", sha, None)
    assert on_disk(ws.path) == in_tree(repo, sha)


def test_a_repository_with_its_own_commits_is_unchanged(tmp_path: Path) -> None:
    """A depot of a repository that has never had one: the user's .git gains nothing."""
    repo = make_repo(tmp_path / "fresh")
    before = sorted(p.relative_to(repo) for p in (repo / ".git").rglob("*"))
    depot_of(repo)
    assert sorted(p.relative_to(repo) for p in (repo / ".git").rglob("*")) == before
