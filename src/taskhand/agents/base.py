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
class Outcome:
    case: Case
    resolution: str = ""
    failure: str = ""
    question: Question | None = None
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
