"""The browser of the agent CLIs: the @playwright/mcp server each preset is given for a unit with
a browser (files and flags), the real server answering over stdio with our chromium, and the
real `claude` driving it against a scripted model to leave a screenshot of a running app."""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from taskhand.agents.cli import mcp
from taskhand.agents.cli.backend import CliAgent
from taskhand.agents.cli.presets import PRESETS, Context
from taskhand.host.allowlist import child_env
from taskhand.host.app import running
from taskhand.host.sandbox import bwrap_problem, choose
from taskhand.unit import Browser, Case, Role, Unit
from tests.agents.pictures import APP, app_worktree, assert_shows_the_app, needs_browser
from tests.agents.test_cli import ACCEPT, claude_agent, codex_agent, real
from tests.fakes import scripted_anthropic as anthropic
from tests.fakes import scripted_responses as responses

AGENT_BIN = Path(__file__).resolve().parents[2] / ".npm-agents" / "node_modules" / ".bin"
MCP_INSTALL = "npm install --prefix .npm-agents @playwright/mcp"


def stand_ins(tmp_path: Path, *names: str) -> dict[str, str]:
    """An environment whose PATH holds do-nothing programs called `names`."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    for name in names:
        (folder / name).write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
        (folder / name).chmod(0o755)
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path)}


def browsing_unit(tmp_path: Path, role: Role = Role.QA, url: str = "") -> Unit:
    worktree = tmp_path / "worktree"
    worktree.mkdir(exist_ok=True)
    made = Unit(role, "T-001", 1, "Walk the [found] criteria.", worktree, 60.0)
    made.browser = Browser(url, tmp_path / "artifacts" / "T-001")
    return made


def call_of(preset: str, unit: Unit, env: dict[str, str], scratch: Path) -> Any:
    context = Context(preset, unit, scratch, env, None, [], browser=mcp.server(unit, env))
    return PRESETS[preset].call(context, "Walk them.", None)


def test_the_server_runs_headless_in_the_shots_folder_with_our_chromium(tmp_path: Path) -> None:
    env = stand_ins(tmp_path, "playwright-mcp", "chromium")
    unit = browsing_unit(tmp_path)
    command = mcp.server(unit, env)
    assert command is not None
    shots = str(unit.browser.shots.resolve()) if unit.browser else ""
    assert command[1:5] == ["-c", mcp.IN_FOLDER, "sh", shots]  # started in the shots folder
    argv = command[5:]
    assert argv[0] == str(tmp_path / "bin" / "playwright-mcp")
    flags = dict(zip(argv[1::1], [*argv[2:], ""], strict=True))
    assert flags["--executable-path"] == str(tmp_path / "bin" / "chromium")
    assert flags["--output-dir"] == shots
    assert flags["--viewport-size"] == "1440x900"
    assert flags["--proxy-server"] == "http://127.0.0.1:9"
    assert {"--headless", "--isolated", "--ignore-roots", "--no-sandbox"} <= set(argv)
    assert Path(shots).is_dir()


def test_no_browser_no_server(tmp_path: Path) -> None:
    unit = Unit(Role.QA, "T-001", 1, "Check.", tmp_path, 60.0)
    assert mcp.server(unit, stand_ins(tmp_path, "playwright-mcp", "chromium")) is None
    argv = call_of("claude", unit, stand_ins(tmp_path), tmp_path).argv
    assert "--mcp-config" not in argv and not any("mcp__" in a for a in argv)


def test_claude_gets_the_server_alone_and_its_tools_allowed(tmp_path: Path) -> None:
    env = stand_ins(tmp_path, "playwright-mcp", "chromium")
    for role, allowed in ((Role.QA, "Read,Glob,Grep,Bash"), (Role.DESIGNER, "Bash,Edit,Write")):
        unit = browsing_unit(tmp_path, role)
        argv = call_of("claude", unit, env, tmp_path).argv
        config = Path(argv[argv.index("--mcp-config") + 1])
        assert "--strict-mcp-config" in argv
        granted = next(a for a in argv if a.startswith("--allowedTools="))
        assert granted.startswith(f"--allowedTools={allowed}") and granted.endswith(
            ",mcp__playwright"
        )
        server = json.loads(config.read_text())["mcpServers"]["playwright"]
        assert server["type"] == "stdio"
        assert [server["command"], *server["args"]] == mcp.server(unit, env)


def test_codex_gets_the_server_with_its_tools_approved(tmp_path: Path) -> None:
    env = stand_ins(tmp_path, "playwright-mcp", "chromium")
    unit = browsing_unit(tmp_path)
    argv = call_of("codex", unit, env, tmp_path).argv
    overrides = [argv[i + 1] for i, a in enumerate(argv) if a == "-c"]
    declared = tomllib.loads("\n".join(o for o in overrides if o.startswith("mcp_servers.")))
    server = declared["mcp_servers"]["playwright"]
    assert [server["command"], *server["args"]] == mcp.server(unit, env)
    assert server["default_tools_approval_mode"] == "approve"
    assert argv[-1] == "-"  # the flags come before the prompt's marker


def test_gemini_gets_the_server_in_its_settings_and_a_policy_for_every_mode(
    tmp_path: Path,
) -> None:
    env = stand_ins(tmp_path, "playwright-mcp", "chromium")
    unit = browsing_unit(tmp_path)
    call = call_of("gemini", unit, env, tmp_path)
    settings = json.loads(Path(call.env[mcp.GEMINI_SETTINGS]).read_text())
    server = settings["mcpServers"]["playwright"]
    assert [server["command"], *server["args"]] == mcp.server(unit, env) and server["trust"]
    argv = call.argv
    assert argv[argv.index("--allowed-mcp-server-names") + 1] == "playwright"
    policy = tomllib.loads(Path(argv[argv.index("--policy") + 1]).read_text())
    assert policy["rule"] == [
        {"mcpName": "playwright", "toolName": "*", "decision": "allow",
         "priority": 100}
    ]  # fmt: skip
    assert "modes" not in policy["rule"][0]  # plan mode, a reader's, included


def test_a_missing_server_ends_the_unit_with_the_fix(tmp_path: Path) -> None:
    env = {**os.environ, **stand_ins(tmp_path, "claude", "chromium")}
    env["PATH"] = str(tmp_path / "bin")  # no playwright-mcp anywhere on it
    outcome = CliAgent("claude", env=env).run(browsing_unit(tmp_path))
    assert outcome.case is Case.ERROR
    assert outcome.failure == (
        "the unit's browser cannot start: playwright-mcp is not installed "
        "(fix: npm install -g @playwright/mcp, and apt-get install chromium)"
    )


# ---- the real server and the real claude


def real_server_env() -> dict[str, str]:
    path = f"{AGENT_BIN}{os.pathsep}{os.environ['PATH']}"
    if mcp.problem({"PATH": path}):
        pytest.skip(f"no browser server here: {mcp.problem({'PATH': path})} (fix: {MCP_INSTALL})")
    return {**child_env(), "PATH": path}


class Stdio:
    """A minimal MCP client over a server's stdin and stdout (newline-delimited JSON-RPC)."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path | None = None) -> None:
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
        )
        self.number = 0

    def ask(self, method: str, **params: Any) -> dict[str, Any]:
        self.number += 1
        self.send({"jsonrpc": "2.0", "id": self.number, "method": method, "params": params})
        assert self.proc.stdout is not None
        while line := self.proc.stdout.readline():
            message: dict[str, Any] = json.loads(line)
            if message.get("id") == self.number:
                return message
        raise AssertionError(f"the server ended before it answered {method}")

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@needs_browser
def test_the_real_server_lists_its_tools_and_screenshots_the_app(tmp_path: Path) -> None:
    env = real_server_env()
    worktree = app_worktree(tmp_path)
    with running(APP, worktree, child_env()) as url:
        unit = browsing_unit(tmp_path, url=url)
        command = mcp.server(unit, env)
        assert command is not None and unit.browser is not None
        client = Stdio(command, env)
        try:
            hello = client.ask(
                "initialize",
                protocolVersion="2025-06-18",
                capabilities={},
                clientInfo={"name": "taskhand-test", "version": "1"},
            )
            assert hello["result"]["serverInfo"]["name"] == "Playwright"
            client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            tools = {t["name"] for t in client.ask("tools/list")["result"]["tools"]}
            assert {"browser_navigate", "browser_take_screenshot", "browser_click"} <= tools
            opened = client.ask("tools/call", name="browser_navigate", arguments={"url": url})
            assert "isError" not in opened["result"], opened
            shot = {"filename": "found-1.png"}
            saved = client.ask("tools/call", name="browser_take_screenshot", arguments=shot)
            assert "isError" not in saved["result"], saved
            refused = client.ask(
                "tools/call", name="browser_navigate", arguments={"url": "file:///etc/passwd"}
            )
            assert refused["result"]["isError"] and "root:" not in json.dumps(refused)
            outside = client.ask(
                "tools/call", name="browser_navigate", arguments={"url": "https://example.com/"}
            )
            assert outside["result"]["isError"]
        finally:
            client.close()
    assert_shows_the_app(unit.browser.shots / "found-1.png")


