"""Pruning an ended attempt's workspace: the rebuildable folders git ignores go, with the
bytes they took; source, tracked files, the result commit and anything git does not ignore
stay; and nothing an agent planted makes the harness delete outside the workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from taskhand import workspace
from taskhand.workspace import Workspace, prune
from taskhand.workspace.snapshot import tree_digests
from tests.workspace.conftest import commit, depot_of, in_depot, run, write

IGNORE = "node_modules/\n__pycache__/\n.venv/\nbuild/\ndist/\n*.log\n"
MEGABYTE = 1024 * 1024


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    run(tmp_path, "init", "-q", "-b", "main", folder.name)
    commit(
        folder, "first", {"README.md": "# demo\n", "src/app.py": "x = 1\n", ".gitignore": IGNORE}
    )
    write(folder, {"build/keep.txt": "tracked, in an ignored folder\n"})
    run(folder, "add", "-f", "build/keep.txt")
    run(folder, "commit", "-q", "-m", "a tracked file under build/")
    return folder


def prepared(repo: Path, tmp_path: Path) -> Workspace:
    state = tmp_path / "state"
    return workspace.prepare(depot_of(repo), state / "ws", state / "indexes" / "ws", "HEAD", None)


def usage(folder: Path) -> int:
    """The bytes a folder takes on disk, every entry once, links not followed (like du)."""
    seen, total = set(), 0
    for top, folders, names in os.walk(folder):
        for name in [*folders, *names, *([""] if top == str(folder) else [])]:
            info = os.lstat(Path(top, name))
            if (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                total += info.st_blocks * 512
    return total


def listing(folder: Path) -> list[str]:
    found = []
    for top, folders, names in os.walk(folder):
        if top == str(folder):
            folders[:] = [f for f in folders if f != ".git"]
        found += [str(Path(top, n).relative_to(folder)) for n in [*folders, *names]]
    return sorted(found)


def test_pruning_frees_the_ignored_rebuildable_folders_and_keeps_the_rest(
    repo: Path, tmp_path: Path
) -> None:
    ws = prepared(repo, tmp_path)
    write(
        ws.path,
        {
            "src/new.py": "y = 2\n",  # the worker's source
            "node_modules/left-pad/index.js": "x" * MEGABYTE,
            "node_modules/left-pad/package.json": "{}\n",
            "src/__pycache__/app.cpython-311.pyc": "p" * 4096,
            ".venv/lib/site.py": "v" * 65536,
            "build/out.o": "o" * 8192,  # build/ holds a tracked file: it stays whole
            "target/release.bin": "t" * 4096,  # not ignored: git would take it
            "debug.log": "l\n",  # ignored, but a file, not a folder to rebuild
        },
    )
    result = workspace.collect(
        depot_of(repo), ws, run(repo, "rev-parse", "HEAD"), "T-1: the result"
    )
    assert result is not None
    before, tree = usage(ws.path), in_depot(repo, "rev-parse", f"{result}^{{tree}}")

    pruned = prune.prune(depot_of(repo), ws.path, ws.index, result)

    assert sorted(pruned.folders) == [".venv", "node_modules", "src/__pycache__"]
    assert pruned.bytes == before - usage(ws.path)
    assert pruned.bytes >= MEGABYTE
    assert listing(ws.path) == [
        ".gitignore",
        "README.md",
        "build",
        "build/keep.txt",
        "build/out.o",
        "debug.log",
        "src",
        "src/app.py",
        "src/new.py",
        "target",
        "target/release.bin",
    ]
    assert (ws.path / ".git" / "HEAD").is_file()  # the worker's own repository stays
    assert in_depot(repo, "rev-parse", f"{result}^{{tree}}") == tree
    assert in_depot(repo, "show", f"{result}:src/new.py") == "y = 2"
    assert prune.prune(depot_of(repo), ws.path, ws.index, result).folders == []  # nothing twice


def test_a_declared_path_keeps_its_folder(repo: Path, tmp_path: Path) -> None:
    ws = prepared(repo, tmp_path)
    write(ws.path, {"dist/app.js": "js\n", "src/__pycache__/a.pyc": "p\n"})
    head = run(repo, "rev-parse", "HEAD")
    pruned = prune.prune(depot_of(repo), ws.path, ws.index, head, keep=["dist/**", "src/**"])
    assert pruned.folders == ["src/__pycache__"]  # src/** names no __pycache__ of its own
    assert (ws.path / "dist" / "app.js").is_file()


def test_links_an_agent_planted_never_lead_the_pruning_outside(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, {"precious.txt": "mine\n", "node_modules/dep.js": "mine too\n"})
    ws = prepared(repo, tmp_path)
    # node_modules itself a link out, .venv a link to the user's repository, and a folder
    # whose own name is harmless but that is a link out, with a node_modules beyond it.
    (ws.path / "node_modules").symlink_to(outside, target_is_directory=True)
    (ws.path / ".venv").symlink_to(repo, target_is_directory=True)
    (ws.path / "pkg").symlink_to(outside, target_is_directory=True)
    # A real folder to prune, with links out inside it: they go, what they point at stays.
    write(
        ws.path,
        {".cache/blob": "c\n", ".gitignore": IGNORE + "node_modules\n.venv\npkg\n.cache/\n"},
    )
    (ws.path / ".cache" / "escape").symlink_to(outside, target_is_directory=True)
    (ws.path / ".cache" / "file").symlink_to(outside / "precious.txt")
    before = (tree_digests(outside), tree_digests(repo, with_git=True))

    pruned = prune.prune(depot_of(repo), ws.path, ws.index, run(repo, "rev-parse", "HEAD"))

    assert pruned.folders == [".cache"]
    assert not (ws.path / ".cache").exists()
    assert (tree_digests(outside), tree_digests(repo, with_git=True)) == before
    assert (ws.path / "node_modules").is_symlink() and (ws.path / "pkg").is_symlink()
    # Asked directly, the removal refuses every way through a link.
    for name in ("node_modules", ".venv", "pkg/node_modules", "../outside/node_modules"):
        assert prune.remove_inside(ws.path, name) is None
    assert (outside / "node_modules" / "dep.js").read_text() == "mine too\n"


def test_a_workspace_swapped_for_a_link_is_not_pruned(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, {"node_modules/dep.js": "mine\n", ".gitignore": "node_modules/\n"})
    link = tmp_path / "state" / "swapped"
    link.parent.mkdir(parents=True)
    link.symlink_to(outside, target_is_directory=True)
    pruned = prune.prune(depot_of(repo), link, tmp_path / "index", run(repo, "rev-parse", "HEAD"))
    assert pruned == prune.Pruned()
    assert (outside / "node_modules" / "dep.js").is_file()
