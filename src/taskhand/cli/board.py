"""`taskhand board`: the plan's web board on loopback, with the plan's run kept going beside
it (or attached to the run that already goes), so the moves made on it take effect."""

from __future__ import annotations

import webbrowser
from pathlib import Path

import click

from taskhand.cli.options import REPO


@click.command()
@click.argument("plan", type=click.Path(path_type=Path), required=False)
@click.option("--port", type=int, help="The port (default: a free one).")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="The address to listen on; anything but loopback is reachable by others (warned).",
)
@click.option("--open", "open_page", is_flag=True, help="Open the board in the browser.")
@click.option(
    "--no-run",
    is_flag=True,
    help="Only show the board: do not go on with the plan's unfinished run beside it.",
)
@REPO
def board(
    plan: Path | None,
    port: int | None,
    host: str,
    open_page: bool,
    no_run: bool,
    repo: Path | None,
) -> None:
    """Serve PLAN's board: every task live, and a person's moves (with the printed token).

    When no run of the plan goes on, its latest unfinished run goes on beside the board
    (with its own settings), so moves take effect; when one goes on, the board attaches to
    it. PLAN defaults to the plan of this repository's latest run.
    """
    from taskhand.board.serve import start
    from taskhand.cli.run import keep_watching
    from taskhand.plan import formats
    from taskhand.run import lookup
    from taskhand.workspace import git

    if plan is None:
        _, latest = lookup.latest(repo)
        if latest is None:
            raise click.UsageError("no runs here to take the plan from: name the PLAN")
        plan = Path(latest.plan_path)
    folder = formats.plan_folder(plan).resolve()
    root = git.repo_for(folder, repo)
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
