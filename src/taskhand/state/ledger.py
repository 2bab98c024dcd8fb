"""The ledger: what each concluded attempt at a task came to, shown to its next attempt, its
reviewers and a person.

The runner writes an `Entry`; readers get a `LedgerEntry` whose checks, verdicts and case are
decoded once from their stored JSON into the notes below, and encoded back exactly as stored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from taskhand.unit import CaseReport


class LedgerOutcome(StrEnum):
    """What an attempt came to, as its ledger entry says."""

    ACCEPTED = "accepted"
    REJECTED = "rejected"  # by a reviewer
    CHECKS_FAILED = "checks_failed"
    CONFLICT = "conflict"  # its change conflicts with another task's that landed meanwhile
    # Its checks passed on its own base and failed on top of another task's landing.
    BROKEN_BY_LANDING = "broken_by_landing"
    NO_CHANGES = "no_changes"
    UNIT_FAILED = "unit_failed"  # the agent's unit broke or did not finish
    GAVE_UP = "gave_up"
    REVIEW_FAILED = "review_failed"  # no reviewer could judge the candidate
    CAPPED = "capped"  # the task's budget ran out
    VIOLATION = "violation"  # an agent reached past its workspace
    SETUP_FAILED = "setup_failed"  # `[setup]` could not prepare the workspace


@dataclass(frozen=True)
class CheckNote:
    """One machine check of the candidate, as the ledger keeps it."""

    name: str
    ok: bool
    detail: str

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CheckNote:
        return cls(str(data.get("name", "")), bool(data.get("ok")), str(data.get("detail", "")))

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail}


@dataclass(frozen=True)
class VerdictNote:
    """One reviewer's verdict through its lens: `verdict` is accept or reject."""

    lens: str
    verdict: str
    category: str = ""  # why a reject rejects: one of unit.CATEGORIES
    concern: str = ""
    evidence: list[str] = field(default_factory=list)  # file:symbol pointers
    next_step: str = ""

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> VerdictNote:
        evidence = data.get("evidence") or []
        return cls(
            str(data.get("lens") or "general"),
            str(data.get("verdict", "")),
            str(data.get("category") or ""),
            str(data.get("concern") or ""),
            [str(e) for e in evidence] if isinstance(evidence, list) else [str(evidence)],
            str(data.get("next_step") or ""),
        )

    @property
    def accepted(self) -> bool:
        return self.verdict == "accept"

    def line(self) -> str:
        """The verdict in one line, as an attempt's reason and the next prompt say it:
        "accepted", or "rejected as CATEGORY: CONCERN"; a lens other than general is named,
        "rejected (security review) as ..."."""
        who = "" if self.lens == "general" else f" ({self.lens} review)"
        if self.accepted:  # the words of what the verdict makes of the attempt
            return f"{LedgerOutcome.ACCEPTED}{who}"
        return f"{LedgerOutcome.REJECTED}{who} as {self.category}: {self.concern}"

    def details(self) -> list[tuple[str, str]]:
        """What the verdict says below its line, as (label, text): evidence, next step."""
        found = [("evidence", ", ".join(self.evidence))] if self.evidence else []
        return found + ([("next step", self.next_step)] if self.next_step else [])

    def as_json(self) -> dict[str, Any]:
        return {
            "lens": self.lens,
            "verdict": self.verdict,
            "category": self.category,
            "concern": self.concern,
            "evidence": list(self.evidence),
            "next_step": self.next_step,
        }


@dataclass(frozen=True)
class CaseNote:
    """The worker's case for a candidate: its resolution and how it meets each criterion."""

    resolution: str
    report: CaseReport = field(default_factory=CaseReport)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CaseNote:
        return cls(str(data.get("resolution", "")), CaseReport.from_json(data))

    def as_json(self) -> dict[str, Any]:
        report = self.report
        return {
            "resolution": self.resolution,
            "criteria": [
                {"criterion": e.criterion, "evidence": e.evidence} for e in report.criteria
            ],
            "workarounds": list(report.workarounds),
            "uncertainties": list(report.uncertainties),
        }


@dataclass(frozen=True)
class Entry:
    """What one attempt at a task came to, as the runner writes it into the ledger: `report`
    the worker's case, `gates` the machine checks, `verdicts` the reviewers' judgements, each
    in its JSON form (`CaseNote`, `CheckNote`, `VerdictNote` as_json)."""

    outcome: LedgerOutcome
    summary: str
    diff_summary: str = ""
    report: dict[str, Any] = field(default_factory=dict)
    gates: list[dict[str, Any]] = field(default_factory=list)
    verdicts: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class LedgerEntry:
    """An entry as read back, decoded. `case` is None when the attempt made no case (its unit
    failed, or it changed nothing)."""

    id: int
    run_id: str
    task_id: str
    attempt_id: int
    iteration: int  # the attempt's number
    outcome: LedgerOutcome
    summary: str
    diff_summary: str
    case: CaseNote | None
    gates: list[CheckNote]
    verdicts: list[VerdictNote]
    created: str

    @classmethod
    def decode(cls, row: dict[str, Any]) -> LedgerEntry:
        """From the stored row."""
        report = json.loads(row["report"])
        return cls(
            row["id"],
            row["run_id"],
            row["task_id"],
            row["attempt_id"],
            row["iteration"],
            LedgerOutcome(row["outcome"]),
            row["summary"],
            row["diff_summary"],
            CaseNote.from_json(report) if report else None,
            [CheckNote.from_json(g) for g in json.loads(row["gates"])],
            [VerdictNote.from_json(v) for v in json.loads(row["verdicts"])],
            row["created"],
        )

    @property
    def failed_checks(self) -> list[CheckNote]:
        return [g for g in self.gates if not g.ok]

    @property
    def rejections(self) -> list[VerdictNote]:
        return [v for v in self.verdicts if not v.accepted]

    def as_json(self) -> dict[str, Any]:
        """The entry as `taskhand ledger --json` shows it: the stored columns, in order."""
        return {
            "id": self.id,
            "run_id": self.run_id,
            "task_id": self.task_id,
            "attempt_id": self.attempt_id,
            "iteration": self.iteration,
            "outcome": str(self.outcome),
            "summary": self.summary,
            "diff_summary": self.diff_summary,
            "report": self.case.as_json() if self.case else {},
            "gates": [g.as_json() for g in self.gates],
            "verdicts": [v.as_json() for v in self.verdicts],
            "created": self.created,
        }
