"""The terminal board's commands (cli/board.py), `taskhand watch` and `taskhand board --tui`:
into a pipe (or with --once) one frame, the plan defaulting to the latest run's, with its merge
queue; bad input is one line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import RunCli
from tests.runs import make_repo
from tests.views.test_board import placed, waiting_plan
from tests.views.test_queue import gate_on_top, plan_run, queue_repo


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    found = waiting_plan(tmp_path)
    monkeypatch.chdir(found)
    return found


def test_watch_into_a_pipe_prints_one_frame_of_the_latest_runs_plan(
    repo: Path, run_cli: RunCli
) -> None:
    result = run_cli("watch")  # the runner's output is no terminal
    assert result.exit_code == 0, result.output
    assert placed(result.stdout) == {"T-002": "draft", "T-001": "planned"}
    assert "waits for approval of the plan" in result.stdout.replace("│", "")
    assert result.stderr == ""


def test_board_tui_once_draws_the_same_frame_as_watch(repo: Path, run_cli: RunCli) -> None:
    tui = run_cli("board", "plan", "--tui", "--once")
    watched = run_cli("watch", "plan", "--once")
    assert tui.exit_code == watched.exit_code == 0, tui.output + watched.output
    assert placed(tui.stdout) == placed(watched.stdout) == {"T-002": "draft", "T-001": "planned"}


def test_bad_input_is_one_line(repo: Path, run_cli: RunCli, tmp_path: Path) -> None:
    missing = run_cli("watch", "no-such-plan")
    assert missing.exit_code == 1 and missing.stdout == ""
    assert missing.stderr == (
        "no-such-plan: error: no such plan folder "
        "(fix: check the path, or create one: taskhand init DIR)\n"
    )
    wrong = run_cli("board", "plan", "--once")
    assert wrong.exit_code == 2
    assert "--once and --screen draw the terminal board: add --tui" in wrong.stderr
    assert run_cli("board", "plan", "--tui", "--port", "8000").exit_code == 2
    assert run_cli("board", "plan", "--tui", "--open").exit_code == 2


def test_watch_where_nothing_ran_names_the_fix(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(make_repo(tmp_path / "fresh"))
    result = run_cli("watch")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert "no runs here to take the plan from: name the PLAN" in result.stderr


def test_watch_shows_the_merge_queue_of_the_latest_run(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = queue_repo(tmp_path)
    monkeypatch.chdir(repo)
    monkeypatch.setenv("COLUMNS", "120")
    with plan_run(repo) as run:
        gate_on_top(run)
        result = run_cli("watch")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "Feature  3 tasks; 0 wait for a person"
    assert re.fullmatch(
        r"merge queue: T-001 gating 0:\d\d · T-002 gating on top of T-001 0:\d\d · T-003 waits",
        lines[1],
    ), lines[1]
    assert "merge queue: gating on top of T-001" in result.stdout
