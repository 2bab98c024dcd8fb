"""The backstop: noticing what an agent changed outside its workspace, whatever stopped it.

Around every stretch of agent-controlled execution (a unit, the acceptance checks) the harness
takes a print of the user's repository (every file under its .git but the object files) and of
the plan folder, by plain file reads: no git runs, so a poisoned configuration cannot act
before it is seen. Prints are by stat identity: any write moves a file's change time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from taskhand.plan.formats import files
from taskhand.workspace.snapshot import differences, tree_digests

# Object files are written by the harness itself (each candidate's blobs); what an agent could
# add there is unreachable data. objects/info (alternates, commit graphs) stays in the print.
PLAN_FOLDER = "the plan folder: "  # how a change to the plan's files is said

_OBJECT_FILES = re.compile(r"^objects/([0-9a-f]{2}|pack)(/|$)")


@dataclass(frozen=True)
class Print:
    """What a stretch of agent work must leave alone: entry -> identity, for two folders."""

    repository: dict[str, str]
    plan: dict[str, str]
    plan_root: Path | None = None
    since: int = 0  # the run's newest event when it was taken: what happened after is newer


def take(common_dir: Path, plan: Path, own_refs: set[str]) -> Print:
    """A print of the repository's git folder and of the plan folder. `own_refs` (the run's
    branches as `refs/heads/...`, which the harness itself moves) are left out, with their
    logs and lock files."""
    own = {*own_refs, *(f"logs/{ref}" for ref in own_refs)}

    def skip(name: str) -> bool:
        return bool(_OBJECT_FILES.match(name)) or name.removesuffix(".lock") in own

    repository = tree_digests(common_dir, content=False, with_git=True, skip=skip)
    # Folders come and go with the refs the harness adds (refs/heads/taskhand/...): only
    # files and links count.
    repository = {k: v for k, v in repository.items() if v != "dir"}
    return Print(repository, tree_digests(plan, content=False, with_git=True), plan)


def changes(before: Print, after: Print) -> list[str]:
    """What changed between two prints, one line each: the repository first, then the plan,
    but for a plan file as this process last wrote it (another job's status, meanwhile)."""
    found = [f".git/{line}" for line in differences(before.repository, after.repository)]
    root = after.plan_root
    ours = {
        name
        for name in before.plan.keys() | after.plan.keys()
        if root is not None and before.plan.get(name) != after.plan.get(name)
        and files.written_by_us(root / name, after.plan.get(name))
    }  # fmt: skip
    plan_before = {k: v for k, v in before.plan.items() if k not in ours}
    plan_after = {k: v for k, v in after.plan.items() if k not in ours}
    found += [f"{PLAN_FOLDER}{line}" for line in differences(plan_before, plan_after)]
    return found
