"""Plans other tools wrote, imported: a Spec Kit `tasks.md` or a Taskmaster `tasks.json`
made into a new plan folder of either dialect, with a list of what had no home in it.

The plan is written and validated in a staging folder beside the target and only then moved
into place: a file that cannot be imported, or a plan that would not validate, leaves nothing.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from taskhand.plan import publication
from taskhand.plan.formats import tasktrack
from taskhand.plan.imports import speckit, taskmaster
from taskhand.plan.imports.draft import Dropped, build
from taskhand.plan.imports.source import ImportFileError, SourceFormat, detect, read_source
from taskhand.plan.model import Dialect, Plan
from taskhand.plan.problems import Problem
from taskhand.plan.templates import default_code
from taskhand.plan.validate import validate
from taskhand.plan.write import check_out_folder, write_plan

__all__ = ["Dropped", "ImportFileError", "Imported", "SourceFormat", "import_plan"]


@dataclass
class Imported:
    source: Path
    format: SourceFormat
    out: Path
    plan: Plan
    ids: dict[str, str]  # the source's task id -> the plan's
    dropped: list[Dropped]
    written: list[Path]
    warnings: list[Problem]  # what `validate` says of the written plan
    spec: Path | None = None  # the publication copied in (given, or found in the repository)

    @property
    def dependencies(self) -> int:
        return sum(len(t.dependencies) for t in self.plan.tasks)


def import_plan(
    source: Path,
    out: Path,
    dialect: Dialect,
    code: str | None = None,
    spec: Path | None = None,
    tag: str | None = None,
) -> Imported:
    """Import `source` into the new plan folder `out`; refuses before writing anything."""
    check_out_folder(out)
    if dialect is Dialect.TASKTRACK:
        code = code or default_code(out)
        if not tasktrack.CODE_RE.match(code):
            raise ImportFileError(f"plan code {code!r} is not 3 to 5 letters A-Z", fix="--code FOO")
    if dialect is Dialect.TASKTRACK and "," in str(source.resolve()):
        raise ImportFileError(
            tasktrack.RESOURCE_COMMA, where=str(source), fix=tasktrack.RESOURCE_COMMA_FIX
        )
    spec = publication.checked(spec, dialect)
    if spec is None and dialect is Dialect.TASKTRACK:
        spec = publication.nearby(out.parent if out.parent.exists() else Path.cwd())
    text = read_source(source)
    kind, data = detect(text, source)
    if kind is SourceFormat.SPECKIT:
        if tag is not None:
            raise ImportFileError(
                "--tag is for Taskmaster files", where=str(source), fix="leave it out"
            )
        draft = speckit.read(text, source)
    else:
        draft = taskmaster.read(data, source, tag)
    if not draft.items:
        raise ImportFileError(
            f"no tasks in this {kind.label}", where=str(source), fix="give a file that lists tasks"
        )
    built = build(draft, dialect, code or "", out, source)
    try:
        written = _write(built.plan, out, spec)
    except OSError as exc:
        raise ImportFileError(
            f"cannot write the plan: {exc.strerror or exc}",
            where=str(out),
            fix="give a path under a folder you can write",
        ) from None
    report = validate(out)
    return Imported(
        source, kind, out, built.plan, built.ids, built.dropped, written, report.warnings, spec
    )


def _write(plan: Plan, out: Path, spec: Path | None) -> list[Path]:
    """Write the plan beside `out`, validate it there, then move it into place."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".import", dir=out.parent))
    try:
        staged = staging / "plan"
        written = write_plan(plan, staged, spec)
        errors = validate(staged).errors
        if errors:
            raise ImportFileError(
                f"the imported plan would not validate: {errors[0].message}",
                where=str(plan.resources[0]) if plan.resources else "",
                fix="report this with the file; meanwhile edit the file and import again",
            )
        check_out_folder(out)  # again: something may have appeared there meanwhile
        if out.is_dir():
            out.rmdir()
        os.rename(staged, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [out / path.name for path in written]
