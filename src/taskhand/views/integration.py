"""What `taskhand integration show` prints: each result of a run with its disposition (or the
command that records one), and the verdicts on the workers; as lines or as JSON.
"""

from __future__ import annotations

from typing import Any

from taskhand.state.integration import Result
from taskhand.state.records import AttemptStatus, DispositionRow, WorkerVerdict


def result_json(result: Result) -> dict[str, Any]:
    attempt, disposition = result.attempt, result.disposition
    return {
        "task_id": attempt.task_id,
        "attempt": attempt.number,
        "attempt_status": attempt.status,
        "candidate_sha": attempt.candidate_sha,
        "branch": attempt.branch,
        "ended": attempt.ended,
        "disposition": disposition_json(disposition) if disposition else None,
    }


def disposition_json(row: DispositionRow) -> dict[str, Any]:
    return {
        "status": row.status,
        "target_ref": row.target_ref,
        "target_sha": row.target_sha,
        "recorded_by": row.recorded_by,
        "recorded": row.recorded,
        "note": row.note,
    }


def verdict_json(verdict: WorkerVerdict) -> dict[str, Any]:
    return {
        "task_id": verdict.task_id,
        "attempt": verdict.attempt,
        "agent": verdict.agent,
        "model": verdict.model,
        "attempts": verdict.attempts,
        "outcome": verdict.outcome,
        "tokens_in": verdict.tokens_in,
        "tokens_out": verdict.tokens_out,
        "dollars": verdict.dollars,
        "recorded": verdict.recorded,
    }


def lines(run_id: str, results: list[Result], verdicts: list[WorkerVerdict]) -> list[str]:
    """The results, then the verdicts, as lines for a person."""
    shown = []
    for result in results:
        attempt, row = result.attempt, result.disposition
        head = f"{attempt.task_id} attempt {attempt.number} ({attempt.status}): "
        # A result's commit is on its task branch once it landed; until then in the depot.
        landed = attempt.status is AttemptStatus.PASSED
        where = f"on {attempt.branch}" if landed else "in the run's depot"
        head += f"{(attempt.candidate_sha or '')[:12]} {where}"
        if row is None:
            shown.append(f"{head}: no disposition")
            shown.append(
                f"  record one: taskhand integration set {attempt.task_id} --run {run_id} "
                f"--attempt {attempt.number} --status integrated|rejected|superseded"
            )
            continue
        where = f" into {row.target_ref}" if row.target_ref else ""
        shown.append(f"{head}: {row.status}{where} (by {row.recorded_by}, {row.recorded})")
        if row.note:
            shown.append(f"  note: {row.note}")
    for verdict in verdicts:
        model = f" ({verdict.model})" if verdict.model else ""
        shown.append(
            f"{verdict.task_id} attempt {verdict.attempt}: worker {verdict.agent}{model} "
            f"{verdict.outcome} on try {verdict.attempts}, "
            f"{verdict.tokens_in} tokens in, {verdict.tokens_out} out, ${verdict.dollars:.4f}"
        )
    return shown
