"""The scope gate: glob matching over repository paths, and every rule of check_scope."""

from __future__ import annotations

import pytest

from taskhand.gates.scope import Violation, check_scope, matches
from taskhand.workspace.diffs import Change

GLOBS = [
    # plain names: that file, or anything under that folder
    ("docs", "docs", True),
    ("docs/a/b.md", "docs", True),
    ("docs/a/b.md", "docs/", True),
    ("docs", "docs/", False),
    ("docsx/a.md", "docs", False),
    ("docs.md", "docs", False),
    ("src/app.py", "src/app.py", True),
    ("src/app.py.bak", "src/app.py", False),
    ("src/app.py", "./src/app.py", True),
    ("a/b", "/a", True),
    # * and ? stay within a segment
    ("a.py", "*.py", True),
    ("src/a.py", "*.py", False),
    ("src/a.py", "src/*.py", True),
    ("src/pkg/a.py", "src/*.py", False),
    ("src/a.py", "src/*", True),
    ("src/a/b.py", "src/*", False),
    ("internal/auth/login_test.go", "internal/auth/*_test.go", True),
    ("internal/auth/login.go", "internal/auth/*_test.go", False),
    ("a1.txt", "a?.txt", True),
    ("a12.txt", "a?.txt", False),
    ("a/b", "a?b", False),
    ("ab/c", "a*/c", True),
    ("src/.hidden", "src/*", True),
    # ** spans any number of segments, none included
    ("src/x.py", "src/**/x.py", True),
    ("src/a/x.py", "src/**/x.py", True),
    ("src/a/b/c/x.py", "src/**/x.py", True),
    ("srcx/x.py", "src/**/x.py", False),
    ("x.py", "**/x.py", True),
    ("deep/down/x.py", "**/x.py", True),
    ("deep/down/y.py", "**/x.py", False),
    ("anything/at/all", "**", True),
    ("src/a/b.py", "src/**", True),
    ("src", "src/**", True),
    ("srcx/a", "src/**", False),
    ("a/b", "a/**/**/b", True),
    ("a/x/y/b", "a/**/**/b", True),
    ("tests/unit/test_a.py", "tests/**/test_*.py", True),
    ("tests/test_a.py", "tests/**/test_*.py", True),
    ("tests/unit/a_test.py", "tests/**/test_*.py", False),
    ("src/a/b.py", "src/*/", True),
    ("src/b.py", "src/*/", False),
    ("src/a/b/c.py", "src/**/", True),
    ("src", "src/**/", False),
    # brackets and dots are literal: Next.js folders and file suffixes
    ("app/[id]/page.tsx", "app/[id]/*.tsx", True),
    ("app/i/page.tsx", "app/[id]/*.tsx", False),
    ("aXpy", "a.py", False),
    ("./src/a.py", "src/*.py", True),
    # the whole repository, and an empty pattern that opens nothing
    ("any/path", "./", True),
    ("any/path", ".", True),
    ("any/path", "", False),
]


@pytest.mark.parametrize(("path", "pattern", "expected"), GLOBS)
def test_matches(path: str, pattern: str, expected: bool) -> None:
    assert matches(path, pattern) is expected


def test_the_glob_table_is_large_enough() -> None:
    assert len(GLOBS) >= 30


def scope(
    changes: list[Change],
    allowed: list[str] | None = None,
    forbidden: list[str] | None = None,
    links: dict[str, str] | None = None,
) -> list[Violation]:
    return check_scope(changes, allowed or [], forbidden or [], links or {})


OUTSIDE = "outside the allowed paths (src/**, tests/**)"


def test_changes_inside_the_allowed_paths_pass() -> None:
    changes = [Change("M", "src/a.py"), Change("A", "tests/test_a.py"), Change("D", "src/b.py")]
    assert scope(changes, ["src/**", "tests/**"]) == []


def test_an_empty_allowed_list_allows_everything() -> None:
    assert scope([Change("A", "anywhere/at/all.txt")]) == []


@pytest.mark.parametrize("status", ["A", "M", "D", "T"])
def test_each_kind_of_change_outside_the_allowed_paths_is_a_violation(status: str) -> None:
    found = scope([Change(status, "README.md")], ["src/**", "tests/**"])
    assert found == [Violation("README.md", OUTSIDE)]


def test_a_rename_counts_at_both_its_paths() -> None:
    into = scope([Change("R", "src/a.py", "lib/a.py")], ["src/**", "tests/**"])
    out_of = scope([Change("R", "lib/a.py", "src/a.py")], ["src/**", "tests/**"])
    assert into == [Violation("lib/a.py", OUTSIDE)]
    assert out_of == [Violation("lib/a.py", OUTSIDE)]


def test_a_copy_counts_only_at_its_new_path() -> None:
    assert scope([Change("C", "src/copy.py", "lib/a.py")], ["src/**"]) == []


def test_forbidden_paths_win_over_allowed_ones() -> None:
    found = scope([Change("M", ".tilth/feat/01-task.md")], ["**"], [".tilth/feat"])
    assert found == [Violation(".tilth/feat/01-task.md", "inside the read-only path .tilth/feat")]


