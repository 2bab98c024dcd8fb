"""The outcome tools over MCP: our server spoken to over its stdio as an agent program would
(it answers, and writes nothing anywhere), and the real `claude` and `codex` finishing units
through it, through the fenced block when they never call it, and with a clear error when they
give neither. How the calls are read from each program's events is in test_calls.py."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from taskhand.agents.cli import outcome_tool
from taskhand.agents.openai.submissions import SUBMIT_CASE, SUBMIT_VERDICT
from taskhand.agents.outcome_mcp import tools
from taskhand.agents.outcome_mcp.server import ACCEPTED
from taskhand.unit import Case, Role
from tests.agents.test_cli import (
    ACCEPT,
    DONE,
    claude_agent,
    codex_agent,
    repo,
    shell,
    unit,
    write_turn,
)
from tests.agents.test_cli_browser import Stdio
from tests.fakes import scripted_anthropic as anthropic
from tests.fakes import scripted_responses as responses

CLAUDE_CASE = f"mcp__{tools.SERVER}__submit_case"
CLAUDE_VERDICT = f"mcp__{tools.SERVER}__submit_verdict"
NAMESPACE = f"mcp__{tools.SERVER}"  # codex offers an MCP server's tools in a namespace
REJECT = {
    "verdict": "reject",
    "category": "acceptance_gap",
    "concern": "hello.txt is empty",
    "evidence": ["hello.txt"],
    "next_step": "write hi into hello.txt",
}


def server(role: Role, folder: Path) -> Stdio:
    """Our server started as the backend starts it, in `folder`, its handshake done."""
    env = {**os.environ, "HOME": str(folder)}
    env.pop("PYTHONPATH", None)  # the command itself says where taskhand is
    client = Stdio(outcome_tool.command(role), env, cwd=folder)
    hello = client.ask(
        "initialize",
        protocolVersion="2025-06-18",
        capabilities={},
        clientInfo={"name": "taskhand-test", "version": "1"},
    )
    assert hello["result"]["serverInfo"]["name"] == tools.SERVER
    client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return client


def call(client: Stdio, name: str, arguments: object) -> tuple[bool, str]:
    result = client.ask("tools/call", name=name, arguments=arguments)["result"]
    return not result.get("isError", False), result["content"][0]["text"]


# ---- the server, over its stdio


def test_the_server_offers_our_loops_schemas_by_role(tmp_path: Path) -> None:
    worker = server(Role.IMPLEMENTER, tmp_path)
    try:
        listed = {t["name"]: t for t in worker.ask("tools/list")["result"]["tools"]}
    finally:
        worker.close()
    assert set(listed) == {"submit_case", "ask"}
    assert listed["submit_case"]["inputSchema"] == SUBMIT_CASE["function"]["parameters"]
    case_properties = SUBMIT_CASE["function"]["parameters"]["properties"]
    assert listed["ask"]["inputSchema"]["properties"] == {
        key: case_properties[key] for key in ("question", "options")
    }
    reviewer = server(Role.EVALUATOR, tmp_path)
    try:
        [verdict] = reviewer.ask("tools/list")["result"]["tools"]
        refused = call(reviewer, "submit_case", {"case": "done", "resolution": "x"})
    finally:
        reviewer.close()
    assert verdict["inputSchema"] == SUBMIT_VERDICT["function"]["parameters"]
    assert refused == (False, "error: submit_case is not offered to the evaluator; finish by "
                       "calling submit_verdict")  # fmt: skip


def test_every_call_is_answered_and_nothing_written(
    tmp_path: Path,
) -> None:
    client = server(Role.IMPLEMENTER, tmp_path)
    try:
        invalid = call(client, "submit_case", {"case": "done"})
        huge = call(client, "submit_case", {"case": "done", "resolution": "x" * 100_000})
        first = call(client, "ask", {"question": "Which port?", "options": ["8080", "8000"]})
        second = call(client, "submit_case", {"case": "done", "resolution": "changed my mind"})
    finally:
        client.close()
    assert invalid[0] is False and "a done case needs a resolution" in invalid[1]
    assert huge[0] is False and "exceed" in huge[1]
    assert first == (True, ACCEPTED)
    assert second == (True, ACCEPTED)  # it says the first valid call is the one recorded
    assert client.proc.returncode == 0  # it ends when its client closes its stdin
    # Nothing on disk for anyone to read, or to forge: its working folder and home stay empty.
    assert list(tmp_path.iterdir()) == []


def test_a_question_without_2_to_4_options_is_the_tools_error_to_retry(tmp_path: Path) -> None:
    client = server(Role.WRITER, tmp_path)
    try:
        said = [
            call(client, "ask", {"question": "Where?", "options": options})
            for options in (["Header"], [], ["a", "b", "c", "d", "e"], ["Header", "Settings"])
        ]
    finally:
        client.close()
    for accepted, text in said[:3]:  # an error the model reads and acts on: never cut to fit
        assert accepted is False
        assert "a question needs 2 to 4 options" in text and "call it again" in text
    assert said[3] == (True, ACCEPTED)


def test_the_server_runs_nothing_it_is_given(tmp_path: Path) -> None:
    client = server(Role.IMPLEMENTER, tmp_path)
    marker = tmp_path / "ran"
    try:
        said = call(client, "submit_case", {"case": "done", "resolution": f"$(touch {marker})"})
    finally:
        client.close()
    assert said == (True, ACCEPTED) and not marker.exists()


# ---- the real programs


def tool_results(api: anthropic.ScriptedAnthropic) -> list[dict[str, Any]]:
    return [
        block
        for request in api.main_requests()[1:]
        for block in request.body["messages"][-1]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def test_real_claude_finishes_through_the_tool_after_a_refused_call(tmp_path: Path) -> None:
    work = repo(tmp_path)
    script = [
        write_turn(work),
        anthropic.Turn(tools=[(CLAUDE_CASE, {"case": "done"})]),
        anthropic.Turn(tools=[(CLAUDE_CASE, {"case": "done", "resolution": "via the tool"})]),
        # Its last words contradict the tool: the tool's outcome stands, the prose is not read.
        anthropic.Turn(text='```json\n{"case": "failed", "failure": "prose"}\n```'),
    ]
    with anthropic.ScriptedAnthropic(script) as api:
        outcome = claude_agent(tmp_path, api).run(unit(work))
    assert (outcome.case, outcome.resolution) == (Case.DONE, "via the tool"), outcome.failure
    offered = {t["name"] for t in api.main_requests()[0].body["tools"]}
    assert {CLAUDE_CASE, f"mcp__{tools.SERVER}__ask", "Write"} <= offered
    refused, accepted = tool_results(api)[1:3]
    assert refused["is_error"] and "needs a resolution" in json.dumps(refused)
    assert not accepted.get("is_error") and "accepted" in json.dumps(accepted)
    assert len(api.main_requests()) == 4  # no nudge


def test_real_claude_reviewer_rejects_through_the_tool(tmp_path: Path) -> None:
    work = repo(tmp_path)
    script = [anthropic.Turn(tools=[(CLAUDE_VERDICT, REJECT)]), anthropic.Turn(text="Done.")]
    with anthropic.ScriptedAnthropic(script) as api:
        outcome = claude_agent(tmp_path, api).run(unit(work, role=Role.EVALUATOR))
    assert outcome.case is Case.DONE and outcome.verdict is not None, outcome.failure
    assert not outcome.verdict.accepted and outcome.verdict.next_step == REJECT["next_step"]
    offered = {t["name"] for t in api.main_requests()[0].body["tools"]}
    assert CLAUDE_VERDICT in offered and CLAUDE_CASE not in offered and "Write" not in offered


def test_real_claude_without_the_tool_falls_back_to_the_block(tmp_path: Path) -> None:
    work = repo(tmp_path)
    with anthropic.ScriptedAnthropic([anthropic.Turn(text=DONE)]) as api:
        outcome = claude_agent(tmp_path, api).run(unit(work))
    assert (outcome.case, outcome.resolution) == (Case.DONE, "added hello.txt"), outcome.failure


def test_real_claude_with_nonsense_is_an_error_never_a_verdict(tmp_path: Path) -> None:
    work = repo(tmp_path)
    prose = "Looks good to me, I accept this candidate."
    with anthropic.ScriptedAnthropic([anthropic.Turn(text=prose)] * 8) as api:
        outcome = claude_agent(tmp_path, api).run(unit(work, role=Role.EVALUATOR))
    assert outcome.case is Case.ERROR and outcome.verdict is None
    assert outcome.failure == (
        "the agent never called submit_verdict, and the reviewer's final message has no "
        "verdict block (a fenced JSON with a verdict)"
    )
    nudged = json.dumps(api.main_requests()[1].body["messages"][-1])
    assert "You have not called the submit_verdict tool" in nudged


def test_real_codex_finishes_through_the_tool_in_its_namespace(tmp_path: Path) -> None:
    work = repo(tmp_path)
    script = [
        shell("printf 'hi\\n' > hello.txt"),
        responses.Turn(namespaced_calls=[(NAMESPACE, "submit_case", {"case": "done"})]),
        responses.Turn(
            namespaced_calls=[(NAMESPACE, "submit_case", {"case": "done", "resolution": "tool"})]
        ),
        responses.Turn(text="Finished."),
    ]
    with responses.ScriptedResponses(script) as api:
        outcome = codex_agent(tmp_path, api).run(unit(work))
    assert (outcome.case, outcome.resolution) == (Case.DONE, "tool"), outcome.failure
    note = {"role": "note", "content": "the outcome came through the taskhand MCP server's tool"}
    assert note in outcome.transcript
    offered = {
        tool["name"]: {inner["name"] for inner in tool.get("tools", [])}
        for tool in api.requests[0].body["tools"]
        if tool.get("type") == "namespace"
    }
    assert offered[NAMESPACE] == {"submit_case", "ask"}
    prompt = json.dumps(api.requests[0].body["input"])
    assert "Finish by calling the submit_case tool" in prompt
    answers = json.dumps(api.requests[2].body["input"][-1])
    assert "needs a resolution" in answers
    assert len(api.requests) == 4  # no nudge


def test_real_codex_asks_through_the_tool(tmp_path: Path) -> None:
    asked = {"question": "Keep the old flag?", "options": ["yes", "no"]}
    script = [responses.Turn(namespaced_calls=[(NAMESPACE, "ask", asked)]), responses.Turn()]
    with responses.ScriptedResponses(script) as api:
        outcome = codex_agent(tmp_path, api).run(unit(repo(tmp_path)))
    assert outcome.case is Case.QUESTION and outcome.question is not None, outcome.failure
    assert (outcome.question.text, outcome.question.options) == (asked["question"], ["yes", "no"])


def test_real_codex_reviewer_rejects_through_the_tool(tmp_path: Path) -> None:
    script = [
        responses.Turn(namespaced_calls=[(NAMESPACE, "submit_verdict", REJECT)]),
        responses.Turn(text=ACCEPT),  # prose after the tool does not overturn it
    ]
    with responses.ScriptedResponses(script) as api:
        outcome = codex_agent(tmp_path, api).run(unit(repo(tmp_path), role=Role.EVALUATOR))
    assert outcome.verdict is not None and not outcome.verdict.accepted, outcome.failure


def test_real_codex_exiting_with_nonsense_is_an_error_with_the_reason(tmp_path: Path) -> None:
    script = [responses.Turn(text="I did it."), responses.Turn(text="Really, I did.")]
    with responses.ScriptedResponses(script) as api:
        outcome = codex_agent(tmp_path, api).run(unit(repo(tmp_path)))
    assert outcome.case is Case.ERROR
    assert outcome.failure.startswith("the agent never called submit_case, and ")
    assert len(api.requests) == 2  # one nudge, then the error


def test_a_hanging_program_times_out_with_its_server(tmp_path: Path) -> None:
    work = repo(tmp_path)
    waits = {"command": 'python3 -c "import time; time.sleep(60)"', "timeout": 120_000}
    hang = anthropic.Turn(tools=[("Bash", waits)])
    with anthropic.ScriptedAnthropic([hang]) as api:
        outcome = claude_agent(tmp_path, api).run(unit(work, timeout=8))
    assert outcome.case is Case.ERROR and outcome.failure == "timed out after 8 s"
    servers = subprocess.run(
        ["pgrep", "-af", "taskhand.agents.outcome_mcp"], capture_output=True, text=True
    ).stdout.splitlines()
    # A server of this unit, left running, works in its worktree.
    left = [line for line in servers if _folder(int(line.split()[0])) == work.resolve()]
    assert not left, servers


# ---- the schema path: the nudge's answer in the outcome's shape


def test_real_claude_nudged_answers_through_its_structured_output(tmp_path: Path) -> None:
    work = repo(tmp_path)
    structured = {"case": "done", "resolution": "through the schema"}
    script = [
        anthropic.Turn(text="All done."),
        anthropic.Turn(tools=[("StructuredOutput", structured)]),
        anthropic.Turn(text="Done."),
    ]
    with anthropic.ScriptedAnthropic(script) as api:
        outcome = claude_agent(tmp_path, api).run(unit(work))
    assert (outcome.case, outcome.resolution) == (Case.DONE, "through the schema"), outcome
    first, nudged = api.main_requests()[0], api.main_requests()[1]
    assert "StructuredOutput" not in {t["name"] for t in first.body["tools"]}
    [offered] = [t for t in nudged.body["tools"] if t["name"] == "StructuredOutput"]
    assert offered["input_schema"]["properties"]["case"]["enum"] == ["done", "question", "failed"]


def test_real_claude_structured_output_is_still_checked_by_us(tmp_path: Path) -> None:
    work = repo(tmp_path)
    schema_valid = {"case": "question"}  # the schema lets it through; our check does not
    script = [
        anthropic.Turn(text="All done."),
        anthropic.Turn(tools=[("StructuredOutput", schema_valid)]),
        anthropic.Turn(text="Done."),
    ]
    with anthropic.ScriptedAnthropic(script) as api:
        outcome = claude_agent(tmp_path, api).run(unit(work))
    assert outcome.case is Case.ERROR and outcome.question is None
    assert outcome.failure == (
        "the agent never called submit_case, and the agent's outcome block asks a question "
        "but gives no question text"
    )


def test_real_claude_after_five_bad_structured_outputs_is_an_error(tmp_path: Path) -> None:
    work = repo(tmp_path)
    invented = {"case": "finished", "resolution": "a case the schema's enum refuses"}
    script = [
        anthropic.Turn(text="All done."),
        *[anthropic.Turn(tools=[("StructuredOutput", invented)])] * 6,
        anthropic.Turn(text="Done."),
    ]
    with anthropic.ScriptedAnthropic(script) as api:
        outcome = claude_agent(tmp_path, api).run(unit(work))
    assert outcome.case is Case.ERROR and outcome.resolution == ""
    assert outcome.failure.startswith("claude failed: error_max_structured_output_retries")


def test_real_codex_nudged_answers_with_json_in_the_strict_schema(tmp_path: Path) -> None:
    answer = json.dumps(
        {"verdict": "reject", **{k: v for k, v in REJECT.items() if k != "verdict"}}
    )
    script = [responses.Turn(text="Looks wrong to me."), responses.Turn(text=answer)]
    with responses.ScriptedResponses(script) as api:
        outcome = codex_agent(tmp_path, api).run(unit(repo(tmp_path), role=Role.EVALUATOR))
    assert outcome.verdict is not None and not outcome.verdict.accepted, outcome.failure
    assert "text" not in api.requests[0].body or "format" not in api.requests[0].body["text"]
    sent = api.requests[1].body["text"]["format"]
    assert sent["strict"] is True and sent["schema"]["additionalProperties"] is False
    assert set(sent["schema"]["required"]) == set(REJECT)


def _folder(pid: int) -> Path | None:
    try:
        return Path(os.readlink(f"/proc/{pid}/cwd"))
    except OSError:
        return None
