"""A unit's own copy of an agent program's home: the folders Claude Code, Codex, gemini or
opencode keep their settings, sessions and login in, made afresh in the unit's scratch folder
from yours. Inside the sandbox your own home stays read-only, so nothing an agent writes there
(a hook, an MCP server, a plugin, a `notify` command) runs in a later unit or in your own
sessions; a login the program refreshed during the unit is copied back, since the old one may
no longer work, but only when it is a refresh of yours and nothing more (login.py).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from taskhand.agents.cli import login as refresh


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
    tokens: frozenset[str] = frozenset()  # the login's fields a refresh may change


HOMES = {
    "claude": (
        Place(
            "CLAUDE_CONFIG_DIR",
            ".claude",
            ("settings.json", "CLAUDE.md"),
            (".credentials.json",),
            beside=(".claude.json",),
            tokens=refresh.CLAUDE,
        ),
    ),
    "codex": (
        Place(
            "CODEX_HOME",
            ".codex",
            ("config.toml", "AGENTS.md"),
            ("auth.json",),
            tokens=refresh.CODEX,
        ),
    ),
    # gemini's home is made by gemini.py; of yours only a Google sign-in is taken.
    "gemini": (
        Place(
            "GEMINI_CLI_HOME",
            "",
            (".gemini/google_accounts.json",),  # which account: no token in it
            (".gemini/oauth_creds.json",),
            tokens=refresh.GEMINI,
        ),
    ),
    "opencode": (  # through the XDG folders, which its own variables cannot all move
        Place(
            "XDG_CONFIG_HOME",
            ".config",
            ("opencode/opencode.json", "opencode/opencode.jsonc", "opencode/config.json"),
        ),
        Place(
            "XDG_DATA_HOME", ".local/share", login=("opencode/auth.json",), tokens=refresh.OPENCODE
        ),
        Place("XDG_STATE_HOME", ".local/state"),
    ),
}
# Where to find yours.
VARIABLES = ("HOME", *(place.variable for places in HOMES.values() for place in places))


@dataclass(frozen=True)
class Login:
    """One login file as copied in: yours, the unit's copy, the bytes yours held (None when you
    had none), and the fields a refresh may change."""

    yours: Path
    copy: Path
    held: bytes | None
    tokens: frozenset[str]


@dataclass
class Made:
    """A private home made for one unit: the variables to set, and each login file as copied
    in, for `keep_login`."""

    env: dict[str, str]
    logins: list[Login]


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
            held = _copy(source / file, private / file)
            made.logins.append(Login(source / file, private / file, held, place.tokens))
        made.env[place.variable] = str(private)
    return made


def keep_login(made: Made) -> list[str]:
    """Copy back each login file the program refreshed during the unit, when it is a refresh
    of yours (login.py) and nothing else changed yours meanwhile (another unit's refresh).
    Returns a note for each login left out, for the unit's transcript; never raises, since a
    unit's work stands whatever its program did to its login."""
    notes = []
    for login in made.logins:
        why = _left_out(login)
        if why:
            notes.append(f"your {login.yours.name} was not updated from the unit's copy: {why}")
    return notes


def _left_out(login: Login) -> str:
    """Copy `login` back when it was refreshed; why not when it was changed otherwise."""
    if login.held is None:
        there = os.path.lexists(login.copy)
        return "you had none, and the program's is not copied into your home" if there else ""
    now = refresh.read_regular(login.copy)
    if isinstance(now, str):
        return f"the unit's copy {now}"
    if now == login.held:
        return ""
    try:
        why = refresh.difference(refresh.parse(login.held), refresh.parse(now), login.tokens)
    except refresh.NotJson as exc:
        return f"it is not JSON as written ({exc})"
    if why:
        return f"more than a token refresh ({why})"
    if _read(login.yours) != login.held:
        return "yours changed during the unit (another unit refreshed it first)"
    try:
        _replace(login.yours, now)
    except OSError as exc:
        return f"it could not be written ({exc.strerror})"
    return ""


def _replace(path: Path, data: bytes) -> None:
    """Put `data` at `path` at once, readable by you alone: a reader sees the old or the new."""
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


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