def test_a_forbidden_path_is_a_violation_when_everything_is_allowed() -> None:
    found = scope([Change("D", "plan/overview.md")], [], ["plan/"])
    assert [v.reason for v in found] == ["inside the read-only path plan/"]


def test_each_path_gets_one_scope_reason() -> None:
    found = scope([Change("A", "plan/x.md")], ["src/**"], ["plan"])
    assert found == [Violation("plan/x.md", "inside the read-only path plan")]


@pytest.mark.parametrize(
    "path", [".git/config", ".git/hooks/pre-commit", "sub/.git/HEAD", ".GIT/x"]
)
def test_a_path_in_a_git_directory_is_a_violation_even_when_allowed(path: str) -> None:
    assert scope([Change("A", path)], ["**"]) == [Violation(path, "the .git directory")]


def test_a_file_merely_named_like_git_files_is_fine() -> None:
    assert scope([Change("A", ".gitignore"), Change("A", "src/.gitkeep")], ["**"]) == []


@pytest.mark.parametrize(
    ("link", "target"),
    [
        ("src/passwd", "/etc/passwd"),
        ("escape", ".."),
        ("src/up", "../../outside"),
        ("src/a/b", "../../../x"),
        ("src/sneaky", "inner/../../../x"),
    ],
)
def test_a_symlink_leaving_the_repository_is_a_violation_even_when_allowed(
    link: str, target: str
) -> None:
    found = scope([Change("A", link)], ["**"], links={link: target})
    assert found == [Violation(link, f"symlink pointing outside the repository (to {target})")]


@pytest.mark.parametrize(
    ("link", "target"),
    [("src/a", "b.py"), ("src/a", "../README.md"), ("src/x/y", "../../docs"), ("top", ".")],
)
def test_a_symlink_staying_inside_the_repository_is_fine(link: str, target: str) -> None:
    assert scope([Change("A", link)], ["**"], links={link: target}) == []


def test_a_symlink_into_the_git_directory_is_a_violation() -> None:
    found = scope([Change("A", "src/hooks")], ["**"], links={"src/hooks": "../.git/hooks"})
    reason = "symlink pointing into the .git directory (to ../.git/hooks)"
    assert found == [Violation("src/hooks", reason)]


def test_a_symlink_outside_the_scope_gets_both_violations() -> None:
    found = scope([Change("A", "etc")], ["src/**"], links={"etc": "/etc"})
    assert found == [
        Violation("etc", "outside the allowed paths (src/**)"),
        Violation("etc", "symlink pointing outside the repository (to /etc)"),
    ]


def test_every_violation_is_returned_sorted_by_path() -> None:
    changes = [
        Change("A", "z.txt"),
        Change("M", "plan/a.md"),
        Change("R", "src/new.py", "old/name.py"),
        Change("A", "src/ok.py"),
        Change("A", "src/link"),
        Change("A", ".git/x"),
    ]
    found = scope(changes, ["src/**"], ["plan"], {"src/link": "/tmp"})
    assert [v.path for v in found] == [".git/x", "old/name.py", "plan/a.md", "src/link", "z.txt"]
    assert found == scope(list(reversed(changes)), ["src/**"], ["plan"], {"src/link": "/tmp"})


AGENT_CONFIG = (
    "an agent's configuration, which later agents would run (name it in the task's paths)"
)


@pytest.mark.parametrize(
    "path",
    [
        ".claude/settings.json",  # hooks run by the reviewer and every later claude
        ".claude/settings.local.json",
        "sub/.claude/commands/x.md",
        ".CLAUDE/settings.json",  # a case-insensitive disk reads it as .claude
        ".claude",  # a link named .claude to a folder of settings elsewhere
        ".mcp.json",
        ".codex/config.toml",
        ".gemini/settings.json",
        ".opencode/plugin/x.js",
        "opencode.json",
        "web/opencode.jsonc",
        ".aider.conf.yml",
        ".aider.model.metadata.json",
        ".env",
    ],
)
def test_an_agents_configuration_is_refused_even_where_everything_is_allowed(path: str) -> None:
    assert scope([Change("A", path)]) == [Violation(path, AGENT_CONFIG)]
    assert scope([Change("M", path)], ["**"]) == [Violation(path, AGENT_CONFIG)]
    assert scope([Change("D", path)], ["./"]) == [Violation(path, AGENT_CONFIG)]


def test_a_task_whose_paths_name_the_configuration_may_change_it() -> None:
    assert scope([Change("M", ".claude/commands/ship.md")], [".claude/commands/"]) == []
    assert scope([Change("M", ".claude/settings.json")], [".claude"]) == []
    assert scope([Change("A", "web/.env")], ["web/.env"]) == []
    # a pattern that only holds the configuration, or names it through a wildcard, does not
    assert scope([Change("A", "web/.env")], ["web"]) == [Violation("web/.env", AGENT_CONFIG)]
    found = scope([Change("A", ".claude/x.json")], [".claude/*.json"])
    assert found == [Violation(".claude/x.json", AGENT_CONFIG)]


def test_look_alikes_of_agent_configuration_are_ordinary_files() -> None:
    names = [".env.example", ".env/bin/python", "docs/claude.md", "CLAUDE.md", "my.claude/x"]
    assert scope([Change("A", name) for name in names]) == []
