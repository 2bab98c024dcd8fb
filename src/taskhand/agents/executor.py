"""Where a unit runs: an executor takes a unit (plain data) and the name of the backend that
runs it, and returns its outcome. It never reaches into the store or another unit's workspace,
so executors that run units side by side, or on another machine, can take its place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from taskhand.agents.base import Agent
from taskhand.unit import Case, Outcome, Unit


class Executor(Protocol):
    """Runs one unit to its outcome; failures are outcomes, never exceptions."""

    def knows(self, agent: str) -> bool: ...

    def name_of(self, agent: str) -> str: ...

    def run(self, agent: str, unit: Unit) -> Outcome: ...


class LocalExecutor:
    """Runs units here, one at a time, with the backends chosen for the run."""

    def __init__(self, agents: Mapping[str, Agent]) -> None:
        self.agents = dict(agents)

    def knows(self, agent: str) -> bool:
        return agent in self.agents

    def name_of(self, agent: str) -> str:
        return self.agents[agent].name

    def run(self, agent: str, unit: Unit) -> Outcome:
        try:
            return self.agents[agent].run(unit)
        except Exception as exc:  # a backend bug must fail the unit, not the run
            return Outcome(Case.ERROR, failure=f"the agent crashed: {exc}")
