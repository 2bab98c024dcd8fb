"""The real `opencode` finishing through our outcome MCP tools (`taskhand_submit_case`, ...):
the prompt still reaches the model as taskhand built it (the tools are told of in a system
instruction), a reviewer rejects through its tool and still cannot write, the fenced block is
the fallback, and a whole plan is rejected, fixed and accepted through the tools.

The program comes from `.npm-agents` (installed by `./dev test`); without it these skip.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from taskhand.agents.cli.backend import CliAgent
from taskhand.agents.outcome_mcp import tools
from taskhand.agents.outcome_mcp.server import ACCEPTED
from taskhand.unit import Case, Role, Unit
from tests.agents.test_cli import DONE
from tests.agents.test_opencode import TRICKY, opencode, shell, user_messages
from tests.agents.test_outcome_plans import ACCEPT, REJECT
from tests.agents.test_outcome_plans import DONE as DONE_CALL
from tests.conftest import RunCli
from tests.fakes.scripted_openai import ScriptedOpenAI, reply, tool_call
from tests.runs import git
from tests.scenarios.test_run_agents import finished, plan_repo

__all__ = ["opencode"]  # the fixture, used by name

THROUGH_THE_TOOL = {
    "role": "note",
    "content": f"the outcome came through the {tools.SERVER} MCP server's tool",
}


def ours(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A reply calling our server's tool, as opencode names it: `<server>_<tool>`."""
    return reply(None, [tool_call(f"{tools.SERVER}_{tool}", arguments)])


def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    git(tmp_path, "init", "-q", str(folder))
    (folder / "README.md").write_text("# project\n")
    return folder


def run(tmp_path: Path, api: ScriptedOpenAI, role: Role, prompt: str = TRICKY) -> Any:
    env = {**os.environ, "OPENAI_BASE_URL": api.url}
    unit = Unit(role, "T-001", 1, prompt, work(tmp_path), 120.0, "scripted")
    return CliAgent("opencode", env=env, prices={}).run(unit)


def test_real_opencode_finishes_through_the_tool_and_the_prompt_stays_as_built(
    tmp_path: Path, opencode: str
) -> None:
    script = [
        ours("submit_case", {"case": "done"}),  # no resolution: refused, the model tries again
        ours("submit_case", {"case": "done", "resolution": "via the tool"}),
        reply('```json\n{"case": "failed", "failure": "prose"}\n```'),  # not read
    ]
    with ScriptedOpenAI(*script) as api:
        outcome = run(tmp_path, api, Role.IMPLEMENTER)
    assert (outcome.case, outcome.resolution) == (Case.DONE, "via the tool"), outcome.failure
    assert THROUGH_THE_TOOL in outcome.transcript
    first = api.bodies[0]
    offered = {t["function"]["name"] for t in first["tools"]}
    assert {f"{tools.SERVER}_submit_case", f"{tools.SERVER}_ask"} <= offered
    assert user_messages(first) == [TRICKY]  # byte for byte: the hint is no part of it
    system = json.dumps([m for m in first["messages"] if m["role"] == "system"])
    assert "Finish by calling the submit_case tool" in system
    answers = [m["content"] for m in api.bodies[2]["messages"] if m["role"] == "tool"]
    assert "a done case needs a resolution" in answers[0] and ACCEPTED in answers[1]
    assert len(api.requests) == 3  # no nudge


def test_real_opencode_reviewer_rejects_through_the_tool_and_still_cannot_write(
    tmp_path: Path, opencode: str
) -> None:
    script = [
        reply(None, [tool_call("write", {"filePath": "hello.txt", "content": "hi\n"})]),
        ours("submit_verdict", REJECT),
        reply("Submitted."),
    ]
    with ScriptedOpenAI(*script) as api:
        outcome = run(tmp_path, api, Role.EVALUATOR, "Review the change.")
    assert outcome.case is Case.DONE and outcome.verdict is not None, outcome.failure
    assert not outcome.verdict.accepted and outcome.verdict.next_step == REJECT["next_step"]
    assert THROUGH_THE_TOOL in outcome.transcript
    assert not (tmp_path / "work" / "hello.txt").exists()
    offered = {t["function"]["name"] for t in api.bodies[0]["tools"]}
    assert {name for name in offered if name.startswith(f"{tools.SERVER}_")} == {
        f"{tools.SERVER}_submit_verdict"
    }


def test_real_opencode_that_never_calls_the_tool_falls_back_to_the_block(
    tmp_path: Path, opencode: str
) -> None:
    with ScriptedOpenAI(reply(DONE)) as api:
        outcome = run(tmp_path, api, Role.IMPLEMENTER)
    assert (outcome.case, outcome.resolution) == (Case.DONE, "added hello.txt"), outcome.failure
    assert THROUGH_THE_TOOL not in outcome.transcript
    assert len(api.requests) == 1  # the block was there: no nudge


def test_a_plan_through_opencodes_outcome_tool_rejected_then_fixed(
    tmp_path: Path, run_cli: RunCli, opencode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = plan_repo(tmp_path)
    script = [
        reply(None, [shell("printf 'hello\\n' > hello.txt")]),
        ours("submit_case", DONE_CALL),
        reply("Submitted."),
        ours("submit_verdict", REJECT),
        reply("Submitted."),
        reply(None, [shell("printf 'hi\\n' > hello.txt")]),
        ours("submit_case", DONE_CALL),
        reply("Submitted."),
        ours("submit_verdict", ACCEPT),
        reply("Submitted."),
    ]
    with ScriptedOpenAI(*script) as api:
        monkeypatch.setenv("OPENAI_BASE_URL", api.url)
        result = run_cli("run", repo / "plan", "--agent", "opencode", "--model", "gpt-5")
    assert result.exit_code == 0, result.output
    [task] = finished(run_cli, repo)["tasks"]  # type: ignore[misc]
    assert task["units"] == 4  # hello.txt holds the fix's hi on the run branch
    assert len(api.requests) == len(script)  # every reply used: no nudge, no fenced block
    # The fix's prompt carries the reviewer's rejection as the tool gave it.
    assert REJECT["next_step"] in user_messages(api.bodies[5])[0]


def test_real_opencode_is_nudged_once_and_answers_through_the_tool(
    tmp_path: Path, opencode: str
) -> None:
    # Started again for the nudge, opencode reads its configuration again: nothing of it
    # changed (the files opencode writes itself are no configuration), so it is resumed.
    script = [reply("I read the change."), ours("submit_verdict", REJECT), reply("Submitted.")]
    with ScriptedOpenAI(*script) as api:
        outcome = run(tmp_path, api, Role.EVALUATOR, "Review the change.")
    assert outcome.verdict is not None and not outcome.verdict.accepted, outcome.failure
    nudged = "".join(user_messages(api.bodies[1]))
    assert "You have not called the submit_verdict tool" in nudged
