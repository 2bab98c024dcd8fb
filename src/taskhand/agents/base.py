"""The one interface every agent backend implements: a unit goes in, an outcome comes out.

A unit is one agent run in a fresh context for one stage of one task. Backends never move
task status; they report what happened and what it cost, and the runner decides.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Protocol


class Role(StrEnum):
    IMPLEMENTER = "implementer"
    EVALUATOR = "evaluator"


class Case(StrEnum):
    """How a unit ended, as the agent reported it."""

    DONE = "done"  # the work is done; `resolution` says how
    QUESTION = "question"  # a person must answer `question` first
    FAILED = "failed"  # the agent gave up; `failure` says why
    ERROR = "error"  # the unit itself broke (crash, timeout, nonsense); `failure` says how


@dataclass
class Usage:
    """What a unit consumed. Cost is in dollars; `estimated` when derived from a price table."""

    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int = 0
    cost: float = 0.0
    estimated: bool = False

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.tokens_in + other.tokens_in,
            self.tokens_out + other.tokens_out,
            self.tokens_cached + other.tokens_cached,
            self.cost + other.cost,
            self.estimated or other.estimated,
        )


@dataclass
class Question:
    text: str
    options: list[str] = field(default_factory=list)  # recommended first


@dataclass
class Evidence:
    """One acceptance criterion and the file:symbol the agent says meets it."""

    criterion: str
    evidence: str


@dataclass
class CaseReport:
    """The worker's case for its work: how each criterion is met, and what it is unsure of."""

    criteria: list[Evidence] = field(default_factory=list)
    workarounds: list[str] = field(default_factory=list)
    uncertainties: list[str] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: dict[str, object]) -> CaseReport:
        """Leniently from a submitted case: what is not well formed is left out."""
        items = data.get("criteria")
        criteria = [
            Evidence(str(i.get("criterion", "")), str(i.get("evidence", "")))
            for i in (items if isinstance(items, list) else [])
            if isinstance(i, dict)
        ]

        def texts(key: str) -> list[str]:
            value = data.get(key)
            return [str(v) for v in value] if isinstance(value, list) else []

        return cls(criteria, texts("workarounds"), texts("uncertainties"))


@dataclass
class Outcome:
    case: Case
    resolution: str = ""
    failure: str = ""
    question: Question | None = None
    report: CaseReport = field(default_factory=CaseReport)
    usage: Usage = field(default_factory=Usage)
    transcript: list[dict[str, object]] = field(default_factory=list)


@dataclass
class Unit:
    """Everything a backend needs to run one stage of one task, and nothing of the harness."""

    role: Role
    task_id: str
    attempt: int
    prompt: str
    worktree: Path
    timeout_seconds: float
    model: str | None = None


class AgentError(ValueError):
    """An agent that cannot be used as asked; the message says why and the fix."""


class Agent(Protocol):
    """A backend: runs a unit to its outcome. Failures are outcomes, never exceptions."""

    name: str

    def run(self, unit: Unit) -> Outcome: ...
