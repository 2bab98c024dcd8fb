"""Agent backends behind one interface, chosen by short name.

The names live here and each backend is imported only when `create` makes one, so checking a
plan's agent names (`taskhand validate`) loads no backend.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from taskhand.agents.base import Agent

__all__ = ["NAMES", "create"]

# The programs the cli backend drives, as its presets name them (a test holds the two equal).
CLI_NAMES = ("claude", "codex", "gemini", "opencode", "aider", "custom")
NAMES = (*CLI_NAMES, "acp", "openai", "replay")
ACP_COMMAND = "TASKHAND_ACP_COMMAND"  # the ACP agent to start, e.g. "gemini --acp"
ACP_KEYS = "TASKHAND_ACP_KEYS"  # names of environment variables the ACP agent may see


def create(
    name: str,
    script: Path | None = None,
    model: str | None = None,
    outer_sandbox: bool = False,
    passed: Sequence[str] = (),
) -> Agent:
    """The backend called `name`, ready to run units; the heavier ones load only when used.

    `outer_sandbox`: taskhand runs the agent inside its own sandbox, so an agent program with a
    sandbox of its own (codex) leaves it off for writing roles. `passed` names the variables
    the plan gives its agents and checks (`[env] pass`).
    """
    from taskhand.agents.base import AgentError

    if name in CLI_NAMES:
        from taskhand.agents.cli.backend import CliAgent

        return CliAgent(name, model=model, outer_sandbox=outer_sandbox, passed=passed)
    if name == "acp":
        from taskhand.agents.acp.backend import AcpAgent

        command = shlex.split(os.environ.get(ACP_COMMAND, ""))
        if not command:
            raise AgentError(
                f"the acp agent needs a command (fix: export {ACP_COMMAND}="
                "'gemini --acp' or another ACP agent)"
            )
        keys = os.environ.get(ACP_KEYS, "").replace(",", " ").split()
        return AcpAgent(command, model=model, keys=keys, passed=passed)
    if name == "openai":
        from taskhand.agents.openai.loop import OpenAIAgent

        if not model:
            raise AgentError("the openai agent needs a model (fix: --model NAME)")
        return OpenAIAgent(model, passed=passed)
    if name == "replay":
        from taskhand.agents.replay import ReplayAgent

        if script is None:
            raise AgentError("the replay agent needs a script (fix: --script FILE.toml)")
        return ReplayAgent.load(script, passed)
    raise AgentError(f"unknown agent {name!r} (fix: use one of {', '.join(NAMES)})")
