"""The replay agent: a deterministic stand-in that performs scripted actions per attempt, so
the whole product runs offline. What a script says, and how it is read and checked, is in
replay_script.py: per task, one entry per attempt (actions on the worktree, then the outcome
and its usage) and what the reviewer of that attempt does; lists per role of the full
lifecycle; and `taskhand author`'s units.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from taskhand.agents.browser import BrowserSession, session_for, take_picture
from taskhand.agents.replay_script import ACTIONS, read_script
from taskhand.host.allowlist import child_env
from taskhand.host.process import Capture, Ran, run_group
from taskhand.host.sandbox import confine_unit
from taskhand.unit import Case, Outcome, Question, Role, Unit, Usage, Verdict

COMMIT_SECONDS = 600.0  # a scripted commit is git's own work: bounded only against a hang
NO_REVIEW = {
    "verdict": "accept",
    "concern": "the replay script gives no review of this attempt; accepted",
}


@dataclass
class ReplayAgent:
    script: dict[str, list[dict[str, Any]]]
    name: str = "replay"
    roles: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)
    author: list[dict[str, Any]] = field(default_factory=list)  # taskhand author's units
    env: dict[str, str] = field(default_factory=child_env, repr=False)  # for `run` commands

    @classmethod
    def load(cls, path: Path, passed: Sequence[str] = ()) -> ReplayAgent:
        tasks, roles, author = read_script(path)
        return cls(tasks, env=child_env(passed=passed), roles=roles, author=author)

    def run(self, unit: Unit) -> Outcome:
        env = {**self.env, **unit.env}
        if unit.role is Role.AUTHOR:
            if not self.author:
                return Outcome(Case.ERROR, failure="the replay script has no [[author]] entry")
            entry = self.author[min(unit.round, len(self.author)) - 1]
            plan = {"resolution": json.dumps(entry["plan"])} if "plan" in entry else {}
            return _perform_entry({**entry, **plan}, unit, env)
        own = self.roles.get(unit.task_id, {}).get(str(unit.role))
        if own or unit.role not in (Role.IMPLEMENTER, Role.EVALUATOR):
            entry = own[min(unit.round, len(own)) - 1] if own else _default(unit)
            if unit.role.judges:
                return _review(entry, unit, env)
            return _perform_entry(entry, unit, env)
        attempts = self.script.get(unit.task_id)
        if not attempts:
            return Outcome(Case.ERROR, failure=f"the replay script has no entry for {unit.task_id}")
        # The implementer's entries go by its round (its try at the task: in the default
        # pipeline, the attempt); a reviewer reads the entry of the attempt it judges.
        if unit.role.judges:
            entry = attempts[min(unit.attempt, len(attempts)) - 1]
            return _review(_review_for(entry, unit.lens), unit, env)
        entry = attempts[min(unit.round, len(attempts)) - 1]
        return _perform_entry(entry, unit, env)


def _perform_entry(entry: dict[str, Any], unit: Unit, env: dict[str, str]) -> Outcome:
    """A working role's scripted unit: its actions, then its outcome."""
    transcript, error = _act(entry, unit, env)
    if error:
        return Outcome(Case.ERROR, failure=error, transcript=transcript)
    usage = _usage(entry, unit)
    case = Case(entry.get("outcome", "done"))
    question = None
    if case is Case.QUESTION:
        question = Question(str(entry.get("question", "")), list(entry.get("options", [])))
    unit.record(transcript, {"role": "assistant", "outcome": str(case)})
    return Outcome(
        case,
        resolution=str(entry.get("resolution", "")),
        failure=str(entry.get("failure", "")),
        question=question,
        usage=usage,
        transcript=transcript,
    )


def _default(unit: Unit) -> dict[str, Any]:
    """What a role the script says nothing of does: its work, in a line; a judge accepts."""
    if unit.role.judges:
        return {"verdict": "accept", "concern": f"the replay script has no {unit.role} entry"}
    return {"resolution": f"(replay) the {unit.role}'s work on {unit.task_id}"}


def _review_for(entry: dict[str, Any], lens: str) -> dict[str, Any]:
    """What the reviewer of this attempt does through `lens`: its own table, else the shared one."""
    reviews = entry.get("reviews", {})
    if lens in reviews:
        return dict(reviews[lens])
    return dict(entry.get("review", NO_REVIEW))


