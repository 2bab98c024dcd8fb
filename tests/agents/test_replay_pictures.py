"""The replay agent's pictures: real screenshots of a running app through the same browser as
our own loop, and scripted drawings, saved only into the unit's shots folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskhand.agents.replay import ReplayAgent
from taskhand.agents.replay_script import ScriptError
from taskhand.host.allowlist import child_env
from taskhand.host.app import running
from taskhand.unit import Browser, Case, Role, Unit
from tests.agents.pictures import APP, app_worktree, assert_shows_the_app, needs_browser

DRAWING = '<svg xmlns="http://www.w3.org/2000/svg" width="1440" height="900"><text>Hi</text></svg>'
SCRIPT = f"""
[[roles."T-001".designer]]
resolution = "Prototyped the bookmarks page."
[[roles."T-001".designer.actions]]
screenshot = "prototype"
[[roles."T-001".designer.actions]]
screenshot = "prototype-2"
url = "/index.html"
[[roles."T-001".qa]]
verdict = "accept"
concern = "Both criteria hold."
[[roles."T-001".qa.actions]]
screenshot = "found-1"

[[roles."T-002".designer]]
resolution = "Drew the wireframe."
[[roles."T-002".designer.actions]]
svg = "../prototype.svg"
text = '{DRAWING}'
"""


def replay(tmp_path: Path, script: str = SCRIPT) -> ReplayAgent:
    path = tmp_path / "script.toml"
    path.write_text(script, encoding="utf-8")
    return ReplayAgent.load(path)


def unit(role: Role, task: str, worktree: Path, browser: Browser | None) -> Unit:
    made = Unit(role, task, 1, "Look at the app.", worktree, 60.0)
    made.browser = browser
    return made


@needs_browser
def test_the_designer_and_qa_leave_real_screenshots_of_the_app(tmp_path: Path) -> None:
    worktree, shots = app_worktree(tmp_path), tmp_path / "shots"
    agent = replay(tmp_path)
    with running(APP, worktree, child_env()) as url:
        designed = agent.run(unit(Role.DESIGNER, "T-001", worktree, Browser(url, shots)))
        walked = agent.run(unit(Role.QA, "T-001", worktree, Browser(url, shots)))
    assert designed.case is Case.DONE, designed.failure
    assert walked.case is Case.DONE and walked.verdict and walked.verdict.accepted
    names = sorted(p.name for p in shots.iterdir())
    assert names == ["found-1.png", "prototype-2.png", "prototype.png"]
    for name in names:
        assert_shows_the_app(shots / name)


def test_without_an_app_the_designer_draws_an_svg(tmp_path: Path) -> None:
    worktree, shots = app_worktree(tmp_path), tmp_path / "shots"
    outcome = replay(tmp_path).run(unit(Role.DESIGNER, "T-002", worktree, Browser("", shots)))
    assert outcome.case is Case.DONE, outcome.failure
    assert [p.name for p in shots.iterdir()] == ["prototype.svg"]  # inside, whatever the name
    assert (shots / "prototype.svg").read_text() == DRAWING


def test_a_screenshot_without_an_app_or_a_browser_is_an_error(tmp_path: Path) -> None:
    worktree, shots = app_worktree(tmp_path), tmp_path / "shots"
    agent = replay(tmp_path)
    no_app = agent.run(unit(Role.DESIGNER, "T-001", worktree, Browser("", shots)))
    assert no_app.case is Case.ERROR
    assert no_app.failure == (
        "screenshot 'prototype': the unit has no app (fix: give url, or draw an svg)"
    )
    no_browser = agent.run(unit(Role.DESIGNER, "T-002", worktree, None))
    assert (
        no_browser.failure
        == "svg '../prototype.svg': this unit has no browser to keep pictures with"
    )
    assert not shots.exists()


def test_an_svg_without_its_drawing_is_refused_at_load(tmp_path: Path) -> None:
    script = '[[roles."T-002".designer]]\n[[roles."T-002".designer.actions]]\nsvg = "prototype"\n'
    with pytest.raises(ScriptError, match=r"svg = 'prototype' needs the drawing \(fix: text ="):
        replay(tmp_path, script)
