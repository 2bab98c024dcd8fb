"""What a result may hold: files, folders and symlinks git can record, under names that every
checkout can write and every person can read, and not too many or too large. Whatever else an agent
leaves in its workspace fails the attempt with the reason, before anything reads the result.

Pure checks over paths and one walk of the workspace that never follows a link (no git runs
here; the caller asks git which of the findings it ignores).
"""

from __future__ import annotations

import os
import stat
import unicodedata
from collections.abc import Iterable, Iterator
from pathlib import Path

from taskhand.text import controls, printable, shorten

MAX_PATH_BYTES = 1024  # macOS's own limit for a whole path; Linux refuses 4096 from the root
MAX_CHANGED = 20_000  # paths one result may add, change or delete
MAX_FILE_BYTES = 100 * 2**20  # GitHub's own limit; a larger file (or a sparse one) would take
# git minutes to hash and every later checkout to write

# What the walk says of each kind of entry git cannot record.
_KINDS = {
    stat.S_IFIFO: "a named pipe (FIFO), which a result cannot hold",
    stat.S_IFSOCK: "a socket, which a result cannot hold",
    stat.S_IFCHR: "a device, which a result cannot hold",
    stat.S_IFBLK: "a device, which a result cannot hold",
}
NESTED = "a repository's .git inside the workspace: git takes none of its files"
UNREADABLE = "taskhand cannot read it"
TOO_BIG = f"larger than {MAX_FILE_BYTES // 2**20} MiB, which a result may not hold"
DASH = "a part of its name begins with a dash, which commands read as an option"
TOO_LONG = f"its path is longer than {MAX_PATH_BYTES} bytes, which checkouts cannot write"

Finding = tuple[str, str]  # a path relative to the workspace, and what is wrong with it


def strays(root: Path) -> list[Finding]:
    """Entries under `root` (its own .git aside) that git would not take as they are: FIFOs,
    sockets and devices, a `.git` below the top, what taskhand cannot read, paths too long to
    check out, files too large. Links are never followed; a folder whose path is already too
    long is not entered. Iterative, so any depth is walked in bounded memory."""
    found: list[Finding] = []
    start = len(os.fsencode(root)) + 1
    folders = [os.fsencode(root)]
    while folders:
        folder = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            found.append((_relative(folder, start), UNREADABLE))
            continue
        for entry in entries:
            rel = entry.path[start:]
            if rel == b".git":
                continue
            name = os.fsdecode(rel)
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                found.append((name, UNREADABLE))
                continue
            mode = info.st_mode
            if entry.name == b".git":
                found.append((name, NESTED))
            elif len(rel) > MAX_PATH_BYTES:
                found.append((name, TOO_LONG))
            elif stat.S_ISDIR(mode):
                folders.append(entry.path)
            elif stat.S_IFMT(mode) in _KINDS:
                found.append((name, _KINDS[stat.S_IFMT(mode)]))
            elif stat.S_ISREG(mode) and not os.access(entry.path, os.R_OK):
                found.append((name, UNREADABLE))
            elif stat.S_ISREG(mode) and info.st_size > MAX_FILE_BYTES:
                found.append((name, TOO_BIG))
    return sorted(found)


def _relative(folder: bytes, start: int) -> str:
    return os.fsdecode(folder[start:]) or "."


def names(added: Iterable[str]) -> list[Finding]:
    """The paths a result adds whose names it may not hold: not UTF-8 (no tool could show
    them), a control character (a line break forges lines of output), a part that begins with
    a dash (a command reads it as an option), longer than a checkout can write."""
    found: list[Finding] = []
    for path in added:
        if any("\udc80" <= char <= "\udcff" for char in path):
            found.append((path, "its name is not UTF-8"))
        elif controls(path):
            found.append((path, "its name holds a control character"))
        elif any(part.startswith("-") for part in path.split("/")):
            found.append((path, DASH))
        elif len(os.fsencode(path)) > MAX_PATH_BYTES:
            found.append((path, TOO_LONG))
    return found


def clashes(paths: Iterable[str], added: set[str]) -> list[Finding]:
    """Paths of the result's tree (`paths`) that differ only in case or Unicode form, where
    one of them is new (an `added` path, or a folder only added paths lie in): on a disk that
    ignores case (macOS, Windows) one would overwrite the other.

    Only names that fold like an added path or one of its folders can clash with a new one,
    so a path is followed down only while its folders do: in a big repository most paths
    stop at their first folder."""
    wanted = {_folded(prefix) for path in added for prefix in _prefixes(path)}
    folded: dict[str, str] = {}
    originals: dict[str, set[str]] = {}
    only_added: dict[str, bool] = {}  # folder -> whether every path in it is added
    for path in paths:
        new = path in added
        for prefix in _prefixes(path):
            key = folded.get(prefix)
            if key is None:
                key = folded[prefix] = _folded(prefix)
            if key not in wanted:
                break
            originals.setdefault(key, set()).add(prefix)
            if prefix != path:
                only_added[prefix] = only_added.get(prefix, True) and new
    found: list[Finding] = []
    for same in originals.values():
        if len(same) > 1 and any(p in added or only_added.get(p, False) for p in same):
            first, *others = sorted(same)
            shown = ", ".join(printable(o, name=True) for o in others)
            found.append((first, f"differs only in case or Unicode form from {shown}"))
    return sorted(found)


def _prefixes(path: str) -> Iterator[str]:
    """`path`'s folders, outermost first, then `path` itself."""
    parts = path.split("/")
    return ("/".join(parts[:end]) for end in range(1, len(parts) + 1))


def _folded(path: str) -> str:
    return unicodedata.normalize("NFC", path).casefold()


def refusal(found: list[Finding]) -> str:
    """The attempt's reason: each finding with its path shown unambiguously, and the fix."""
    shown = "; ".join(f"{_shown(path, what)}: {what}" for path, what in found[:10])
    more = f"; and {len(found) - 10} more" if len(found) > 10 else ""
    return (
        f"the workspace's files were not taken: {shown}{more} (fix: leave only files, folders "
        "and symlinks, under names of printable UTF-8 that begin with no dash)"
    )


def _shown(path: str, what: str) -> str:
    """A path as a reason shows it: one too long to check out, by its start."""
    return printable(shorten(path, 120) if what == TOO_LONG else path, name=True)