def _review(review: dict[str, Any], unit: Unit, env: dict[str, str]) -> Outcome:
    transcript, error = _act(review, unit, env)
    if error:
        return Outcome(Case.ERROR, failure=error, transcript=transcript)
    usage = _usage(review, unit)
    if review.get("outcome") == "error":
        failure = str(review.get("failure", "")) or "the scripted reviewer broke"
        unit.record(transcript, {"role": "assistant", "outcome": str(Case.ERROR)})
        return Outcome(Case.ERROR, failure=failure, usage=usage, transcript=transcript)
    verdict = Verdict.parse(review)
    if isinstance(verdict, str):  # a script built in code skips the checks load() makes
        failure = f"the replay script's review is not usable: {verdict}"
        return Outcome(Case.ERROR, failure=failure, usage=usage, transcript=transcript)
    unit.record(transcript, {"role": "assistant", "verdict": verdict.as_json()})
    return Outcome(Case.DONE, verdict=verdict, usage=usage, transcript=transcript)


def _act(
    entry: dict[str, Any], unit: Unit, env: dict[str, str]
) -> tuple[list[dict[str, object]], str]:
    """Perform the entry's actions in the unit's worktree: the transcript, and an error or ""."""
    transcript: list[dict[str, object]] = []
    unit.record(transcript, {"role": "user", "content": unit.prompt})
    deadline = time.monotonic() + unit.timeout_seconds
    with session_for(unit, env) as browser:  # started by the first screenshot, if any
        for action in entry.get("actions", []):
            error = _perform(action, unit, transcript, deadline, env, browser)
            if error:
                return transcript, error
    return transcript, ""


def _usage(entry: dict[str, Any], unit: Unit) -> Usage:
    return Usage(
        tokens_in=int(entry.get("tokens_in", len(unit.prompt.encode()) // 4)),
        tokens_out=int(entry.get("tokens_out", 200)),
        tokens_cached=int(entry.get("tokens_cached", 0)),
        cost=float(entry.get("cost", 0.0)),
        tokens_cache_write=int(entry.get("tokens_cache_write", 0)),
        tokens_thinking=int(entry.get("tokens_thinking", 0)),
    )


def _inside(worktree: Path, relative: str) -> Path | None:
    target = (worktree / relative).resolve()
    root = worktree.resolve()
    if target == root or not target.is_relative_to(root) or ".git" in Path(relative).parts:
        return None
    return target


def _run(unit: Unit, argv: list[str], env: dict[str, str], seconds: float) -> Ran:
    """Run `argv` as an agent's shell would: in the unit's sandbox and worktree, in a process
    group of its own that the deadline or a signal stopping the run kills whole."""
    nothing = Capture(0, head=0)  # only the exit code goes into the transcript
    return run_group(
        confine_unit(unit, argv), unit.worktree, env, time.monotonic() + seconds, stdout=nothing
    )


def _perform(
    action: dict[str, Any],
    unit: Unit,
    transcript: list[dict[str, object]],
    deadline: float,
    env: dict[str, str],
    browser: BrowserSession | None = None,
) -> str:
    """Carry out one action; an error text when it cannot be done. Commands run as an agent's
    shell does: in the unit's sandbox."""
    worktree = unit.worktree
    kind = next(k for k in ACTIONS if k in action)
    unit.record(transcript, {"role": "tool", "action": kind, "target": str(action[kind])})
    if kind in ("screenshot", "svg"):
        url, text = str(action.get("url", "")), str(action.get("text", ""))
        fill = (str(action["fill"]), str(action.get("value", ""))) if "fill" in action else None
        return take_picture(unit, browser, kind, str(action[kind]), url, text, fill)
    if kind == "sleep":
        time.sleep(max(0.0, min(float(action["sleep"]), deadline - time.monotonic())))
        return "" if time.monotonic() < deadline else "the unit ran out of time"
    if kind == "run":
        argv = [str(a) for a in action["run"]]
        seconds = max(0.1, deadline - time.monotonic())
        try:
            done = _run(unit, argv, env, seconds)
        except OSError as exc:
            return f"command {argv} could not run: {exc}"
        if done.timed_out:
            return f"command {argv} could not run: it timed out after {seconds:g} seconds"
        if done.limit:
            return f"command {argv} was stopped: {done.limit}"
        unit.record(transcript, {"role": "tool_result", "exit_code": done.code})
        return ""
    if kind == "commit":
        for argv in (
            ["git", "add", "-A"],
            [
                "git",
                "-c",
                "user.name=replay",
                "-c",
                "user.email=replay@localhost",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                str(action["commit"]),
            ],
        ):
            _run(unit, argv, env, COMMIT_SECONDS)
        return ""
    target = _inside(worktree, str(action[kind]))
    if target is None:
        return f"path {action[kind]!r} is outside the workspace"
    if kind == "write":
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(str(action.get("text", "")), encoding="utf-8")
    elif kind == "delete":
        target.unlink(missing_ok=True)
    else:
        text = target.read_text(encoding="utf-8") if target.is_file() else ""
        old, new = str(action.get("old", "")), str(action.get("new", ""))
        if not old or text.count(old) != 1:
            return f"edit of {action[kind]}: the text to replace must occur exactly once"
        target.write_text(text.replace(old, new), encoding="utf-8")
    return ""
