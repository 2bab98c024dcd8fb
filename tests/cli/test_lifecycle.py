"""The whole lifecycle through the command line alone, on both dialects, with the replay
agent: every status is visited, every human move is used, and the plan validates (TaskTrack:
conformant files) after every run and every move. Delivery opens a pull request per task
against a bare remote with the stand-in gh."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from taskhand.pipeline.lifecycle import Move
from taskhand.state.life import Lifecycle
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from tests.conftest import RunCli
from tests.delivery.remotes import with_remote
from tests.plans import TS
from tests.runs import make_repo, write

SETTINGS = 'pipeline = "full"\n\n[review]\nbounces = 3\n\n[deliver]\npr = true\nper = "task"\n'
QUESTION = {
    "outcome": "question",
    "question": "Which separator?",
    "options": ["Comma (what the files use)", "Tab"],
}
REJECT = {
    "verdict": "reject",
    "category": "acceptance_gap",
    "concern": "Empty input is not handled.",
    "next_step": "Return 0 for empty input.",
}


def plan_files(dialect: str) -> tuple[dict[str, str], list[str]]:
    """A plan of three tasks: a logic task of the full pipeline, and two of the default
    pipeline (one asks in free text, one gives up); their ids."""
    titles = ["Count words", "Split fields", "Parse dates"]
    if dialect == "markdown":
        ids = ["T-001", "T-002", "T-003"]
        files = {"plan/overview.md": "# Tools\n\n## Goal\nSmall text tools.\n"}
        for number, (task, title) in enumerate(zip(ids, titles, strict=True)):
            extra = "" if number == 0 else "pipeline: default\n"
            files[f"plan/{task}-x.md"] = (
                f"---\nid: {task}\ntitle: {title}\nkind: logic\n{extra}---\n\n## Description\n"
                f"{title}.\n\n## Acceptance criteria\n- `$ test -f {task}.txt` passes\n"
            )
    else:
        ids = ["FOO-1", "FOO-2", "FOO-3"]
        overview = (
            f"# FOO - Tools\n\n**Objective**: Small text tools.\n\n**Created**: {TS}\n\n"
            "**Resources**: none\n\n## 1: Tools\n\n"
        )
        files = {}
        for number, (task, title) in enumerate(zip(ids, titles, strict=True)):
            overview += f"* [OPEN] {task}: {title}\n"
            extra = "**Kind**: logic\n\n" + ("" if number == 0 else "**Pipeline**: default\n\n")
            files[f"plan/{task}.md"] = (
                f"# {task}: {title}\n\n**Status**: OPEN\n\n**Updated**: {TS}\n\n{extra}"
                f"**Dependencies**: none\n\n**Description**: {title}.\n\n**Acceptance**:\n\n"
                f"- `$ test -f {task}.txt` passes\n"
            )
        files["plan/FOO-TaskTrack.md"] = overview
    files["plan/taskhand.toml"] = SETTINGS
    return files, ids


def script(ids: list[str], drafted: str) -> dict[str, Any]:
    full, asks, gives_up = ids
    done = {drafted: "", full: "", asks: "", gives_up: ""}
    tasks = {t: [{"actions": [write(f"{t}.txt", "ok\n")], "resolution": f"{t} done"}] for t in done}
    tasks[asks] = [{**QUESTION, "actions": []}, *tasks[asks]]
    tasks[gives_up] = [{"outcome": "failed", "failure": "no date library"}, *tasks[gives_up]]
    roles = {
        full: {
            "writer": [QUESTION, {"resolution": "The spec."}],
            "planner": [{"resolution": "Plan 1."}, {"resolution": "Plan 2."}],
            "qa": [REJECT, {"verdict": "accept"}],
        },
        drafted: {
            "designer": [
                {"actions": [{"svg": "prototype", "text": "<svg>1</svg>"}], "resolution": "v1"}
            ],
        },
    }
    return {"tasks": tasks, "roles": roles}


class Session:
    """A person at the command line: runs, moves, and a check of the plan after each."""

    def __init__(self, run_cli: RunCli, repo: Path, replay: Path) -> None:
        self.cli, self.repo, self.replay = run_cli, repo, replay
        self.plan = repo / "plan"
        self.moves: set[str] = set()
        self.seen: set[str] = set()

    def valid(self) -> None:
        checked = self.cli("validate", self.plan)
        assert checked.exit_code == 0, checked.output
        self.seen |= {t["lifecycle"] for t in self.show().values()}

    def show(self) -> dict[str, dict[str, Any]]:
        shown = self.cli("show", self.plan, "--json")
        assert shown.exit_code == 0, shown.output
        return {t["id"]: t for t in json.loads(shown.stdout)["tasks"]}

    def run(self, expected: str) -> None:
        result = self.cli("run", self.plan, "--script", self.replay, "--json")
        lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
        for event in lines:
            if event.get("kind") == "task_moved":
                self.seen |= {event["before"], event["after"]}
        summary = lines[-1]
        assert summary.get("status") == expected, result.output
        self.valid()

    def move(self, *args: str) -> dict[str, Any]:
        result = self.cli(*args, self.plan, "--json")
        assert result.exit_code == 0, result.output
        self.moves.add(args[0])
        self.valid()
        moved: dict[str, Any] = json.loads(result.stdout)
        return moved

    def life(self, task: str) -> tuple[str, bool]:
        shown = self.show()[task]
        return shown["lifecycle"], shown["waiting"]


@pytest.mark.parametrize("dialect", ["markdown", "tasktrack"])
def test_the_whole_lifecycle_from_the_command_line(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch, dialect: str
) -> None:
    files, ids = plan_files(dialect)
    repo = make_repo(tmp_path / "repo", files)
    remote = with_remote(repo, tmp_path, monkeypatch)
    monkeypatch.chdir(repo)
    full, asks, gives_up = ids
    replay = tmp_path / "replay.json"
    me = Session(run_cli, repo, replay)

    drafted = me.move("new", "--title", "Dark mode", "--draft", "A dark theme.", "--kind", "ui")
    new = drafted["task"]
    replay.write_text(json.dumps(script(ids, new)))
    assert me.life(new) == ("draft", True)  # a person is to submit it
    me.move("comment", new, "Keep the contrast high.")
    me.run("failed")  # the writer asks; the default task asks; the other gives up
    assert me.life(full) == ("needs-input", True)
    assert me.life(asks) == ("needs-input", True) and me.life(gives_up) == ("failed", True)
    me.move("answer", full, "Q1", "a", "--note", "as the files do")
    me.move("respond", asks, "Tab, as in the exports.")
    me.move("reopen", gives_up)
    me.move("submit", new)
    me.run("waiting")  # both plans wait for approval; the default tasks are delivered
    assert me.life(asks) == ("delivered", False) and me.life(gives_up) == ("delivered", False)
    assert me.life(full) == ("planned", True) and me.life(new) == ("planned", True)
    me.move("revise", full, "Name the file the counter goes in.")
    me.move("approve", new)
    me.run("waiting")  # the plan again; the prototype waits for its review
    assert me.life(full) == ("planned", True) and me.life(new) == ("prototype", True)
    me.move("approve", full)
    me.move("accept", new)
    me.move("park", new, "the design system is not ready")
    assert me.life(new) == ("parked", True)
    me.move("reopen", new)
    assert me.life(new) == ("ready", False)
    me.run("completed")  # qa bounces the full task once; everything is delivered

    assert me.moves == {str(m) for m in Move}, me.moves
    visited = set(me.seen)
    with Store.open(StateDir.for_repo(repo).database) as store:
        run = store.latest_run()
        assert run is not None
        moved = [e.data for e in store.events(run.id) if e.kind == "task_moved"]
        units = store.units(run.id)
    visited |= {m["before"] for m in moved} | {m["after"] for m in moved}
    assert visited == {str(s) for s in Lifecycle}, sorted({str(s) for s in Lifecycle} - visited)
    shown = me.show()
    assert {t: shown[t]["lifecycle"] for t in shown} == dict.fromkeys(shown, "delivered")
    assert len(remote.prs()) == 4 and all(p["state"] == "OPEN" for p in remote.prs())
    roles = [str(u.role) for u in units if u.task_id == full]
    assert roles.count("qa") == 2 and roles.count("planner") == 2  # a bounce, a revise
    if dialect == "tasktrack":
        text = (repo / "plan" / f"{full}.md").read_text()
        assert "**Status**: DONE" in text and "**Response**: Revise: Name the file" in text
    assert os.path.isdir(remote.bare)
