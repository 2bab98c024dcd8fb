"""Reading a file another tool wrote and telling which tool: a Spec Kit `tasks.md` or a
Taskmaster `tasks.json`, known by what the file holds, never by its name. A file that is
neither is refused with one line naming it and the fix.
"""

from __future__ import annotations

import json
import re
from enum import StrEnum
from pathlib import Path
from typing import Any

from taskhand.errors import UserError
from taskhand.text import utf16

# Real files are tens of kilobytes; a cap keeps a mistaken path (a log, a dump) from being read.
MAX_BYTES = 4 * 1024 * 1024
# A task line as Spec Kit writes it, and as people do: `- [ ] T001`, `1. [ ] T001`,
# `- [~] T001`, `- [x] **T001**:`, `- **T001** [X]:`, `- ~~**T001**~~:`, `### T001 — ...`
# (speckit.py reads them).
SPECKIT_TASK_RE = re.compile(
    r"^(?:\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[^\[\]]\]\s+\*{0,2}\[?|(?:~~)?\*\*\[?)"
    r"|#{3,6}\s+(?:\[[^\[\]]\]\s*)?\*{0,2}\[?)T\d+[a-z]?\b",
    re.MULTILINE,
)
FIX_KINDS = "give a Spec Kit tasks.md or a Taskmaster tasks.json"


class SourceFormat(StrEnum):
    SPECKIT = "speckit"
    TASKMASTER = "taskmaster"

    @property
    def label(self) -> str:
        return "Spec Kit tasks.md" if self is SourceFormat.SPECKIT else "Taskmaster tasks.json"


class ImportFileError(UserError):
    """A file that cannot be imported: what is wrong with it, and the fix."""


def read_source(path: Path) -> str:
    """The text of the file to import, refused when it is missing, empty, binary or huge."""
    where = str(path)
    if not path.exists():
        raise ImportFileError("no such file", where=where, fix="check the path")
    if not path.is_file():
        raise ImportFileError("not a file", where=where, fix=FIX_KINDS)
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise ImportFileError(
                f"{size} bytes, over the {MAX_BYTES // (1024 * 1024)} MiB an import reads",
                where=where,
                fix=f"{FIX_KINDS}, not a larger file",
            )
        data = path.read_bytes()
    except OSError as exc:
        raise ImportFileError(
            f"cannot read it: {exc.strerror or exc}", where=where, fix="check permissions"
        ) from None
    if not data.strip():
        raise ImportFileError("the file is empty", where=where, fix=FIX_KINDS)
    codec = utf16(data)
    if codec is not None:  # as Windows tools save text: read it so
        try:
            return data.decode(codec).lstrip("\ufeff")
        except UnicodeDecodeError as exc:
            raise ImportFileError(
                f"UTF-16 text with a broken character (byte {exc.start})",
                where=where,
                fix="save it as UTF-8",
            ) from None
    if b"\x00" in data[:8192]:
        raise ImportFileError("a binary file, not text", where=where, fix=FIX_KINDS)
    try:
        return data.decode("utf-8").lstrip("\ufeff")
    except UnicodeDecodeError as exc:
        raise ImportFileError(
            f"not UTF-8 text (byte {exc.start})", where=where, fix="save it as UTF-8"
        ) from None


def detect(text: str, path: Path) -> tuple[SourceFormat, Any]:
    """Which tool wrote `text`, and for JSON the data read; refuses anything else."""
    if text.lstrip()[:1] in ("{", "["):
        return SourceFormat.TASKMASTER, parse_json(text, path)
    if SPECKIT_TASK_RE.search(text):
        return SourceFormat.SPECKIT, None
    try:  # JSON of another kind ("text", 42, null) is JSON: Taskmaster's reader says what it is
        return SourceFormat.TASKMASTER, json.loads(text, parse_float=str)
    except (json.JSONDecodeError, RecursionError):
        pass
    raise ImportFileError(
        "neither a Spec Kit tasks.md (no task line like '- [ ] T001 ...') "
        "nor a Taskmaster tasks.json (not JSON)",
        where=str(path),
        fix=FIX_KINDS,
    )


def parse_json(text: str, path: Path) -> Any:
    try:
        return json.loads(text, parse_float=str)  # as written: subtask id 10.10 is not 10.1
    except json.JSONDecodeError as exc:
        raise ImportFileError(
            f"malformed JSON: {exc.msg}",
            where=f"{path}:{exc.lineno}:{exc.colno}",
            fix="repair the JSON at that place, or restore the file from a backup",
        ) from None
    except RecursionError:
        raise ImportFileError(
            "malformed JSON: nested too deeply", where=str(path), fix="repair the file"
        ) from None
