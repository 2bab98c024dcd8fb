"""The run's event log in the state database: each event appended under the catalogue's
check (`events.check`), never rewritten (the database itself refuses), read back in order.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from taskhand.state.database import Database, now, to_json
from taskhand.state.events import Event, EventKind, check

# The events that recovery reads back to decide what to do (the guard's integrated commits, a
# paused attempt's case); every other event only tells what happened (the state it describes
# is in the other tables), so it is written without an fsync.
ACTED_ON = frozenset({EventKind.INTEGRATED, EventKind.ATTEMPT_PAUSED})


class EventLog(Database):
    """The log's part of the store."""

    def event(self, run_id: str, kind: EventKind, task_id: str | None = None, **data: Any) -> Event:
        """Append to the run's log: `kind` is an EventKind and `data` its payload's fields
        (events.PAYLOADS). Values that JSON cannot hold are written as their str()."""
        known = check(kind, data)
        with self._write(synced=known in ACTED_ON) as conn:
            return self._log(conn, run_id, known, task_id, data)

    def events(self, run_id: str, after: int = 0) -> list[Event]:
        """The run's events with an id above `after`, oldest first (for tailing the log)."""
        return self._select(Event, "run_id = ? AND id > ? ORDER BY id", (run_id, after))

    def newest_event(self, run_id: str) -> int:
        """The id of the run's newest event, 0 before its first: where a tail starts."""
        rows = self._rows("SELECT MAX(id) AS id FROM events WHERE run_id = ?", (run_id,))
        return int(rows[0]["id"] or 0)

    def events_of(self, run_id: str, kind: EventKind) -> list[Event]:
        """The run's events of one kind (an EventKind), oldest first."""
        return self._select(Event, "run_id = ? AND kind = ? ORDER BY id", (run_id, kind))

    def _log(
        self,
        conn: sqlite3.Connection,
        run_id: str,
        kind: EventKind,
        task_id: str | None,
        data: dict[str, Any],
    ) -> Event:
        """Append to the run's log inside the caller's transaction."""
        text = to_json(data)
        ts = now()
        cursor = conn.execute(
            "INSERT INTO events (run_id, ts, kind, task_id, data) VALUES (?, ?, ?, ?, ?)",
            (run_id, ts, kind, task_id, text),
        )
        assert cursor.lastrowid is not None
        return Event(cursor.lastrowid, run_id, ts, kind, task_id, json.loads(text))
