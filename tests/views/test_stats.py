"""`taskhand stats`: per task its units by role, agent time, tokens (cache reads apart),
API-equivalent dollars and pull request, and the total; for a run or summed over a plan's runs."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from taskhand.run import launch, moves
from taskhand.state.accounting import Stats, TaskStats
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from taskhand.views import stats as stats_view
from tests.conftest import RunCli
from tests.pipeline.test_full import SVG, plan_repo, replay
from tests.plans import md_plan
from tests.runs import Recorder, attempt, make_repo, run_plan, script, write

# Each unit's seconds, in the order the run starts them: T-001's failed attempt, its second
# attempt and that attempt's review; T-002's attempt and its review.
SECONDS = [30, 45, 20, 100, 25]


def accept(**usage: Any) -> dict[str, Any]:
    return {"verdict": "accept", **usage}


def known_run(tmp_path: Path, run_cli: RunCli) -> Path:
    files = {f"plan/{k}": str(v) for k, v in md_plan(("T-001", {}), ("T-002", {})).items()}
    repo = make_repo(tmp_path / "repo", files)
    replay = script(
        tmp_path,
        {
            "T-001": [
                # Trailing whitespace: the whitespace check fails it, and no reviewer runs.
                attempt(
                    write("a.txt", "a \n"),
                    tokens_in=1000,
                    tokens_out=100,
                    tokens_cached=400,
                    cost=0.25,
                ),
                attempt(
                    write("a.txt", "a\n"),
                    tokens_in=1200,
                    tokens_out=120,
                    cost=0.5,
                    review=accept(tokens_in=300, tokens_out=30, tokens_cached=50, cost=0.125),
                ),
            ],
            "T-002": [
                attempt(
                    write("b.txt", "b\n"),
                    tokens_in=50000,
                    tokens_out=5000,
                    tokens_cached=1000,
                    cost=1.5,
                    review=accept(tokens_in=2000, tokens_out=150, cost=0.5),
                ),
            ],
        },
    )
    result = run_cli("run", repo / "plan", "--script", replay)
    assert result.exit_code == 0, result.output
    database = StateDir.for_repo(repo).database
    with closing(sqlite3.connect(database, isolation_level=None)) as conn:
        ids = [row[0] for row in conn.execute("SELECT id FROM units ORDER BY id")]
        assert len(ids) == len(SECONDS)
        for unit_id, seconds in zip(ids, SECONDS, strict=True):  # a known clock
            conn.execute(
                "UPDATE units SET started = ?, ended = ? WHERE id = ?",
                (
                    "2026-12-02T14:00:00.000Z",
                    f"2026-12-02T14:{seconds // 60:02}:{seconds % 60:02}.000Z",
                    unit_id,
                ),
            )
    return repo


def row_of(text: str, first: str) -> list[str]:
    """The cells of the table's row that starts with `first`, split at runs of spaces."""
    [line] = [ln for ln in text.splitlines() if ln.strip().startswith(first + " ")]
    return [cell.strip() for cell in line.strip().split("  ") if cell.strip()]


def test_per_task_rows_and_the_total(tmp_path: Path, run_cli: RunCli) -> None:
    repo = known_run(tmp_path, run_cli)
    shown = run_cli("stats", "--repo", repo)
    assert shown.exit_code == 0, shown.output
    header = row_of(shown.output, "task")
    assert header == [
        "task",
        "title",
        "kind",
        "status",
        "what happened",
        "units",
        "by role",
        "agent time",
        "prompt KB",
        "tokens in",
        "tokens out",
        "cache reads",
        "API-equivalent",
        "PR",
    ]
    first = row_of(shown.output, "T-001")
    assert first[:5] == ["T-001", "Task T-001", "-", "done", "-"]
    assert first[5:8] == ["3", "implementer 2, evaluator 1", "1:35"]
    assert first[9:] == ["2.5k", "250", "450", "$0.8750", "-"]
    second = row_of(shown.output, "T-002")
    assert second[:8] == [
        "T-002", "Task T-002", "-", "done", "-", "2", "implementer 1, evaluator 1", "2:05"
    ]  # fmt: skip
    assert second[9:] == ["52.0k", "5.2k", "1.0k", "$2.00", "-"]
    total = row_of(shown.output, "TOTAL")
    assert total[:7] == ["TOTAL", "-", "-", "-", "5", "implementer 3, evaluator 2", "3:40"]
    assert total[8:] == ["54.5k", "5.4k", "1.4k", "$2.88", "-"]

    data = json.loads(run_cli("stats", "--repo", repo, "--json").output)
    rows = {r["task_id"]: r for r in data["tasks"]}
    assert data["runs"] == [data["run"]]
    assert rows["T-001"]["roles"] == {"implementer": 2, "evaluator": 1}
    assert (rows["T-001"]["seconds"], rows["T-001"]["title"], rows["T-001"]["pr"]) == (
        95.0,
        "Task T-001",
        None,
    )
    assert rows["T-001"]["status"] == "done"
    assert [rows["T-002"][k] for k in ("tokens_in", "tokens_out", "tokens_cached")] == [
        52000,
        5150,
        1000,
    ]
    assert (data["total"]["units"], data["total"]["reviews"], data["total"]["seconds"]) == (
        5,
        2,
        220.0,
    )
    assert data["total"]["cost"] == 2.875 and data["total"]["estimated"] is False
    assert data["total"]["roles"] == {"implementer": 3, "evaluator": 2}


