"""The integration ledger's commands: `integration set`, a person's or CI's disposition of a
task's result, and `integration show`, the results with their dispositions and the verdicts
on the workers.
"""

from __future__ import annotations

from pathlib import Path

import click

from taskhand.cli.options import JSON, REPO
from taskhand.run import integration as ledger
from taskhand.run import lookup
from taskhand.state.records import Disposition
from taskhand.text import dumps
from taskhand.views import integration as view
from taskhand.views.terminal import echo

RUN = click.option("--run", "run_id", help="The run (default: the latest with an attempt at TASK).")


@click.group()
def integration() -> None:
    """Record and read what became of each result: integrated, rejected or superseded."""


@integration.command(name="set")
@click.argument("task_id", metavar="TASK")
@click.option(
    "--status",
    type=click.Choice([str(d) for d in Disposition]),
    required=True,
    help="What became of the result.",
)
@click.option("--target-ref", default="", help="Where it landed (integrated: the run branch).")
@click.option("--note", default="", help="Why, in a line, for whoever reads the ledger.")
@click.option("--attempt", "number", type=click.IntRange(min=1), help="Which attempt's result.")
@click.option("--by", default=ledger.PERSON, help="Who decided: a name, or ci.")
@RUN
@REPO
@JSON
def set_command(
    task_id: str,
    status: str,
    target_ref: str,
    note: str,
    number: int | None,
    by: str,
    run_id: str | None,
    repo: Path | None,
    as_json: bool,
) -> None:
    """Record one disposition for TASK's latest result that has none (or --attempt N's).

    A result that has a disposition already is refused: each gets exactly one.
    """
    root, _, store = lookup.open_store(repo)
    with store:
        run = ledger.run_of(store, root, run_id, task_id)
        row = ledger.record(
            store,
            run,
            task_id,
            Disposition(status),
            target_ref=target_ref,
            note=note,
            number=number,
            by=by,
        )
    if as_json:
        click.echo(
            dumps(
                {
                    "run": run.id,
                    "task_id": task_id,
                    "attempt": row.attempt,
                    "candidate_sha": row.candidate_sha,
                    **view.disposition_json(row),
                }
            )
        )
        return
    where = f" into {row.target_ref}" if row.target_ref else ""
    echo(
        f"recorded {task_id} attempt {row.attempt}'s result {row.candidate_sha[:12]}: "
        f"{row.status}{where} (run {run.id})"
    )


@integration.command(name="show")
@click.argument("task_id", metavar="TASK", required=False)
@RUN
@REPO
@JSON
def show(task_id: str | None, run_id: str | None, repo: Path | None, as_json: bool) -> None:
    """List the results of TASK (default: every task) with their dispositions, and the
    verdicts on the workers."""
    root, _, store = lookup.open_store(repo)
    with store:
        run = ledger.run_of(store, root, run_id, task_id)
        results = store.results(run.id, task_id)
        verdicts = store.worker_verdicts(run.id, task_id)
    if as_json:
        click.echo(
            dumps(
                {
                    "run": run.id,
                    "results": [view.result_json(r) for r in results],
                    "verdicts": [view.verdict_json(v) for v in verdicts],
                },
                indent=2,
            )
        )
        return
    if not results and not verdicts:
        echo(f"run {run.id}: no attempt at {task_id or 'any task'} has ended yet")
    for line in view.lines(run.id, results, verdicts):
        echo(line)
