"""What a run is given and what it hands back: the agent, model, base and caps it runs with
(kept in the run's record, so a resumed run goes on as it started) and the summary it ends with.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Caps:
    max_attempts: int = 3
    unit_seconds: float = 1800.0
    run_seconds: float | None = None
    task_tokens: int | None = None
    run_tokens: int | None = None
    task_dollars: float | None = None
    run_dollars: float | None = None


@dataclass
class RunConfig:
    agent: str = "replay"
    model: str | None = None
    script: str | None = None
    base_ref: str = "HEAD"
    caps: Caps = field(default_factory=Caps)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunConfig:
        caps = Caps(**data.get("caps", {}))
        return cls(**{k: v for k, v in data.items() if k != "caps"}, caps=caps)


@dataclass(frozen=True)
class Summary:
    run_id: str
    status: str
    message: str
    run_branch: str
    repo: Path
    state: Path
