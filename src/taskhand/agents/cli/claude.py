"""Claude Code reads settings only from a file taskhand wrote where the unit cannot write.

Claude Code reloads its settings files while it runs: user (`$CLAUDE_CONFIG_DIR`), project
(`.claude/settings.json`) and local (`.claude/settings.local.json`), all writable by the code
a unit runs. A command a reviewer runs that writes `{"env": {"ANTHROPIC_BASE_URL": ...}}` into
any of them sends the reviewer's next turns to a model of its own. So every run has
`--setting-sources ""` (none of those files is read) and `--settings` naming a copy of your
settings, made when the unit starts, in the folder of taskhand's own files (read-only inside the
sandbox). That also leaves out the `CLAUDE.md` files: the prompt carries the project's already,
and yours is added to the system prompt here, from a copy in that folder too.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

HOME = "CLAUDE_CONFIG_DIR"
SETTINGS = "claude-settings.json"  # the copy, in the folder of taskhand's own files
MEMORY_LIMIT = 64 * 1024  # bytes of your CLAUDE.md added to the system prompt


def flags(home: Mapping[str, str], folder: Path) -> list[str]:
    """The flags that give claude your settings (as copied into the unit's home before any of
    its processes ran) and no other: the copy is made on the first call and kept for the rest."""
    copy = folder / SETTINGS
    if not copy.exists():
        own = Path(home[HOME]) / "settings.json" if HOME in home else None
        text = own.read_bytes() if own is not None and own.is_file() else b"{}"
        folder.mkdir(parents=True, exist_ok=True)
        # Readable by you alone from the start: it may hold your keys, as your own file does.
        with os.fdopen(os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
            out.write(text)
    return ["--setting-sources", "", "--settings", str(copy)]


def memory(home: Mapping[str, str], folder: Path) -> list[str]:
    """The flags that add your CLAUDE.md (copied into the unit's home) to the system prompt, as
    claude would have loaded it: a copy in `folder`, so that it stays out of the transcript's
    argv; none without one."""
    path = Path(home[HOME]) / "CLAUDE.md" if HOME in home else None
    if path is None or not path.is_file():
        return []
    try:
        with path.open("rb") as file:
            text = file.read(MEMORY_LIMIT)
    except OSError:
        return []
    copy = folder / "claude-memory.md"
    copy.write_bytes(b"Your user's own instructions for Claude Code (their CLAUDE.md):\n\n" + text)
    return ["--append-system-prompt-file", str(copy)]
