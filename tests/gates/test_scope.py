"""The scope gate: glob matching over repository paths, and every rule of check_scope."""

from __future__ import annotations

import pytest

from taskhand.gates.scope import Violation, check_scope, matches
from taskhand.workspace.diffs import Change, Layout

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


# The result's tree the links below are checked out in.
FOLDERS = frozenset({"src", "src/inner", "src/x", "docs"})
FILES = frozenset({"README.md", "src/b.py", "docs/a.md"})


def scope(
    changes: list[Change],
    allowed: list[str] | None = None,
    forbidden: list[str] | None = None,
    links: dict[str, str] | None = None,
    others: dict[str, str] | None = None,
) -> list[Violation]:
    """check_scope over the tree above, holding `links` (the changed ones) and `others`."""
    layout = Layout(FOLDERS, FILES, {**(others or {}), **(links or {})})
    return check_scope(changes, allowed or [], forbidden or [], links or {}, layout)


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
    [
        ("src/a", "b.py"),
        ("src/a", "../README.md"),
        ("src/x/y", "../../docs"),
        ("top", "."),
        ("src/a", "inner/../b.py"),
        ("src/a", "./inner/./../../docs/a.md"),
    ],
)
def test_a_symlink_staying_inside_the_repository_is_fine(link: str, target: str) -> None:
    assert scope([Change("A", link)], ["**"], links={link: target}) == []


@pytest.mark.parametrize(
    ("links", "reason"),
    [
        # The chain: `here` is the top, so here/.. is the top's parent.
        ({"here": ".", "link": "here/../../etc/passwd"}, "pointing outside the repository"),
        ({"here": ".", "link": "here/../x"}, "pointing outside the repository"),
        ({"src/up": "..", "link": "src/up/../../x"}, "pointing outside the repository"),
        ({"hop": "src/inner", "link": "hop/../../../x"}, "pointing outside the repository"),
        ({"abs": "/etc", "link": "abs/passwd"}, "pointing outside the repository"),
        ({"g": ".GIT", "link": "g/config"}, "pointing into the .git directory"),
        ({"here": ".", "link": "here/.git/hooks"}, "pointing into the .git directory"),
        ({"a": "b", "b": "a", "link": "a"}, "in a loop of links"),
        ({"link": "link"}, "in a loop of links"),
        ({"link": "README.md/x"}, "leading through a file"),
        ({"link": "README.md/"}, "leading through a file"),
        ({"link": "src/missing.py"}, "pointing at nothing the result holds"),
        ({"link": "src/missing/../b.py"}, "pointing at nothing the result holds"),
    ],
)
def test_a_symlink_is_judged_by_where_it_resolves_in_the_result(
    links: dict[str, str], reason: str
) -> None:
    """Followed as a checkout would, through every link on the way: what leaves the tree, or
    leads nowhere, is refused, however the text of the one link reads."""
    others = {k: v for k, v in links.items() if k != "link"}
    found = scope([Change("A", "link")], ["**"], links={"link": links["link"]}, others=others)
    assert found == [Violation("link", f"symlink {reason} (to {links['link']})")]


def test_a_link_where_a_folder_was_is_judged_like_any_other() -> None:
    changes = [Change("D", "src/b.py"), Change("T", "src")]
    found = scope(changes, ["**"], links={"src": "/etc"})
    assert found == [Violation("src", "symlink pointing outside the repository (to /etc)")]
    assert scope(changes, ["**"], links={"src": "docs"}) == []


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


EDITOR = (
    "an editor's configuration, which runs commands in your editor (name it in the task's paths)"
)
CI = "CI's configuration, which CI runs with your secrets (name it in the task's paths)"
TOOL = "a tool's configuration, which runs commands in your shell (name it in the task's paths)"


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        (".cursor/mcp.json", AGENT_CONFIG),
        (".cursor/rules/x.mdc", AGENT_CONFIG),
        (".vscode/tasks.json", EDITOR),  # runOn folderOpen: runs when you open the folder
        (".vscode/settings.json", EDITOR),
        (".vscode/launch.json", EDITOR),
        ("web/.VSCode/tasks.json", EDITOR),
        (".idea/runConfigurations/x.xml", EDITOR),
        (".zed/tasks.json", EDITOR),
        (".devcontainer/devcontainer.json", EDITOR),
        (".devcontainer.json", EDITOR),
        (".envrc", TOOL),
        ("sub/.envrc", TOOL),
        (".husky/pre-commit", TOOL),
        (".githooks/pre-push", TOOL),
        (".git-hooks/pre-push", TOOL),
        (".pre-commit-config.yaml", TOOL),
        (".npmrc", TOOL),
        ("packages/a/.npmrc", TOOL),
        (".yarnrc", TOOL),
        (".yarnrc.yml", TOOL),
        (".pnpmfile.cjs", TOOL),
        ("mise.toml", TOOL),
        (".mise.toml", TOOL),
        (".github/workflows/ci.yml", CI),
        (".github/workflows", CI),  # a link of the folder's name
        (".github/actions/setup/action.yml", CI),
        (".gitlab-ci.yml", CI),
        (".circleci/config.yml", CI),
        (".travis.yml", CI),
        (".buildkite/pipeline.yml", CI),
        ("azure-pipelines.yml", CI),
        ("bitbucket-pipelines.yml", CI),
        ("Jenkinsfile", CI),
    ],
)
def test_files_that_run_code_elsewhere_are_refused_even_where_everything_is_allowed(
    path: str, reason: str
) -> None:
    """They run in your editor, your shell or CI, with your secrets, after delivery."""
    assert scope([Change("A", path)], ["**"]) == [Violation(path, reason)]
    assert scope([Change("D", path)]) == [Violation(path, reason)]


def test_a_task_whose_paths_name_a_file_that_runs_code_elsewhere_may_change_it() -> None:
    assert scope([Change("M", ".github/workflows/ci.yml")], [".github/workflows/"]) == []
    assert scope([Change("M", ".vscode/tasks.json")], [".vscode/tasks.json"]) == []
    assert scope([Change("A", "web/.npmrc")], ["web/.npmrc"]) == []
    # .github itself holds the workflows, it does not name them
    found = scope([Change("M", ".github/workflows/ci.yml")], [".github"])
    assert found == [Violation(".github/workflows/ci.yml", CI)]


def test_the_rest_of_github_and_look_alikes_are_ordinary_files() -> None:
    names = [".github/CODEOWNERS", ".github/ISSUE_TEMPLATE/bug.md", "docs/workflows/ci.md"]
    names += ["src/vscode/tasks.json", "npmrc.md", "my.envrc.txt", "Jenkinsfile.md"]
    assert scope([Change("A", name) for name in names]) == []


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
