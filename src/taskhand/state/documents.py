"""Where a task's lifecycle documents live, per dialect: the spec, the plan (with a person's
`### Review` blocks) and the interview's questions. A Markdown task keeps them as sections of
its own file; a TaskTrack task, whose file a processing run may not rewrite beyond its status
fields, keeps them in the task's artifacts, and its questions in Request and Response fields.
Only the harness writes them, never an agent.
"""

from __future__ import annotations

import re
from pathlib import Path

from taskhand.plan.formats import prose, sections, tasktrack_edit
from taskhand.plan.formats.files import write_atomic
from taskhand.plan.formats.markdown import parse_task
from taskhand.plan.model import Dialect, Plan, Task
from taskhand.plan.problems import Collector
from taskhand.state import lock
from taskhand.state.life import Question
from taskhand.state.paths import StateDir

REVIEW = "### Review"
_REVIEW_LINE = re.compile(r"^###\s+Review\s*$", re.MULTILINE)
_REVIEW_MARK = re.compile(r"###\s+Review\s*$")  # what a review's text escapes (prose.py)
# Where a person finds a task's artifacts, as its files say it: never this machine's path
# (a TaskTrack file is committed and read elsewhere), but the command that names the folder.
ARTIFACTS = "the task's artifacts (taskhand show PLAN TASK names the folder)"
SPEC, PLAN, QUESTIONS, PROTOTYPE, LOG = "spec", "plan", "questions", "prototype", "log"


class Documents:
    """The lifecycle documents of one plan's tasks."""

    def __init__(self, plan: Plan, state: StateDir) -> None:
        self.plan = plan
        self.state = state
        self.in_file = plan.dialect is Dialect.MARKDOWN

    def folder(self, task_id: str) -> Path:
        return self.state.artifacts(self.plan.root, task_id)

    def read(self, task: Task, name: str) -> str:
        """The document as it stands now (a person may have edited it since the plan loaded)."""
        if self.in_file and task.source is not None:
            fresh = parse_task(tasktrack_edit.read_raw(task.source), Collector([], task.source))
            return (fresh.documents if fresh else task.documents).get(name, "")
        path = self.folder(task.id) / f"{name}.md"
        return path.read_text(encoding="utf-8").strip() if path.is_file() else ""

    def write(self, task: Task, name: str, body: str) -> None:
        if self.in_file and task.source is not None:
            with lock.files(self.plan.root):  # a person may move the task meanwhile
                text = tasktrack_edit.read_raw(task.source)
                write_atomic(task.source, sections.set_section(text, name.capitalize(), body))
            task.documents[name] = prose.normal(body)  # as the file reads back
            return
        folder = self.folder(task.id)
        folder.mkdir(parents=True, exist_ok=True)
        write_atomic(folder / f"{name}.md", body.strip() + "\n")

    def where(self, task: Task, name: str) -> str:
        """Where a person reads the document: the task file's section, or the artifact."""
        if self.in_file and task.source is not None:
            return f"the ## {name.capitalize()} section of {task.source.name}"
        return f"{name}.md in {ARTIFACTS}"

    # The plan and its reviews

    def write_plan(self, task: Task, body: str) -> None:
        """A new plan round's text; every `### Review` block a person wrote stays as it was,
        at the end, whatever the planner returned."""
        with lock.files(self.plan.root):  # a revise may add a Review meanwhile
            kept = reviews(self.read(task, PLAN))
            # A planner cannot write a review: its text ends at a line that would start one.
            own = _REVIEW_LINE.split(prose.normal(body))[0].strip()
            self.write(task, PLAN, "\n\n".join([own, *(_review_block(r) for r in kept)]))

    def add_review(self, task: Task, text: str, name: str = PLAN) -> None:
        """A person's request for changes, as a new `### Review` block at the end of the
        document `name`: the plan, or the prototype's section for another designer round."""
        with lock.files(self.plan.root):
            current = self.read(task, name).rstrip()
            self.write(task, name, f"{current}\n\n{_review_block(text)}".strip())

    def log(self, task: Task, note: str) -> None:
        """A line in the task's `## Log`: what a person should know that no status says."""
        with lock.files(self.plan.root):
            current = self.read(task, LOG).rstrip()
            self.write(task, LOG, f"{current}\n- {prose.one_line(note)}".strip())

    def record_pr(self, task: Task, url: str) -> None:
        """The pull request that delivered a Markdown task, as `pr: <url>` in its front
        matter (a TaskTrack task has it in its Resolution)."""
        if not self.in_file or task.source is None:
            return
        with lock.files(self.plan.root):
            text = tasktrack_edit.read_raw(task.source)
            write_atomic(task.source, sections.set_front(text, "pr", url))
        task.pr = url

    # The interview

    def show_questions(self, task: Task, questions: list[Question]) -> None:
        """A Markdown task's `## Questions` section, rendered from the recorded questions (a
        TaskTrack task shows them in its Request fields instead)."""
        if self.in_file and questions:
            self.write(task, QUESTIONS, render_questions(questions))


def reviews(plan_text: str) -> list[str]:
    """The `### Review` blocks of a plan, oldest first, each as its person wrote it."""
    blocks = _REVIEW_LINE.split(plan_text)[1:]
    return [prose.unescape(r.strip(), _REVIEW_MARK) for r in blocks if r.strip()]


def _review_block(text: str) -> str:
    """A review under its heading, as prose: a `### Review` line in it starts no block."""
    return f"{REVIEW}\n\n{prose.escape(text, _REVIEW_MARK)}"


def option_line(question: Question, index: int) -> str:
    option = prose.one_line(question.options[index])
    recommended = index == 0 and "recommended" not in option.lower()
    return f"({chr(ord('a') + index)}) {option}" + (" — recommended" if recommended else "")


def render_questions(questions: list[Question]) -> str:
    blocks = []
    for q in questions:
        state = "open" if q.open else "answered"
        options = "\n".join(f"- {option_line(q, i)}" for i in range(len(q.options)))
        answer = ""
        if not q.open:
            picked = ord(q.choice) - ord("a") if q.choice else -1
            chosen = option_line(q, picked) if 0 <= picked < len(q.options) else ""
            answer = prose.one_line(" ".join(x for x in (chosen, q.note or "") if x))
        heading = f"### Q{q.number} · {prose.one_line(q.text)} · {state}"
        blocks.append(f"{heading}\n\n{options}\n\n> **Answer:** {answer}".rstrip())
    return "\n\n".join(blocks)


def request_text(question: Question, task_id: str) -> str:
    """A question as a TaskTrack Request: one line a person can act on by hand or by command."""
    options = "; ".join(option_line(question, i) for i in range(len(question.options)))
    listed = f" Options: {options}." if options else ""
    how = (
        f"taskhand answer {task_id} Q{question.number} a"
        if question.options
        else f'taskhand respond {task_id} "..."'
    )
    return f"Q{question.number}: {question.text}{listed} Answer with: {how}, or write a Response."
