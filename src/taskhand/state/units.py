"""The units' part of the store: one row per unit of agent work (its role, agent, model,
prompt size, where its transcript is written, how it ended and what it consumed) and one per
gate an attempt ran, written as each starts and ends, so a killed run loses none of them.
"""

from __future__ import annotations

from taskhand.state.database import Database, now
from taskhand.state.records import Gate, UnitRow
from taskhand.unit import Case, Role, Usage


class UnitRows(Database):
    """The units and gates of the runs of one repository."""

    def start_unit(
        self,
        attempt_id: int,
        role: Role,
        agent: str,
        model: str | None,
        prompt: str,
        lens: str = "",
    ) -> int:
        """Open a unit of the attempt; its prompt's size is kept in bytes."""
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT INTO units (attempt_id, role, agent, model, started, prompt_bytes, lens)"
                " SELECT id, ?, ?, ?, ?, ?, ? FROM attempts WHERE id = ?",
                (Role(role), agent, model, now(), len(prompt.encode()), lens, attempt_id),
            )
            if cursor.rowcount == 0 or cursor.lastrowid is None:
                raise KeyError(f"no attempt {attempt_id}")
            return cursor.lastrowid

    def record_transcript(self, unit_id: int, transcript: str) -> None:
        """Where the unit's transcript is written as it goes, from its start (its end is
        `ended` and `outcome`, never the path)."""
        sql = "UPDATE units SET transcript = ? WHERE id = ?"
        self._update(sql, (transcript, unit_id), f"no unit {unit_id}")

    def finish_unit(
        self, unit_id: int, outcome: Case, usage: Usage, transcript: str | None
    ) -> None:
        """End a unit as `outcome` (a Case), with what it consumed."""
        sql = (
            "UPDATE units SET ended = ?, outcome = ?, tokens_in = ?, tokens_out = ?,"
            " tokens_cached = ?, cost = ?, cost_estimated = ?, transcript = ?,"
            " tokens_cache_write = ?, tokens_thinking = ? WHERE id = ?"
        )
        u = usage
        counts = (u.tokens_in, u.tokens_out, u.tokens_cached, u.cost, u.estimated)
        parts = (u.tokens_cache_write, u.tokens_thinking)
        params = (now(), Case(outcome), *counts, transcript, *parts, unit_id)
        self._update(sql, params, f"no unit {unit_id}")

    def units(self, run_id: str, task_id: str | None = None) -> list[UnitRow]:
        where = "run_id = ?1 AND (?2 IS NULL OR task_id = ?2) ORDER BY id"
        return self._select(UnitRow, where, (run_id, task_id))

    def record_gate(
        self,
        attempt_id: int,
        name: str,
        ok: bool,
        detail: str,
        exit_code: int | None = None,
        seconds: float | None = None,
        output: str = "",
    ) -> None:
        with self._write() as conn:
            conn.execute(
                "INSERT INTO gates (attempt_id, name, ok, detail, exit_code, seconds, output)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (attempt_id, name, ok, detail, exit_code, seconds, output),
            )

    def gates(self, attempt_id: int) -> list[Gate]:
        return self._select(Gate, "attempt_id = ? ORDER BY id", (attempt_id,))
