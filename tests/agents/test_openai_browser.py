"""Our own loop with a browser: a scripted model walks a real app, started as the runner starts
it, through the browser tools in a real headless chromium and leaves a screenshot; a hostile
model reaches neither the internet nor files outside its workspace."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from taskhand.agents.openai.loop import OpenAIAgent
from taskhand.host.allowlist import child_env
from taskhand.host.app import running
from taskhand.unit import Browser, Case, Role, Unit
from tests.agents.pictures import APP, app_worktree, assert_shows_the_app, needs_browser
from tests.fakes.scripted_openai import ScriptedOpenAI, reply, tool_call

BROWSER_TOOLS = {
    "browser_open",
    "browser_click",
    "browser_type",
    "browser_text",
    "browser_screenshot",
}


@pytest.fixture
def server() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as scripted:
        yield scripted


def agent(server: ScriptedOpenAI) -> OpenAIAgent:
    return OpenAIAgent("gpt-4o-mini", base_url=server.url, api_key="sk-test", backoff=0.0)


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    return reply(tool_calls=[tool_call(tool, arguments)])


def results(server: ScriptedOpenAI) -> list[str]:
    """What each tool call answered, in order (from the last request, which holds them all)."""
    return [m["content"] for m in server.bodies[-1]["messages"] if m["role"] == "tool"]


def offered(server: ScriptedOpenAI) -> set[str]:
    return {tool["function"]["name"] for tool in server.bodies[0]["tools"]}


VERDICT = {"verdict": "accept", "concern": "Both criteria hold in the browser."}


@needs_browser
def test_qa_walks_the_app_in_the_browser_and_leaves_a_screenshot(
    server: ScriptedOpenAI, tmp_path: Path
) -> None:
    worktree, shots = app_worktree(tmp_path), tmp_path / "artifacts" / "T-001"
    with running(APP, worktree, child_env()) as url:
        server.add(
            call("browser_open", url=url),
            call("browser_text", selector="#count"),
            call("browser_type", selector="input[name=q]", text="docs"),
            call("browser_click", selector="#search"),
            call("browser_text"),
            call("browser_screenshot", name="found-1"),
            call("submit_verdict", **VERDICT),
        )
        unit = Unit(Role.QA, "T-001", 1, "Walk the [found] criteria.", worktree, 60.0)
        unit.browser = Browser(url, shots)
        outcome = agent(server).run(unit)
    assert outcome.case is Case.DONE, outcome.failure
    assert outcome.verdict is not None and outcome.verdict.accepted
    assert offered(server) >= BROWSER_TOOLS and "write" not in offered(server)
    opened, count, typed, clicked, page, saved = results(server)
    assert opened == f"opened {url} (HTTP 200): Bookmarks"
    assert count == "2 saved bookmarks"
    assert typed == "typed 4 characters into 'input[name=q]'"
    assert clicked == f"clicked '#search'; the page is {url}"
    assert "Results for docs" in page and "Playwright" in page
    assert saved == "saved found-1.png (1440x900)"
    assert str(shots) not in json.dumps(server.bodies)  # the model never learns where
    assert_shows_the_app(shots / "found-1.png")


@needs_browser
def test_a_hostile_model_stays_on_the_app_and_in_the_shots_folder(
    server: ScriptedOpenAI, tmp_path: Path
) -> None:
    worktree, shots = app_worktree(tmp_path / "unit"), tmp_path / "unit" / "shots"
    server.add(
        call("browser_open", url="https://example.com/"),
        call("browser_open", url="file:///etc/passwd"),
        call("browser_open", url="../../../../etc/passwd"),
        call("browser_open", url="index.html"),
        call("browser_screenshot", name="../../x"),
        call("submit_case", case="done", resolution="Drew the prototype."),
    )
    unit = Unit(Role.DESIGNER, "T-001", 1, "Draw the prototype.", worktree, 60.0)
    unit.browser = Browser("", shots)
    outcome = agent(server).run(unit)
    assert outcome.case is Case.DONE, outcome.failure
    internet, passwd, climbing, page, saved = results(server)
    assert internet.startswith("refused: 'https://example.com/' is not on this machine")
    assert passwd.startswith("refused: 'file:///etc/passwd' is outside the workspace")
    assert climbing.startswith("refused: path '../../../../etc/passwd' leaves the workspace")
    assert "root:" not in json.dumps(server.bodies)
    assert page.startswith("opened file://") and page.endswith(": Bookmarks")
    assert saved == "saved x.png (1440x900)"
    assert [p.name for p in shots.iterdir()] == ["x.png"]
    assert not (tmp_path / "x.png").exists()


def test_a_unit_without_a_browser_is_offered_no_browser_tools(
    server: ScriptedOpenAI, tmp_path: Path
) -> None:
    server.add(
        call("browser_open", url="http://127.0.0.1:9/"),
        call("submit_case", case="done", resolution="ok"),
    )
    worktree = app_worktree(tmp_path)
    outcome = agent(server).run(Unit(Role.IMPLEMENTER, "T-001", 1, "Go.", worktree, 30.0))
    assert outcome.case is Case.DONE, outcome.failure
    assert not offered(server) & BROWSER_TOOLS
    assert results(server)[0].startswith("unknown tool 'browser_open'; the tools are read,")
