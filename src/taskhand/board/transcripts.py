"""A unit's transcript as the drawer and the Live dock show it: the JSONL file the harness
writes as the unit goes (and whole when it ends), read only at the path the store records and
only inside the repository's state folder, each message made one readable line (who, and what
was said, run or returned), its tail.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from taskhand.board.details import one_of
from taskhand.state.paths import StateDir
from taskhand.text import shorten

TAIL = 200  # lines shown unless the page asks for more
MOST = 5000  # lines the page may ask for
READ_BYTES = 8 * 1024 * 1024  # of a long transcript's end; older lines are counted as cut
TEXT_CHARS = 6000  # of one line's text (a prompt is long; its head says what it asked)
ROLE_CHARS = 40


def unit_transcript(
    plan_root: Path, repo: Path, task_id: str, unit_id: int, tail: int = TAIL
) -> dict[str, Any] | None:
    """The last `tail` lines of unit `unit_id`'s transcript; None when the task has no such
    unit in this plan's runs, or its transcript is not a file in the state folder."""
    picked = one_of(plan_root, repo, task_id, lambda s, run: s.units(run, task_id), unit_id)
    if picked is None:
        return None
    found, unit = picked
    if not unit.transcript:
        return None
    path = inside(found.state, unit.transcript)
    if path is None:
        return None
    # A working unit's file grows as it is read: a last line without its newline is not whole.
    lines, older = read_tail(path, READ_BYTES, whole_lines=unit.ended is None)
    shown = lines[-max(1, min(tail, MOST)) :]
    return {
        "unit": unit.id,
        "role": str(unit.role),
        "total": len(lines),
        "older": older,  # lines before the end read are not counted in the total
        "lines": [readable(line) for line in shown],
    }


def inside(state: StateDir, recorded: str) -> Path | None:
    """The transcript file at `recorded`, when it is a regular file inside the state folder
    (links followed: one out of the folder is refused)."""
    try:
        real = Path(recorded).resolve(strict=True)
        root = state.root.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    return real if real.is_relative_to(root) and real.is_file() else None


def read_tail(path: Path, limit: int, whole_lines: bool = False) -> tuple[list[str], bool]:
    """The file's lines within its last `limit` bytes, and whether older lines were left;
    with `whole_lines`, a last line no newline ends yet (still being written) is left out."""
    with path.open("rb") as file:
        size = os.fstat(file.fileno()).st_size
        older = size > limit
        if older:
            file.seek(size - limit)
        data = file.read(limit)
    if older:  # the first line read is only the end of one
        data = data[data.find(b"\n") + 1 :]
    if whole_lines:
        data = data[: data.rfind(b"\n") + 1]
    return [line for line in data.decode("utf-8", "replace").splitlines() if line.strip()], older


def readable(line: str) -> dict[str, str]:
    """One message as {role, text}: its content, then its other fields (a tool's action and
    target, an exit code, an outcome, a verdict) as `key: value`."""
    try:
        entry = json.loads(line)
    except ValueError:
        return {"role": "", "text": shorten(line, TEXT_CHARS)}
    if not isinstance(entry, dict):
        return {"role": "", "text": shorten(_shown(entry), TEXT_CHARS)}
    role = entry.get("role") or entry.get("type") or ""
    parts = []
    content = entry.get("content")
    if content not in (None, "", []):
        parts.append(_content(content))
    rest = [
        f"{key}: {_shown(value)}"
        for key, value in entry.items()
        if key not in ("role", "content") and value not in (None, "", [], {})
    ]
    if rest:
        parts.append(" · ".join(rest))
    return {
        "role": shorten(_shown(role), ROLE_CHARS),
        "text": shorten("\n".join(parts), TEXT_CHARS),
    }


def _content(content: object) -> str:
    """A message's content: text, or a list of parts whose text is joined."""
    if isinstance(content, list):
        texts = [p.get("text") for p in content if isinstance(p, dict)]
        if texts and all(isinstance(t, str) for t in texts):
            return "\n".join(str(t) for t in texts)
    return _shown(content)


def _shown(value: object) -> str:
    """A field's value as text: a string as it is, an object as its filled fields."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        filled = [(k, v) for k, v in value.items() if v not in (None, "", [], {})]
        return ", ".join(f"{k}: {_shown(v)}" for k, v in filled)
    return json.dumps(value, ensure_ascii=False)
