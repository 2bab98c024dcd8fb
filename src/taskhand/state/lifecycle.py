"""The lifecycle's part of the store: each task's lifecycle record, the interview's questions
and a person's remarks, kept per plan because a task's life spans runs and people move tasks
between them. Every write is one short transaction, so a move and a run never tear a row.
"""

from __future__ import annotations

from typing import Any

from taskhand.state.database import now, to_json
from taskhand.state.life import Lifecycle, Question, Remark, TaskLife
from taskhand.state.log import EventLog

_KEEP = object()  # "leave this column as it is"


class LifecycleRows(EventLog):
    """Lifecycle records, questions and remarks of the plans of one repository."""

    def life(self, plan: str, task_id: str) -> TaskLife | None:
        rows = self._select(TaskLife, "plan = ? AND task_id = ?", (plan, task_id))
        return rows[0] if rows else None

    def lives(self, plan: str) -> dict[str, TaskLife]:
        return {r.task_id: r for r in self._select(TaskLife, "plan = ?", (plan,))}

    def set_life(
        self,
        plan: str,
        task_id: str,
        status: Lifecycle,
        *,
        waiting: bool = False,
        resume: Any = _KEEP,
        reason: Any = None,
        bounce: bool = False,
        round_done: bool = False,
        pr: Any = _KEEP,
    ) -> TaskLife:
        """Move the task to `status` (waiting on a person or not); `bounce` and `round_done`
        count a qa fail or judge rejection and a designer round in the same transaction."""
        status = Lifecycle(status)
        with self._write() as conn:
            conn.execute(
                "INSERT INTO lifecycle (plan, task_id, status, updated) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (plan, task_id) DO NOTHING",
                (plan, task_id, status, now()),
            )
            sets = ["status = ?", "waiting = ?", "reason = ?", "updated = ?"]
            params: list[Any] = [status, int(waiting), reason, now()]
            if resume is not _KEEP:
                sets.append("resume = ?")
                params.append(str(resume or ""))
            if pr is not _KEEP:
                sets.append("pr = ?")
                params.append(pr)
            if bounce:
                sets.append("bounces = bounces + 1")
            if round_done:
                sets.append("rounds = rounds + 1")
            conn.execute(
                f"UPDATE lifecycle SET {', '.join(sets)} WHERE plan = ? AND task_id = ?",
                (*params, plan, task_id),
            )
        life = self.life(plan, task_id)
        assert life is not None
        return life

    def restart_lives(self, plan: str, task_ids: list[str]) -> None:
        """A fresh start of these tasks (a reopen's caps): bounces and rounds count anew."""
        with self._write() as conn:
            conn.executemany(
                "UPDATE lifecycle SET bounces = 0, rounds = 0 WHERE plan = ? AND task_id = ?",
                [(plan, t) for t in task_ids],
            )

    def forget_lives(self, plan: str) -> None:
        """A new run from scratch: every task of the plan but a person's drafts starts over."""
        with self._write() as conn:
            conn.execute(
                "DELETE FROM lifecycle WHERE plan = ? AND status != ?", (plan, Lifecycle.DRAFT)
            )
            conn.execute("DELETE FROM questions WHERE plan = ?", (plan,))

    # The interview

    def ask(self, plan: str, task_id: str, text: str, options: list[str], stage: str) -> Question:
        """Record a question (numbered after the task's last) asked by `stage`."""
        with self._write() as conn:
            row = conn.execute(
                "SELECT COALESCE(MAX(number), 0) FROM questions WHERE plan = ? AND task_id = ?",
                (plan, task_id),
            ).fetchone()
            number = int(row[0]) + 1
            conn.execute(
                "INSERT INTO questions (plan, task_id, number, text, options, stage, asked)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (plan, task_id, number, text, to_json(options), stage, now()),
            )
        return self.questions(plan, task_id)[-1]

    def questions(self, plan: str, task_id: str) -> list[Question]:
        where = "plan = ? AND task_id = ? ORDER BY number"
        return self._select(Question, where, (plan, task_id))

    def answer(self, plan: str, task_id: str, number: int, choice: str, note: str) -> None:
        """Record a person's answer: the letter chosen ("" for free text) and a note."""
        with self._write() as conn:
            conn.execute(
                "UPDATE questions SET choice = ?, note = ?, answered = ?"
                " WHERE plan = ? AND task_id = ? AND number = ?",
                (choice, note or None, now(), plan, task_id, number),
            )

    # A person's words

    def remark(self, plan: str, task_id: str, kind: str, text: str) -> Remark:
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT INTO remarks (plan, task_id, kind, text, at) VALUES (?, ?, ?, ?, ?)",
                (plan, task_id, kind, text, now()),
            )
            assert cursor.lastrowid is not None
            number = cursor.lastrowid
        return self._select(Remark, "id = ?", (number,))[0]

    def remarks(self, plan: str, task_id: str) -> list[Remark]:
        return self._select(Remark, "plan = ? AND task_id = ? ORDER BY id", (plan, task_id))
