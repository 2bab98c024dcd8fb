"""A unit's own copy of an agent program's home: the folder Claude Code or Codex keeps its
settings, sessions and login in, made afresh in the unit's scratch folder from your settings
and login. Inside the sandbox your own home stays read-only, so nothing an agent writes there (a
hook, an MCP server, a `notify` command) runs in a later unit or in your own sessions; a login
the program refreshed during the unit is copied back, since the old one may no longer work.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Home:
    variable: str  # the program's variable naming its home
    default: str  # its home under $HOME when the variable is unset
    settings: tuple[str, ...]  # your files copied in for the unit, never back
    login: tuple[str, ...]  # copied in, and back when the program refreshed them
    # Files the program keeps beside its default home (claude's ~/.claude.json), and inside
    # the home the variable names: copied in like the settings.
    beside: tuple[str, ...] = ()


HOMES = {
    "claude": Home(
        "CLAUDE_CONFIG_DIR",
        ".claude",
        ("settings.json", "CLAUDE.md"),
        (".credentials.json",),
        beside=(".claude.json",),
    ),
    "codex": Home("CODEX_HOME", ".codex", ("config.toml", "AGENTS.md"), ("auth.json",)),
}
VARIABLES = ("HOME", *(home.variable for home in HOMES.values()))  # where to find yours


@dataclass
class Made:
    """A private home made for one unit: the variable to set, and the login files as copied in
    (their source and the bytes both sides held), for `keep_login`."""

    env: dict[str, str]
    logins: list[tuple[Path, Path, bytes | None]]


def make(name: str, scratch: Path, environ: Mapping[str, str]) -> Made | None:
    """Make `name`'s home under `scratch` from the user's, or None for a program without one."""
    home = HOMES.get(name)
    if home is None:
        return None
    own = environ.get(home.variable, "")
    user_home = Path(environ.get("HOME") or Path.home())
    source = Path(own) if own else user_home / home.default
    beside = source if own else user_home
    private = scratch / f"{name}-home"
    private.mkdir(mode=0o700)
    for file in home.settings:
        _copy(source / file, private / file)
    for file in home.beside:
        _copy(beside / file, private / file)
    logins = [(source / f, private / f, _copy(source / f, private / f)) for f in home.login]
    return Made({home.variable: str(private)}, logins)


def keep_login(made: Made) -> None:
    """Copy back each login file the program rewrote during the unit, when it is still JSON
    (a refreshed token) and nothing else changed yours meanwhile (another unit's refresh)."""
    for source, private, copied in made.logins:
        try:
            now = private.read_bytes()
        except OSError:
            continue
        if now == copied or not _json(now) or _read(source) != copied:
            continue
        temporary = source.with_name(f".{source.name}.taskhand")
        temporary.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(now)
        os.replace(temporary, source)


def _copy(source: Path, target: Path) -> bytes | None:
    """Copy a regular file (a link's target included); what it held, None when there was none."""
    if not source.is_file():
        return None
    shutil.copyfile(source, target)
    target.chmod(0o600)
    return target.read_bytes()


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _json(data: bytes) -> bool:
    try:
        return isinstance(json.loads(data), dict)
    except ValueError:
        return False
