"""`taskhand board`: the plan's web board on loopback."""

from __future__ import annotations

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
@REPO
def board(plan: Path | None, port: int | None, host: str, repo: Path | None) -> None:
    """Serve PLAN's board: every task live, and a person's moves (with the printed token).

    PLAN defaults to the plan of this repository's latest run.
    """
    from taskhand.board.serve import serve
    from taskhand.plan import formats
    from taskhand.run import lookup
    from taskhand.workspace import git

    if plan is None:
        _, run = lookup.latest(repo)
        if run is None:
            raise click.UsageError("no runs here to take the plan from: name the PLAN")
        plan = Path(run.plan_path)
    folder = formats.plan_folder(plan).resolve()
    serve(folder, git.repo_for(folder, repo), host, port, click.echo)
