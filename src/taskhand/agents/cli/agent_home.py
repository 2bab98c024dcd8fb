"""A unit's own copy of an agent program's home: the folders Claude Code, Codex, gemini or
opencode keep their settings, sessions and login in, made afresh in the unit's scratch folder
from yours. Inside the sandbox your own home stays read-only, so nothing an agent writes there
(a hook, an MCP server, a plugin, a `notify` command) runs in a later unit or in your own
sessions; a login the program refreshed during the unit is copied back, since the old one may
no longer work.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Place:
    """One folder of a program's home, found through a variable."""

    variable: str  # the variable naming it, which the unit's copy is given in
    default: str  # where it is under $HOME when the variable is unset
    settings: tuple[str, ...] = ()  # your files copied in for the unit, never back
    login: tuple[str, ...] = ()  # copied in, and back when the program refreshed them
    # Files kept beside the default folder (claude's ~/.claude.json), but inside the folder
    # the variable names: copied in like the settings.
    beside: tuple[str, ...] = ()


HOMES = {
    "claude": (
        Place(
            "CLAUDE_CONFIG_DIR",
            ".claude",
            ("settings.json", "CLAUDE.md"),
            (".credentials.json",),
            beside=(".claude.json",),
        ),
    ),
    "codex": (Place("CODEX_HOME", ".codex", ("config.toml", "AGENTS.md"), ("auth.json",)),),
    # gemini's home is made by gemini.py; of yours only a Google sign-in is taken.
    "gemini": (
        Place(
            "GEMINI_CLI_HOME",
            "",
            login=(".gemini/oauth_creds.json", ".gemini/google_accounts.json"),
        ),
    ),
    "opencode": (  # through the XDG folders, which its own variables cannot all move
        Place(
            "XDG_CONFIG_HOME",
            ".config",
            ("opencode/opencode.json", "opencode/opencode.jsonc", "opencode/config.json"),
        ),
        Place("XDG_DATA_HOME", ".local/share", login=("opencode/auth.json",)),
        Place("XDG_STATE_HOME", ".local/state"),
    ),
}
# Where to find yours.
VARIABLES = ("HOME", *(place.variable for places in HOMES.values() for place in places))


@dataclass
class Made:
    """A private home made for one unit: the variables to set, and each login file as copied in
    (yours, the copy, and the bytes both held), for `keep_login`."""

    env: dict[str, str]
    logins: list[tuple[Path, Path, bytes | None]]


def make(name: str, scratch: Path, environ: Mapping[str, str]) -> Made | None:
    """Make `name`'s home under `scratch` from the user's, or None for a program without one."""
    places = HOMES.get(name)
    if places is None:
        return None
    user_home = Path(environ.get("HOME") or Path.home())
    made = Made({}, [])
    for place in places:
        own = environ.get(place.variable, "")
        source = Path(own) if own else user_home / place.default
        private = scratch / f"{name}-home" / place.variable.lower()
        private.mkdir(mode=0o700, parents=True)
        for file in place.settings:
            _copy(source / file, private / file)
        for file in place.beside:
            _copy((source if own else user_home) / file, private / file)
        for file in place.login:
            made.logins.append(
                (source / file, private / file, _copy(source / file, private / file))
            )
        made.env[place.variable] = str(private)
    return made


def keep_login(made: Made) -> None:
    """Copy back each login file the program rewrote during the unit, when it is still JSON
    (a refreshed token) and nothing else changed yours meanwhile (another unit's refresh)."""
    for source, private, copied in made.logins:
        now = _read(private)
        if now is None or now == copied or not _json(now) or _read(source) != copied:
            continue
        temporary = source.with_name(f".{source.name}.taskhand")
        _write(temporary, now)
        os.replace(temporary, source)


def _copy(source: Path, target: Path) -> bytes | None:
    """Copy a regular file (a link's target included); what it held, None when there was none."""
    data = _read(source) if source.is_file() else None
    if data is not None:
        _write(target, data)
    return data


def _write(path: Path, data: bytes) -> None:
    """Write `data` readable by you alone from the start: it may be a login."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


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
