"""The scope gate: which changed paths a task may write, and which symlinks it may add.

Pure functions over repository-relative POSIX paths; nothing here touches the disk or git.
"""

from __future__ import annotations

import posixpath
import re
from collections import deque
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from taskhand.text import printable

if TYPE_CHECKING:  # types only: matching paths needs no git (`validate` matches them)
    from taskhand.workspace.diffs import Change, Layout

_GLOB = re.compile(r"[*?]")

# Why a candidate may not touch a file that runs code outside the workspace, by who runs it.
AGENT_CONFIG = (
    "an agent's configuration, which later agents would run (name it in the task's paths)"
)
EDITOR_CONFIG = (
    "an editor's configuration, which runs commands in your editor (name it in the task's paths)"
)
CI_CONFIG = "CI's configuration, which CI runs with your secrets (name it in the task's paths)"
TOOL_CONFIG = (
    "a tool's configuration, which runs commands in your shell (name it in the task's paths)"
)

# Files that run code somewhere else than the workspace: in the agent programs taskhand runs
# (a reviewer, which could then hand in a verdict of its own making; every later task's agents;
# your own agent in the delivered branch), in your editor, your shell or CI, with your secrets,
# after delivery. A candidate may add, change or delete one only where the task's `paths` name
# it outright. Matched at any depth and in any case; a name ending in "/" is a folder (all
# below it, and a link of its name).
RUNS_ELSEWHERE: dict[str, str] = {
    # agent programs: hooks, MCP servers, plugins, lint and test commands, another server
    ".claude/": AGENT_CONFIG,  # Claude Code's settings: hooks, MCP servers, commands
    ".mcp.json": AGENT_CONFIG,  # Claude Code's project MCP servers
    ".codex/": AGENT_CONFIG,  # Codex's config: notify command, MCP servers
    ".gemini/": AGENT_CONFIG,  # Gemini CLI's settings: MCP servers, tool commands
    ".opencode/": AGENT_CONFIG,  # opencode's plugins (JavaScript it loads)
    "opencode.json": AGENT_CONFIG,  # opencode's MCP servers and commands
    "opencode.jsonc": AGENT_CONFIG,
    ".aider.conf.yml": AGENT_CONFIG,  # aider's lint and test commands
    ".aider.model.settings.yml": AGENT_CONFIG,
    ".aider.model.metadata.json": AGENT_CONFIG,
    ".env": AGENT_CONFIG,  # aider and gemini read it: a base URL that sends your key elsewhere
    ".cursor/": AGENT_CONFIG,  # Cursor's rules, MCP servers and hooks
    # editors
    ".vscode/": EDITOR_CONFIG,  # tasks.json runs on opening the folder; launch.json, settings
    ".idea/": EDITOR_CONFIG,  # JetBrains run configurations and startup tasks
    ".zed/": EDITOR_CONFIG,  # Zed's tasks and language servers
    ".devcontainer/": EDITOR_CONFIG,  # postCreateCommand and friends, run on opening
    ".devcontainer.json": EDITOR_CONFIG,
    # your shell: programs that run a project's commands as you work in it
    ".envrc": TOOL_CONFIG,  # direnv runs it on entering the folder
    ".husky/": TOOL_CONFIG,  # git hooks installed by npm install
    ".githooks/": TOOL_CONFIG,  # a hooks folder core.hooksPath is pointed at
    ".git-hooks/": TOOL_CONFIG,
    ".pre-commit-config.yaml": TOOL_CONFIG,  # pre-commit runs its hooks on every commit
    ".npmrc": TOOL_CONFIG,  # script-shell, node-options --require; a registry that gets your token
    ".yarnrc": TOOL_CONFIG,  # yarn-path: the program yarn runs instead of itself
    ".yarnrc.yml": TOOL_CONFIG,  # yarnPath and plugins, likewise
    ".pnpmfile.cjs": TOOL_CONFIG,  # pnpm runs its hooks on install
    "mise.toml": TOOL_CONFIG,  # mise runs its hooks and env scripts on entering the folder
    ".mise.toml": TOOL_CONFIG,
    # CI, with your repository's secrets
    ".github/workflows/": CI_CONFIG,
    ".github/actions/": CI_CONFIG,  # actions the workflows call
    ".gitlab-ci.yml": CI_CONFIG,
    ".circleci/": CI_CONFIG,
    ".travis.yml": CI_CONFIG,
    ".buildkite/": CI_CONFIG,
    "azure-pipelines.yml": CI_CONFIG,
    "bitbucket-pipelines.yml": CI_CONFIG,
    "Jenkinsfile": CI_CONFIG,
}


