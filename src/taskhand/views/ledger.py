"""What `taskhand ledger` shows of each concluded attempt: its outcome, its change, the checks
that failed and every reviewer's verdict, read from the typed ledger entries.
"""

from __future__ import annotations

from taskhand.state.events import Event
from taskhand.state.ledger import LedgerEntry, VerdictNote
from taskhand.text import printable


def blamed(requeued: list[Event]) -> dict[tuple[str, int], list[str]]:
    """Whose landings each requeued attempt came after (task and attempt number: the task
    ids), from the attempt_requeued events."""
    return {(e.task_id or "", int(e.data["attempt"])): list(e.data["after"]) for e in requeued}


def lines(entries: list[LedgerEntry]) -> list[str]:
    """The entries as lines for a person, oldest first."""
    shown = []
    for entry in entries:
        summary = entry.summary.strip()
        headline = summary.splitlines()[0] if summary else ""
        shown.append(f"{entry.task_id} attempt {entry.iteration}: {entry.outcome}: {headline}")
        if entry.diff_summary:  # one line, whatever names it lists
            shown.append(f"  change: {printable(entry.diff_summary)}")
        for check in entry.failed_checks:
            shown.append(f"  check {check.name} failed: {_indented(check.detail)}")
        for verdict in entry.verdicts:
            shown.extend(_verdict(verdict))
    return shown


def _verdict(verdict: VerdictNote) -> list[str]:
    words = verdict.verdict + (f" as {verdict.category}" if verdict.category else "")
    shown = [f"  {verdict.lens} review: {words}: {_indented(verdict.concern)}"]
    shown.extend(f"    {label}: {_indented(text)}" for label, text in verdict.details())
    return shown


def _indented(text: str) -> str:
    """Later lines of a field indented, so a field's text cannot pass for a ledger line."""
    return text.replace("\n", "\n    ")
