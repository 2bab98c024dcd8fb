"""Preflight rules through `validate`: programs, shell syntax, scope paths, agents, template.

Each problem names its file and line and the fix; plans that can run report nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from taskhand import config
from taskhand.plan import validate as plan_validation
from taskhand.plan.problems import Problem
from taskhand.run.preflight import SETTINGS_FILE, validate
from tests.conftest import WritePlan
from tests.plans import md_plan, md_task
from tests.runs import git, make_repo


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from tmp_path, so problems print their paths as plan/..."""
    monkeypatch.chdir(tmp_path)


def checks_task(*criteria: str, description: str = "Do the thing.", **keys: str) -> str:
    """A T-001 whose acceptance criteria are `criteria`, one bullet each, from line 10 on."""
    bullets = "".join(f"- {c}\n" for c in criteria)
    body = f"## Description\n{description}\n\n## Acceptance criteria\n{bullets}"
    return md_task("T-001", "Task", body=body, **keys)


def preflight(folder: Path, rule: str) -> dict[int | None, Problem]:
    """The problems of one preflight rule, by line."""
    found = [p for p in validate(folder).problems if p.rule == rule]
    by_line = {p.line: p for p in found}
    assert len(by_line) == len(found), found
    return by_line


def test_a_program_that_is_not_on_path_is_an_error(write_plan: WritePlan) -> None:
    task = checks_task("`$ no-such-program-here --check` passes", "`$ true` passes")
    folder = write_plan({**md_plan(), "T-001-task.md": task})
    [problem] = preflight(folder, "program").values()
    assert problem.render() == (
        "plan/T-001-task.md:10: error: T-001's check runs no-such-program-here, which is not "
        "on PATH here, so every attempt would fail (fix: install it, or name it by its path "
        "from the repository root, like ./scripts/NAME)"
    )
    # The plan's own rules find nothing wrong: show and next still read it.
    assert plan_validation.validate(folder).errors == []


def test_builtins_and_missing_absolute_programs_say_why(write_plan: WritePlan) -> None:
    task = checks_task("`$ cd src` works", "`$ /no/such/dir/tool` works")
    problems = preflight(write_plan({**md_plan(), "T-001-task.md": task}), "program")
    assert "a shell builtin, but no shell runs checks" in problems[10].message
    assert problems[10].fix == "run it through a shell: `$ sh -c 'cd src'`"
    assert "runs /no/such/dir/tool, which does not exist" in problems[11].message


def test_programs_in_the_repository_are_judged_by_its_commit(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {"scripts/ok.sh": "#!/bin/sh\n", "scripts/plain.sh": "echo\n", "plan/tool.sh": "x\n"},
    )
    (repo / "scripts" / "ok.sh").chmod(0o755)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "ok.sh executable")
    (repo / "scripts" / "local.sh").write_text("#!/bin/sh\n")  # never committed
    task = checks_task(
        "`$ ./scripts/ok.sh` passes",
        "`$ ./scripts/plain.sh` passes",
        "`$ ./scripts/gone.sh` passes",
        "`$ ./scripts/local.sh` passes",
        "`$ ./tool.sh` passes",
        "`$ ../elsewhere/run.sh` passes",
        "`$ ./scripts/new.sh --all` passes",
        description="Write scripts/new.sh, which checks everything.",
    )
    for name, text in md_plan().items():
        (repo / "plan" / name).write_text(str(text))
    (repo / "plan" / "T-001-task.md").write_text(task)
    git(repo, "add", "plan")
    git(repo, "commit", "-q", "-m", "plan")
    problems = preflight(repo / "plan", "program")
    assert sorted(problems) == [11, 12, 13, 14, 15]  # ok.sh and the new.sh T-001 makes pass
    assert "not executable in the repository (mode 644)" in problems[11].message
    assert problems[11].fix.startswith("git update-index --chmod=+x scripts/plain.sh")
    assert "not in the repository, and no task says it creates it" in problems[12].message
    assert "description of the task that creates it" in problems[12].fix
    assert "scripts/local.sh, which is not committed" in problems[13].message
    assert problems[13].fix.startswith("commit scripts/local.sh")
    assert "not at the top of the repository, where checks run" in problems[14].message
    assert problems[14].fix == "write it as ./plan/tool.sh"
    assert "lies outside the repository" in problems[15].message


def test_relative_programs_outside_a_repository_are_not_judged(write_plan: WritePlan) -> None:
    task = checks_task("`$ ./scripts/test.sh` passes")
    assert preflight(write_plan({**md_plan(), "T-001-task.md": task}), "program") == {}


