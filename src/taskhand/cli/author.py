"""`taskhand author`: a plan written by an agent from requirement documents, checked and sent
back until it validates, then written into a new folder at once. Parsing and printing only.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from taskhand.agents import NAMES
from taskhand.cli.options import JSON, SPEC
from taskhand.config import SANDBOXES
from taskhand.plan.model import Dialect
from taskhand.plan.problems import relative_path
from taskhand.run import author as authoring
from taskhand.run import author_inputs as inputs
from taskhand.text import dumps, plural, printable
from taskhand.unit import Question


@click.command()
@click.argument("requirements", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--out", required=True, type=click.Path(path_type=Path), help="The new plan folder.")
@click.option(
    "--dialect",
    required=True,
    type=click.Choice([d.value for d in Dialect]),
    help="The plan's dialect.",
)
@click.option("--agent", default="replay", type=click.Choice(NAMES), help="The author's agent.")
@click.option("--model", help="The author's model.")
@click.option("--script", type=click.Path(path_type=Path), help="The replay agent's script.")
@click.option("--code", default="", help="The plan's code (3 to 5 letters A-Z), over the author's.")
@SPEC
@click.option(
    "--rounds", default=3, type=click.IntRange(1, 20), help="Plans the author may return."
)
@click.option("--ask", is_flag=True, help="Let the author ask questions first.")
@click.option(
    "--answers", type=click.Path(path_type=Path), help='Answers as JSON: {"Q1": "a", ...}.'
)
@click.option(
    "--repo",
    type=click.Path(path_type=Path),
    help="The repository the author reads (default: the current folder's).",
)
@click.option(
    "--sandbox", default="auto", type=click.Choice(SANDBOXES), help="How the author is confined."
)
@JSON
def author(
    requirements: tuple[Path, ...],
    out: Path,
    dialect: str,
    agent: str,
    model: str | None,
    script: Path | None,
    code: str,
    spec: Path | None,
    rounds: int,
    ask: bool,
    answers: Path | None,
    repo: Path | None,
    sandbox: str,
    as_json: bool,
) -> None:
    """Write a plan into OUT from REQUIREMENTS with an agent, checked until it validates.

    The author reads the documents and the repository (a disposable copy), returns the plan as
    data, and gets the plan's problems back for another round (at most --rounds plans).
    Nothing is executed. A plan that never validates leaves no folder, and exits 1."""
    chosen = Dialect(dialect)
    found = inputs.read_requirements(list(requirements), chosen)
    spec = inputs.check_spec(spec, chosen, repo)
    code = inputs.check_code(code.strip(), chosen)
    inputs.check_out(out)
    given = inputs.read_answers(answers)
    request = authoring.Request(
        found,
        out,
        chosen,
        agent,
        model,
        script,
        code,
        spec,
        rounds,
        ask,
        repo or Path.cwd(),
        sandbox,
    )

    def step(line: str) -> None:
        if not as_json:
            click.echo(printable(line), err=True)

    done = authoring.author(request, _answerer(given, answers), step)
    report = done.report
    if as_json:
        click.echo(
            dumps(
                {
                    "out": relative_path(out),
                    "dialect": chosen.value,
                    "code": done.plan.code,
                    "title": done.plan.title,
                    "tasks": len(done.plan.tasks),
                    "phases": len(done.plan.phases),
                    "rounds": done.rounds,
                    "interview": done.interview,
                    "files": [relative_path(f) for f in done.files],
                    "warnings": [p.as_json() for p in report.warnings],
                },
                indent=2,
            )
        )
        return
    plan = done.plan
    click.echo(
        printable(
            f"wrote {relative_path(out)}: {plan.title} ({plural(len(plan.tasks), 'task')} in "
            f"{plural(len(plan.phases), 'phase')}, {chosen.value}) after {done.rounds} round(s)"
        )
    )
    for problem in report.warnings:
        click.echo(problem.render())


def _answerer(given: dict[int, inputs.Answer], source: Path | None) -> authoring.Answerer:
    """Answers from the file first, else from the terminal; with neither, how to answer."""

    def answer(number: int, question: Question) -> inputs.Answer:
        letters = [chr(ord("a") + i) for i in range(len(question.options))]
        if number in given:
            chosen = given[number]
            if letters and chosen.choice not in letters:
                raise inputs.AuthorInputError(
                    f"answer Q{number} is {chosen.choice!r}, not one of {', '.join(letters)}",
                    where=str(source),
                    fix="choose one of the question's letters",
                )
            return chosen
        lines = [authoring.option_line(question, i) for i in range(len(question.options))]
        if not sys.stdin.isatty():
            shown = "; ".join(lines)
            raise authoring.AuthorError(
                f"the author asks Q{number}: {question.text} {shown}".strip(),
                fix=f'answer in a JSON file ({{"Q{number}": "a"}}, with the earlier answers) '
                "and run again with --answers FILE, or run in a terminal",
            )
        click.echo(printable(f"Q{number}: {question.text}"), err=True)
        for line in lines:
            click.echo(printable(f"  {line}"), err=True)
        if not letters:
            return inputs.Answer("", click.prompt("Your answer", err=True))
        choice = click.prompt(
            "Your choice", type=click.Choice(letters), default=letters[0], err=True
        )
        note = click.prompt("A note (optional)", default="", show_default=False, err=True)
        return inputs.Answer(choice, note)

    return answer