def claude_walks(tmp_path: Path, sandboxed: bool) -> None:
    env = real_server_env()
    real("claude")
    worktree = app_worktree(tmp_path)
    with running(APP, worktree, child_env()) as url:
        unit = browsing_unit(tmp_path, url=url)
        if sandboxed:
            unit.sandbox, _ = choose("bwrap")
        script = [
            anthropic.Turn(tools=[("mcp__playwright__browser_navigate", {"url": url})]),
            anthropic.Turn(
                tools=[("mcp__playwright__browser_take_screenshot", {"filename": "found-1.png"})]
            ),
            anthropic.Turn(text=ACCEPT),
        ]
        with anthropic.ScriptedAnthropic(script) as api:
            agent = claude_agent(tmp_path, api, PATH=env["PATH"], MCP_TIMEOUT="60000")
            outcome = agent.run(unit)
    assert outcome.case is Case.DONE, outcome.failure
    assert outcome.verdict is not None and outcome.verdict.accepted
    offered = {t["name"] for t in api.main_requests()[0].body["tools"]}
    assert "mcp__playwright__browser_navigate" in offered and "Write" not in offered
    results = [
        block
        for request in api.main_requests()[1:]
        for block in request.body["messages"][-1]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    assert results and not any(r.get("is_error") for r in results), results
    assert unit.browser is not None
    assert_shows_the_app(unit.browser.shots / "found-1.png")


@needs_browser
def test_real_claude_walks_the_app_through_the_server(tmp_path: Path) -> None:
    claude_walks(tmp_path, sandboxed=False)


@needs_browser
@pytest.mark.skipif(bool(bwrap_problem()), reason=f"no bubblewrap here: {bwrap_problem()}")
def test_real_claude_walks_the_app_from_inside_the_sandbox(tmp_path: Path) -> None:
    claude_walks(tmp_path, sandboxed=True)


@needs_browser
def test_real_codex_loads_the_server_and_offers_its_tools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", real_server_env()["PATH"])
    real("codex")
    with responses.ScriptedResponses([responses.Turn(text=ACCEPT)]) as api:
        outcome = codex_agent(tmp_path, api).run(browsing_unit(tmp_path))
    assert outcome.case is Case.DONE, outcome.failure
    offered = {
        tool["name"]: {inner["name"] for inner in tool.get("tools", [])}
        for tool in api.requests[0].body["tools"]
        if tool.get("type") == "namespace"
    }
    assert {"browser_navigate", "browser_take_screenshot"} <= offered["mcp__playwright"]
