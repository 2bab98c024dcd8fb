"""The deliveries' part of the store: one row per pull request a run opens (a task's, or the
run's own), written before and after each step outside, so that `show`, `stats` and a resumed
run all read where each delivery stands and which address its pull request has.
"""

from __future__ import annotations

from taskhand.state.database import Database, now
from taskhand.state.records import DeliveryRow, DeliveryState

RUN = ""  # the task id of a run's own pull request (one per run)


class DeliveryRows(Database):
    """The deliveries of the runs of one repository."""

    def delivery(self, run_id: str, task_id: str = RUN) -> DeliveryRow | None:
        rows = self._select(DeliveryRow, "run_id = ? AND task_id = ?", (run_id, task_id))
        return rows[0] if rows else None

    def deliveries(self, run_id: str) -> list[DeliveryRow]:
        """The run's deliveries, in the order they began."""
        return self._select(DeliveryRow, "run_id = ? ORDER BY rowid", (run_id,))

    def record_delivery(
        self,
        run_id: str,
        task_id: str,
        branch: str,
        base: str,
        state: DeliveryState,
        *,
        pr_url: str = "",
        reason: str = "",
    ) -> DeliveryRow:
        """Where the delivery stands now; a pull request's address, once known, is kept
        through a later failure (a retry asks for it again anyway)."""
        with self._write() as conn:
            conn.execute(
                "INSERT INTO deliveries (run_id, task_id, branch, base, pr_url, state, reason,"
                " updated) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
                " ON CONFLICT (run_id, task_id) DO UPDATE SET branch = ?3, base = ?4,"
                " pr_url = CASE WHEN ?5 = '' THEN pr_url ELSE ?5 END, state = ?6, reason = ?7,"
                " updated = ?8",
                (run_id, task_id, branch, base, pr_url, DeliveryState(state), reason, now()),
            )
        found = self.delivery(run_id, task_id)
        assert found is not None
        return found
