"""The files `[setup] copy` brings from the user's checkout into an attempt's workspace (a
`.env`, a local configuration): each a regular file inside the repository, read and written
without following a link, its bytes and permission bits copied; never part of a candidate
(`workspace.collect` keeps them out); and the secrets they hold, for the redactor.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

from taskhand.errors import UserError
from taskhand.host.secrets import secret_parts

MAX_BYTES = 64 * 1024 * 1024  # a copied file is configuration, not data
SECRETS_BYTES = 1024 * 1024  # read for its secrets: a larger file is not a settings file
CHUNK = 1024 * 1024
# `NAME=value`, `export NAME="value"`, `name: value`: a settings line; and `"name": "value"`
# pairs anywhere (JSON on one line or many).
_SETTING = re.compile(r"""\s*(?:export\s+)?["']?([A-Za-z_][\w.-]*)["']?\s*[:=]\s*(.*)""")
_PAIR = re.compile(r'"([^"\\]+)"\s*:\s*"((?:[^"\\]|\\.)*)"')


class SetupError(UserError):
    """A file `[setup] copy` names that cannot be copied; the message says which and why."""


class _Refused(Exception):
    """Why a path cannot be opened the safe way, in words."""


def source_problem(repo: Path, relative: str) -> str:
    """Why `relative` cannot be copied from the checkout at `repo`, or ""."""
    try:
        with _opened(repo, relative, "your checkout"):
            return ""
    except _Refused as exc:
        return str(exc)


def copy_into(repo: Path, workspace: Path, relatives: Sequence[str]) -> None:
    """Copy each of `relatives` from `repo` to the same place in `workspace`, folders made
    as needed; SetupError naming the first that cannot be copied (a link on either side, a
    file that is not a regular one, one too large)."""
    for relative in relatives:
        try:
            with _opened(repo, relative, "your checkout") as (source, mode):
                _write(source, mode, workspace, relative)
        except _Refused as exc:
            raise SetupError(
                f"[setup] copy: {relative} {exc}",
                fix="make it a regular file inside the repository, or take it out of [setup] copy",
            ) from None


def secrets_in(repo: Path, relatives: Sequence[str]) -> list[str]:
    """The secrets the files hold, read as settings lines: a value under a secret-looking
    name whole, else its secret-shaped parts (as for an environment variable)."""
    found: list[str] = []
    for relative in relatives:
        try:
            with _opened(repo, relative, "your checkout") as (fd, _):
                raw = os.read(fd, SECRETS_BYTES + 1)
        except _Refused:
            continue
        if len(raw) > SECRETS_BYTES:
            continue
        text = raw.decode("utf-8", errors="replace")
        for name, value in _PAIR.findall(text):
            found.extend(secret_parts(name, value))
        for line in text.splitlines():
            setting = _SETTING.fullmatch(line)
            if setting is not None:
                value = setting.group(2).strip().rstrip(",").strip().strip("\"'")
                found.extend(secret_parts(setting.group(1), value))
    return found


@contextmanager
def _opened(root: Path, relative: str, place: str) -> Iterator[tuple[int, int]]:
    """The regular file `relative` under `root`, opened for reading without following a
    link on the way, and its mode."""
    parts = relative.split("/")
    folder = _folder(root, parts[:-1], place, make=False)
    try:
        # Non-blocking: opening a FIFO someone left there must not wait for a writer.
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
        fd = os.open(parts[-1], flags, dir_fd=folder)
    except OSError as exc:
        raise _Refused(_why(exc, place)) from None
    finally:
        os.close(folder)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _Refused(f"is not a regular file in {place}")
        if info.st_size > MAX_BYTES:
            raise _Refused(f"is larger than {MAX_BYTES // (1024 * 1024)} MB")
        yield fd, stat.S_IMODE(info.st_mode)
    finally:
        os.close(fd)


def _write(source: int, mode: int, workspace: Path, relative: str) -> None:
    parts = relative.split("/")
    place = "the workspace"
    folder = _folder(workspace, parts[:-1], place, make=True)
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
        target = os.open(parts[-1], flags, 0o600, dir_fd=folder)
    except OSError as exc:
        raise _Refused(_why(exc, place)) from None
    finally:
        os.close(folder)
    try:
        if not stat.S_ISREG(os.fstat(target).st_mode):
            raise _Refused(f"is not a regular file in {place}")
        while chunk := os.read(source, CHUNK):
            os.write(target, chunk)
        os.fchmod(target, mode & 0o777)
    finally:
        os.close(target)


def _folder(root: Path, names: list[str], place: str, make: bool) -> int:
    """An open descriptor of the folder `names` under `root`, never through a link; with
    `make`, missing folders are created."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for name in names:
        try:
            if make:
                with suppress(FileExistsError):
                    os.mkdir(name, 0o755, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
        except OSError as exc:
            os.close(fd)
            raise _Refused(_why(exc, place)) from None
        os.close(fd)
        fd = inner
    return fd


def _why(exc: OSError, place: str) -> str:
    if exc.errno == errno.ENOENT:
        return f"does not exist in {place}"
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        return f"is a symbolic link, or lies under one or under a file, in {place}"
    if exc.errno == errno.EISDIR:
        return f"is a folder in {place}"
    return f"cannot be opened in {place} ({exc.strerror or exc})"
