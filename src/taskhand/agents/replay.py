"""The replay agent: a deterministic stand-in that performs scripted actions per attempt.

It lets the whole product run offline. A script (TOML, or JSON of the same shape) lists,
per task, one entry per attempt (the last repeats): actions on the worktree, then the
outcome and its usage:

    [[tasks."T-001"]]
    outcome = "done"                 # done | question | failed | error
    resolution = "Added count()."
    tokens_in = 1200                 # optional usage; defaults are derived from the prompt
    [[tasks."T-001".actions]]
    write = "wc.py"
    text = "def count(text): ..."
"""

from __future__ import annotations

import json
import subprocess
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskhand.agents.base import AgentError, Case, Outcome, Question, Unit, Usage
from taskhand.secrets import clean_env

ACTIONS = ("write", "edit", "delete", "run", "commit", "sleep")


class ScriptError(AgentError):
    """A replay script that cannot be used; the message names the file and the fix."""


@dataclass
class ReplayAgent:
    script: dict[str, list[dict[str, Any]]]
    name: str = "replay"

    @classmethod
    def load(cls, path: Path) -> ReplayAgent:
        try:
            text = path.read_text(encoding="utf-8")
            data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
        except (OSError, UnicodeDecodeError) as exc:
            raise ScriptError(
                f"replay script {path}: cannot be read ({exc}) (fix: give a "
                "readable TOML or JSON file with --script)"
            ) from None
        except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
            raise ScriptError(f"replay script {path}: {exc} (fix: correct its syntax)") from None
        if not isinstance(data, dict):
            raise ScriptError(
                f"replay script {path}: not a table of tasks (fix: see docs/running.md)"
            )
        tasks = data.get("tasks", {})
        if not isinstance(tasks, dict):
            raise ScriptError(
                f"replay script {path}: 'tasks' must be a table (fix: use "
                '[[tasks."T-001"]] entries)'
            )
        for task_id, attempts in tasks.items():
            if not isinstance(attempts, list) or not all(isinstance(a, dict) for a in attempts):
                raise ScriptError(
                    f"replay script {path}: tasks.{task_id} must be a list of "
                    f'attempts (fix: write [[tasks."{task_id}"]])'
                )
            for attempt in attempts:
                _check_attempt(path, task_id, attempt)
        return cls(tasks)

    def run(self, unit: Unit) -> Outcome:
        attempts = self.script.get(unit.task_id)
        if not attempts:
            return Outcome(Case.ERROR, failure=f"the replay script has no entry for {unit.task_id}")
        entry = attempts[min(unit.attempt, len(attempts)) - 1]
        transcript: list[dict[str, object]] = [{"role": "user", "content": unit.prompt}]
        deadline = time.monotonic() + unit.timeout_seconds
        for action in entry.get("actions", []):
            error = _perform(action, unit.worktree, transcript, deadline)
            if error:
                return Outcome(Case.ERROR, failure=error, transcript=transcript)
        usage = Usage(
            tokens_in=int(entry.get("tokens_in", len(unit.prompt.encode()) // 4)),
            tokens_out=int(entry.get("tokens_out", 200)),
            tokens_cached=int(entry.get("tokens_cached", 0)),
            cost=float(entry.get("cost", 0.0)),
        )
        case = Case(entry.get("outcome", "done"))
        question = None
        if case is Case.QUESTION:
            question = Question(str(entry.get("question", "")), list(entry.get("options", [])))
        transcript.append({"role": "assistant", "outcome": str(case)})
        return Outcome(
            case,
            resolution=str(entry.get("resolution", "")),
            failure=str(entry.get("failure", "")),
            question=question,
            usage=usage,
            transcript=transcript,
        )


def _check_attempt(path: Path, task_id: str, attempt: dict[str, Any]) -> None:
    where = f"replay script {path}: tasks.{task_id}"
    outcome = attempt.get("outcome", "done")
    if outcome not in {c.value for c in Case}:
        raise ScriptError(
            f"{where}: outcome {outcome!r} (fix: use done, question, failed or error)"
        )
    for action in attempt.get("actions", []):
        kinds = [k for k in ACTIONS if k in action]
        if len(kinds) != 1:
            raise ScriptError(
                f"{where}: an action needs exactly one of {', '.join(ACTIONS)} "
                f"(got {sorted(action)})"
            )


def _inside(worktree: Path, relative: str) -> Path | None:
    target = (worktree / relative).resolve()
    root = worktree.resolve()
    if target == root or not target.is_relative_to(root) or ".git" in Path(relative).parts:
        return None
    return target


def _perform(
    action: dict[str, Any], worktree: Path, transcript: list[dict[str, object]], deadline: float
) -> str:
    """Carry out one action; an error text when it cannot be done."""
    kind = next(k for k in ACTIONS if k in action)
    transcript.append({"role": "tool", "action": kind, "target": str(action[kind])})
    if kind == "sleep":
        time.sleep(max(0.0, min(float(action["sleep"]), deadline - time.monotonic())))
        return "" if time.monotonic() < deadline else "the unit ran out of time"
    if kind == "run":
        argv = [str(a) for a in action["run"]]
        try:
            done = subprocess.run(
                argv,
                cwd=worktree,
                env=clean_env(),
                capture_output=True,
                text=True,
                timeout=max(0.1, deadline - time.monotonic()),
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"command {argv} could not run: {exc}"
        transcript.append({"role": "tool_result", "exit_code": done.returncode})
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
            subprocess.run(argv, cwd=worktree, capture_output=True, check=False)
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
