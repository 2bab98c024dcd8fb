"""The files `[setup] copy` brings into a workspace: bytes and permission bits copied, folders
made; a link on either side, or anything but a regular file, refused without a byte written
outside the workspace; and the secrets such files hold, found for the redactor."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from taskhand.workspace.setup_files import SetupError, copy_into, secrets_in, source_problem


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    folder = tmp_path / "checkout"
    (folder / "config").mkdir(parents=True)
    (folder / ".env").write_text("API_KEY=abc123secretvalue\nNAME=bookmarks\n")
    (folder / "config" / "local.json").write_text('{"password": "pw-0001-xyz", "port": 3000}\n')
    (folder / "tool.sh").write_text("#!/bin/sh\n")
    (folder / "tool.sh").chmod(0o750)
    return folder


def test_files_are_copied_with_their_bits_into_new_folders(checkout: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    copy_into(checkout, workspace, [".env", "config/local.json", "tool.sh"])
    assert (workspace / ".env").read_text() == (checkout / ".env").read_text()
    assert (workspace / "config" / "local.json").read_text().startswith('{"password"')
    assert (workspace / "tool.sh").stat().st_mode & 0o777 == 0o750


def test_a_file_the_workspace_has_is_overwritten(checkout: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "config").mkdir(parents=True)
    (workspace / "config" / "local.json").write_text("committed, much longer than the copy " * 9)
    copy_into(checkout, workspace, ["config/local.json"])
    assert (workspace / "config" / "local.json").read_text() == (
        checkout / "config" / "local.json"
    ).read_text()


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda c: os.symlink("/etc/hostname", c / "linked"), "is a symbolic link"),
        (lambda c: os.symlink("config", c / "via"), "is a symbolic link, or lies under one"),
        (lambda c: os.mkfifo(c / "linked"), "is not a regular file"),
        (lambda c: (c / "linked").mkdir(), "is not a regular file"),
        (lambda c: None, "does not exist in your checkout"),
    ],
)
def test_what_is_not_a_regular_file_of_the_checkout_is_refused(
    checkout: Path, tmp_path: Path, make: object, says: str
) -> None:
    make(checkout)  # type: ignore[operator]
    name = "via/local.json" if (checkout / "via").exists() else "linked"
    assert says in source_problem(checkout, name)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with pytest.raises(SetupError, match=f"copy: {name} {says}") as refused:
        copy_into(checkout, workspace, [name])
    assert "(fix: " in str(refused.value) and "\n" not in str(refused.value)
    assert list(workspace.iterdir()) == []


def test_a_link_in_the_workspace_is_never_written_through(checkout: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    os.symlink(outside, workspace / "config")  # a link the base commit holds
    os.symlink(outside / "env", workspace / ".env")
    for name in ("config/local.json", ".env"):
        with pytest.raises(SetupError, match=r"is a symbolic link.* in the workspace"):
            copy_into(checkout, workspace, [name])
    assert list(outside.iterdir()) == []


def test_secrets_are_the_values_of_secret_settings(checkout: Path) -> None:
    found = secrets_in(checkout, [".env", "config/local.json", "missing.env"])
    assert "abc123secretvalue" in found and "pw-0001-xyz" in found
    assert "bookmarks" not in found and "3000" not in found
