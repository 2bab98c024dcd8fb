"""The full demo: a small web app's plan taken through the whole lifecycle offline. A writer's
question answered, a plan revised once and approved, a ui task's prototype screenshot
accepted, qa's screenshots of the [found] criteria, a judge's rejection fixed, and a pull
request per task opened against a bare repository on disk by the stand-in `gh`.

People's moves are the same library calls the commands make; the demo prints each command.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable
from functools import partial
from importlib.resources import as_file, files
from pathlib import Path
from typing import Any

from rich.console import Console

from taskhand import config as runconfig
from taskhand.agents import browser
from taskhand.config import Summary
from taskhand.demo import GIT_ENV_ARGS, check_folder
from taskhand.demo import gh as stand_in
from taskhand.run import launch, moves
from taskhand.run.movement import Moved
from taskhand.state.paths import StateDir
from taskhand.state.records import RunStatus
from taskhand.state.store import Store
from taskhand.views import progress as watch
from taskhand.views import stats as stats_view

# The people's moves, in the order the runs reach them: (command as typed, the call).
Move = tuple[str, Callable[[Path, Path], Moved]]
MOVES: list[Move] = [
    ("taskhand answer T-001 Q1 a", lambda p, r: moves.answer("T-001", "Q1", "a", "", p, r)),
    (
        'taskhand revise T-001 "Say which file the filter goes in, and what the check asserts."',
        lambda p, r: moves.revise(
            "T-001", "Say which file the filter goes in, and what the check asserts.", p, r
        ),
    ),
    ("taskhand approve T-001", lambda p, r: moves.approve("T-001", p, r)),
    ("taskhand accept T-001", lambda p, r: moves.accept("T-001", p, r)),
    ("taskhand approve T-002", lambda p, r: moves.approve("T-002", p, r)),
]


def build(folder: Path) -> tuple[Path, Path, Path, Path]:
    """The bookmarks repository (pushed to a bare remote beside it), its plan, the replay
    script, and the folder where the stand-in gh keeps what it was asked."""
    with as_file(files(__package__).joinpath("bookmarks")) as assets:
        repo = folder / "bookmarks"
        shutil.copytree(assets / "project", repo)
        shutil.copytree(assets / "plan", repo / "plan")
        script = tomllib.loads((assets / "replay.toml").read_text(encoding="utf-8"))
    if browser.problem():  # no chromium here: the designer draws, qa looks without pictures
        script = _without_screenshots(script)
    replay = folder / "replay.json"
    replay.write_text(json.dumps(script, indent=1), encoding="utf-8")
    remote = folder / "remote.git"
    _git(folder, "init", "-q", "--bare", "-b", "main", str(remote))
    for argv in (
        ["init", "-q", "-b", "main"],
        ["add", "-A"],
        [*GIT_ENV_ARGS, "commit", "-q", "-m", "bookmarks: the page, its checks and a plan"],
        ["remote", "add", "origin", str(remote)],
        ["push", "-q", "origin", "main"],
    ):
        _git(repo, *argv)
    return repo, repo / "plan", replay, folder / "gh"


def main(folder: Path | None = None) -> int:
    if folder is not None:
        check_folder(folder)
    root = folder or Path(tempfile.mkdtemp(prefix="taskhand-demo-full-"))
    root.mkdir(parents=True, exist_ok=True)
    repo, plan, replay, gh_state = build(root)
    os.environ["TASKHAND_GH"] = f"{shlex.quote(sys.executable)} -m taskhand.demo.gh"
    os.environ["FAKE_GH_STATE"] = str(gh_state)
    os.environ["FAKE_GH_REMOTE"] = str(root / "remote.git")
    print(f"demo repository: {repo}\nplan: {plan} (pipeline full, autonomy gated)")
    if browser.problem():
        print(f"note: {browser.problem()}; the demo goes on without screenshots")
    config = runconfig.build(plan, runconfig.Flags(agent="replay", script=str(replay)))
    summary = _run(lambda listener: launch.start(plan, config, listener, repo))
    for typed, move in MOVES:
        if summary.status != RunStatus.WAITING:
            break
        moved = move(plan, repo)
        print(f"\n$ {typed}\n{moved.task}: {moved.before} -> {moved.after}")
        summary = _run(partial(_resume, summary.run_id, repo))
    _show(summary, repo, plan, gh_state)
    return 0 if summary.status == RunStatus.COMPLETED else 1


def _resume(run_id: str, repo: Path, listener: watch.Progress) -> Summary:
    return launch.resume(run_id, listener, repo)


def _run(work: Callable[[watch.Progress], Summary]) -> Summary:
    progress = watch.Progress()
    try:
        summary = work(progress)
    finally:
        progress.close()
    print(f"run {summary.run_id}: {summary.status} ({summary.message})")
    return summary


def _show(summary: Summary, repo: Path, plan: Path, gh_state: Path) -> None:
    state = StateDir.for_repo(repo)
    print("\npull requests (the stand-in gh's record; nothing was merged):")
    for pr in stand_in.prs(gh_state):
        print(f"  {pr['url']}  {pr['head']} -> {pr['base']}  {pr['title']}")
    for task in ("T-001", "T-002"):
        pictures = sorted(state.artifacts(plan, task).glob("*.[ps][nv]g"))
        if pictures:
            print(f"{task}'s pictures: " + ", ".join(str(p) for p in pictures))
    print(f"T-001's spec, plan and questions: {plan / 'T-001-search.md'}")
    with Store.open(state.database) as store:
        run = store.get_run(summary.run_id)
        figures = stats_view.figures(store, [run] if run else [])
    width = shutil.get_terminal_size((180, 24)).columns  # piped: wide enough for every column
    Console(highlight=False, width=width).print(stats_view.table(f"run {summary.run_id}", figures))
    command = "taskhand" if shutil.which("taskhand") else f"{sys.executable} -m taskhand"
    print(f"look closer: cd {repo}; {command} show plan; {command} ledger T-001")


def _without_screenshots(script: dict[str, Any]) -> dict[str, Any]:
    """The script for a machine without a browser: the designer draws its prototype as an
    SVG wireframe, and qa takes no screenshots."""
    for roles in script.get("roles", {}).values():
        for role, entries in roles.items():
            for entry in entries:
                kept = [a for a in entry.get("actions", []) if "screenshot" not in a]
                if role == "designer":
                    kept.append({"svg": "prototype", "text": WIREFRAME})
                entry["actions"] = kept
    return script


WIREFRAME = (
    "<svg xmlns='http://www.w3.org/2000/svg' width='1440' height='400'>"
    "<rect width='1440' height='90' fill='#1d4ed8'/>"
    "<text x='32' y='58' font-size='32' fill='white'>Bookmarks</text>"
    "<rect x='32' y='120' width='360' height='40' fill='none' stroke='#1f2937'/>"
    "<text x='44' y='147' font-size='18'>py</text>"
    "<text x='52' y='200' font-size='18'>• Python tutorial</text></svg>"
)


def _git(repo: Path, *argv: str) -> None:
    subprocess.run(["git", "-C", str(repo), *argv], check=True, capture_output=True)
