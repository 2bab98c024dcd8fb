"""Two-task plans of the full pipeline, in both dialects, for the SIGKILL campaigns of
tests/scenarios/test_resume_full.py: a ui task whose designer draws its prototype and whose
first candidate qa rejects, and a logic task after it whose first candidate the judge rejects.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.plans import md_task, tt_plan, tt_task
from tests.runs import make_repo

SVG = (
    "<svg xmlns='http://www.w3.org/2000/svg' width='640' height='90'>"
    "<text x='10' y='50'>Theme toggle</text></svg>"
)
WIREFRAME = SVG.replace("Theme toggle", "Header wireframe")
QUESTION = "Where should the toggle live?"
OPTIONS = ["In the header, right of the nav", "On the settings page only"]


@dataclass(frozen=True)
class FullPlan:
    """What a campaign needs of a built plan: where it is, and what its script says."""

    dialect: str
    repo: Path
    plan: Path
    script: Path
    ui: str  # the ui task's id
    logic: str  # the logic task's id (it depends on the ui task)
    asks: bool  # the ui task's writer asks a question first
    delivers: bool  # a pull request per task (the test gives the repository its remote)

    @property
    def ids(self) -> list[str]:
        return [self.ui, self.logic]

    def roles(self) -> dict[str, dict[str, list[dict[str, Any]]]]:
        data: dict[str, Any] = json.loads(self.script.read_text(encoding="utf-8"))
        return data["roles"]

    def tasks(self) -> dict[str, list[dict[str, Any]]]:
        data: dict[str, Any] = json.loads(self.script.read_text(encoding="utf-8"))
        return data["tasks"]

    def spec(self, task_id: str) -> str:
        return str(self.roles()[task_id]["writer"][-1]["resolution"]).strip()

    def planned(self, task_id: str) -> str:
        return str(self.roles()[task_id]["planner"][-1]["resolution"]).strip()


def _write(path: str, text: str) -> dict[str, str]:
    return {"write": path, "text": text}


def _reject(concern: str, step: str) -> dict[str, str]:
    return {
        "verdict": "reject",
        "category": "acceptance_gap",
        "concern": concern,
        "next_step": step,
    }


def script_for(ui: str, logic: str, asks: bool, bounce: bool) -> dict[str, Any]:
    """The replay script: every role of both tasks, one entry per round of each role.

    With `bounce`, qa rejects the ui task's first candidate and the judge the logic task's;
    the implementer's second entry (its next attempt) builds on the first. Without, each
    implementer has one entry: its entries count attempts, and a gated task's attempts
    include those that ended at a gate or with a question."""
    writer_ui: list[dict[str, Any]] = [
        {
            "resolution": f"The header gets a theme toggle ({ui}).\n\nIt remembers the choice."
            "\n\n## Out of scope\n\nThe settings page."  # a heading of its own
        }
    ]
    if asks:
        asked = {"outcome": "question", "question": QUESTION, "options": OPTIONS}
        writer_ui.insert(0, asked)
    return {
        "tasks": {
            ui: [
                {"resolution": "Wrote toggle.txt.", "actions": [_write("toggle.txt", "on\n")]},
                {
                    "resolution": "The toggle shows in the header.",
                    "actions": [_write("header.txt", "toggle\n")],
                },
            ][: 1 + bounce],
            logic: [
                {"resolution": "Wrote count.txt.", "actions": [_write("count.txt", "1\n")]},
                {
                    "resolution": "count.txt counts both themes.",
                    "actions": [{"edit": "count.txt", "old": "1", "new": "2"}],
                },
            ][: 1 + bounce],
        },
        "roles": {
            ui: {
                "writer": writer_ui,
                "explorer": [{"resolution": "The header is in header.txt, the theme nowhere."}],
                "planner": [
                    {"resolution": "## Steps\n\n1. Test the toggle.\n2. Write toggle.txt."}
                ],
                "designer": [
                    {
                        "resolution": "The header with the toggle at its right.",
                        "actions": [
                            {"svg": "prototype", "text": SVG},
                            _write("prototype-wireframe.svg", WIREFRAME),
                        ],
                    }
                ],
                "tester": [
                    {
                        "resolution": "A check.",
                        "actions": [_write("checks/toggle.sh", "test -f toggle.txt\n")],
                    }
                ],
                "qa": [
                    _reject("The toggle is not in the header.", "Put it in the header."),
                    {"verdict": "accept", "concern": "The toggle shows in the header."},
                ][not bounce :],
            },
            logic: {
                "writer": [{"resolution": f"Count the themes ({logic}).\n\nTwo of them."}],
                "planner": [{"resolution": "1. Write count.txt.\n2. Count both themes."}],
                "tester": [
                    {
                        "resolution": "A check.",
                        "actions": [_write("checks/count.sh", "test -f count.txt\n")],
                    }
                ],
                "judge": [
                    _reject("count.txt counts one theme.", "Count both."),
                    {"verdict": "accept", "concern": "Both themes are counted."},
                ][not bounce :],
            },
        },
    }


def settings_file(autonomy: str, delivers: bool) -> str:
    text = f'pipeline = "full"\nautonomy = "{autonomy}"\n'
    return text + ('\n[deliver]\npr = true\nper = "task"\n' if delivers else "")


UI_CRITERIA = "- `$ test -f toggle.txt` passes\n- [found] the toggle shows in the header\n"
LOGIC_CRITERIA = "- `$ test -f count.txt` passes\n"


def build_full(
    dialect: str,
    folder: Path,
    autonomy: str = "full",
    asks: bool = False,
    bounce: bool = True,
    delivers: bool = False,
) -> FullPlan:
    """A repository and a two-task plan of the full pipeline with its replay script. The
    Markdown plan lives in the repository (the harness writes its task files there); the
    TaskTrack plan beside it."""
    if dialect == "markdown":
        ui, logic = "T-001", "T-002"
        ui_body = (
            f"## Description\nUsers want a dark theme.\n\n## Acceptance criteria\n{UI_CRITERIA}"
        )
        logic_body = (
            f"## Description\nCount the themes.\n\n## Acceptance criteria\n{LOGIC_CRITERIA}"
        )
        files = {
            "README.md": "# themes\n",
            "plan/overview.md": "# Dark mode\n\n## Goal\nA dark theme.\n",
            "plan/taskhand.toml": settings_file(autonomy, delivers),
            "plan/T-001-toggle.md": md_task(ui, "Dark mode toggle", ui_body, kind="ui"),
            "plan/T-002-count.md": md_task(
                logic, "Count the themes", logic_body, kind="logic", depends=ui
            ),
        }
        repo = make_repo(folder / "repo", files)
        plan = repo / "plan"
    else:
        ui, logic = "FOO-1", "FOO-2"
        repo = make_repo(folder / "repo", {"README.md": "# themes\n"})
        texts = tt_plan([[(ui, "OPEN"), (logic, "OPEN")]], {logic: ui})
        texts[f"{ui}.md"] = _tt_kind(tt_task(ui, f"Task {ui}", criteria=UI_CRITERIA.rstrip()), "ui")
        texts[f"{logic}.md"] = _tt_kind(
            tt_task(logic, f"Task {logic}", deps=ui, criteria=LOGIC_CRITERIA.rstrip()), "logic"
        )
        texts["taskhand.toml"] = settings_file(autonomy, delivers)
        plan = folder / "plan"
        plan.mkdir(parents=True)
        for name, text in texts.items():
            (plan / name).write_text(str(text), encoding="utf-8")
    script = folder / "replay.json"
    script.write_text(json.dumps(script_for(ui, logic, asks, bounce), indent=1), encoding="utf-8")
    return FullPlan(dialect, repo, plan, script, ui, logic, asks, delivers)


def _tt_kind(text: str, kind: str) -> str:
    return text.replace("**Dependencies**", f"**Kind**: {kind}\n\n**Dependencies**")
