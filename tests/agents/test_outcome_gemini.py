"""The real `gemini` finishing through our outcome MCP tools (`mcp_taskhand_submit_case`, ...):
a refused call fixed, a reviewer that rejects through its tool and still cannot write, the fenced
block when the model never calls the tool, and a whole plan rejected, fixed and accepted.

The program comes from `.npm-agents` (installed by `./dev test`); without it these skip.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from taskhand.agents.cli import gemini, mcp, outcome_tool
from taskhand.agents.cli.presets import PRESETS, Context
from taskhand.agents.outcome_mcp import tools
from taskhand.agents.outcome_mcp.server import ACCEPTED
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from taskhand.unit import Case, Role
from tests.agents.test_cli import DONE, unit
from tests.agents.test_cli_browser import browsing_unit, stand_ins
from tests.agents.test_cli_gemini import agent, gemini_env, repo, shell
from tests.agents.test_outcome_plans import ACCEPT, REJECT
from tests.agents.test_outcome_plans import DONE as DONE_CALL
from tests.conftest import RunCli
from tests.fakes import scripted_gemini as scripted
from tests.scenarios.test_run_agents import finished, plan_repo

THROUGH_THE_TOOL = {
    "role": "note",
    "content": f"the outcome came through the {tools.SERVER} MCP server's tool",
}


def ours(tool: str, arguments: dict[str, object]) -> scripted.Turn:
    return scripted.mcp_tool(tools.SERVER, tool, arguments)


def test_a_reviewer_with_a_browser_gets_both_servers_and_the_writing_tools_denied(
    tmp_path: Path,
) -> None:
    env = stand_ins(tmp_path, "playwright-mcp", "chromium")
    qa = browsing_unit(tmp_path)
    context = Context("gemini", qa, tmp_path, env, None, [], browser=mcp.server(qa, env))
    context.outcome = outcome_tool.command(qa.role)
    call = PRESETS["gemini"].call(context, "Walk them.", None)
    argv = call.argv
    assert argv[argv.index("--allowed-mcp-server-names") + 1] == "playwright,taskhand"
    home = Path(call.env[gemini.HOME]) / ".gemini" / "settings.json"
    ours = json.loads(home.read_text())["mcpServers"]
    assert list(ours) == [tools.SERVER] and ours[tools.SERVER]["trust"] is True
    assert [ours[tools.SERVER]["command"], *ours[tools.SERVER]["args"]] == context.outcome
    browser = json.loads(Path(call.env[mcp.GEMINI_SETTINGS]).read_text())["mcpServers"]
    assert list(browser) == [mcp.SERVER]
    policies = [argv[i + 1] for i, word in enumerate(argv) if word == "--policy"]
    rules = [rule for p in policies for rule in tomllib.loads(Path(p).read_text())["rule"]]
    allowed = [(r["mcpName"], r["toolName"]) for r in rules if r["decision"] == "allow"]
    assert allowed == [(mcp.SERVER, "*"), (tools.SERVER, "*")]  # our two servers, nothing else
    denied = [r["toolName"] for r in rules if r["decision"] == "deny"]
    assert denied == list(gemini.READER_DENIED)


def test_real_gemini_finishes_through_the_tool_after_a_refused_call(tmp_path: Path) -> None:
    work = repo(tmp_path)
    script = [
        shell("printf 'hi\\n' > hello.txt"),
        ours("submit_case", {"case": "done"}),  # no resolution: refused, the model tries again
        ours("submit_case", {"case": "done", "resolution": "via the tool"}),
        # Its last words contradict the tool: the tool's outcome stands, the prose is not read.
        scripted.Turn(text='```json\n{"case": "failed", "failure": "prose"}\n```'),
    ]
    with scripted.ScriptedGemini(script) as api:
        outcome = agent(tmp_path, api).run(unit(work))
    assert (outcome.case, outcome.resolution) == (Case.DONE, "via the tool"), outcome.failure
    assert THROUGH_THE_TOOL in outcome.transcript
    assert (work / "hello.txt").read_text() == "hi\n"
    first = api.requests[0]
    assert {gemini.tool_name("submit_case"), gemini.tool_name("ask")} <= scripted.offered(first)
    assert "Finish by calling the submit_case tool" in json.dumps(first.body["contents"])
    refused, accepted = scripted.function_responses(api.requests[3])[1:3]
    assert refused["name"] == accepted["name"] == gemini.tool_name("submit_case")
    assert "a done case needs a resolution" in json.dumps(refused["response"])
    assert ACCEPTED in json.dumps(accepted["response"])
    assert len(api.requests) == 4  # no nudge


def test_real_gemini_reviewer_rejects_through_the_tool_and_still_cannot_write(
    tmp_path: Path,
) -> None:
    work = repo(tmp_path)
    attempts = [
        ("write_file", {"file_path": str(work / "hello.txt"), "content": "hi\n"}),
        ("replace", {"file_path": str(work / "README.md"), "old_string": "#", "new_string": "!"}),
        ("save_memory", {"fact": "a reviewer's note"}),
    ]
    script = [
        scripted.Turn(calls=attempts),
        ours("submit_verdict", REJECT),
        scripted.Turn(text="Submitted."),
    ]
    before = {p.name: p.read_bytes() for p in work.iterdir() if p.is_file()}
    with scripted.ScriptedGemini(script) as api:
        outcome = agent(tmp_path, api).run(unit(work, role=Role.EVALUATOR))
    assert outcome.case is Case.DONE and outcome.verdict is not None, outcome.failure
    assert not outcome.verdict.accepted and outcome.verdict.next_step == REJECT["next_step"]
    assert THROUGH_THE_TOOL in outcome.transcript
    assert {p.name: p.read_bytes() for p in work.iterdir() if p.is_file()} == before
    answers = scripted.function_responses(api.requests[1])
    assert [answer["name"] for answer in answers] == [name for name, _ in attempts]
    assert all("error" in answer["response"] for answer in answers)
    for request in api.requests:
        offered = scripted.offered(request)
        # Our verdict tool is the one MCP tool offered, and the writing tools stay away.
        assert {name for name in offered if name.startswith("mcp_")} == {
            gemini.tool_name("submit_verdict")
        }
        assert not offered & set(gemini.READER_DENIED)
        assert {"read_file", "run_shell_command"} <= offered


def test_real_gemini_calling_the_tool_twice_keeps_the_first(tmp_path: Path) -> None:
    script = [
        ours("submit_verdict", REJECT),
        ours("submit_verdict", ACCEPT),  # a change of mind: the rejection stands
        scripted.Turn(text="Submitted."),
    ]
    with scripted.ScriptedGemini(script) as api:
        outcome = agent(tmp_path, api).run(unit(repo(tmp_path), role=Role.EVALUATOR))
    assert outcome.verdict is not None and not outcome.verdict.accepted, outcome.failure
    [again] = scripted.function_responses(api.requests[2])[1:]
    assert "your first valid call is the outcome recorded" in json.dumps(again["response"])


def test_real_gemini_that_never_calls_the_tool_falls_back_to_the_block(tmp_path: Path) -> None:
    with scripted.ScriptedGemini([scripted.Turn(text=DONE)]) as api:
        outcome = agent(tmp_path, api).run(unit(repo(tmp_path)))
    assert (outcome.case, outcome.resolution) == (Case.DONE, "added hello.txt"), outcome.failure
    assert THROUGH_THE_TOOL not in outcome.transcript
    assert len(api.requests) == 1  # the block was there: no nudge


def test_a_plan_through_geminis_outcome_tool_rejected_then_fixed(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = plan_repo(tmp_path)
    script = [
        shell("printf 'hello\\n' > hello.txt"),
        ours("submit_case", DONE_CALL),
        scripted.Turn(text="Submitted."),
        ours("submit_verdict", REJECT),
        scripted.Turn(text="Submitted."),
        shell("printf 'hi\\n' > hello.txt"),
        ours("submit_case", DONE_CALL),
        scripted.Turn(text="Submitted."),
        ours("submit_verdict", ACCEPT),
        scripted.Turn(text="Submitted."),
    ]
    with scripted.ScriptedGemini(script) as api:
        for name, value in gemini_env(tmp_path, api).items():
            monkeypatch.setenv(name, value)
        result = run_cli("run", plan / "plan", "--agent", "gemini")
    assert result.exit_code == 0, result.output
    stats = finished(run_cli, plan)  # hello.txt holds the fix's hi on the run branch
    [task] = stats["tasks"]  # type: ignore[misc]
    assert task["units"] == 4
    # The fix's prompt carries the reviewer's rejection as the tool gave it.
    assert REJECT["next_step"] in json.dumps(api.main_requests()[5].body["contents"])
    assert not api.turns  # every scripted turn was used: no nudge, no fenced block
    with Store.open(StateDir.for_repo(plan).database) as store:
        units = store.units(str(stats["run"]))
    assert [u.role for u in units] == ["implementer", "evaluator"] * 2
    for each in units:
        lines = Path(str(each.transcript)).read_text().splitlines()
        assert THROUGH_THE_TOOL in [json.loads(line) for line in lines], each.role
