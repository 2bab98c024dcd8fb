"""Memory between tasks: the harness notes each task's end in the plan's progress channel, and
later workers read it; a kill and a resume neither lose a line nor write one twice."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from taskhand.run import moves
from taskhand.state import progress
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from tests.plans import md_plan, md_task
from tests.prompts.test_prompts import prompt_of
from tests.runs import attempt, make_repo, run_plan, script, write

HELPER = Path(__file__).parents[1] / "scenarios" / "crashing_run.py"
SECTION = "## What earlier tasks did"


def three_tasks(tmp_path: Path) -> Path:
    files = {str(k): str(v) for k, v in md_plan().items()}
    for n, title in enumerate(["Write a", "Pick a separator", "Write c"], start=1):
        files[f"T-00{n}-t.md"] = md_task(f"T-00{n}", title)
    return make_repo(tmp_path / "repo", {f"plan/{k}": v for k, v in files.items()})


def channel(repo: Path) -> Path:
    return StateDir.for_repo(repo).progress(repo / "plan")


def worker_prompts(repo: Path, task_id: str) -> list[str]:
    with Store.open(StateDir.for_repo(repo).database) as store:
        units = [u for run in store.runs() for u in store.units(run.id)]
    return [prompt_of(u) for u in units if u.task_id == task_id and u.role == "implementer"]


def test_each_ending_is_one_line_and_later_workers_see_the_earlier_ones(tmp_path: Path) -> None:
    repo = three_tasks(tmp_path)
    question = {"question": "Comma or tab?", "options": ["comma", "tab"]}
    replay = script(
        tmp_path,
        {
            "T-001": [attempt(write("a.txt", "a\n"), resolution="Wrote a.txt with a\n  newline.")],
            "T-002": [
                attempt(outcome="question", **question),
                attempt(write("sep.txt", "tab\n"), resolution="Used a tab."),
            ],
            "T-003": [attempt(write("c.txt", "c\n"), resolution="Wrote c.txt.")],
        },
    )
    summary, _ = run_plan(repo / "plan", repo, replay)
    assert summary.status == "waiting"  # T-002 asked; T-001 and T-003 are done
    lines = channel(repo).read_text().splitlines()
    assert [line.split("\t")[1:] for line in lines] == [
        ["T-001", "done", "Write a", "Wrote a.txt with a newline."],
        ["T-002", "waiting", "Pick a separator", ""],  # a wait's request is the harness's
        ["T-003", "done", "Write c", "Wrote c.txt."],
    ]
    [first] = worker_prompts(repo, "T-001")
    assert SECTION not in first  # nothing had ended yet
    [third] = worker_prompts(repo, "T-003")
    shown = third.split(SECTION, 1)[1].split("\n## Your task", 1)[0]
    assert "- T-001 Write a: done: Wrote a.txt with a newline.\n" in shown
    assert "- T-002 Pick a separator: waiting for a person\n" in shown and "Comma" not in shown
    assert shown.index("T-001") < shown.index("T-002") and "T-003" not in shown

    moves.respond("T-002", "tab", repo / "plan", repo)
    summary, _ = run_plan(repo / "plan", repo, replay)
    assert summary.status == "completed"
    outcomes = [line.split("\t")[1:3] for line in channel(repo).read_text().splitlines()]
    assert outcomes == [
        ["T-001", "done"],
        ["T-002", "waiting"],
        ["T-003", "done"],
        ["T-002", "done"],
    ]
    # T-002's own earlier line is left out: its question and the answer are in its own prompt.
    retry = worker_prompts(repo, "T-002")[-1]
    shown = retry.split(SECTION, 1)[1].split("\n## Your task", 1)[0]
    assert "T-001 Write a" in shown and "T-003 Write c" in shown and "T-002" not in shown
    assert "Asked: Comma or tab?" in retry and "Answer: tab" in retry


def crashing(mode: str, repo: Path, replay: Path, kill: str | None = None) -> int:
    argv = [sys.executable, str(HELPER), mode, str(repo / "plan"), str(repo), str(replay)]
    argv += ["--kill", kill] if kill else []
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False).returncode


def test_a_kill_before_or_inside_the_append_leaves_one_whole_line_each(tmp_path: Path) -> None:
    repo = three_tasks(tmp_path)
    replay = script(
        tmp_path,
        {
            "T-001": [attempt(write("a.txt", "a\n"), resolution="Wrote a.txt.")],
            "T-002": [attempt(write("b.txt", "b\n"), resolution="Wrote b.txt.")],
            "T-003": [attempt(write("c.txt", "c\n"), resolution="Wrote c.txt.")],
        },
    )
    # Killed as T-001's conclusion is logged, before its line is appended.
    assert crashing("start", repo, replay, "event:task_concluded") < 0
    assert progress.keys(channel(repo)) == set()
    # Killed right after T-002's line is appended, and again in the middle of T-003's write
    # (made by hand: what a kill inside the write leaves is a line without its end).
    assert crashing("resume", repo, replay, "call:taskhand.state.progress:append#2") < 0
    assert [n.task_id for n in progress.recent(channel(repo), 30)] == ["T-001", "T-002"]
    with channel(repo).open("a") as torn:
        torn.write("x/9\tT-003\tdone\tWrite c\tTORN HALF LI")
    assert crashing("resume", repo, replay) == 0

    text = channel(repo).read_text()
    assert "TORN" not in text and text.endswith("\n")
    notes = [progress.Note.parse(line) for line in text.splitlines()]
    assert [(n.task_id, n.resolution) for n in notes if n] == [
        ("T-001", "Wrote a.txt."),
        ("T-002", "Wrote b.txt."),
        ("T-003", "Wrote c.txt."),
    ]
    assert len({n.key for n in notes if n}) == 3
    [third] = worker_prompts(repo, "T-003")
    assert (
        "- T-001 Write a: done: Wrote a.txt.\n- T-002 Pick a separator: done: Wrote b.txt.\n"
        in (third)
    )
    assert "TORN" not in third
