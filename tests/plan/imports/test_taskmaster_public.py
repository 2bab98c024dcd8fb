"""Taskmaster tasks.json files people committed to public repositories, imported as they are:
each task and subtask kept, each dependency the file writes still holding, the done ones DONE,
and the plan valid, in both dialects."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from taskhand.plan.model import Dialect, Status
from tests.plan.imports import FIXTURES, holds, imported

# Where each fixture comes from (the file as committed, byte for byte: repository, path, the
# commit that last wrote it), and what reading it gives: the tag imported (None: the older
# {"tasks": [...]} shape), its tasks, their subtasks, how many are DONE once imported (done,
# completed or cancelled, and the subtasks of such a task) and how many dependencies the file
# writes, counted from the file itself, not by the importer.
SOURCES = {
    "prompt-enhancer": ("0xitsHimanshu/prompt-enhancer", ".taskmaster/tasks/tasks.json",
                        "917fd9a32127a2919bf4b339030353124faa712f"),
    "resourcer": ("4j17h/resourcer", ".taskmaster/tasks/tasks.json",
                  "7acb4d3a059a821c406e2d06eb89f52416e947fd"),
    "expense-analyser": ("AieatAssam/expense-analyser", ".taskmaster/tasks/tasks.json",
                         "0259b815d9f4d21f9ed03255724bbecc093416be"),
    "easymeal": ("AirKyzzZ/EasyMeal", ".taskmaster/tasks/tasks.json",
                 "2435d910d1ef19fd93a789d5f9e80a4c7410b53f"),
    "slack-tools": ("Akibalogh/slack-tools", ".taskmaster/tasks/tasks.json",
                    "c64b73c9ccb55f0825e93149919577c5e0c392dc"),
    "scrumpoker": ("BasKiers/scrumpoker", "tasks/tasks.json",
                   "03e6d0fb9bc0e830e647fcb6af5771984f4d2a54"),
    "map-app": ("Chious/map-app", "tasks/tasks.json",
                "6105873b458f36f3ee445cf911a3705bfabe7f49"),
    "vibecode-homepage": ("Fenicio/vibecode-homepage", "tasks/tasks.json",
                          "84e96c364ed15beb1d01680065ea2471af25bfe8"),
    "edu-upload": ("2vlad/edu-upload", ".taskmaster/tasks/tasks.json",
                   "a6d803be54465ac31c5d121d34af2ee619f2dbaa"),
    "money-tracker": ("6600435By/money-tracker", ".taskmaster/tasks/tasks.json",
                      "d2ff4dd8a8e677182dd6617e994f24a008ec4ce2"),
    "collabcanvas": ("AloofBuddha/CollabCanvas", ".taskmaster/tasks/tasks.json",
                     "cbaad61b34420164fcae2555416fad878cea41c2"),
    "skills-master": ("2vlad/skills-master", ".taskmaster/tasks/tasks.json",
                      "1da1062be91c812163a77cbcd85531f0397b867c"),
    "veritas-logos": ("AJ-Davis/veritas_logos", "tasks/tasks.json",
                      "105de433c5d2eed052a3a749a17a90ad42672c2b"),
    "enlyten2": ("Abdoocoder/Enlyten2", ".taskmaster/tasks/tasks.json",
                 "e53ea8dc94b50225ebd7a9ff2657baba051fd29e"),
    "context-engineering": ("Ak-9647/Context_Engineering", ".taskmaster/tasks/tasks.json",
                            "90fe9ce38663614c0aea70b085dcb8c97024db23"),
    "brick-chain-blaster": ("BongsooJeong/brick-chain-blaster", "tasks/tasks.json",
                            "7fea4e67010ac676c83e14d08f9b8d217f0dc095"),
    "nexusgaming": ("Gamepig/NexusGaming", "tasks/tasks.json",
                    "b53baf6412e068a0c77bb8f5adbab2082857969f"),
}  # fmt: skip
EXPECTED = {  # tag, tasks, subtasks, finished, dependencies written
    "prompt-enhancer": ("master", 10, 29, 39, 35),
    "resourcer": ("master", 20, 48, 44, 56),
    "expense-analyser": ("master", 10, 43, 53, 52),
    "easymeal": ("sprint-0", 10, 0, 2, 14),
    "slack-tools": ("master", 10, 39, 36, 35),
    "scrumpoker": (None, 10, 36, 44, 53),
    "map-app": (None, 15, 0, 1, 22),
    "vibecode-homepage": (None, 16, 21, 8, 49),
    "edu-upload": ("master", 10, 50, 60, 63),
    "money-tracker": ("master", 21, 0, 18, 27),
    "collabcanvas": ("master", 16, 8, 22, 51),
    "skills-master": ("master", 11, 0, 11, 11),
    "veritas-logos": (None, 12, 42, 51, 70),  # task 7's subtasks are "7.1", "7.2", ...
    # Tasks 1 to 10 are done, 43 of their 53 subtasks not (DONE with them: 19 + 53), and most of
    # those subtasks share an id with a sibling ("2.2" four times).
    "enlyten2": ("master", 32, 53, 72, 61),
    "context-engineering": ("master", 7, 0, 0, 8),  # {"master": [...]}: no "tasks" key
    "brick-chain-blaster": (None, 20, 36, 22, 27),  # subtask ids as JSON numbers: 1.1, 3.2, ...
    "nexusgaming": (None, 3, 8, 9, 4),  # a list of tasks at the top, no {"tasks": ...}
}
FINISHED = ("done", "completed", "cancelled")


def fixture(name: str) -> str:
    return f"taskmaster-public-{name}.json"


def tasks_of(name: str, tag: str | None) -> list[dict[str, Any]]:
    text = (FIXTURES / fixture(name)).read_text(encoding="utf-8")
    data = json.loads(text, parse_float=str)  # a subtask id 1.10 as written, not 1.1
    body = data if tag is None else data[tag]
    tasks: list[dict[str, Any]] = body if isinstance(body, list) else body["tasks"]
    return tasks


def sub_key(task: dict[str, Any], sub: dict[str, Any]) -> str:
    """A subtask's Taskmaster id: "3.2"; some files write it so in the subtask itself."""
    return str(sub["id"]) if "." in str(sub["id"]) else f"{task['id']}.{sub['id']}"