def _entries() -> list[tuple[list[str], bool, str]]:
    """The table as (name's parts in lower case, whether a folder, the reason)."""
    return [
        (name.rstrip("/").lower().split("/"), name.endswith("/"), reason)
        for name, reason in RUNS_ELSEWHERE.items()
    ]


_RUNS_ELSEWHERE = _entries()


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
    layout: Layout | None = None,
) -> list[Violation]:
    """Every way the candidate's changes break the task's scope, sorted by path.

    A renamed file counts at both its old and new path. Forbidden patterns win over
    allowed ones; an empty `allowed` list allows everything. Each symlink the change adds or
    changes (`symlink_targets`) is followed through the result's `layout` as a checkout
    would, and must lead to something the result holds.
    """
    touched: set[str] = set()
    for change in changes:
        touched.add(change.path)
        if change.status == "R" and change.old_path is not None:
            touched.add(change.old_path)
    found = {v for path in touched if (v := _path_violation(path, allowed, forbidden))}
    found.update(
        v
        for path, target in symlink_targets.items()
        if (v := _link_violation(path, target, layout))
    )
    return sorted(found, key=lambda v: (v.path, v.reason))


def _path_violation(path: str, allowed: list[str], forbidden: list[str]) -> Violation | None:
    if _in_git_dir(path):
        return Violation(path, "the .git directory")
    runs_elsewhere = _runs_elsewhere(path, allowed)
    if runs_elsewhere:
        return Violation(path, runs_elsewhere)
    for pattern in forbidden:
        if matches(path, pattern):
            return Violation(path, f"inside the read-only path {pattern}")
    if allowed and not any(matches(path, pattern) for pattern in allowed):
        return Violation(path, f"outside the allowed paths ({', '.join(allowed)})")
    return None


def _runs_elsewhere(path: str, allowed: list[str]) -> str:
    """Why `path` is (or lies in) a file that runs code elsewhere (RUNS_ELSEWHERE) that no
    allowed pattern names outright, or "": a pattern without wildcards that reaches down to
    the file's own name (`.claude/commands/`, `.env`), not one that merely holds it (`src`,
    `**`)."""
    segments = _strip(path).lower().split("/")  # in any case, as for .git
    found = None
    for parts, folder, reason in _RUNS_ELSEWHERE:
        size = len(parts)
        # A folder's name anywhere (the folder, or a link of its name); a file's name last.
        starts = range(len(segments) - size + 1) if folder else [len(segments) - size]
        at = next(
            (i + size - 1 for i in starts if i >= 0 and segments[i : i + size] == parts), None
        )
        if at is not None and (found is None or at < found[0]):
            found = (at, reason)
    if found is None:
        return ""
    at, reason = found
    named = any(
        not _GLOB.search(pattern)
        and len([s for s in _strip(pattern).split("/") if s]) > at
        and matches(path, pattern)
        for pattern in allowed
    )
    return "" if named else reason


_HOPS = 40  # links followed on one way before it counts as a loop, as Linux does


def _link_violation(path: str, target: str, layout: Layout | None) -> Violation | None:
    why = _unresolved(path, target, layout)
    if not why:
        return None
    shown = printable(target, name=True)
    return Violation(path, f"symlink {why} (to {shown})")


def _unresolved(path: str, target: str, layout: Layout | None) -> str:
    """Why the link at `path` does not lead to something the result holds, or "": followed
    as the file system would on checkout, every link on the way resolved in `layout` (a
    `None` layout holds nothing but the link itself)."""
    folders = layout.folders if layout else frozenset()
    files = layout.files if layout else frozenset()
    links = {**(layout.links if layout else {}), path: target}
    at = path.split("/")[:-1]  # the folder the link is in, where its target starts
    pending = deque([path.rsplit("/", 1)[-1]])
    hops = 0
    while pending:
        part = pending.popleft()
        if part in ("", "."):
            continue
        if part == "..":
            if not at:
                return "pointing outside the repository"
            at.pop()
            continue
        if part.lower() == ".git":
            return "pointing into the .git directory"
        here = "/".join([*at, part])
        if here in links:
            hops += 1
            if hops > _HOPS:
                return "in a loop of links"
            text = links[here]
            if posixpath.isabs(text):
                return "pointing outside the repository"
            pending.extendleft(reversed(text.split("/")))
        elif here in folders or (here in files and not pending):
            at.append(part)
        elif here in files:  # a file with more of the way after it: ENOTDIR
            return "leading through a file"
        else:
            return "pointing at nothing the result holds"
    return ""


def _in_git_dir(path: str) -> bool:
    # Any segment, and in any case: git refuses such paths, and case-insensitive disks
    # would treat '.GIT' as the repository's own folder.
    return any(segment.lower() == ".git" for segment in path.split("/"))
