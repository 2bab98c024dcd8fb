"""Agent backends behind one interface, chosen by short name."""

from __future__ import annotations

from pathlib import Path

from taskhand.agents.base import Agent, AgentError
from taskhand.agents.replay import ReplayAgent

__all__ = ["NAMES", "Agent", "AgentError", "create"]

from taskhand.agents.cli_presets import NAMES as CLI_NAMES

NAMES = (*CLI_NAMES, "openai", "replay")


def create(name: str, script: Path | None = None, model: str | None = None) -> Agent:
    """The backend called `name`, ready to run units."""
    if name in CLI_NAMES:
        from taskhand.agents.cli import CliAgent

        return CliAgent(name, model=model)
    if name == "openai":
        from taskhand.agents.openai_loop import OpenAIAgent  # the SDK loads only when used

        if not model:
            raise AgentError("the openai agent needs a model (fix: --model NAME)")
        return OpenAIAgent(model)
    if name == "replay":
        if script is None:
            raise AgentError("the replay agent needs a script (fix: --script FILE.toml)")
        return ReplayAgent.load(script)
    raise AgentError(f"unknown agent {name!r} (fix: use one of {', '.join(NAMES)})")