def test_shell_operators_are_errors_and_quoted_ones_are_fine(write_plan: WritePlan) -> None:
    task = checks_task(
        "`$ pytest -q | tee out.txt` passes",
        "`$ make test && make lint` passes",
        "`$ python3 -m build 2>&1` passes",
        "`$ grep -q 'a|b' README.md` matches",
        "`$ sh -c 'ls | wc -l > n.txt'` counts",
        "`$ FOO=1 true` passes",
        "`$ ls tests/*.py` lists them",
        "`$ python3 -c 'import sys; sys.exit(0)'` passes",
    )
    problems = preflight(write_plan({**md_plan(), "T-001-task.md": task}), "shell-syntax")
    assert sorted(problems) == [10, 11, 12, 15, 16]
    pipe = problems[10]
    assert pipe.render() == (
        "plan/T-001-task.md:10: error: T-001's check `pytest -q | tee out.txt` has a pipe (|), "
        "but no shell runs it: pytest receives it as an argument (fix: run it through a shell: "
        "`$ sh -c 'pytest -q | tee out.txt'`; or quote it if pytest should receive it)"
    )
    assert "an 'and' list (&&)" in problems[11].message and problems[11].is_error
    assert "a redirection (2>&1)" in problems[12].message
    assert problems[15].fix == "set it with env: `$ env FOO=1 true`"
    glob = problems[16]
    assert not glob.is_error and "a glob (tests/*.py), but no shell expands it" in glob.message


def test_scope_paths_must_stay_in_the_repository_and_out_of_git(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/a.py": "a = 1\n"})
    paths = f"src/, ../other, .git/hooks, src/../b.py, /etc/passwd, {repo}/src/a.py, /src/a.py"
    for name, text in md_plan(("T-001", {"paths": paths})).items():
        (repo / "plan" / name).parent.mkdir(exist_ok=True)
        (repo / "plan" / name).write_text(str(text))
    problems = [p for p in validate(repo / "plan").problems if p.rule == "scope-path"]
    assert {p.line for p in problems} == {4} and all(p.is_error for p in problems)
    entries = [re.fullmatch(r"T-001's paths entry '(.+?)' (.+)", p.message) for p in problems]
    found = {m[1]: (m[2], p.fix) for m, p in zip(entries, problems, strict=True) if m}
    assert found == {
        "../other": (
            "leaves the repository",
            "paths are globs relative to the repository root; a task changes only files inside it",
        ),
        ".git/hooks": ("points inside .git, which no task may change", "remove it"),
        "src/../b.py": ("has a '..' segment, which no changed path has", "write it as b.py"),
        "/etc/passwd": (
            "lies outside the repository",
            "paths are globs relative to the repository root; a task changes only files inside it",
        ),
        f"{repo}/src/a.py": (
            "is an absolute path",
            "paths are globs relative to the repository root: write src/a.py",
        ),
    }  # '/src/a.py' is anchored at the repository's top, as the scope gate reads it


def test_unknown_agents_in_tasks_and_settings_list_the_valid_names(
    write_plan: WritePlan,
) -> None:
    folder = write_plan(
        {
            **md_plan(("T-001", {"agent": "claud"})),
            "taskhand.toml": '[run]\nagent = "replay"\n\n[roles.evaluator]\nagent = "gpt-5"\n',
        }
    )
    problems = sorted(
        (p for p in validate(folder).problems if p.rule == "agent"), key=lambda p: str(p.path)
    )
    assert [p.render() for p in problems] == [
        "plan/T-001-task.md:4: error: T-001 asks for agent 'claud', which taskhand does not "
        "have (fix: use one of claude, codex, gemini, opencode, aider, custom, acp, openai, "
        "replay)",
        "plan/taskhand.toml:5: error: [roles.evaluator] agent = 'gpt-5' is not an agent "
        "taskhand has (fix: use one of claude, codex, gemini, opencode, aider, custom, acp, "
        "openai, replay)",
    ]


def test_a_broken_settings_file_is_reported_with_its_fix(write_plan: WritePlan) -> None:
    folder = write_plan({**md_plan(("T-001", {})), "taskhand.toml": "[review]\nbounces = 0\n"})
    [problem] = [p for p in validate(folder).problems if p.rule == "settings"]
    assert problem.path.name == "taskhand.toml" and problem.is_error
    assert (problem.message, problem.fix) == ("[review] bounces = 0", "a whole number >= 1")


def test_the_settings_file_is_the_one_config_reads() -> None:
    # Preflight names it itself, to check a plan without one without loading config.
    assert SETTINGS_FILE == config.FILE
