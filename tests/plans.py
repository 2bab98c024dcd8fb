"""Text builders for small valid plans of both dialects, used across the tests."""

from __future__ import annotations


def md_task(
    task_id: str,
    title: str = "A task",
    body: str = "## Description\nDo the thing.\n\n## Acceptance criteria\n- it works\n",
    **keys: str,
) -> str:
    extra = "".join(f"{k}: {v}\n" for k, v in keys.items())
    return f"---\nid: {task_id}\ntitle: {title}\n{extra}---\n\n{body}"


def md_plan(*tasks: tuple[str, dict[str, str]]) -> dict[str, str | bytes]:
    """overview.md plus one T-file per (id, frontmatter extras)."""
    files: dict[str, str | bytes] = {"overview.md": "# Feature\n\n## Goal\nShip it.\n"}
    for task_id, keys in tasks:
        files[f"{task_id}-task.md"] = md_task(task_id, f"Task {task_id}", **keys)
    return files


TS = "2026-12-01T09:00:00Z"


def tt_task(
    task_id: str,
    title: str,
    status: str = "OPEN",
    deps: str = "none",
    tail: str = "",
    criteria: str = "- it works",
) -> str:
    return (
        f"# {task_id}: {title}\n\n**Status**: {status}\n\n**Updated**: {TS}\n\n"
        f"**Dependencies**: {deps}\n\n**Description**: Do {title.lower()}.\n\n"
        f"**Acceptance**:\n\n{criteria}\n{tail}"
    )


def tt_plan(
    phases: list[list[tuple[str, str]]],
    deps: dict[str, str] | None = None,
    code: str = "FOO",
    spec: bool = True,
) -> dict[str, str | bytes]:
    """A TaskTrack plan from phases of (id, status); every file agrees with the overview."""
    deps = deps or {}
    overview = f"# {code} - Demo plan\n\n**Objective**: Show the format.\n\n**Created**: {TS}\n\n"
    overview += "**Resources**: none\n"
    files: dict[str, str | bytes] = {}
    for number, tasks in enumerate(phases, start=1):
        overview += f"\n## {number}: Phase {number}\n\n"
        for task_id, status in tasks:
            overview += f"* [{status}] {task_id}: Task {task_id}\n"
            tail = ""
            if status == "DONE":
                tail = "\n**Resolution**: Done.\n"
            elif status == "FAIL":
                tail = "\n**Failure**: Could not.\n"
            elif status == "WAIT":
                tail = "\n**Request**: Decide something.\n"
            files[f"{task_id}.md"] = tt_task(
                task_id, f"Task {task_id}", status, deps.get(task_id, "none"), tail
            )
    files[f"{code}-TaskTrack.md"] = overview
    if spec:
        files["TaskTrack-v1.md"] = "# The TaskTrack Specification (stand-in for tests)\n"
    return files
