"""Helpers for tests that run plans: a real repository, a replay script, a recorded run."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from taskhand import config as runconfig
from taskhand.pipeline.work import Stage
from taskhand.run import launch
from taskhand.state.events import Event

GIT = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid"]


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [*GIT, "-C", str(repo), *args],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **env} if env else None,
    )
    return done.stdout


def make_repo(folder: Path, files: dict[str, str] | None = None) -> Path:
    """A repository with one commit holding `files` (a README by default)."""
    folder.mkdir(parents=True, exist_ok=True)
    git(folder, "init", "-q", "-b", "main")
    for name, text in (files or {"README.md": "# project\n"}).items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "start")
    return folder


def write(path: str, text: str) -> dict[str, str]:
    return {"write": path, "text": text}


def attempt(*actions: dict[str, Any], outcome: str = "done", **extra: Any) -> dict[str, Any]:
    return {"outcome": outcome, "actions": list(actions), "resolution": "did it", **extra}


def script(folder: Path, tasks: dict[str, list[dict[str, Any]]]) -> Path:
    path = folder / "replay.json"
    path.write_text(json.dumps({"tasks": tasks}))
    return path


@dataclass
class Recorder:
    """A listener that keeps every event of a run."""

    events: list[Event] = field(default_factory=list)

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def steps(self) -> list[str]:
        return [str(e.data["message"]) for e in self.events if e.kind == "step"]

    def of(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.kind == kind]


def run_plan(
    plan: Path,
    repo: Path,
    replay: Path,
    lenses: list[str] | None = None,
    prompt_caps: runconfig.PromptCaps | None = None,
    sandbox: str = "auto",
    pipeline: Sequence[Stage] | None = None,
    settings: dict[str, Any] | None = None,
    **caps: Any,
) -> tuple[runconfig.Summary, Recorder]:
    """Run `plan` with the replay agent; `settings` are more RunConfig fields (pipeline,
    autonomy, app, deliver, ...)."""
    recorder = Recorder()
    config = runconfig.RunConfig(
        agent="replay",
        script=str(replay),
        caps=runconfig.Caps(**caps),
        lenses=lenses or ["general"],
        prompt_caps=prompt_caps or runconfig.PromptCaps(),
        sandbox=sandbox,
        **(settings or {}),
    )
    return launch.start(plan, config, recorder, repo, pipeline=pipeline), recorder
