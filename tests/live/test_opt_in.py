"""The live runs' switches, in the normal suite and spending nothing: off unless asked for, each
agent's key or login and program looked for where a person keeps them, the skip lines a person
reads, and the live test itself driven end to end against a scripted server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from taskhand.agents.outcome_mcp import tools
from tests import ROOT
from tests.fakes import scripted_gemini
from tests.fakes.scripted_openai import ScriptedOpenAI, reply, tool_call
from tests.live import agents
from tests.live.test_live import LINE

BY_NAME = {agent.name: agent for agent in agents.AGENTS}
# Every variable a live agent looks at: none of the person's may reach the pytest run below.
LOOKED_AT = {key for agent in agents.AGENTS for key in agent.keys} | {
    "GOOGLE_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "XDG_DATA_HOME",
    agents.SWITCH,
}


def live_pytest(home: Path, *args: str, **env: str) -> str:
    """`pytest tests/live/test_live.py ARGS` in a process of its own, with `home` for HOME, no
    key or login of the person's, and `env`: what it printed."""
    clean = {k: v for k, v in os.environ.items() if k not in LOOKED_AT and not k.endswith("_KEY")}
    clean |= {"HOME": str(home), **env}
    argv = [sys.executable, "-m", "pytest", "tests/live/test_live.py", "-rs", *args]
    run = subprocess.run(argv, cwd=ROOT, env=clean, capture_output=True, text=True, timeout=600)
    return run.stdout + run.stderr


def without(program: str) -> str:
    """PATH without the folders that hold `program`."""
    folders = os.environ.get("PATH", "").split(os.pathsep)
    return os.pathsep.join(f for f in folders if f and not (Path(f) / program).exists())


def test_without_the_switch_every_live_run_skips_saying_how_to_opt_in(tmp_path: Path) -> None:
    printed = live_pytest(tmp_path, "-k", "claude or aider", OPENAI_API_KEY="sk-present")
    assert "2 skipped" in printed, printed
    assert printed.count(agents.OPT_IN) == 1  # one line for both: the same reason


def test_with_the_switch_each_agent_without_a_login_skips_naming_what_it_looked_for(
    tmp_path: Path,
) -> None:
    printed = live_pytest(tmp_path, "--live")
    for agent in agents.AGENTS:
        why = agents.missing_login(agent, {}, tmp_path)
        assert agent.keys[0] in why
        assert why in printed, printed
    assert str(tmp_path / ".codex" / "auth.json") in printed
    assert f"{len(agents.AGENTS)} skipped" in printed


def test_a_key_or_a_login_file_is_enough(tmp_path: Path) -> None:
    codex, gemini = BY_NAME["codex"], BY_NAME["gemini"]
    assert agents.missing_login(codex, {"OPENAI_API_KEY": "sk-x"}, tmp_path) == ""
    assert agents.missing_login(codex, {}, tmp_path) != ""
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "auth.json").write_text("{}")
    assert agents.missing_login(codex, {}, tmp_path) == ""
    # CODEX_HOME moves it: the file in ~/.codex is then not codex's login.
    moved = {"CODEX_HOME": str(tmp_path / "elsewhere")}
    assert str(tmp_path / "elsewhere" / "auth.json") in agents.missing_login(codex, moved, tmp_path)
    # A Google key alone is no gemini API key: it serves Vertex AI only.
    assert agents.missing_login(gemini, {"GOOGLE_API_KEY": "g"}, tmp_path) != ""
    vertex = {"GOOGLE_API_KEY": "g", "GOOGLE_GENAI_USE_VERTEXAI": "true"}
    assert agents.missing_login(gemini, vertex, tmp_path) == ""
    # gemini signed in with Google, in the home GEMINI_CLI_HOME names
    signed_in = {"GEMINI_CLI_HOME": str(tmp_path / "g")}
    assert agents.missing_login(gemini, signed_in, tmp_path) != ""
    (tmp_path / "g" / ".gemini").mkdir(parents=True)
    (tmp_path / "g" / ".gemini" / "oauth_creds.json").write_text("{}")
    assert agents.missing_login(gemini, signed_in, tmp_path) == ""


def test_a_missing_program_says_how_to_install_it() -> None:
    absent = agents.LiveAgent("nobody", "taskhand-no-such-agent", "npm install nobody", (), ())
    assert agents.missing_program(absent, {"PATH": ""}) == (
        "nobody: taskhand-no-such-agent is not installed (fix: npm install nobody)"
    )
    assert agents.missing_program(BY_NAME["openai"], {"PATH": ""}) == ""  # our own loop


def test_the_switch_is_the_flag_or_the_variable() -> None:
    assert not agents.opted_in(False, {})
    assert not agents.opted_in(False, {agents.SWITCH: "0"})
    assert agents.opted_in(False, {agents.SWITCH: "1"})
    assert agents.opted_in(True, {})


def test_the_live_test_runs_a_plan_through_to_the_reviewers_accept(tmp_path: Path) -> None:
    """The live test itself, for our own loop, against a scripted server in place of OpenAI."""
    usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    steps = [
        ("write", {"path": "greeting.txt", "content": f"{LINE}\n"}),
        ("submit_case", {"case": "done", "resolution": "wrote greeting.txt"}),
        ("submit_verdict", {"verdict": "accept", "concern": "it holds the line", "evidence": []}),
    ]
    replies = [reply(tool_calls=[tool_call(name, args)], usage=usage) for name, args in steps]
    with ScriptedOpenAI(*replies) as api:
        printed = live_pytest(
            tmp_path,
            "-k",
            "openai",
            TASKHAND_LIVE="1",
            OPENAI_API_KEY="sk-scripted",
            OPENAI_BASE_URL=api.url,
        )
    assert "1 passed" in printed, printed
    assert [body["model"] for body in api.bodies] == [BY_NAME["openai"].model] * 3


def test_the_live_test_runs_an_agent_program_found_where_dev_installs_it(tmp_path: Path) -> None:
    """The live test for `gemini`, its program found in .npm-agents (not on PATH), against a
    scripted Gemini API, each outcome through our MCP tool."""
    gemini = BY_NAME["gemini"]
    if agents.program(gemini, {"PATH": ""}) is None:
        pytest.skip(agents.missing_program(gemini, {"PATH": ""}))

    def ours(tool: str, arguments: dict[str, object]) -> list[scripted_gemini.Turn]:
        return [
            scripted_gemini.mcp_tool(tools.SERVER, tool, arguments),
            scripted_gemini.Turn(text="Submitted."),
        ]

    write = f"printf '{LINE}\\n' > greeting.txt"
    script = [
        scripted_gemini.Turn(calls=[("run_shell_command", {"command": write})]),
        *ours("submit_case", {"case": "done", "resolution": "wrote greeting.txt"}),
        *ours("submit_verdict", {"verdict": "accept", "concern": "it holds the line"}),
    ]
    with scripted_gemini.ScriptedGemini(script) as api:
        printed = live_pytest(
            tmp_path,
            "--live",
            "-k",
            "gemini",
            PATH=without("gemini"),  # the live test finds the one ./dev installed
            GEMINI_API_KEY="scripted-key",
            GOOGLE_GEMINI_BASE_URL=api.url,
        )
    assert "1 passed" in printed, printed
    assert not api.turns  # every turn used: no nudge
    assert {r.path.split(":")[0].rsplit("/", 1)[-1] for r in api.main_requests()} == {gemini.model}
