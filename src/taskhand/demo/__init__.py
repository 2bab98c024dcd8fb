"""The demo: a small real project and its plan, run end to end by the replay agent.

It builds a git repository in a temporary folder (the wordcount project, its plan, and the
replay script beside it), runs the plan, and shows what came out and where to look.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from importlib.resources import as_file, files
from pathlib import Path

from taskhand import config as runconfig
from taskhand.errors import UserError
from taskhand.run import launch
from taskhand.state.records import RunStatus
from taskhand.views import progress as watch

GIT_ENV_ARGS = ["-c", "user.name=taskhand demo", "-c", "user.email=demo@taskhand.invalid"]


class DemoError(UserError):
    """A folder the demo cannot be built in; the message is one line with the fix."""


def check_folder(folder: Path) -> None:
    """Refuse a file or a folder that holds anything: the demo writes only into empty space."""
    if folder.exists() and not folder.is_dir():
        raise DemoError(f"{folder} is a file (fix: give a new or empty folder to --dir)")
    if folder.is_dir() and any(folder.iterdir()):
        raise DemoError(
            f"{folder} is not empty (fix: give a new or empty folder to --dir, or leave "
            "--dir out for a temporary one)"
        )


def build(folder: Path) -> tuple[Path, Path, Path]:
    """The demo repository, its plan folder and the replay script, created under `folder`."""
    with as_file(files(__package__).joinpath("wordcount")) as assets:
        repo = folder / "wordcount"
        shutil.copytree(assets / "project", repo)
        shutil.copytree(assets / "plan", repo / "plan")
        script = folder / "replay.toml"
        shutil.copyfile(assets / "replay.toml", script)
    for argv in (
        ["init", "-q", "-b", "main"],
        ["add", "-A"],
        [*GIT_ENV_ARGS, "commit", "-q", "-m", "wordcount: a README and a plan"],
    ):
        subprocess.run(["git", "-C", str(repo), *argv], check=True, capture_output=True)
    return repo, repo / "plan", script


def main(folder: Path | None = None) -> int:
    if folder is not None:
        check_folder(folder)
    root = folder or Path(tempfile.mkdtemp(prefix="taskhand-demo-"))
    root.mkdir(parents=True, exist_ok=True)
    repo, plan, script = build(root)
    print(f"demo repository: {repo}\nplan: {plan}\n")
    config = runconfig.RunConfig(agent="replay", script=str(script))
    progress = watch.Progress()
    try:
        summary = launch.start(plan, config, progress, repo)
    finally:
        progress.close()
    log = subprocess.run(
        ["git", "-C", str(repo), "log", "--oneline", "--reverse", f"main..{summary.run_branch}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    print(f"\nrun {summary.run_id}: {summary.status} ({summary.message})")
    print(f"\nbranch {summary.run_branch}, one commit per task:\n{log}")
    print("look closer:")
    print(f"  cd {repo}")
    print(f"  git diff main..{summary.run_branch}")
    # The command as this shell can run it: ./dev demo does not put .venv/bin on PATH.
    command = "taskhand" if shutil.which("taskhand") else f"{sys.executable} -m taskhand"
    print(f"  {command} stats {summary.run_id}")
    print(f"  {command} runs")
    print(f"  state: {summary.state}")
    return 0 if summary.status == RunStatus.COMPLETED else 1
