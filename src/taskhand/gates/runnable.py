"""Whether each check of a plan can run as written, where checks run.

A check runs without a shell at the top of a checkout of the repository's commit: its program
must be on PATH or in that commit and executable, and shell syntax in it reaches the program
as plain arguments. Problems name the criterion's line and the fix.
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
import shutil
from functools import cached_property
from pathlib import Path

from taskhand.plan.formats.command_syntax import ShellSyntax, runs_through_shell, shell_syntax
from taskhand.plan.formats.criteria import command_text
from taskhand.plan.model import Criterion, Plan, Task
from taskhand.plan.problems import Collector, Problem

# Builtins people reach for in a check; a shell would run them, but no shell runs checks.
_BUILTINS = frozenset({"cd", "source", ".", "export", "set", "unset", "alias", "ulimit", "[["})
_EXECUTABLE = ("100755", "120000", "160000")  # a symlink or submodule is judged when it runs


class Repo:
    """The repository holding the plan and its HEAD commit, looked up only when needed."""

    def __init__(self, plan_root: Path) -> None:
        self.plan_root = plan_root

    @cached_property
    def root(self) -> Path | None:
        # git loads only for a plan that needs it asked: most checks name a program on PATH.
        from taskhand.workspace import git

        try:
            return git.find_repo(self.plan_root)
        except git.GitError:
            return None  # a plan outside any repository: its paths cannot be judged here

    def modes(self, paths: list[str]) -> dict[str, str] | None:
        """HEAD's mode for each path it holds; None when there is no repository or commit."""
        if self.root is None:
            return None
        from taskhand.workspace import git

        try:
            return git.tree_modes(self.root, "HEAD", paths) if git.has_commits(self.root) else None
        except git.GitError:
            return None


def check_commands(plan: Plan, repo: Repo, problems: list[Problem]) -> None:
    """Every check's shell syntax and program, reported into `problems`."""
    pending: list[tuple[Task, Criterion, str, str]] = []  # programs named by a relative path
    looked_up: dict[tuple[str, str], tuple[str, str] | None] = {}  # a big plan repeats them
    for task in plan.tasks:
        for criterion in task.criteria:
            if criterion.check is None or (command := command_text(criterion.text)) is None:
                continue
            argv = criterion.check.argv
            syntax = shell_syntax(command, runs_through_shell(argv))
            program = argv[0]
            if syntax:
                _report_syntax(task, plan, criterion, command, syntax, problems)
            if _expanded_by_a_shell(program) or "\0" in program:
                continue  # the syntax problem above already says what is wrong
            if "/" in program and not program.startswith("/"):
                pending.append((task, criterion, command, program))
            else:
                key = (program, command if program in _BUILTINS else "")
                if key not in looked_up:
                    looked_up[key] = _installed_problem(program, command)
                found = looked_up[key]
                if found:
                    _report_program(task, plan, criterion, program, found, problems)
    if not pending:
        return
    normal = {p: posixpath.normpath(p) for *_, p in pending}
    inside = sorted({n for n in normal.values() if n != ".." and not n.startswith("../")})
    modes = repo.modes(inside)
    for task, criterion, _, program in pending:
        found = _repository_problem(plan, repo, normal[program], modes)
        if found:
            _report_program(task, plan, criterion, program, found, problems)


def _expanded_by_a_shell(program: str) -> bool:
    return program.startswith("~") or any(c in program for c in "$`=")


def _installed_problem(program: str, command: str) -> tuple[str, str] | None:
    """A program named alone (looked up on PATH) or by an absolute path."""
    try:
        if program.startswith("/"):
            if not os.path.isfile(program):
                return "which does not exist", "correct the path, or name a program on PATH"
            if not os.access(program, os.X_OK):
                return "which is not executable", f"chmod +x {program}, or run its interpreter"
            return None
        if shutil.which(program):
            return None
    except (OSError, ValueError):
        return "which cannot be looked up", "name a program on PATH or in the repository"
    if program in _BUILTINS:
        return (
            "a shell builtin, but no shell runs checks",
            f"run it through a shell: `$ sh -c {shlex.quote(command)}`",
        )
    return (
        "which is not on PATH here",
        "install it, or name it by its path from the repository root, like ./scripts/NAME",
    )


