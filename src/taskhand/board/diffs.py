"""An attempt's change as the drawer shows it: file by file, from the attempt's base to its
candidate commit (which the harness wrote into its run's depot), read with git
plumbing that runs nothing the repository configures. Sizes are capped per file and in all,
and what is cut or left out is named; a binary file is named, never shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskhand.board.details import one_of
from taskhand.state.records import Attempt
from taskhand.workspace import depot, diffs, git

FILE_BYTES = 64 * 1024  # of one file's diff text; more is cut at a line's end
TOTAL_BYTES = 512 * 1024  # of all the files' text; the files after it are named only
FILE_LINES = 5000  # changed lines of a file above which its text is not even read
FILES = 300  # files listed; a change of more says how many it leaves out


@dataclass(frozen=True)
class Missing:
    """Why an attempt's change cannot be shown (its commit is gone, or it has none)."""

    what: str
    fix: str


def attempt_diff(
    plan_root: Path, repo: Path, task_id: str, attempt_id: int
) -> dict[str, Any] | Missing | None:
    """The change of attempt `attempt_id` of the task; None when the task has no such
    attempt in this plan's runs."""
    found = one_of(plan_root, repo, task_id, lambda s, run: s.attempts(run, task_id), attempt_id)
    if found is None:
        return None
    where, attempt = found
    if not attempt.candidate_sha:
        return Missing(
            f"attempt {attempt.number} of {task_id} left no change to show",
            "pick an attempt whose work was collected",
        )
    depot.read_runs(repo, [where.state.depot(attempt.run_id)])
    return change(repo, attempt)


def change(repo: Path, attempt: Attempt) -> dict[str, Any] | Missing:
    """The attempt's change, file by file, within the caps."""
    base, head = attempt.base_sha, attempt.candidate_sha or ""
    try:
        base, head = git.resolve(repo, base), git.resolve(repo, head)
    except git.GitError:
        return Missing(
            f"the commits of attempt {attempt.number} are no longer in the repository",
            "the ledger still says what it changed (taskhand ledger); taskhand clean removes a "
            "settled result's commit with its run's depot",
        )
    paths = diffs.changed_paths(repo, base, head)
    counted = diffs.counts(repo, base, head)
    files = [_file(c, n.added, n.deleted) for c, n in zip(paths, counted, strict=True)]
    listed, left = files[:FILES], len(files) - min(len(files), FILES)
    wanted = [f for f in listed if f["note"] == ""]
    texts = _texts(repo, base, head, [(f["path"], f["old_path"]) for f in wanted])
    spent = 0
    for shown, text in zip(wanted, texts, strict=True):
        if spent >= TOTAL_BYTES:
            shown["note"] = f"not shown: the files above took the diff's {TOTAL_BYTES // 1024} KB"
            continue
        header, body = _split(text)
        room = min(FILE_BYTES, TOTAL_BYTES - spent)
        shown["header"], shown["text"] = header, _cut(body, room)
        spent += len(shown["text"].encode())
        if len(shown["text"]) == len(body):
            continue
        if room < FILE_BYTES:  # the whole diff's share ran out in this file: none after it
            shown["note"] = f"cut: the diff's first {TOTAL_BYTES // 1024} KB end here"
            spent = TOTAL_BYTES
        else:
            shown["note"] = f"cut: the first {FILE_BYTES // 1024} KB of this file's diff"
    return {
        "attempt": attempt.id,
        "number": attempt.number,
        "base": base,
        "candidate": head,
        "files": listed,
        "left_out": left,  # files past the count shown, named by nothing but their number
    }


def _file(change: diffs.Change, added: int | None, deleted: int | None) -> dict[str, Any]:
    note = ""
    if added is None or deleted is None:
        note = "binary file: not shown"
    elif added + deleted > FILE_LINES:
        note = f"not shown: {added + deleted} changed lines, over {FILE_LINES}"
    return {
        "path": change.path,
        "old_path": change.old_path,
        "status": change.status,
        "added": added,
        "deleted": deleted,
        "binary": added is None or deleted is None,
        "header": [],
        "text": "",
        "note": note,
    }


def _texts(repo: Path, base: str, head: str, wanted: list[tuple[str, str | None]]) -> list[str]:
    """The unified diff of each wanted (path, old path), in order: one git process, split at
    each file's `diff --git` line (a line of content always starts with ' ', '+' or '-')."""
    if not wanted:
        return []
    chunks = _patch(repo, base, head, [p for path, old in wanted for p in (old, path) if p])
    if len(chunks) == len(wanted):
        return chunks
    # Rename detection paired the paths otherwise than over the whole change: ask one by one.
    return ["".join(_patch(repo, base, head, [p for p in pair if p])) for pair in wanted]


def _patch(repo: Path, base: str, head: str, paths: list[str]) -> list[str]:
    diff = ["diff-tree", "-r", "-p", "-M", "--no-color", "--no-ext-diff", "--no-textconv"]
    done = git.run(repo, *diff, base, head, "--", *paths, env={"GIT_LITERAL_PATHSPECS": "1"})
    text = done.stdout.decode("utf-8", "replace")  # shown as text: undecodable bytes as U+FFFD
    chunks = text.split("\ndiff --git ")
    return [c if c.startswith("diff --git ") else "diff --git " + c for c in chunks if c]


# git's lines above a file's hunks that a person needs; the rest (index, ---, +++) repeat the
# file's name and blob ids.
_KEPT = ("new file mode", "deleted file mode", "old mode", "new mode", "similarity index",
         "rename from", "rename to", "Binary files")  # fmt: skip


def _split(chunk: str) -> tuple[list[str], str]:
    """A file's diff as its header lines worth showing and its hunks."""
    start = chunk.find("\n@@")
    head, body = (chunk, "") if start < 0 else (chunk[:start], chunk[start + 1 :])
    header = [line for line in head.splitlines()[1:] if line.startswith(_KEPT)]
    return header, body.rstrip("\n")


def _cut(text: str, limit: int) -> str:
    """`text` within `limit` bytes, cut at the end of a line."""
    data = text.encode()
    if len(data) <= limit:
        return text
    kept = data[:limit].decode("utf-8", "ignore")
    return kept[: kept.rfind("\n")] if "\n" in kept else kept
