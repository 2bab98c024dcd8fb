"""Plans a scripted author returns, and the files around an authoring: requirements, a
repository to read, a spec publication, a replay script."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from tests.runs import make_repo

REQUIREMENTS = """# Word count

A command `wc.py` that counts the words of a file, and tests for it. Empty files count 0.
The README documents the command.
"""


def task(
    number: int, title: str, deps: list[int] | None = None, command: list[str] | None = None
) -> dict[str, Any]:
    criterion: dict[str, Any] = {"text": f"{title} is done as described"}
    if command:
        criterion["command"] = command
    return {
        "id": number,
        "title": title,
        "description": f"{title}: change wc.py:count as the requirements say.",
        "criteria": [criterion],
        "dependencies": deps or [],
        "paths": ["wc.py"],
    }


# Task 2 (phase 1) depends on task 3 (phase 2): across phases. Tasks 3 and 4 depend on each
# other: a cycle.
BAD_PLAN: dict[str, Any] = {
    "code": "WCNT",
    "title": "Word count",
    "objective": "Count the words of a file from the command line.",
    "phases": [
        {
            "title": "Core",
            "tasks": [
                task(1, "Count words", command=["python", "-c", "pass"]),
                task(2, "Command line", deps=[3]),
            ],
        },
        {"title": "Documentation", "tasks": [task(3, "README", [4]), task(4, "Usage", [3])]},
    ],
}


def fixed_plan() -> dict[str, Any]:
    """The plan once both problems are fixed: no dependency crosses a phase, no cycle."""
    plan = copy.deepcopy(BAD_PLAN)
    plan["phases"][0]["tasks"][1]["dependencies"] = []
    plan["phases"][1]["tasks"][0]["dependencies"] = []
    return plan


def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A repository to read, a requirement document and a spec publication."""
    repo = make_repo(tmp_path / "repo", {"wc.py": "def count(text):\n    return 0\n"})
    requirements = tmp_path / "docs" / "wordcount.md"
    requirements.parent.mkdir()
    requirements.write_text(REQUIREMENTS)
    spec = tmp_path / "TaskTrack-v1.md"
    spec.write_text("# The TaskTrack Specification v1 (a stand-in for the tests)\n")
    return repo, requirements, spec


def replay_script(folder: Path, *entries: dict[str, Any]) -> Path:
    path = folder / "author.json"
    path.write_text(json.dumps({"author": list(entries)}))
    return path
