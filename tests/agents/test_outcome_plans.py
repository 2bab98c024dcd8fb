"""Whole plans run by the real `claude` and `codex` whose every outcome comes through our MCP
outcome tools: the worker's case, the reviewer's rejection, the fix and the acceptance.

The programs come from `.npm-agents` (installed by `./dev test`); without them these skip.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from taskhand.agents.outcome_mcp import tools
from tests.agents.test_cli import real
from tests.conftest import RunCli
from tests.fakes import scripted_anthropic as anthropic
from tests.fakes import scripted_responses as responses
from tests.scenarios.test_run_agents import agent_env, plan_repo, run_claude, run_codex

NAMESPACE = f"mcp__{tools.SERVER}"
DONE = {"case": "done", "resolution": "wrote hello.txt"}
REJECT = {
    "verdict": "reject",
    "category": "acceptance_gap",
    "concern": "hello.txt says hello, the task wants hi",
    "evidence": ["hello.txt"],
    "next_step": "write hi into hello.txt",
}
ACCEPT = {"verdict": "accept", "concern": "hello.txt holds hi", "evidence": ["hello.txt"]}


def claude_turns(*steps: tuple[str, dict[str, Any]]) -> list[anthropic.Turn]:
    """Each step a tool call, then the short final message claude ends its turn with."""
    turns: list[anthropic.Turn] = []
    for name, arguments in steps:
        turns.append(anthropic.Turn(tools=[(name, arguments)]))
        if name.startswith("mcp__"):
            turns.append(anthropic.Turn(text="Submitted."))
    return turns


def test_a_plan_through_claudes_outcome_tool_rejected_then_fixed(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent_env(monkeypatch, tmp_path, real("claude"))
    repo = plan_repo(tmp_path)
    case, verdict = f"{NAMESPACE}__submit_case", f"{NAMESPACE}__submit_verdict"
    script = claude_turns(
        ("Bash", {"command": "printf 'hello\\n' > hello.txt"}),
        (case, DONE),
        (verdict, REJECT),
        ("Bash", {"command": "printf 'hi\\n' > hello.txt"}),
        (case, DONE),
        (verdict, ACCEPT),
    )
    api, stats = run_claude(run_cli, monkeypatch, repo, script)
    [task] = stats["tasks"]  # type: ignore[misc]
    assert task["units"] == 4  # finished: hello.txt holds the fix's hi on the run branch
    # The fix's prompt carries the reviewer's rejection as the tool gave it.
    assert REJECT["next_step"] in json.dumps(api.main_requests()[5].body["messages"][0])
    assert not api.turns  # every scripted turn was used: no nudge, no fenced block


def test_a_plan_through_codexs_outcome_tool_rejected_then_fixed(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent_env(monkeypatch, tmp_path, real("codex"))
    repo = plan_repo(tmp_path)

    def tool(name: str, arguments: dict[str, Any]) -> list[responses.Turn]:
        return [responses.Turn(namespaced_calls=[(NAMESPACE, name, arguments)]), responses.Turn()]

    def shell(command: str) -> responses.Turn:
        return responses.Turn(calls=[("exec_command", {"cmd": command})])

    script = [
        shell("printf 'hello\\n' > hello.txt"),
        *tool("submit_case", DONE),
        *tool("submit_verdict", REJECT),
        shell("printf 'hi\\n' > hello.txt"),
        *tool("submit_case", DONE),
        *tool("submit_verdict", ACCEPT),
    ]
    codex, stats = run_codex(run_cli, monkeypatch, repo, script)
    [task] = stats["tasks"]  # type: ignore[misc]
    assert task["units"] == 4  # finished: hello.txt holds the fix's hi on the run branch
    assert REJECT["next_step"] in json.dumps(codex.requests[5].body["input"])
    assert not codex.turns  # every scripted turn was used: no nudge, no fenced block
