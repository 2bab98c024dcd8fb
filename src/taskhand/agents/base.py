"""The one interface every agent backend implements: a unit goes in, an outcome comes out
(both plain data, in `taskhand.unit`).
"""

from __future__ import annotations

from typing import Protocol

from taskhand.errors import UserError
from taskhand.unit import Outcome, Unit


class AgentError(UserError, ValueError):
    """An agent that cannot be used as asked; the message says why and the fix."""


class Agent(Protocol):
    """A backend: runs a unit to its outcome. Failures are outcomes, never exceptions."""

    name: str

    def run(self, unit: Unit) -> Outcome: ...