def _repository_problem(
    plan: Plan, repo: Repo, path: str, modes: dict[str, str] | None
) -> tuple[str, str] | None:
    """A program named by a path relative to the repository root, where checks run."""
    if path == ".." or path.startswith("../"):
        return (
            "which lies outside the repository, and checks run in a checkout of it elsewhere",
            "put the program in the repository, or name it on PATH or by an absolute path",
        )
    if modes is None or repo.root is None:
        return None  # no repository or no commit here: nothing to compare with
    mode = modes.get(path)
    if mode == "040000":
        return "which is a folder", "name the program inside it"
    if mode is not None and mode not in _EXECUTABLE:
        return (
            f"which is not executable in the repository (mode {mode[-3:]})",
            f"git update-index --chmod=+x {path} and commit, or run it with its "
            f"interpreter: `$ sh {path}`",
        )
    if mode is not None or _mentioned(plan, path):
        return None  # there, or a task says it makes it
    if os.path.lexists(repo.root / path):
        return (
            "which is not committed, and a task works in a checkout of the commit",
            f"commit {path}, or name a program on PATH",
        )
    beside_plan = plan.root / path
    if os.path.lexists(beside_plan):
        from_root = os.path.relpath(beside_plan.resolve(), repo.root.resolve())
        return (
            "which is not at the top of the repository, where checks run",
            f"write it as ./{Path(from_root).as_posix()}",
        )
    return (
        "which is not in the repository, and no task says it creates it",
        "correct the path, or name it in the description of the task that creates it",
    )


def _mentioned(plan: Plan, path: str) -> bool:
    """Whether some task names `path` outside the commands that run it, or may change it."""
    from taskhand.gates import scope  # the scope rules, for the rare program a task may create

    word = re.compile(rf"(?<![\w./-])(?:\./)?{re.escape(path)}(?![\w/-])")
    for task in plan.tasks:
        # A task allowed to change the file may create it; "." or "**" allows everything,
        # which says nothing about this file.
        if any(scope.matches(path, p) for p in task.paths if p.strip("./*")):
            return True
        prose = [task.title, task.description]
        for criterion in task.criteria:
            command = command_text(criterion.text)
            # The span holding the command is not prose; what follows it may be.
            prose.append(criterion.text.split(command, 1)[-1] if command else criterion.text)
        if any(word.search(text) for text in prose):
            return True
    return False


def _report_program(
    task: Task,
    plan: Plan,
    criterion: Criterion,
    program: str,
    found: tuple[str, str],
    problems: list[Problem],
) -> None:
    what, fix = found
    Collector(problems, task.source or plan.root).error(
        criterion.line or task.lines.get("criteria", task.line),
        f"{task.id}'s check runs {program}, {what}, so every attempt would fail",
        fix,
        "program",
    )


def _report_syntax(
    task: Task,
    plan: Plan,
    criterion: Criterion,
    command: str,
    syntax: list[ShellSyntax],
    problems: list[Problem],
) -> None:
    out = Collector(problems, task.source or plan.root)
    line = criterion.line or task.lines.get("criteria", task.line)
    program = posixpath.basename(criterion.check.argv[0]) if criterion.check else "the program"
    through_shell = f"run it through a shell: `$ sh -c {shlex.quote(command)}`"
    serious = [s for s in syntax if s.changes_what_runs]
    shown = ", ".join(f"{s.what} ({s.text})" for s in serious or syntax)
    if serious and serious[0].what == "a variable assignment":
        out.error(
            line,
            f"{task.id}'s check `{command}` starts with {shown}, but no shell runs it",
            f"set it with env: `$ env {command}`",
            "shell-syntax",
        )
    elif serious:
        out.error(
            line,
            f"{task.id}'s check `{command}` has {shown}, but no shell runs it: "
            f"{program} receives it as an argument",
            f"{through_shell}; or quote it if {program} should receive it",
            "shell-syntax",
        )
    else:
        out.warn(
            line,
            f"{task.id}'s check `{command}` has {shown}, but no shell expands it: "
            f"{program} receives it as written",
            f"{through_shell} if it should expand; or quote it",
            "shell-syntax",
        )
