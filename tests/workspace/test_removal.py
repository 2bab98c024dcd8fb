"""Deleting what an agent had: at any depth, through unwritable, unreadable and immutable
folders, never through a link, and saying what stayed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from taskhand.workspace.removal import remove_tree
from taskhand.workspace.snapshot import tree_digests

ROOT = os.geteuid() == 0


def deep(top: Path, levels: int) -> None:
    """`levels` folders one in another below `top`, deeper than any path can name."""
    fd = os.open(top, os.O_RDONLY)
    try:
        for _ in range(levels):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        os.close(os.open("f", os.O_CREAT | os.O_WRONLY, dir_fd=fd))
        os.fchmod(fd, 0o555)
    finally:
        os.close(fd)


def test_folders_nested_past_path_max_are_deleted(tmp_path: Path) -> None:
    top = tmp_path / "ws"
    top.mkdir()
    deep(top, 2500)  # 5000 bytes of path: past PATH_MAX, and past Python's recursion limit
    done = remove_tree(top)
    assert done.left == [] and not top.exists()


def test_unwritable_and_unreadable_folders_are_deleted(tmp_path: Path) -> None:
    top = tmp_path / "ws"
    (top / "a" / "b").mkdir(parents=True)
    (top / "a" / "b" / "f").write_text("x")
    (top / "c").mkdir()
    (top / "c" / "g").write_text("y")
    (top / "c" / "g").chmod(0)
    (top / "a" / "b").chmod(0o555)
    (top / "a").chmod(0)
    (top / "c").chmod(0o500)
    os.mkfifo(top / "pipe")
    done = remove_tree(top)
    assert done.left == [] and not top.exists()
    assert done.bytes > 0


@pytest.mark.skipif(not ROOT, reason="chattr +i and +a need root")
def test_immutable_and_append_only_entries_are_deleted(tmp_path: Path) -> None:
    top = tmp_path / "ws"
    (top / "imm").mkdir(parents=True)
    (top / "imm" / "f").write_text("x")
    (top / "app").mkdir()
    (top / "app" / "g").write_text("y")
    subprocess.run(["chattr", "+i", top / "imm" / "f", top / "imm"], check=True)
    subprocess.run(["chattr", "+a", top / "app" / "g", top / "app", top], check=True)
    done = remove_tree(top)
    assert done.left == [] and not top.exists()


@pytest.mark.skipif(not ROOT, reason="chattr +i needs root")
def test_what_cannot_be_deleted_is_said_not_raised(tmp_path: Path) -> None:
    """Without the right to clear the flag (root's CAP_LINUX_IMMUTABLE dropped), the rest goes
    and each entry that stayed is named."""
    top = tmp_path / "ws"
    (top / "imm").mkdir(parents=True)
    (top / "imm" / "f").write_text("x")
    (top / "other").write_text("z")
    subprocess.run(["chattr", "+i", top / "imm" / "f"], check=True)
    code = (
        "import sys; from pathlib import Path; from taskhand.workspace.removal import remove_tree;"
        "print(remove_tree(Path(sys.argv[1])).left)"
    )
    weaker = ["setpriv", "--inh-caps=-linux_immutable", "--bounding-set=-linux_immutable"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    try:
        done = subprocess.run(
            [*weaker, sys.executable, "-c", code, str(top)],
            capture_output=True, text=True, env=env, check=True,
        )  # fmt: skip
        assert done.stdout.strip() == (
            "['ws/imm/f: Operation not permitted', 'ws/imm: Directory not empty', "
            "'ws: Directory not empty']"
        )
        assert not (top / "other").exists() and (top / "imm" / "f").exists()
    finally:
        subprocess.run(["chattr", "-i", top / "imm" / "f"], check=True)
    assert remove_tree(top).left == []


def test_links_are_deleted_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "keep").mkdir(parents=True)
    (outside / "keep" / "precious.txt").write_text("mine\n")
    top = tmp_path / "ws"
    (top / "sub").mkdir(parents=True)
    (top / "sub" / "to-folder").symlink_to(outside / "keep", target_is_directory=True)
    (top / "to-file").symlink_to(outside / "keep" / "precious.txt")
    before = tree_digests(outside)
    assert remove_tree(top).left == []
    assert tree_digests(outside) == before and not top.exists()
    # The folder itself a link: the link goes, what it points at stays.
    link = tmp_path / "swapped"
    link.symlink_to(outside, target_is_directory=True)
    assert remove_tree(link).left == []
    assert not link.is_symlink() and tree_digests(outside) == before


def test_a_file_and_nothing_are_fine(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    assert remove_tree(tmp_path / "f").left == []
    assert remove_tree(tmp_path / "missing").left == []
    assert not (tmp_path / "f").exists()
