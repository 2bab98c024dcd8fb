"""Writing a whole plan into a new folder: every file in its dialect's canonical form, made in
a temporary folder beside the target and moved into place at once, so a failure (or a kill)
never leaves half a plan where a plan is expected.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from taskhand.errors import UserError
from taskhand.plan.model import Plan
from taskhand.plan.templates import render_files


class PlanWriteError(UserError):
    """The plan's folder cannot be made: the message says why, and the fix."""


def check_out_folder(out: Path) -> None:
    """Refuse an output folder that exists and is not an empty folder, before any work."""
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise PlanWriteError(f"{out} exists and is not a folder (fix: give a new folder's path)")
    if out.is_dir() and any(out.iterdir()):
        raise PlanWriteError(
            f"{out} exists and is not empty (fix: give a new folder, or remove that one first)"
        )


def write_plan(plan: Plan, out: Path, spec: Path | None = None) -> list[Path]:
    """Write `plan` (in its own dialect) into the new folder `out`, with a copy of the
    TaskTrack publication `spec` when given; the paths written, in `out`."""
    check_out_folder(out)
    files = render_files(plan)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent))
    try:
        for name, text in files.items():
            (staging / name).write_text(text, encoding="utf-8")
        if spec is not None:
            shutil.copyfile(spec, staging / spec.name)
        os.chmod(staging, 0o755)  # mkdtemp makes it private; a plan folder is a plain one
        if out.is_dir():
            out.rmdir()  # empty, checked above: the rename needs the name free
        os.rename(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    names = [*files, *([spec.name] if spec is not None else [])]
    return [out / name for name in names]
