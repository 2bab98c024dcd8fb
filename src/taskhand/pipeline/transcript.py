"""A unit's transcript file (JSONL), written as the unit goes: each message its backend tells
the unit, redacted, as one JSON line flushed at once, so a board can show a working unit's
tail; when the unit ends, the whole final transcript takes its place.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO

from taskhand.host.secrets import Redactor


class TranscriptFile:
    """The transcript of one unit at `path`. Every message is redacted before it is written:
    a secret never reaches the file, live or final."""

    def __init__(self, path: Path, redact: Redactor) -> None:
        self.path = path
        self.redact = redact
        self.failure = ""  # why writing as the unit goes stopped; "" while it goes on
        self._file: IO[str] | None = None

    def open(self) -> None:
        """Create the file, empty, for the messages to come."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("w", encoding="utf-8")
        except OSError as exc:
            self._stop(exc)

    def add(self, message: dict[str, object]) -> None:
        """One message as it happens (the unit's `on_message`). It never raises: a file that
        cannot be written stops the writing as it goes, never the unit."""
        if self._file is None:
            return
        try:
            self._file.write(json.dumps(self.redact.value(message)) + "\n")
            self._file.flush()
        except Exception as exc:  # whatever breaks here, the unit goes on
            self._stop(exc)

    def close(self) -> None:
        if self._file is not None:
            file, self._file = self._file, None
            try:
                file.close()
            except OSError as exc:
                self.failure = self.failure or str(exc)

    def finish(self, messages: list[dict[str, object]]) -> None:
        """The unit's whole transcript, redacted, in place of what was written as it went; the
        new file is renamed over the old, so a reader sees one or the other, never half."""
        self.close()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        written = self.path.with_name(self.path.name + ".part")
        lines = "".join(json.dumps(m) + "\n" for m in self.redact.value(messages))
        written.write_text(lines, encoding="utf-8")
        os.replace(written, self.path)

    def _stop(self, exc: Exception) -> None:
        self.failure = f"{type(exc).__name__}: {exc}"
        self.close()
