"""`taskhand board`: the plan's web board on loopback, with the plan's run kept going beside
it (or attached to the run that already goes), so the moves made on it take effect; with
--tui, the terminal board, which `taskhand watch` draws too."""

from __future__ import annotations

import webbrowser
from pathlib import Path

import click

from taskhand.cli.options import REPO

PLAN = click.argument("plan", type=click.Path(path_type=Path), required=False)
ONCE = click.option(
    "--once", is_flag=True, help="Print one frame and exit (so does watch into a pipe or file)."
)
SCREEN = click.option(
    "--screen", is_flag=True, help="Draw on the terminal's alternate screen, given back on exit."
)
LOOPBACK = "127.0.0.1"


@click.command()
@PLAN
@click.option("--port", type=int, help="The port (default: a free one).")
@click.option(
    "--host",
    default=LOOPBACK,
    show_default=True,
    help="The address to listen on; anything but loopback is reachable by others (warned).",
)
@click.option("--open", "open_page", is_flag=True, help="Open the board in the browser.")
@click.option(
    "--no-run",
    is_flag=True,
    help="Only show the board: do not go on with the plan's unfinished run beside it.",
)
@click.option("--tui", is_flag=True, help="Draw the board in the terminal instead (as watch).")
@ONCE
@SCREEN
@REPO
def board(
    plan: Path | None,
    port: int | None,
    host: str,
    open_page: bool,
    no_run: bool,
    tui: bool,
    once: bool,
    screen: bool,
    repo: Path | None,
) -> None:
    """Serve PLAN's board: every task live, and a person's moves (with the printed token).

    When no run of the plan goes on, its latest unfinished run goes on beside the board
    (with its own settings), so moves take effect; when one goes on, the board attaches to
    it. With --tui, draw the board in the terminal instead, as taskhand watch does (it only
    shows: no run goes on beside it). PLAN defaults to the plan of this repository's latest
    run.
    """
    if tui:
        if port is not None or host != LOOPBACK or open_page:
            raise click.UsageError("--port, --host and --open are the web board's: leave them out")
        _draw(plan, repo, once, screen)
        return
    if once or screen:
        raise click.UsageError("--once and --screen draw the terminal board: add --tui")
    from taskhand.board.serve import start
    from taskhand.cli.run import keep_watching
    from taskhand.run import lookup

    folder, root = _plan_and_repo(plan, repo)
    served = start(folder, root, host, port, click.echo)
    if open_page:
        webbrowser.open(f"{served.url}#token={served.board.token}")
    going = None if no_run else lookup.beside(folder, root)
    if going is not None and going.live:
        click.echo(f"attached: {going.holder} works on the plan; moves reach it")
    elif going is not None:
        click.echo(f"run {going.run_id} goes on beside the board (Ctrl-C stops both)")
        keep_watching(going.run_id, root)
        click.echo("the run is over; the board stays up (Ctrl-C stops it)")
    elif not no_run:
        click.echo(f"no unfinished run of the plan: start one with taskhand run {plan} --board")
    served.wait()


@click.command()
@PLAN
@ONCE
@SCREEN
@REPO
def watch(plan: Path | None, once: bool, screen: bool, repo: Path | None) -> None:
    """Draw PLAN's board in the terminal, live: a column per status, a card per task.

    It draws again as the plan's events arrive and each second, in place (so it works in
    tmux); Ctrl-C ends it. Into a pipe or a file, or with --once, it prints one frame and
    exits. PLAN defaults to the plan of this repository's latest run.
    """
    _draw(plan, repo, once, screen)


def _draw(plan: Path | None, repo: Path | None, once: bool, screen: bool) -> None:
    from rich.console import Console

    from taskhand.board import watch as terminal

    folder, root = _plan_and_repo(plan, repo)
    console = Console(highlight=False)
    if once or not console.is_terminal:
        terminal.draw_once(folder, root, console)
    else:
        terminal.watch(folder, root, console, screen=screen)


def _plan_and_repo(plan: Path | None, repo: Path | None) -> tuple[Path, Path]:
    """The plan folder (default: the plan of the repository's latest run) and its repository."""
    from taskhand.plan import formats
    from taskhand.run import lookup
    from taskhand.workspace import git

    if plan is None:
        _, latest = lookup.latest(repo)
        if latest is None:
            raise click.UsageError("no runs here to take the plan from: name the PLAN")
        plan = Path(latest.plan_path)
    folder = formats.plan_folder(plan).resolve()
    return folder, git.repo_for(folder, repo)
