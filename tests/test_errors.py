"""One base for every expected failure: what, where and the fix, shown as one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskhand.agents.base import AgentError
from taskhand.agents.replay_script import ScriptError
from taskhand.config import FlagError, SettingsError
from taskhand.demo import DemoError
from taskhand.errors import UserError
from taskhand.host.sandbox import SandboxError
from taskhand.plan.problems import PlanError, Problem
from taskhand.plan.templates import InitError
from taskhand.run.launch import RunError
from taskhand.run.movement import MoveError
from taskhand.state.lock import LockedError
from taskhand.workspace import WorkspaceError
from taskhand.workspace.git import GitError


def test_a_message_with_its_fix_keeps_its_words() -> None:
    error = UserError("no runs for /r (fix: start one with taskhand run PLAN)")
    assert str(error) == "no runs for /r (fix: start one with taskhand run PLAN)"
    assert (error.what, error.where, error.fix) == (
        "no runs for /r",
        "",
        "start one with taskhand run PLAN",
    )
    assert str(UserError("no fix here")) == "no fix here"


def test_the_parts_make_one_line() -> None:
    error = UserError("[review] bounces = 0", where="plan/taskhand.toml:2", fix="a whole number")
    assert str(error) == "plan/taskhand.toml:2: [review] bounces = 0 (fix: a whole number)"


@pytest.mark.parametrize(
    "kind",
    [
        AgentError,
        ScriptError,
        SettingsError,
        FlagError,
        DemoError,
        SandboxError,
        InitError,
        MoveError,
        RunError,
        LockedError,
        WorkspaceError,
        GitError,
        PlanError,
    ],
)
def test_every_expected_failure_is_a_user_error(kind: type[Exception]) -> None:
    assert issubclass(kind, UserError)


def test_a_plan_error_shows_its_first_problem() -> None:
    problem = Problem(Path("plan/T-1.md"), 3, "no title", "add one")
    error = PlanError([problem])
    assert str(error) == "plan/T-1.md:3: error: no title (fix: add one)"
    assert error.fix == "add one"
