"""The run commands of `taskhand`: run (with --watch, and --board beside it), resume, demo."""

from __future__ import annotations

import contextlib
import shlex
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from taskhand import config, demo
from taskhand.cli.options import JSON, REPO
from taskhand.host import interrupts
from taskhand.plan import formats
from taskhand.run import feedback, launch, supervisor
from taskhand.state.records import RunStatus
from taskhand.text import dumps, printable
from taskhand.unit import LENSES
from taskhand.views import progress as watch
from taskhand.views.terminal import echo
from taskhand.workspace import git

if TYPE_CHECKING:  # the board's server is loaded only for --board
    from taskhand.board.serve import Served

T = TypeVar("T")
EXIT_CODES = {RunStatus.COMPLETED: 0, RunStatus.FAILED: 1}
EXIT_UNFINISHED = 3


def _listener(as_json: bool) -> watch.JsonLines | watch.Progress:
    return watch.JsonLines() if as_json else watch.Progress()


def _watched(listener: watch.JsonLines | watch.Progress, work: Callable[[], T]) -> T:
    """`work()` with SIGINT, SIGTERM and SIGHUP stopping it cleanly: a signal ends taskhand
    with 128 + its number after one line saying how to resume, never a traceback."""
    try:
        with interrupts.handled():
            try:
                return work()
            finally:
                listener.close()
    except interrupts.Interrupted as stop:
        _say_interrupted(stop)


def _say_interrupted(stop: interrupts.Interrupted) -> NoReturn:
    if stop.run_id is None:
        line = f"taskhand: stopped by {stop.name} (see taskhand runs)"
    else:
        command = f"taskhand resume {stop.run_id}"
        if stop.repo is not None and _repo_here() != stop.repo.resolve():
            command += f" --repo {shlex.quote(str(stop.repo))}"
        line = f"run {stop.run_id} interrupted by {stop.name}; resume it with: {command}"
    with contextlib.suppress(OSError):  # the terminal may be gone (SIGHUP)
        click.echo(line, err=True)
    sys.exit(stop.exit_code)


def _repo_here() -> Path | None:
    try:
        return git.find_repo(Path.cwd()).resolve()
    except git.GitError:
        return None


def _report(summary: config.Summary, as_json: bool) -> None:
    if as_json:
        return
    with watch.reader_may_leave():
        echo(f"\nrun {summary.run_id}: {summary.status} ({printable(summary.message)})")
        if summary.status != RunStatus.COMPLETED:
            for line in feedback.left_for_a_person(summary.repo, summary.run_id):
                echo(printable(line))
        echo(f"result branch: {summary.run_branch} in {summary.repo}")
        echo(f"state: {summary.state} (events.jsonl, task-status.json)")
        echo(f"costs: taskhand stats {summary.run_id}")


def _finish(summary: config.Summary) -> None:
    sys.exit(EXIT_CODES.get(RunStatus(summary.status), EXIT_UNFINISHED))


def _default(text: str, value: object) -> str:
    return f"{text} (default: {value})."


_DEFAULTS = config.RunConfig()  # the defaults the help names, as the builder has them
_CAPS = _DEFAULTS.caps


