"""The scope gate: which changed paths a task may write, and which symlinks it may add.

Pure functions over repository-relative POSIX paths; nothing here touches the disk or git.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a type only: matching paths needs no git (`validate` matches them)
    from taskhand.workspace.diffs import Change

_GLOB = re.compile(r"[*?]")

# What the agent programs taskhand runs read as their configuration from the folder they work
# in, at any depth: settings that start programs (hooks, MCP servers, plugins, lint and test
# commands) or point the program at another server. A candidate that commits one would have it
# run by its reviewer (which could then hand in a verdict of its own making), by every later
# task's agents, and by your own agent in the delivered branch.
AGENT_FOLDERS = frozenset({".claude", ".codex", ".gemini", ".opencode"})
AGENT_FILES = frozenset(
    {
        ".mcp.json",  # claude's project MCP servers
        "opencode.json",
        "opencode.jsonc",
        ".aider.conf.yml",
        ".aider.model.settings.yml",
        ".aider.model.metadata.json",
        ".env",  # aider and gemini read it: a base URL that sends your key elsewhere
    }
)
AGENT_CONFIG = (
    "an agent's configuration, which later agents would run (name it in the task's paths)"
)


@dataclass(frozen=True)
class Violation:
    path: str
    reason: str


def matches(path: str, pattern: str) -> bool:
    """Whether repository-relative `path` falls under `pattern`.

    `*` and `?` stay within one path segment, a `**` segment spans any number of segments
    (none included), and a pattern without wildcards names a file or a whole folder.
    """
    return _compile(pattern).fullmatch(_strip(path)) is not None


def _strip(text: str) -> str:
    while text.startswith("./"):
        text = text[2:]
    return text


@lru_cache(maxsize=1024)
def _compile(pattern: str) -> re.Pattern[str]:
    if not pattern.strip():
        # An empty pattern is a mistake, and a mistake in a cage should shut it, not open it.
        return re.compile(r"(?!)")
    pattern = _strip(pattern).lstrip("/")
    segments = [s for s in pattern.split("/") if s]
    if segments in ([], ["."]):  # './' or '.': the whole repository
        return re.compile(".*")
    # A trailing slash names a folder: what lies below it matches, a file of that name not.
    folder = pattern.endswith("/")
    if not _GLOB.search(pattern):
        return re.compile(re.escape("/".join(segments)) + ("/.+" if folder else "(?:/.*)?"))
    return re.compile(_translate_segments(segments) + ("/.+" if folder else ""))


def _translate_segments(segments: list[str]) -> str:
    segments = [s for i, s in enumerate(segments) if s != "**" or segments[i - 1 : i] != ["**"]]
    parts: list[str] = []
    for i, segment in enumerate(segments):
        separator = "" if i == 0 or segments[i - 1] == "**" else "/"
        if segment != "**":
            parts.append(separator + _translate(segment))
        elif i == len(segments) - 1:
            parts.append(".*" if i == 0 else "(?:/.*)?")
        else:  # consumes its own trailing slash, so 'a/**/b' also matches 'a/b'
            parts.append(separator + "(?:[^/]+/)*")
    return "".join(parts)


def _translate(segment: str) -> str:
    return "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in segment)


def check_scope(
    changes: list[Change],
    allowed: list[str],
    forbidden: list[str],
    symlink_targets: dict[str, str],
) -> list[Violation]:
    """Every way the candidate's changes break the task's scope, sorted by path.

    A renamed file counts at both its old and new path. Forbidden patterns win over
    allowed ones; an empty `allowed` list allows everything.
    """
    touched: set[str] = set()
    for change in changes:
        touched.add(change.path)
        if change.status == "R" and change.old_path is not None:
            touched.add(change.old_path)
    found = {v for path in touched if (v := _path_violation(path, allowed, forbidden))}
    found.update(
        v for path, target in symlink_targets.items() if (v := _link_violation(path, target))
    )
    return sorted(found, key=lambda v: (v.path, v.reason))


def _path_violation(path: str, allowed: list[str], forbidden: list[str]) -> Violation | None:
    if _in_git_dir(path):
        return Violation(path, "the .git directory")
    if _configures_agents(path, allowed):
        return Violation(path, AGENT_CONFIG)
    for pattern in forbidden:
        if matches(path, pattern):
            return Violation(path, f"inside the read-only path {pattern}")
    if allowed and not any(matches(path, pattern) for pattern in allowed):
        return Violation(path, f"outside the allowed paths ({', '.join(allowed)})")
    return None


def _configures_agents(path: str, allowed: list[str]) -> bool:
    """Whether `path` is (or lies in) an agent's configuration that no allowed pattern names
    outright: a pattern without wildcards that reaches down to the configuration's own name
    (`.claude/commands/`, `.env`), not one that merely holds it (`src`, `**`)."""
    segments = _strip(path).lower().split("/")  # in any case, as for .git
    at = next(
        (
            i
            for i, name in enumerate(segments)
            if name in AGENT_FOLDERS or (name in AGENT_FILES and i == len(segments) - 1)
        ),
        None,
    )
    if at is None:
        return False
    return not any(
        not _GLOB.search(pattern)
        and len([s for s in _strip(pattern).split("/") if s]) > at
        and matches(path, pattern)
        for pattern in allowed
    )


def _link_violation(path: str, target: str) -> Violation | None:
    if posixpath.isabs(target):
        return Violation(path, f"symlink pointing outside the repository (to {target})")
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    if resolved == ".." or resolved.startswith("../"):
        return Violation(path, f"symlink pointing outside the repository (to {target})")
    if _in_git_dir(resolved):
        return Violation(path, f"symlink pointing into the .git directory (to {target})")
    return None


def _in_git_dir(path: str) -> bool:
    # Any segment, and in any case: git refuses such paths, and case-insensitive disks
    # would treat '.GIT' as the repository's own folder.
    return any(segment.lower() == ".git" for segment in path.split("/"))