def test_a_plans_runs_summed(tmp_path: Path, run_cli: RunCli) -> None:
    repo = known_run(tmp_path, run_cli)
    replay = tmp_path / "replay.json"
    again = run_cli("run", repo / "plan", "--script", replay, "--new")
    assert again.exit_code == 0, again.output
    with Store.open(StateDir.for_repo(repo).database) as store:
        first, second = sorted(store.runs(), key=lambda r: r.created)
    one = json.loads(run_cli("stats", second.id, "--repo", repo, "--json").output)
    both = json.loads(run_cli("stats", "--plan", repo / "plan", "--json").output)
    assert both["runs"] == [first.id, second.id] and "run" not in both
    assert one["total"]["units"] == 5 and both["total"]["units"] == 10
    assert both["total"]["tokens_in"] == 2 * 54500
    assert both["total"]["roles"] == {"implementer": 6, "evaluator": 4}
    text = run_cli("stats", "--plan", repo / "plan").output
    assert "(2 runs)" in text and row_of(text, "TOTAL")[4] == "10"

    both_ways = run_cli("stats", second.id, "--plan", repo / "plan")
    assert both_ways.exit_code == 2 and "give RUN or --plan PLAN, not both" in both_ways.output
    other = tmp_path / "other"
    other.mkdir()
    never = run_cli("stats", "--plan", other, "--repo", repo)
    assert never.exit_code == 1
    assert never.stderr.startswith("taskhand: error: no runs of the plan ")
    assert "(fix: start one with taskhand run " in never.stderr


def test_a_full_pipeline_task_reads_as_its_story(tmp_path: Path, run_cli: RunCli) -> None:
    repo = plan_repo(tmp_path, "markdown")
    roles = {
        "writer": [{"resolution": "# Spec", "tokens_in": 700, "tokens_out": 70, "cost": 0.25}],
        "planner": [{"resolution": "1. Write toggle.txt."}],
        "designer": [{"actions": [write("prototype.svg", SVG)], "resolution": "A header."}],
    }
    settings = {"pipeline": "full", "autonomy": "full"}
    summary, _ = run_plan(repo / "plan", repo, replay(tmp_path, "T-001", roles), settings=settings)
    assert summary.status == "completed"
    data = json.loads(run_cli("stats", "--repo", repo, "--json").output)
    [task] = data["tasks"]
    expected = ["writer", "explorer", "planner", "designer", "tester", "implementer", "qa", "judge"]
    assert list(task["roles"]) == expected and set(task["roles"].values()) == {1}
    assert (task["units"], task["reviews"]) == (8, 2)  # qa and the judge judge
    assert task["cost"] == 0.25
    text = run_cli("stats", "--repo", repo).output
    story = "writer 1, explorer 1, planner 1, designer 1, tester 1, implementer 1, qa 1, judge 1"
    assert row_of(text, "T-001")[2:7] == [
        "ui", "done", "the prototype passed on round 1, no bounce", "8", story
    ]  # fmt: skip
    assert (task["kind"], task["happened"]) == ("ui", "the prototype passed on round 1, no bounce")


def test_the_table_marks_estimates_and_shows_the_pr() -> None:
    row = TaskStats(
        "T-7",
        9,
        3,
        2048,
        3725.4,
        1_234_567,
        999,
        0,
        0.00125,
        True,
        "Undo",
        {"writer": 1, "planner": 2, "implementer": 3, "qa": 1, "judge": 1},
        "https://example.invalid/pull/5",
        "delivered",
        kind="ui",
        happened="a 1-question interview, no bounce",
    )
    figures = Stats([row], row)
    table = stats_view.table("run R", figures)
    cells = [list(column.cells) for column in table.columns]
    assert [str(c[0]) for c in cells] == [
        "T-7",
        "Undo",
        "ui",
        "delivered",
        "a 1-question interview, no bounce",
        "9",
        "writer 1, planner 2, implementer 3, qa 1, judge 1",
        "1:02:05",
        "2.0",
        "1.2M",
        "999",
        "0",
        "$0.0013 (est.)",
        "#5",  # the number: a narrow terminal cuts no address
    ]
    # The whole address, under the table, on a line of its own.
    assert stats_view.addresses(figures) == ["#5 T-7: https://example.invalid/pull/5"]
    assert stats_view.clock(59.6) == "1:00" and stats_view.count(1000) == "1.0k"


