"""Helpers for tests of a task's lifecycle: a plan of either dialect on the full pipeline in a
real repository, and the harness's side (a run recorded, a task at a status, a question
asked) made through the real store and status book, as the runner makes it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskhand.pipeline.lifecycle import plan_key
from taskhand.plan import validate
from taskhand.plan.model import Plan, Status
from taskhand.state import documents
from taskhand.state.documents import Documents
from taskhand.state.life import Lifecycle, TaskLife
from taskhand.state.paths import StateDir
from taskhand.state.status import StatusBook
from taskhand.state.store import Store
from tests.plans import md_task, tt_plan
from tests.runs import git, make_repo

IDS = {"markdown": ("T-001", "T-002"), "tasktrack": ("FOO-1", "FOO-2")}
UI_BODY = "## Description\nA toggle for dark mode.\n\n## Acceptance criteria\n- it works\n"


@dataclass
class Lives:
    """A repository holding a plan of two tasks (the first a ui task in Markdown), and the
    harness's moves of its tasks."""

    repo: Path
    plan: Path
    dialect: str

    @property
    def ids(self) -> tuple[str, str]:
        return IDS[self.dialect]

    @property
    def state(self) -> StateDir:
        return StateDir.for_repo(self.repo)

    def load(self) -> Plan:
        return validate.validate(self.plan).require()

    def store(self) -> Store:
        return Store.open(self.state.database)

    def start_run(self, pipeline: str = "full") -> str:
        """A run of the plan recorded in the store (no process holds it)."""
        with self.store() as store:
            base = git(self.repo, "rev-parse", "HEAD").strip()
            run = store.create_run(
                plan_key(self.load()),
                self.dialect,
                str(self.repo),
                base,
                "taskhand/run-test",
                {"pipeline": pipeline},
            )
            return run.id

    def life(self, task_id: str) -> TaskLife | None:
        with self.store() as store:
            return store.life(plan_key(self.load()), task_id)

    def put(
        self,
        task_id: str,
        status: Lifecycle,
        *,
        waiting: bool = False,
        request: str = "",
        **options: Any,
    ) -> None:
        """The harness moves the task to `status`; a waiting one asks with `request` (WAIT
        and a Request in the dialect), as a stage that hands a task to a person does."""
        plan = self.load()
        with self.store() as store:
            store.set_life(plan_key(plan), task_id, status, waiting=waiting, **options)
            if waiting:
                self._wait(plan, store, task_id, request or f"Please look at {task_id}.")

    def ask(self, task_id: str, stage: Lifecycle, *questions: tuple[str, list[str]]) -> None:
        """A stage asks `questions`: recorded, shown in the task, and the task waits."""
        plan = self.load()
        key = plan_key(plan)
        with self.store() as store:
            asked = [
                store.ask(key, task_id, text, options, str(stage)) for text, options in questions
            ]
            task = plan.task(task_id)
            assert task is not None
            Documents(plan, self.state).show_questions(task, store.questions(key, task_id))
            store.set_life(
                key,
                task_id,
                Lifecycle.NEEDS_INPUT,
                waiting=True,
                resume=stage,
                reason=asked[0].text,
            )
            request = " ".join(documents.request_text(q, task_id) for q in asked)
            self._wait(plan, store, task_id, request)

    def _wait(self, plan: Plan, store: Store, task_id: str, request: str) -> None:
        run = store.latest_run(plan_key(plan))
        book = StatusBook(plan, store, run.id if run else "")
        book.conclude(task_id, Status.WAIT, request)
        book.complete(task_id, Status.WAIT)

    def files(self) -> dict[str, bytes]:
        """Every file of the plan, to show that a refused move changed none."""
        return {p.name: p.read_bytes() for p in sorted(self.plan.iterdir()) if p.is_file()}


def lives(tmp_path: Path, dialect: str, pipeline: str = "full") -> Lives:
    """A committed plan of two tasks in a new repository; `pipeline` in its taskhand.toml."""
    one, two = IDS[dialect]
    if dialect == "markdown":
        files = {
            "overview.md": "# Feature\n\n## Goal\nShip it.\n",
            f"{one}-toggle.md": md_task(one, "Dark mode toggle", body=UI_BODY, kind="ui"),
            f"{two}-task.md": md_task(two, "Store the choice"),
        }
    else:
        files = {k: str(v) for k, v in tt_plan([[(one, "OPEN"), (two, "OPEN")]]).items()}
    files["taskhand.toml"] = f'pipeline = "{pipeline}"\n'
    repo = make_repo(tmp_path / "repo", {f"plan/{k}": v for k, v in files.items()})
    return Lives(repo, repo / "plan", dialect)