@click.command()
@click.argument("plan", type=click.Path(path_type=Path))
@click.option(
    "--agent",
    help="The agent backend (default: the plan's taskhand.toml, $TASKHAND_AGENT, else "
    f"{config.DEFAULT_AGENT}).",
)
@click.option("--model", help="The model the agent uses.")
@click.option("--script", type=click.Path(path_type=Path), help="The replay agent's script.")
@click.option(
    "--base", "base_ref", help=_default("The commit tasks start from", _DEFAULTS.base_ref)
)
@click.option("--new", is_flag=True, help="Start a new run even if the last one is unfinished.")
@click.option(
    "--snapshot/--no-snapshot",
    default=None,
    help="Start tasks from a commit of your checkout as it is (staged, unstaged and untracked "
    "changes; not ignored files), made without touching your index, files or stash "
    "(default: [run] snapshot, else off).",
)
@click.option(
    "--sandbox",
    metavar=f"[{'|'.join(config.SANDBOXES)}]",
    help="What confines the agents' processes: bwrap (bubblewrap), none, or auto "
    f"(bwrap when it works here, else none with a warning) (default: {_DEFAULTS.sandbox}).",
)
@click.option(
    "--max-attempts",
    type=int,
    help=_default("Attempts per task that may fail their checks", _CAPS.max_attempts),
)
@click.option(
    "--bounces",
    type=int,
    help="Attempts per task the reviewer may reject (default: the plan's taskhand.toml, else "
    f"{_CAPS.bounces}).",
)
@click.option(
    "--review",
    "lenses",
    help="Reviewers, comma-separated, each in its own copy: "
    f"{', '.join(LENSES)} (default: the plan's taskhand.toml, else "
    f"{','.join(_DEFAULTS.lenses)}).",
)
@click.option(
    "--evaluator", help="The reviewers' agent (default: [roles.evaluator], else --agent)."
)
@click.option("--evaluator-model", help="The model the reviewers use.")
@click.option(
    "--unit-timeout",
    "unit_seconds",
    type=float,
    help=_default("Seconds per agent unit", f"{_CAPS.unit_seconds:g}"),
)
@click.option("--run-timeout", "run_seconds", type=float, help="Wall-clock seconds per run.")
@click.option("--task-tokens", type=int, help="Token cap per task.")
@click.option("--run-tokens", type=int, help="Token cap per run.")
@click.option("--task-dollars", type=float, help="Spend cap per task.")
@click.option("--run-dollars", type=float, help="Spend cap per run.")
@click.option(
    "--pipeline",
    metavar="[default|full]",
    help="The stages a task goes through: default (implement, review) or full (spec, plan, "
    "prototype, implement, qa, judge) (default: the plan's taskhand.toml, else default).",
)
@click.option(
    "--autonomy",
    metavar="[gated|full]",
    help="gated: a person approves each plan and prototype; full: they pass by themselves.",
)
@click.option("--prototype-rounds", type=int, help="Designer rounds per ui task (default: 3).")
@click.option(
    "--jobs",
    type=int,
    help="Tasks at once, each in its own workspace (default: jobs in taskhand.toml, else 1).",
)
@click.option(
    "--gates",
    type=int,
    help="Candidates whose checks run at once in the merge queue, apart from the agents' "
    "units (default: gates in taskhand.toml, else the job count).",
)
@click.option(
    "--max-requeues",
    type=int,
    help=_default(
        "Times a task may be sent back because another task's landing came first",
        _CAPS.max_requeues,
    ),
)
@click.option(
    "--deliver",
    metavar="[off|task|run]",
    help="Open pull requests: one per task, one per run, or none (default: [deliver], else off).",
)
@click.option(
    "--watch",
    "supervise",
    is_flag=True,
    help="Keep going while people answer: when the run waits for a person, idle until a move "
    "makes a task workable, then go on (Ctrl-C stops).",
)
@click.option(
    "--board",
    "with_board",
    is_flag=True,
    help="Serve the plan's board beside the run, on loopback (implies --watch); it stays up "
    "when the run is over, until Ctrl-C.",
)
@REPO
@JSON
def run(
    plan: Path,
    new: bool,
    supervise: bool,
    with_board: bool,
    repo: Path | None,
    as_json: bool,
    **flags: Any,
) -> None:
    """Work through PLAN: each task in its own worktree, gated, integrated into a run branch.

    An unfinished earlier run of the same plan is continued (use --new for a fresh one).
    Every option but --new, --repo and --json may come from a variable instead: TASKHAND_ and
    the option's name (--max-attempts: TASKHAND_MAX_ATTEMPTS).
    """
    folder = formats.plan_folder(plan)
    try:
        settings = config.build(folder, config.Flags(**flags))
    except config.FlagError as exc:  # the command line's fault: a usage error, as click's
        message = f"{exc.what} (fix: {exc.fix})"
        raise click.BadParameter(message, param_hint=[exc.where]) from None
    served = _board_beside(folder, repo, as_json) if with_board else None
    listener = _listener(as_json)
    if supervise or served is not None:
        work = partial(supervisor.watch, plan, settings, listener, repo, new, _idle(as_json))
        summary = _watched(listener, work)
    else:
        summary = _watched(listener, lambda: launch.start(plan, settings, listener, repo, new))
    if summary.already_completed:
        _completed_before(summary, feedback.shown_plan(folder), as_json)
    else:
        _report(summary, as_json)
    if served is not None:
        click.echo("the run is over; the board stays up (Ctrl-C stops it)", err=as_json)
        served.wait()
    if not summary.already_completed:
        _finish(summary)


def _idle(as_json: bool) -> Callable[[config.Summary], None]:
    """What the supervisor says each time the run waits for a person."""

    def idle(waiting: config.Summary) -> None:
        _report(waiting, as_json)
        if not as_json:
            echo("watching: the run goes on when a move makes a task workable (Ctrl-C stops)")

    return idle


def _board_beside(folder: Path, repo: Path | None, as_json: bool) -> Served:
    from taskhand.board.serve import start

    say = partial(click.echo, err=as_json)  # --json keeps standard output to the events
    return start(folder.resolve(), git.repo_for(folder.resolve(), repo), say=say)


def _completed_before(summary: config.Summary, plan: str, as_json: bool) -> None:
    line = (
        f"run {summary.run_id} already completed this plan; its result is on branch "
        f"{summary.run_branch} (to start over: taskhand run {plan} --new)"
    )
    if as_json:
        record = {"kind": "already_completed", "run_id": summary.run_id}
        click.echo(dumps({**record, "branch": summary.run_branch, "message": line}))
    else:
        echo(printable(line))


def keep_watching(run_id: str, repo: Path) -> None:
    """Go on with run `run_id` under the supervisor, as `run --watch` would, until it
    completes (a board beside it stays up after)."""
    listener = _listener(False)
    work = partial(supervisor.rewatch, run_id, listener, repo, _idle(False))
    summary = _watched(listener, work)
    _report(summary, False)


@click.command()
@click.argument("run_id", required=False)
@REPO
@JSON
def resume(run_id: str | None, repo: Path | None, as_json: bool) -> None:
    """Resume RUN (default: the latest run of this repository) where it stopped."""
    listener = _listener(as_json)
    summary = _watched(listener, lambda: launch.resume(run_id, listener, repo))
    _report(summary, as_json)
    _finish(summary)


@click.command(name="demo")
@click.option(
    "--dir",
    "folder",
    type=click.Path(path_type=Path),
    help="A new or empty folder to build the demo in (default: a new temporary folder).",
)
@click.option(
    "--full",
    is_flag=True,
    help="The full lifecycle instead: a small web app's plan from an interview to pull requests.",
)
def demo_command(folder: Path | None, full: bool) -> None:
    """Build a small project and plan in a temporary repository and run it with replay.

    With --dir, the folder must be new or empty. With --full, the plan goes through the whole
    lifecycle: an interview, a plan revised and approved, a prototype, qa's screenshots, a
    judge's rejection fixed, and a pull request per task against a local bare remote.
    """
    try:
        with interrupts.handled():
            if full:
                from taskhand.demo import full as full_demo

                code = full_demo.main(folder)
            else:
                code = demo.main(folder)
    except interrupts.Interrupted as stop:
        _say_interrupted(stop)
    sys.exit(code)
