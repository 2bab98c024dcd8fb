"""The acp backend against real ACP agents: tests/fakes/acp_agent.py, built on the SDK's agent side,
runs as a subprocess in a real git worktree and acts out one scenario per test; and Zed's
claude-code-acp adapter (from .npm-agents or PATH) against a scripted Anthropic server."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from taskhand.agents.acp.backend import AcpAgent
from taskhand.agents.base import AgentError
from taskhand.agents.cli.backend import NUDGE, VERDICT_NUDGE
from taskhand.agents.prices import Price
from taskhand.unit import Case, Evidence, Outcome, Question, Role, Unit, Verdict
from tests import ROOT
from tests.fakes import scripted_anthropic as anthropic
from tests.gates.test_checks import gone
from tests.runs import make_repo

AGENT = ROOT / "tests" / "fakes" / "acp_agent.py"
HANGING_AGENT = AGENT.with_name("acp_hang_agent.py")
AGENT_BIN = ROOT / ".npm-agents" / "node_modules" / ".bin"
ADAPTER_INSTALL = "npm install --prefix .npm-agents @zed-industries/claude-code-acp@0.16.2"
SECRET = "sk-planted-secret-123456"  # in our environment, never in the agent's
TOKEN = "tok-passed-through-98765"  # handed to the agent by name, redacted from what it says
PROMPT = f"Add hello.txt. (The deploy key {SECRET} is not yours to use.)"


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "work")


def run(
    scenario: str,
    worktree: Path,
    *,
    role: Role = Role.IMPLEMENTER,
    timeout: float = 20.0,
    program: Path = AGENT,
    on_message: Callable[[dict[str, object]], None] | None = None,
    **options: Any,
) -> Outcome:
    env = {**os.environ, "MY_API_KEY": SECRET, "AGENT_TOKEN": TOKEN}
    command = [sys.executable, str(program), scenario]
    agent = AcpAgent(command, keys=["AGENT_TOKEN"], env=env, **options)
    unit = Unit(role, "T-001", 1, PROMPT, worktree, timeout, on_message=on_message)
    return agent.run(unit)


def entries(outcome: Outcome, role: str) -> list[dict[str, object]]:
    return [entry for entry in outcome.transcript if entry["role"] == role]


def said(outcome: Outcome) -> str:
    return "".join(str(entry["content"]) for entry in entries(outcome, "assistant"))


def facts(outcome: Outcome) -> dict[str, Any]:
    found = re.search(r"^facts: (\{.*\})$", said(outcome), re.M)
    assert found, said(outcome)
    value: dict[str, Any] = json.loads(found.group(1))
    return value


def test_ok_writes_through_the_client_and_reports_usage(worktree: Path) -> None:
    outcome = run("ok", worktree)

    assert (outcome.case, outcome.resolution) == (Case.DONE, "wrote hello.txt")
    assert (worktree / "hello.txt").read_text() == "hello from the agent\n"
    assert outcome.report.criteria == [Evidence("hello.txt exists", "hello.txt")]
    assert outcome.usage.tokens_in == 1200
    assert outcome.usage.tokens_out == 300
    assert outcome.usage.tokens_cached == 200
    assert (outcome.usage.cost, outcome.usage.estimated) == (0.0123, False)
    roles = [entry["role"] for entry in outcome.transcript]
    assert roles[:4] == ["user", "note", "plan", "thought"]
    assert roles[4:10] == ["tool_call", "permission", "fs", "fs", "tool_update", "assistant"]
    permission = entries(outcome, "permission")[0]
    assert (permission["kind"], permission["answer"]) == ("edit", "allow_once")
    assert [(e["op"], e.get("error")) for e in entries(outcome, "fs")] == [
        ("write", None),
        ("read", None),
    ]
    assert "permission: once; read back 'hello from the agent\\n'" in said(outcome)
    seen = facts(outcome)
    assert seen["cwd"] == seen["session_cwd"] == os.path.realpath(worktree)
    assert (seen["fs"], seen["terminal"], seen["model"]) == ([True, True], False, "steady")


def test_each_message_reaches_the_units_hook_as_it_happens(worktree: Path) -> None:
    told: list[tuple[dict[str, object], bool]] = []  # each message, and whether hello.txt was
    written = worktree / "hello.txt"
    outcome = run("ok", worktree, on_message=lambda m: told.append((m, written.exists())))

    assert outcome.case is Case.DONE
    assert [m["role"] for m, _ in told] == [m["role"] for m in outcome.transcript]
    assert told[0][0] == {"role": "user", "content": PROMPT}  # the backend redacts at its end
    by_then = [(m["role"], m.get("op"), there) for m, there in told][4:8]
    assert by_then == [
        ("tool_call", None, False),  # told before the agent wrote
        ("permission", None, False),
        ("fs", "write", True),
        ("fs", "read", True),
    ]


def test_the_agent_never_sees_our_secrets_and_the_transcript_never_shows_them(
    worktree: Path,
) -> None:
    outcome = run("ok", worktree)

    seen = facts(outcome)
    assert "MY_API_KEY" not in seen["env"]
    assert "AGENT_TOKEN" in seen["env"]  # named in keys, so passed through
    assert seen["token"] == "[redacted]"  # the agent echoed it; the transcript scrubbed it
    stored = json.dumps(outcome.transcript)
    assert SECRET not in stored
    assert TOKEN not in stored
    assert "Task: Add hello.txt. (The deploy key [redacted] is not yours" in stored


def test_question(worktree: Path) -> None:
    outcome = run("question", worktree)

    assert outcome.case is Case.QUESTION
    assert outcome.question == Question("JSON or TOML?", ["TOML", "JSON"])
    assert outcome.usage.tokens_in == 10


def test_a_missing_outcome_block_gets_one_nudge_in_the_same_session(worktree: Path) -> None:
    outcome = run("nudge", worktree, prices={"steady": Price(1.0, 2.0)})

    assert (outcome.case, outcome.resolution) == (Case.DONE, "wrote hello.txt, then the block")
    assert (worktree / "hello.txt").read_text() == "hello after a nudge\n"
    assert [e["content"] for e in entries(outcome, "user")] == [
        PROMPT.replace(SECRET, "[redacted]"),
        NUDGE,
    ]
    assert (outcome.usage.tokens_in, outcome.usage.tokens_out) == (150, 15)  # both turns
    assert outcome.usage.estimated  # no cost reported: priced for the session's model
    assert outcome.usage.cost == pytest.approx((150 * 1.0 + 15 * 2.0) / 1e6)


def test_still_no_outcome_block_after_the_nudge_is_an_error(worktree: Path) -> None:
    outcome = run("silent", worktree)

    assert outcome.case is Case.ERROR
    assert "no outcome block" in outcome.failure
    assert len(entries(outcome, "user")) == 2


def test_writes_and_reads_outside_the_worktree_are_refused(worktree: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (worktree / "link").symlink_to(elsewhere)
    config = (worktree / ".git" / "config").read_text()
    etc_x = Path("/etc/x").exists()

    outcome = run("escape", worktree)

    assert (outcome.case, outcome.failure) == (Case.FAILED, "all refused")
    assert not (tmp_path / "outside.txt").exists()
    assert not (elsewhere / "evil.txt").exists()
    assert Path("/etc/x").exists() == etc_x
    assert (worktree / ".git" / "config").read_text() == config
    outside, always_only = entries(outcome, "permission")
    assert outside["answer"] == "reject_once"
    assert "outside the worktree" in str(outside["reason"])
    assert (always_only["answer"], always_only["reason"]) == (
        "reject_always",
        "no allow_once option offered",  # allow_always would let later calls skip the check
    )
    refused = {(e["op"], e["path"]): str(e.get("error")) for e in entries(outcome, "fs")}
    assert len(refused) == 7
    assert all(error.startswith("refused: ") for error in refused.values()), refused
    assert "inside .git" in refused[("write", ".git/config")]
    assert "through a symlink" in refused[("write", "link/evil.txt")]
    assert "outside the worktree" in refused[("write", "/etc/x")]
    assert "outside the worktree" in refused[("read", "/etc/hostname")]
    assert "permission outside: no\npermission always-only: never\n" in said(outcome)
    assert "write /etc/x: error -32602 refused" in said(outcome)


def test_the_evaluator_may_read_and_run_but_not_write(worktree: Path) -> None:
    outcome = run("reviewer", worktree, role=Role.EVALUATOR)

    assert outcome.case is Case.DONE, outcome.failure
    assert outcome.verdict == Verdict(True, concern="reviewed: looks right")
    assert not (worktree / "notes.txt").exists()
    answers = {e["kind"]: e["answer"] for e in entries(outcome, "permission")}
    assert answers == {
        "edit": "reject_once",
        "read": "allow_once",
        "execute": "allow_once",
        "delete": "reject_once",
    }
    write, read = entries(outcome, "fs")
    assert "may read files but not write them" in str(write["error"])
    assert (read["op"], read.get("error")) == ("read", None)
    assert "read README.md: read 10 chars" in said(outcome)


def test_a_reviewer_is_nudged_for_its_verdict_and_secrets_are_scrubbed(worktree: Path) -> None:
    outcome = run("verdict_nudge", worktree, role=Role.EVALUATOR)

    assert outcome.case is Case.DONE, outcome.failure
    assert [e["content"] for e in entries(outcome, "user")][1:] == [VERDICT_NUDGE]
    assert outcome.verdict == Verdict(
        False,
        "spec_violation",
        "It logs the token [redacted].",
        ["app.py:log"],
        "Drop the token from the log line.",
    )
    assert (outcome.usage.tokens_in, outcome.usage.tokens_out) == (150, 15)


def test_a_test_the_reviewer_runs_cannot_write_into_its_stdio(worktree: Path) -> None:
    outcome = run("forged", worktree, role=Role.EVALUATOR)

    # The forger could open neither the agent's stdout nor its stdin: what it wrote as the
    # agent's message never reached us, and the verdict is the agent's own.
    assert (worktree / "forged").read_text() == "ENXIO ENXIO"
    assert outcome.verdict is not None and not outcome.verdict.accepted, outcome.failure
    assert "forged" not in json.dumps(outcome.transcript)


def test_an_unusable_verdict_is_an_error_with_the_reason(worktree: Path) -> None:
    outcome = run("bad_verdict", worktree, role=Role.EVALUATOR)

    assert outcome.case is Case.ERROR and outcome.verdict is None
    assert outcome.failure.startswith(
        "the reviewer's verdict block is not usable: a reject needs a category"
    )
    assert len(entries(outcome, "user")) == 2  # nudged once, to no avail


def test_an_implementers_block_does_not_end_a_review(worktree: Path) -> None:
    outcome = run("question", worktree, role=Role.EVALUATOR)

    assert (outcome.case, outcome.question) == (Case.ERROR, None)
    assert "no verdict block" in outcome.failure


def test_a_hanging_agent_is_cancelled_then_killed_with_its_children(worktree: Path) -> None:
    started = time.monotonic()
    # The timeout counts from the agent's start, so this agent starts in milliseconds (no SDK)
    # and the timeout falls inside its turn, where session/cancel applies.
    outcome = run("hang", worktree, timeout=2.0, program=HANGING_AGENT)

    assert (outcome.case, outcome.failure) == (Case.ERROR, "timed out after 2 s")
    assert time.monotonic() - started < 30  # neither the agent's hour nor its child's minute
    pids = re.search(r"pids: (\d+) (\d+)", said(outcome))
    assert pids, f"the agent never reached its prompt turn: {outcome.transcript}"
    assert (worktree / "cancelled").exists()  # session/cancel came before the kill
    assert all(gone(int(pid)) for pid in pids.groups())


def test_a_crash_mid_prompt_is_an_error_with_the_stderr_tail(worktree: Path) -> None:
    outcome = run("crash", worktree)

    assert outcome.case is Case.ERROR
    assert outcome.failure == "acp exited 3; stderr: boom: the agent fell over"
    assert said(outcome) == "Starting work..."


def test_output_that_is_not_json_rpc_ends_the_unit(worktree: Path) -> None:
    outcome = run("garbage", worktree)

    assert outcome.case is Case.ERROR
    assert "not ACP (JSON-RPC)" in outcome.failure
    assert "'starting up, please wait'" in outcome.failure
    assert "about to break the protocol" in outcome.failure


def test_a_turn_that_stops_short_is_an_error_with_the_reason(worktree: Path) -> None:
    outcome = run("max_tokens", worktree)

    assert (outcome.case, outcome.failure) == (Case.ERROR, "acp stopped with max_tokens")


def test_the_model_is_chosen_through_the_agents_model_option(worktree: Path) -> None:
    assert facts(run("ok", worktree, model="fast"))["model"] == "fast"
    (worktree / "hello.txt").unlink()

    outcome = run("ok", worktree, model="huge", name="scripted")
    assert outcome.case is Case.ERROR
    assert outcome.failure == "scripted offers no model 'huge' (fix: use one of steady, fast)"
    assert not (worktree / "hello.txt").exists()


def test_a_missing_program_is_refused_when_the_agent_is_built() -> None:
    with pytest.raises(AgentError, match="'no-such-acp-agent' is not on PATH"):
        AcpAgent(["no-such-acp-agent", "--acp"])
    with pytest.raises(AgentError, match="needs a command"):
        AcpAgent([])


# ---- Zed's claude-code-acp adapter: the real program, its model served on 127.0.0.1


def claude_acp(tmp_path: Path, api: anthropic.ScriptedAnthropic) -> AcpAgent:
    path = f"{AGENT_BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    program = shutil.which("claude-code-acp", path=path)
    if program is None:
        pytest.skip(f"claude-code-acp is not installed (fix: {ADAPTER_INSTALL})")
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    env = {
        **os.environ,
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": "sk-scripted-key-123456",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "IS_SANDBOX": "1",  # lets it run as root, as in containers
    }
    return AcpAgent([program], name="claude-acp", keys=["ANTHROPIC_API_KEY"], env=env)


def claude_writes(target: Path, role: Role = Role.IMPLEMENTER) -> list[anthropic.Turn]:
    done = '```json\n{"case": "done", "resolution": "added hello.txt"}\n```'
    if role is Role.EVALUATOR:
        done = '```json\n{"verdict": "accept", "concern": "hello.txt is right"}\n```'
    write = ("mcp__acp__Write", {"file_path": str(target), "content": "hi\n"})
    return [anthropic.Turn(tools=[write]), anthropic.Turn(text=f"Wrote it.\n\n{done}")]


def test_real_claude_acp_writes_through_our_client(worktree: Path, tmp_path: Path) -> None:
    with anthropic.ScriptedAnthropic(claude_writes(worktree / "hello.txt")) as api:
        outcome = claude_acp(tmp_path, api).run(
            Unit(Role.IMPLEMENTER, "T-1", 1, "Hi", worktree, 60)
        )

    assert (outcome.case, outcome.resolution) == (Case.DONE, "added hello.txt"), outcome.failure
    assert (worktree / "hello.txt").read_text() == "hi\n"
    assert [e["answer"] for e in entries(outcome, "permission")] == ["allow_once"]
    assert [e["op"] for e in entries(outcome, "fs")] == ["write"]
    tools = {tool["name"] for tool in api.main_requests()[0].body["tools"]}
    assert "mcp__acp__Write" in tools  # its file tools go through our fs/* methods


@pytest.mark.parametrize("role", [Role.IMPLEMENTER, Role.EVALUATOR])
def test_real_claude_acp_is_refused_what_the_role_forbids(
    role: Role, worktree: Path, tmp_path: Path
) -> None:
    target = tmp_path / "outside.txt" if role is Role.IMPLEMENTER else worktree / "notes.txt"
    with anthropic.ScriptedAnthropic(claude_writes(target, role)) as api:
        outcome = claude_acp(tmp_path, api).run(Unit(role, "T-1", 1, "Hi", worktree, 60))

    assert not target.exists()
    [permission] = entries(outcome, "permission")
    assert permission["answer"] == "reject_once"
    assert outcome.case is Case.DONE  # the turn ended at the refusal; the nudge got the block
    asked = VERDICT_NUDGE if role is Role.EVALUATOR else NUDGE
    assert entries(outcome, "user")[-1]["content"] == asked
    assert (outcome.verdict is not None) == (role is Role.EVALUATOR)


def test_the_acp_agent_is_chosen_by_name_with_its_command_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from taskhand import agents

    monkeypatch.delenv(agents.ACP_COMMAND, raising=False)
    with pytest.raises(AgentError, match=r"needs a command \(fix: export"):
        agents.create("acp")
    monkeypatch.setenv(agents.ACP_COMMAND, f"{sys.executable} {AGENT} ok")
    assert agents.create("acp").name == "acp"


def test_a_plan_run_by_a_real_acp_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from taskhand.cli.main import cli
    from tests.plans import md_plan, md_task
    from tests.runs import git, make_repo

    files = {str(k): str(v) for k, v in md_plan().items()}
    body = "## Description\nWrite hello.txt.\n\n## Acceptance criteria\n- `$ test -s hello.txt`\n"
    files["T-001-hello.md"] = md_task("T-001", "Say hello", body=body)
    repo = make_repo(tmp_path / "repo", {f"plan/{k}": v for k, v in files.items()})
    monkeypatch.setenv("TASKHAND_ACP_COMMAND", f"{sys.executable} {AGENT} ok")
    result = CliRunner().invoke(cli, ["run", str(repo / "plan"), "--agent", "acp"])
    assert result.exit_code == 0, result.output
    branch = git(repo, "branch", "--list", "taskhand/run-*", "--format=%(refname:short)").strip()
    assert git(repo, "show", f"{branch}:hello.txt") == "hello from the agent\n"