def written(tasks: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Each dependency as the file writes it, (later, first) by Taskmaster's ids: in a subtask a
    number names a sibling, "2.3" a subtask of another task."""
    found = []
    for task in tasks:
        key = str(task["id"])
        found += [(key, str(dep)) for dep in task.get("dependencies") or []]
        siblings = {sub_key(task, s).split(".")[1] for s in task.get("subtasks") or []}
        for sub in task.get("subtasks") or []:
            for dep in sub.get("dependencies") or []:
                dep = str(dep)
                first = dep if "." in dep or dep not in siblings else f"{key}.{dep}"
                found.append((sub_key(task, sub), first))
    return found


def test_every_source_is_named() -> None:
    assert sorted(SOURCES) == sorted(EXPECTED)
    names = {p.name for p in FIXTURES.glob("taskmaster-public-*.json")}
    assert names == {fixture(name) for name in SOURCES}
    assert all(len(commit) == 40 for _, _, commit in SOURCES.values())


@pytest.mark.parametrize("dialect", list(Dialect))
@pytest.mark.parametrize("name", list(EXPECTED))
def test_a_public_file_keeps_its_tasks_dependencies_and_done_states(
    tmp_path: Path, name: str, dialect: Dialect
) -> None:
    tag, count, subtask_count, finished_count, dependency_count = EXPECTED[name]
    tasks = tasks_of(name, tag)
    done, plan = imported(tmp_path, fixture(name), dialect, code="PUB")
    assert len(tasks) == count
    assert len(plan.tasks) == count + subtask_count
    assert len(plan.phases) == 1
    keys = [sub_key(t, s) for t in tasks for s in t.get("subtasks") or []]
    assert set(done.ids) == set(keys + [str(t["id"]) for t in tasks])
    deps = written(tasks)
    assert len(deps) == dependency_count
    for later, first in deps:
        assert holds(plan, done.ids, later, first), (later, first)
    for task in tasks:  # a parent after all of its subtasks
        for sub in task.get("subtasks") or []:
            assert holds(plan, done.ids, str(task["id"]), sub_key(task, sub))
    finished = {str(t["id"]) for t in tasks if t.get("status") in FINISHED}
    finished |= {
        sub_key(t, s)
        for t in tasks
        for s in t.get("subtasks") or []
        if s.get("status") in FINISHED or t.get("status") in FINISHED
    }
    by_id = plan.by_id()
    if dialect is Dialect.TASKTRACK:
        assert {s for s, t in done.ids.items() if by_id[t].status is Status.DONE} == finished
        assert len([t for t in plan.tasks if t.status is Status.DONE]) == finished_count
    else:
        assert all(t.status is Status.OPEN for t in plan.tasks)
    assert not [d for d in done.dropped if "which is no task" in d.what or "cycle" in d.what]
    # a finished task's open subtasks are DONE with it, and the import says so, once a task
    said = [d.where for d in done.dropped if "offers no subtask of a finished task" in d.what]
    assert len(said) == len(
        [
            t
            for t in tasks
            if t.get("status") in FINISHED
            and any(s.get("status") not in FINISHED for s in t.get("subtasks") or [])
        ]
    )


@pytest.mark.parametrize(("tag", "count", "finished"), [("database", 7, 6), ("two", 60, 60)])
def test_each_tag_of_a_public_file_imports_on_its_own(
    tmp_path: Path, tag: str, count: int, finished: int
) -> None:
    done, plan = imported(tmp_path, fixture("edu-upload"), Dialect.TASKTRACK, code="EDU", tag=tag)
    assert len(plan.tasks) == count
    assert len([t for t in plan.tasks if t.status is Status.DONE]) == finished
    for later, first in written(tasks_of("edu-upload", tag)):
        assert holds(plan, done.ids, later, first), (later, first)
    others = sorted(d.where for d in done.dropped if "is not imported" in d.what)
    assert others == sorted({"$.master", "$.database", "$.two"} - {f"$.{tag}"})
