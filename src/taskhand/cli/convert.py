"""`taskhand convert`: a plan rewritten in the other dialect into a new folder, with what
was carried as text or dropped, one line each. Parsing and printing only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from taskhand.cli.options import JSON, SPEC
from taskhand.plan import convert as plan_convert
from taskhand.plan import validate
from taskhand.plan.model import Dialect
from taskhand.plan.problems import display_path, relative_path
from taskhand.text import dumps, plural, printable


@click.command(name="convert")
@click.argument("plan", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), required=True, help="A new folder.")
@click.option(
    "--dialect",
    type=click.Choice([d.value for d in Dialect]),
    required=True,
    help="The dialect to write.",
)
@click.option("--code", help="The TaskTrack plan code, 3 to 5 letters A-Z (default: kept).")
@SPEC
@JSON
def convert_command(
    plan: Path, out: Path, dialect: str, code: str | None, spec: Path | None, as_json: bool
) -> None:
    """Write PLAN in the other dialect into the new folder OUT; say what was not carried over.

    Ids are renamed (CODE-N <-> T-NNN) with every dependency; phases, criteria and their
    commands, statuses and outcomes are kept, in fields or as text the reverse conversion
    reads back."""
    from taskhand.run import preflight  # the plan's rules and whether it can run, as validate

    with validate.collector_paused():
        preflight.validate(plan).require()  # a plan validate rejects is refused the same way
        conversion, written = plan_convert.convert_folder(plan, out, Dialect(dialect), code, spec)
        check = preflight.validate(out)
    result = conversion.plan
    if as_json:
        data: dict[str, Any] = {
            "from": str(conversion.source),
            "to": str(result.dialect),
            "out": relative_path(out),
            "code": result.code,
            "tasks": len(result.tasks),
            "phases": len(result.phases),
            "ids": conversion.ids,
            "files": [relative_path(p) for p in written],
            "notes": conversion.notes,
            "errors": len(check.errors),
            "warnings": len(check.warnings),
        }
        click.echo(dumps(data, indent=2))
        return
    code_text = f", code {result.code}" if result.code else ""
    click.echo(
        f"wrote {display_path(out)}: a {result.dialect} plan{code_text}, "
        f"{plural(len(result.tasks), 'task')} in {plural(len(result.phases), 'phase')} "
        f"({plural(len(check.errors), 'error')}, {plural(len(check.warnings), 'warning')}: "
        f"taskhand validate {display_path(out)})"
    )
    for old, new in conversion.ids.items():
        click.echo(f"  {printable(old)} -> {printable(new)}")
    for note in conversion.notes:
        click.echo(f"note: {printable(note)}")
