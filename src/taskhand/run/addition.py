"""Adding files to a plan all or nothing (a contract's task, a person's new draft): the plan
they would make is read and checked first, in a copy beside the plan folder, with the rules a
run checks (run/preflight.py); only then are they written, each file whole, and on any
failure the folder is left byte for byte as it was.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from taskhand.plan.formats.files import write_atomic
from taskhand.plan.problems import Problem
from taskhand.plan.validate import Report
from taskhand.run import preflight
from taskhand.state import lock

# Looks at the would-be plan (read from the copy) and its errors that the plan did not have
# before, and raises to refuse the files.
Judge = Callable[[Report, list[Problem]], None]


def add_files(plan_root: Path, files: dict[Path, str], judge: Judge) -> None:
    """Write `files` (paths in `plan_root`, made when missing) once `judge` passes the plan they
    would make; nothing is written when it refuses or the plan cannot be copied."""
    exists = plan_root.is_dir()
    plan_root.parent.mkdir(parents=True, exist_ok=True)
    with lock.files(plan_root) if exists else contextlib.nullcontext():
        staging = Path(
            tempfile.mkdtemp(prefix=f".{plan_root.name}.", suffix=".adding", dir=plan_root.parent)
        )
        try:
            if exists:
                shutil.copytree(plan_root, staging, symlinks=True, dirs_exist_ok=True)
            for path, text in files.items():
                write_atomic(staging / path.relative_to(plan_root), text)
            report = preflight.validate(staging)
            before = _errors(preflight.validate(plan_root), plan_root) if exists else set()
            judge(report, [p for p in report.errors if _key(p, staging) not in before])
            if exists:
                _write_all(files)
            else:  # a new plan appears whole, at once
                os.chmod(staging, 0o755)  # mkdtemp makes it private; a plan folder is not
                os.rename(staging, plan_root)
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def _write_all(files: dict[Path, str]) -> None:
    """Write each file whole; when one cannot be written, put back every one written before."""
    before = {path: path.read_bytes() if path.exists() else None for path in files}
    done: list[Path] = []
    try:
        for path, text in files.items():
            write_atomic(path, text)
            done.append(path)
    except BaseException:
        for path in done:
            old = before[path]
            if old is None:
                path.unlink(missing_ok=True)
            else:
                write_atomic(path, old)
        raise


def _errors(report: Report, root: Path) -> set[tuple[str, int | None, str, str]]:
    return {_key(p, root) for p in report.errors}


def _key(problem: Problem, root: Path) -> tuple[str, int | None, str, str]:
    """A problem as it reads in any copy of the plan: where in the folder, and what."""
    try:
        where = str(problem.path.relative_to(root))
    except ValueError:
        where = str(problem.path)
    return (where, problem.line, problem.rule, problem.message.replace(str(root), "<plan>"))
