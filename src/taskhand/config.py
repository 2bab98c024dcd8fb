"""What a run is given and what it hands back: the agent, model, base and caps it runs with
(kept in the run's record, so a resumed run goes on as it started) and the summary it ends with.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from taskhand.unit import LENSES

__all__ = ["LENSES", "Caps", "PromptCaps", "RunConfig", "Summary"]


@dataclass
class Caps:
    max_attempts: int = 3  # attempts that fail their machine checks
    bounces: int = 3  # attempts the reviewer rejects
    unit_seconds: float = 1800.0
    run_seconds: float | None = None
    task_tokens: int | None = None
    run_tokens: int | None = None
    task_dollars: float | None = None
    run_dollars: float | None = None


@dataclass
class PromptCaps:
    """How much of each context source a prompt may carry. Tilth's caps, in bytes: the
    overview and plan orient, they do not replace reading the code."""

    overview_bytes: int = 4096
    plan_bytes: int = 6144
    context_bytes: int = 8192  # AGENTS.md and CLAUDE.md together
    diff_bytes: int = 12288  # the reviewer's diff; the list of changed files is never cut
    ledger_entries: int = 5


@dataclass
class RunConfig:
    agent: str = "replay"
    model: str | None = None
    script: str | None = None
    base_ref: str = "HEAD"
    caps: Caps = field(default_factory=Caps)
    evaluator: str | None = None  # the reviewers' agent, when not the run's own
    evaluator_model: str | None = None
    lenses: list[str] = field(default_factory=lambda: ["general"])
    prompt_caps: PromptCaps = field(default_factory=PromptCaps)
    sandbox: str = "auto"  # auto, bwrap or none: what confines the agents' processes
    # Names of variables the plan gives its agents and checks (`[env] pass`); names, never values.
    env_pass: list[str] = field(default_factory=list)

    @property
    def evaluator_agent(self) -> str:
        return self.evaluator or self.agent

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunConfig:
        """The config a run was started with; fields newer than that run keep their defaults."""
        rest = {k: v for k, v in data.items() if k not in ("caps", "prompt_caps")}
        caps = Caps(**data.get("caps", {}))
        return cls(**rest, caps=caps, prompt_caps=PromptCaps(**data.get("prompt_caps", {})))


@dataclass(frozen=True)
class Summary:
    run_id: str
    status: str
    message: str
    run_branch: str
    repo: Path
    state: Path
    already_completed: bool = False  # the plan's latest run had completed it: nothing was done
