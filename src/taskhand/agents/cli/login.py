"""Whether a login file an agent program left in its unit's home is only a refresh of yours:
the same JSON with the same keys, nesting and value types, where only the fields a token
refresh rewrites differ. Anything else (a new provider entry opencode would act on, a changed
address, another file in its place) is not copied back into your home.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

# Real login files are a few kilobytes; a bigger one is not a refresh.
SIZE_LIMIT = 256 * 1024

# The fields each program's refresh rewrites, by name at any depth of its login file:
# Claude Code's `.credentials.json` (`claudeAiOauth`, and `mcpOAuth` entries, hold
# accessToken, refreshToken, expiresAt, refreshTokenExpiresAt); Codex's `auth.json` (`tokens`
# with id_token, access_token, refresh_token; `last_refresh`); opencode's `auth.json` (an
# `oauth` entry per provider with access, refresh, expires); gemini's `oauth_creds.json`
# (google-auth-library's access_token, refresh_token, id_token, expiry_date).
CLAUDE = frozenset({"accessToken", "refreshToken", "expiresAt", "refreshTokenExpiresAt"})
CODEX = frozenset({"id_token", "access_token", "refresh_token", "last_refresh"})
OPENCODE = frozenset({"access", "refresh", "expires"})
GEMINI = frozenset({"access_token", "refresh_token", "id_token", "expiry_date"})


class NotJson(ValueError):
    """Text that is not JSON as the programs write it (one object, UTF-8, no repeated key)."""


def read_regular(path: Path) -> bytes | str:
    """The bytes of `path` when it is a regular file of at most SIZE_LIMIT bytes (never through
    a link, never waiting on a pipe), else why not."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return "is a link" if path.is_symlink() else "cannot be read"
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return "is not a regular file"
    with os.fdopen(fd, "rb") as file:
        data = file.read(SIZE_LIMIT + 1)
    return data if len(data) <= SIZE_LIMIT else f"is over {SIZE_LIMIT // 1024} KiB"


def parse(data: bytes) -> dict[str, Any]:
    """The JSON object `data` holds, read strictly: a repeated key, NaN or another encoding
    could be read one way here and another way by the program."""

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in pairs]
        if len(set(keys)) != len(keys):
            raise NotJson("a key is repeated")
        return dict(pairs)

    def constant(name: str) -> Any:
        raise NotJson(f"{name} is not JSON")

    try:
        found = json.loads(data.decode("utf-8"), object_pairs_hook=unique, parse_constant=constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise NotJson(str(exc)) from None
    if not isinstance(found, dict):
        raise NotJson("it is not a JSON object")
    return found


def difference(old: Any, new: Any, tokens: frozenset[str], where: str = "") -> str:
    """What in `new` is more than a refresh of `old` ("" when nothing is): a key added or
    removed, a value whose type changed, or a change to a field not in `tokens`."""
    if type(old) is not type(new):
        return f"{where or 'the file'} changed type"
    if isinstance(old, dict) and isinstance(new, dict):
        if old.keys() != new.keys():
            added, removed = new.keys() - old.keys(), old.keys() - new.keys()
            key = min(added or removed)
            return f"{_field(where, key)} was {'added' if added else 'removed'}"
        for key, value in old.items():
            inner = _field(where, key)
            if key in tokens and isinstance(value, str | int | float):
                if type(value) is not type(new[key]):
                    return f"{inner} changed type"
                continue
            if found := difference(value, new[key], tokens, inner):
                return found
        return ""
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            return f"{where or 'the file'} changed length"
        for index, (was, now) in enumerate(zip(old, new, strict=True)):
            if found := difference(was, now, tokens, f"{where}[{index}]"):
                return found
        return ""
    return "" if old == new else f"{where or 'the file'} changed"


def _field(where: str, key: str) -> str:
    # repr: a key is the agent's text, and must not forge a line of the transcript.
    return f"{where}[{key!r}]"