def test_cache_writes_and_thinking_as_the_agents_reported_them(
    tmp_path: Path, run_cli: RunCli
) -> None:
    files = {f"plan/{k}": str(v) for k, v in md_plan(("T-001", {}), ("T-002", {})).items()}
    repo = make_repo(tmp_path / "repo", files)
    reported = {"tokens_in": 9000, "tokens_out": 800, "tokens_cached": 5000, "cost": 0.5}
    replay = script(
        tmp_path,
        {
            "T-001": [
                attempt(
                    write("a.txt", "a\n"),
                    **reported,
                    tokens_cache_write=2500,
                    tokens_thinking=300,
                    review=accept(tokens_in=100, tokens_out=40, tokens_thinking=25),
                )
            ],
            "T-002": [attempt(write("b.txt", "b\n"), tokens_in=100, tokens_out=10)],
        },
    )
    assert run_cli("run", repo / "plan", "--script", replay).exit_code == 0
    data = json.loads(run_cli("stats", "--repo", repo, "--json").output)
    rows = {r["task_id"]: r for r in data["tasks"]}
    parts = ("tokens_in", "tokens_out", "tokens_cached", "tokens_cache_write", "tokens_thinking")
    assert [rows["T-001"][k] for k in parts] == [9100, 840, 5000, 2500, 325]
    assert [rows["T-002"][k] for k in parts[2:]] == [0, 0, 0]  # its reviewer reported none
    assert [data["total"][k] for k in parts[2:]] == [5000, 2500, 325]

    text = run_cli("stats", "--repo", repo).output
    header = row_of(text, "task")
    assert header[9:14] == ["tokens in", "tokens out", "cache reads", "cache writes", "thinking"]
    assert row_of(text, "T-001")[9:14] == ["9.1k", "840", "5.0k", "2.5k", "325"]
    assert row_of(text, "T-002")[11:14] == ["0", "0", "0"]
    assert row_of(text, "TOTAL")[10:13] == ["5.0k", "2.5k", "325"]
    # And per agent, as each reported them: here the one replay agent ran every unit.
    [agent] = data["agents"]
    assert (agent["agent"], agent["model"], agent["units"]) == ("replay", None, 4)
    assert [agent["usage"][k] for k in parts[2:]] == [5000, 2500, 325]
    assert "by agent" in text
    assert row_of(text, "agent")[:9] == [
        "agent",
        "model",
        "units",
        "tokens in",
        "tokens out",
        "cache reads",
        "cache writes",
        "thinking",
        "API-equivalent",
    ]
    assert row_of(text, "replay")[:2] + row_of(text, "replay")[5:8] == [
        "replay",
        "-",
        "5.0k",
        "2.5k",
        "325",
    ]


def test_what_happened_tells_a_tasks_way_through_its_people_and_stages(
    tmp_path: Path, run_cli: RunCli
) -> None:
    repo = plan_repo(tmp_path, "markdown")
    plan = repo / "plan"
    asked = {"outcome": "question", "question": "Where?", "options": ["Header", "Settings"]}
    reject = {"verdict": "reject", "category": "acceptance_gap", "concern": "No toggle."}
    reject["next_step"] = "Add it."
    roles = {
        "writer": [asked, {"resolution": "# Spec"}],
        "planner": [{"resolution": "1. One."}, {"resolution": "1. Fewer."}],
        "designer": [{"actions": [write("prototype.svg", SVG)], "resolution": "A header."}],
        "qa": [reject, {"verdict": "accept"}],
    }
    summary, _ = run_plan(
        plan, repo, replay(tmp_path, "T-001", roles), settings={"pipeline": "full"}
    )
    people = [
        lambda: moves.answer("T-001", "Q1", "a", plan_path=plan),
        lambda: moves.revise("T-001", "Fewer files.", plan),
        lambda: moves.approve("T-001", plan),
        lambda: moves.comment("T-001", "Larger.", plan),
        lambda: moves.accept("T-001", plan),
    ]
    for move in people:
        move()
        if move is people[0]:  # parked on the way, and reopened
            moves.park("T-001", "Not this week.", plan)
            moves.reopen("T-001", plan)
        summary = launch.resume(summary.run_id, Recorder(), repo)
    assert summary.status == "completed", summary.message
    data = json.loads(run_cli("stats", "--repo", repo, "--json").output)
    [task] = data["tasks"]
    assert (task["kind"], task["happened"]) == (
        "ui",
        "a 1-question interview, the plan sent back once, the prototype accepted on round 2, "
        "1 bounce, parked once",
    )
