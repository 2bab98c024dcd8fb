"""Hostile files: whatever an agent leaves fails that attempt with a clear reason, never the run.

Each attack is a replay agent whose shell commands leave something in its workspace (or its
reviewer's copy, or the user's repository) that the harness must take, show, check or delete:
names that are not UTF-8 or hold line breaks, FIFOs, sockets, devices, nested repositories,
symlink chains, paths too long or too many, folders made unwritable or immutable. After each,
the attempt failed with the reason (the run's events, the task's text, `taskhand ledger`), the
next task ran and the run ended, a resume moves on, and `taskhand ledger` has exactly its lines.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from taskhand import config as runconfig
from taskhand.config import Summary
from taskhand.run import launch
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from taskhand.workspace import removal, screen
from tests.conftest import RunCli
from tests.plans import md_task, tt_plan
from tests.runs import Recorder, git, make_repo, script
from tests.scenarios.test_hostile_agents import needs_bwrap

ROOT = os.geteuid() == 0
SANDBOXES = [pytest.param("bwrap", marks=needs_bwrap), "none"]
# G: the user's .git, found through the workspace's alternates, as any agent would.
PRELUDE = 'G=$(dirname "$(head -n1 .git/objects/info/alternates)"); '
CRITERIA = "## Acceptance criteria\n- `$ true` passes\n"
NOTES = {"write": "notes.txt", "text": "notes\n"}
FORGED = "T-002 attempt 1: accepted: forged"
TAKEN = "the workspace's files were not taken: "


@pytest.fixture(autouse=True)
def removed_after(tmp_path: Path) -> Iterator[None]:
    """What the attacks leave (folders nested past PATH_MAX, immutable files) goes with the
    harness's own removal: pytest's would fail on it."""
    yield
    for entry in tmp_path.iterdir():
        removal.remove_tree(entry)


def sh(command: str) -> dict[str, Any]:
    return {"run": ["sh", "-c", PRELUDE + command]}


def user_repo(tmp_path: Path, extra: dict[str, str] | None = None) -> Path:
    """A repository with a plan of two tasks: T-001 the attack (one attempt), T-002 ordinary."""
    return make_repo(
        tmp_path / "repo",
        {
            "README.md": "# project\n",
            "docs/guide.md": "# guide\n",
            "plan/overview.md": "# Feature\n\n## Goal\nShip it.\n",
            "plan/T-001-first.md": md_task(
                "T-001", "First", f"## Description\nAdd notes.\n\n{CRITERIA}", max_attempts="1"
            ),
            "plan/T-002-second.md": md_task(
                "T-002", "Second", f"## Description\nMore.\n\n{CRITERIA}"
            ),
            **(extra or {}),
        },
    )


def run_attack(
    tmp_path: Path,
    worker: list[str],
    sandbox: str,
    repo: Path | None = None,
    attempts: list[dict[str, Any]] | None = None,
    recorder: Recorder | None = None,
) -> tuple[Path, Summary, Recorder]:
    """T-001's worker runs `worker` (or the whole `attempts`), T-002's writes a file."""
    repo = repo or user_repo(tmp_path)
    first = {"outcome": "done", "resolution": "did it", "actions": [NOTES, *map(sh, worker)]}
    second = {"outcome": "done", "resolution": "did it", "actions": [{"write": "more.txt"}]}
    replay = script(tmp_path, {"T-001": attempts or [first], "T-002": [second]})
    recorder = recorder or Recorder()
    config = runconfig.RunConfig(
        agent="replay", script=str(replay), sandbox=sandbox, caps=runconfig.Caps(max_attempts=1)
    )
    return repo, launch.start(repo / "plan", config, recorder, repo), recorder


def concluded(recorder: Recorder) -> dict[str, tuple[str, str]]:
    return {
        str(e.task_id): (str(e.data["status"]), str(e.data["text"]))
        for e in recorder.of("task_concluded")
    }


def attempt_failed(repo: Path, summary: Summary, recorder: Recorder, reason: str) -> str:
    """T-001's one attempt failed with `reason` in its text, T-002 went on and is done, the run
    ended, and a resume moves on: it ends without another attempt. T-001's reason."""
    ended = concluded(recorder)
    assert ended["T-002"][0] == "DONE", ended
    status, text = ended["T-001"]
    assert status == "FAIL", ended
    assert reason in text, text
    assert summary.status == "failed", summary
    state = StateDir.for_repo(repo)
    with Store.open(state.database) as store:
        attempts = store.attempts(summary.run_id, "T-001")
    assert [a.status for a in attempts] == ["failed"], attempts
    resumed = Recorder()
    again = launch.resume(summary.run_id, resumed, repo)
    assert again.status == "failed" and not resumed.of("attempt_started")
    return str(attempts[0].reason)


def ledger_lines(run_cli: RunCli, repo: Path, task: str = "T-001") -> list[str]:
    result = run_cli("ledger", task, "--repo", repo)
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def result_files(repo: Path, summary: Summary) -> list[str]:
    listed = git(repo, "ls-tree", "-r", "-z", "--name-only", summary.run_branch or "")
    return [name for name in listed.split("\0") if name]


# --- what a result may hold: each fails the attempt, with its reason ----------------------

# name: (the worker's shell commands, the reason's words)
REFUSED: dict[str, tuple[list[str], str]] = {
    "a name that is not UTF-8": (
        ["printf x > \"$(printf 'caf\\351.txt')\""],
        '"caf\\xe9.txt": its name is not UTF-8',
    ),
    "a line break in a name": (
        [f"printf x > \"$(printf 'a\\n{FORGED}')\""],
        f'"a\\n{FORGED}": its name holds a control character',
    ),
    "an escape sequence in a name": (
        ["printf x > \"$(printf 'x\\033]0;owned\\007.txt')\""],
        '"x\\x1b]0;owned\\x07.txt": its name holds a control character',
    ),
    "a bidi override in a name": (
        ["printf x > \"$(printf 'txt.\\342\\200\\256exe')\""],
        '"txt.\\u202eexe": its name holds a control character',
    ),
    "a name that begins with a dash": (
        ["echo x > ./--upload-pack=touch"],
        f"--upload-pack=touch: {screen.DASH}",
    ),
    "a path longer than a checkout can write": (
        [
            "n=$(printf 'a%.0s' $(seq 250)); mkdir -p $n/$n/$n/$n/$n; echo x > $n/$n/$n/$n/$n/f",
        ],
        screen.TOO_LONG,
    ),
    "folders nested past PATH_MAX": (
        ["i=0; while [ $i -lt 2500 ]; do mkdir d && cd d || exit 1; i=$((i+1)); done; echo x > f"],
        screen.TOO_LONG,
    ),
    "a name that differs from another only in case": (
        ["echo shadow > README.MD"],
        "README.MD: differs only in case or Unicode form from README.md",
    ),
    "names that differ only in Unicode form": (
        ["printf a > \"$(printf 'caf\\303\\251')\"; printf b > \"$(printf 'cafe\\314\\201')\""],
        "differs only in case or Unicode form",
    ),
    "a FIFO in place of a tracked file": (
        ["rm README.md; mkfifo README.md"],
        "README.md: a named pipe (FIFO), which a result cannot hold",
    ),
    "an untracked FIFO": (["mkfifo pipe"], "pipe: a named pipe (FIFO)"),
    "a socket": (
        ["python3 -c \"import socket; socket.socket(socket.AF_UNIX).bind('sock')\""],
        "sock: a socket, which a result cannot hold",
    ),
    "a .git file linking a subfolder to the user's repository": (
        ['mkdir sub; echo x > sub/f; echo "gitdir: $G" > sub/.git'],
        f"sub/.git: {screen.NESTED}",
    ),
    "a nested repository": (
        ["mkdir sub; cd sub; git init -q; echo x > f; git add f; "
         "git -c user.name=a -c user.email=a@b commit -qm x"],
        f"sub/.git: {screen.NESTED}",
    ),
    "a file too large for a result (sparse)": (
        ["truncate -s 200M big.bin"],
        f"big.bin: {screen.TOO_BIG}",
    ),
    "too many files": (
        [f"mkdir many; cd many; seq 1 {screen.MAX_CHANGED + 1} | xargs touch"],
        f"more than the {screen.MAX_CHANGED} one result may",
    ),
}  # fmt: skip


@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize("name", list(REFUSED))
def test_what_a_result_cannot_hold_fails_the_attempt_and_the_run_goes_on(
    tmp_path: Path, run_cli: RunCli, name: str, sandbox: str
) -> None:
    worker, reason = REFUSED[name]
    repo, summary, recorder = run_attack(tmp_path, worker, sandbox)
    shown = attempt_failed(repo, summary, recorder, reason)
    assert shown.startswith(TAKEN) or "git repository inside" in shown, shown
    # One line for the one attempt: no name forges another, however it reads.
    assert ledger_lines(run_cli, repo) == [f"T-001 attempt 1: unit_failed: {shown}"]
    assert result_files(repo, summary) == [
        "README.md", "docs/guide.md", "more.txt", "plan/T-001-first.md", "plan/T-002-second.md",
        "plan/overview.md",
    ]  # fmt: skip


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_device_node_never_lands_and_the_run_goes_on(tmp_path: Path, sandbox: str) -> None:
    """Unconfined root can make one, and the attempt fails; in the sandbox the right is gone
    (or the node is refused all the same)."""
    repo, summary, recorder = run_attack(tmp_path, ["mknod dev c 1 3 || true"], sandbox)
    status, _text = concluded(recorder)["T-001"]
    if status == "FAIL" or (ROOT and sandbox == "none"):
        attempt_failed(repo, summary, recorder, "dev: a device, which a result cannot hold")
    else:
        assert concluded(recorder)["T-002"][0] == "DONE"
    assert "dev" not in result_files(repo, summary)


@pytest.mark.skipif(ROOT, reason="root reads every file, whatever its mode")
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_file_taskhand_cannot_read_fails_the_attempt(tmp_path: Path, sandbox: str) -> None:
    repo, summary, recorder = run_attack(tmp_path, ["echo x > secret; chmod 000 secret"], sandbox)
    attempt_failed(repo, summary, recorder, f"secret: {screen.UNREADABLE}")


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_an_unreadable_file_or_folder_never_wedges_the_run(tmp_path: Path, sandbox: str) -> None:
    """As root it is read as any file (and lands); as a user the attempt fails with why."""
    worker = ["echo x > secret; chmod 000 secret; mkdir shut; echo y > shut/in; chmod 000 shut"]
    repo, summary, recorder = run_attack(tmp_path, worker, sandbox)
    if not ROOT:
        attempt_failed(repo, summary, recorder, screen.UNREADABLE)
        return
    assert concluded(recorder)["T-002"][0] == "DONE"
    files = result_files(repo, summary)
    assert "secret" in files and "shut/in" in files


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_utf16_without_a_bom_never_ends_the_run(tmp_path: Path, sandbox: str) -> None:
    """git refuses to add it as the attributes say: the attempt fails with git's reason (or,
    where the attributes are set aside, the bytes land exactly as written)."""
    worker = ["printf '*.txt working-tree-encoding=UTF-16\\n' > .gitattributes; echo hi > x.txt"]
    repo, summary, recorder = run_attack(tmp_path, worker, sandbox)
    ended = concluded(recorder)
    assert ended["T-002"][0] == "DONE"
    if ended["T-001"][0] == "FAIL":
        assert "BOM is required in 'notes.txt'" in ended["T-001"][1] or "x.txt" in ended["T-001"][1]
        return
    shown = git(repo, "cat-file", "-p", f"{summary.run_branch}:x.txt")
    assert shown == "hi\n"


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_workspace_folder_replaced_by_a_link_fails_the_attempt(
    tmp_path: Path, sandbox: str
) -> None:
    """Unconfined, the agent moves its workspace away and leaves a link in its place: nothing
    is read through the link. Under the sandbox its folder is a mount it cannot move."""
    worker = ['W=$PWD; cd ..; mv "$W" "$W.moved" && ln -s "$W.moved" "$W" || true']
    repo, summary, recorder = run_attack(tmp_path, worker, sandbox)
    if sandbox == "none":
        attempt_failed(repo, summary, recorder, "the workspace folder was replaced")
    else:
        assert concluded(recorder)["T-002"][0] == "DONE"


# --- links: judged by where they resolve in the result -------------------------------------

LINKS: dict[str, tuple[list[str], str]] = {
    # `here` is the top, so each here/.. climbs one folder above it: textually the dots cancel
    # (the old check read `etc/passwd`), on checkout the link reads /etc/passwd.
    "a chain through a link to the top": (
        [
            "ln -s . here; ln -s \"$(printf 'here/%.0s' $(seq 30))$(printf '../%.0s' $(seq 30))"
            'etc/passwd" link'
        ],
        "link: symlink pointing outside the repository",
    ),
    "the issue's chain": (
        ["ln -s . here; ln -s here/../../etc/passwd link"],
        "link: symlink pointing outside the repository (to here/../../etc/passwd)",
    ),
    "a link where a folder was": (
        ["rm -rf docs; ln -s ../../../../../../../../../etc docs"],
        "docs: symlink pointing outside the repository",
    ),
    "a chain into .git": (
        ["ln -s . here; ln -s here/.git/config cfg"],
        "cfg: symlink pointing into the .git directory",
    ),
    "a loop of links": (["ln -s b a; ln -s a b"], "symlink in a loop of links"),
    "a link to nothing": (["ln -s gone.txt link"], "link: symlink pointing at nothing"),
}


@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize("name", list(LINKS))
def test_a_link_leaving_the_result_fails_its_gate(
    tmp_path: Path, run_cli: RunCli, name: str, sandbox: str
) -> None:
    worker, reason = LINKS[name]
    repo, summary, recorder = run_attack(tmp_path, worker, sandbox)
    attempt_failed(repo, summary, recorder, reason)
    lines = ledger_lines(run_cli, repo)
    assert lines[0].startswith("T-001 attempt 1: checks_failed: ")
    assert lines[2] == f"  check scope failed: {lines[0].split(': ', 2)[2]}", lines
    assert "passwd" not in "".join(result_files(repo, summary))


# --- cleanup: what an agent made undeletable ------------------------------------------------


def review_rounds(reviewer: list[str]) -> list[dict[str, Any]]:
    """T-001's attempts: the first rejected after its reviewer ran `reviewer` in its copy; the
    second accepted from the same copy folder, which must first be wiped."""
    rejected = {
        "verdict": "reject",
        "category": "acceptance_gap",
        "concern": "more",
        "next_step": "add more",
    }
    return [
        {"outcome": "done", "resolution": "r", "actions": [NOTES],
         "review": {**rejected, "actions": [sh(c) for c in reviewer]}},
        {"outcome": "done", "resolution": "r", "actions": [{"write": "more-notes.txt"}],
         "review": {"verdict": "accept", "actions": [sh(c) for c in reviewer]}},
    ]  # fmt: skip


def leftovers(tmp_path: Path) -> list[str]:
    """Every review copy still in the harness's state, and every warning of what stayed."""
    state = tmp_path / "taskhand-home"
    return [str(p) for p in state.rglob("review-*") if p.is_dir()]


def kept_by_the_agent(recorder: Recorder) -> list[str]:
    return [
        str(e.data["message"])
        for e in recorder.of("warning")
        if "could not be deleted" in str(e.data["message"])
    ]


UNDELETABLE = {
    "folders made unwritable (chmod 555)": "mkdir -p d/e; echo x > d/e/f; chmod 555 d/e d",
    "folders made unreadable (chmod 000)": "mkdir -p d/e; echo x > d/e/f; chmod 000 d/e d",
}


@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize("name", list(UNDELETABLE))
def test_a_review_copy_the_reviewers_tests_made_undeletable_is_wiped(
    tmp_path: Path, name: str, sandbox: str
) -> None:
    repo = user_repo(tmp_path)
    (repo / "plan/T-001-first.md").write_text(
        md_task("T-001", "First", f"## Description\nAdd notes.\n\n{CRITERIA}", max_attempts="2")
    )
    git(repo, "commit", "-qam", "two attempts")
    attempts = review_rounds([UNDELETABLE[name]])
    repo, _summary, recorder = run_attack(tmp_path, [], sandbox, repo=repo, attempts=attempts)
    assert concluded(recorder) == {"T-001": ("DONE", "r"), "T-002": ("DONE", "did it")}
    assert kept_by_the_agent(recorder) == []
    assert leftovers(tmp_path) == []


@pytest.mark.skipif(not ROOT, reason="chattr +i needs root")
def test_immutable_files_in_a_review_copy_are_wiped(tmp_path: Path) -> None:
    """Root unconfined can set the immutable and append-only flags (in the sandbox the right
    is gone): the copy is still wiped for the next review, and removed at the end."""
    repo = user_repo(tmp_path)
    (repo / "plan/T-001-first.md").write_text(
        md_task("T-001", "First", f"## Description\nAdd notes.\n\n{CRITERIA}", max_attempts="2")
    )
    git(repo, "commit", "-qam", "two attempts")
    reviewer = ["mkdir -p d/e; echo x > d/e/f; echo y > d/g; chattr +i d/e/f d/e; chattr +a d/g d"]
    attempts = review_rounds(reviewer)
    repo, _summary, recorder = run_attack(tmp_path, [], "none", repo=repo, attempts=attempts)
    assert concluded(recorder) == {"T-001": ("DONE", "r"), "T-002": ("DONE", "did it")}
    assert kept_by_the_agent(recorder) == []
    assert leftovers(tmp_path) == []


@pytest.mark.skipif(not ROOT, reason="chattr +i needs root")
def test_clean_removes_an_immutable_workspace_and_says_what_it_could_not(
    tmp_path: Path, run_cli: RunCli
) -> None:
    worker = ["mkdir -p imm; echo x > imm/f; chattr +i imm/f imm; mkfifo imm2 || true"]
    repo, summary, recorder = run_attack(tmp_path, worker, "none")
    assert concluded(recorder)["T-002"][0] == "DONE"
    state = StateDir.for_repo(repo)
    with Store.open(state.database) as store:
        (first,) = store.attempts(summary.run_id, "T-001")
    workspace = Path(first.worktree)
    assert (workspace / "imm" / "f").exists()  # kept for a person to read
    for task in ("T-001", "T-002"):  # results disposed, so clean may take them
        args = ["integration", "set", task, "--run", summary.run_id, "--status", "integrated"]
        run_cli(*args, "--repo", repo)
    # Without the right to clear the flag, clean says what stayed, and succeeds.
    clean = [sys.executable, "-m", "taskhand", "clean", "--keep-done", "0", "--keep-failed", "0"]
    weaker = ["setpriv", "--inh-caps=-linux_immutable", "--bounding-set=-linux_immutable"]
    done = subprocess.run(
        [*weaker, *clean, "--repo", str(repo)], capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    stayed = [line for line in done.stdout.splitlines() if "not removed:" in line]
    assert len(stayed) == 1 and "imm/f" in stayed[0] and "chattr -R -i" in stayed[0], done.stdout
    assert (workspace / "imm" / "f").exists()
    # With it (root's own), clean takes the rest.
    result = run_cli("clean", "--keep-done", "0", "--keep-failed", "0", "--repo", repo)
    assert result.exit_code == 0 and "not removed" not in result.output, result.output
    assert not workspace.exists()


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_folders_nested_past_path_max_are_removed(
    tmp_path: Path, run_cli: RunCli, sandbox: str
) -> None:
    """Deeper than any path can name: the attempt fails, and its workspace still goes."""
    worker, reason = REFUSED["folders nested past PATH_MAX"]
    repo, summary, recorder = run_attack(tmp_path, worker, sandbox)
    attempt_failed(repo, summary, recorder, reason)
    state = StateDir.for_repo(repo)
    with Store.open(state.database) as store:
        (first,) = store.attempts(summary.run_id, "T-001")
    for task in ("T-001", "T-002"):
        args = ["integration", "set", task, "--run", summary.run_id, "--status", "integrated"]
        run_cli(*args, "--repo", repo)
    result = run_cli("clean", "--keep-done", "0", "--keep-failed", "0", "--repo", repo)
    assert result.exit_code == 0 and "not removed" not in result.output, result.output
    assert not Path(first.worktree).exists()


# --- point 12: a change outside the workspace stops the run; no name forges a line ---------


class TouchingRecorder(Recorder):
    """Changes the user's repository while T-001's worker runs, as an escape (or a person)."""

    def __init__(self, repo: Path) -> None:
        super().__init__()
        self.repo = repo

    def __call__(self, event: Any) -> None:
        super().__call__(event)
        worker = event.kind == "unit_started" and event.data.get("role") == "implementer"
        if worker and event.task_id == "T-001":
            git(self.repo, "config", "taskhand-test.touched", "yes")


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_change_outside_the_workspace_stops_the_run(
    tmp_path: Path, run_cli: RunCli, sandbox: str
) -> None:
    """Under the sandbox too: printed, the attempt fails, and nothing more runs until a person
    looked (what changed may steer every task after it)."""
    repo = user_repo(tmp_path)
    repo, summary, recorder = run_attack(
        tmp_path, [], sandbox, repo=repo, recorder=TouchingRecorder(repo)
    )
    assert summary.status == "stopped", summary
    status, text = concluded(recorder)["T-001"]
    assert status == "FAIL" and ".git/config was modified" in text, text
    assert "T-002" not in concluded(recorder)
    assert "taskhand reopen T-001" in summary.message
    lines = ledger_lines(run_cli, repo)
    assert len(lines) == 1, lines
    assert lines[0].startswith("T-001 attempt 1: violation: violation: during the worker")
    if sandbox == "bwrap":
        from taskhand.views.progress import Progress

        outside = [Progress().render(e) for e in recorder.of("outside_change")]
        assert outside == [
            "  T-001: outside the workspace during the worker's unit: .git/config was modified"
        ]


class ReopeningRecorder(Recorder):
    """A person reopens FOO-2 (`taskhand reopen`, a process of its own) while FOO-1's worker
    runs."""

    def __init__(self, plan: Path) -> None:
        super().__init__()
        self.plan = plan
        self.result: subprocess.CompletedProcess[str] | None = None

    def __call__(self, event: Any) -> None:
        super().__call__(event)
        worker = event.kind == "unit_started" and event.data.get("role") == "implementer"
        if worker and event.task_id == "FOO-1" and self.result is None:
            reopen = [sys.executable, "-m", "taskhand", "reopen", "FOO-2", str(self.plan)]
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
            self.result = subprocess.run(reopen, capture_output=True, text=True, env=env)


@needs_bwrap
def test_a_persons_move_during_a_unit_under_the_sandbox_is_theirs(tmp_path: Path) -> None:
    """The plan's files change under the sandbox, and the run's log holds the person's move
    that changed them: recorded, and the run goes on."""
    plan = tt_plan([[("FOO-1", "OPEN"), ("FOO-2", "FAIL")]])
    files = {f"plan/{k}": str(v) for k, v in plan.items()}
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", **files})
    recorder = ReopeningRecorder(repo / "plan")
    done = {"outcome": "done", "resolution": "did it"}
    replay = script(
        tmp_path,
        {
            "FOO-1": [{**done, "actions": [{"write": "one.txt"}]}],
            "FOO-2": [{**done, "actions": [{"write": "two.txt"}]}],
        },
    )
    config = runconfig.RunConfig(agent="replay", script=str(replay), sandbox="bwrap")
    summary = launch.start(repo / "plan", config, recorder, repo)
    assert recorder.result is not None and recorder.result.returncode == 0, recorder.result
    assert [e.data["changes"] for e in recorder.of("outside_change")] != []
    assert summary.status == "completed", summary
    assert concluded(recorder) == {"FOO-1": ("DONE", "did it"), "FOO-2": ("DONE", "did it")}


def test_a_line_break_in_a_name_in_your_repository_forges_no_line(
    tmp_path: Path, run_cli: RunCli
) -> None:
    """Unconfined, an agent names a file in your .git so that it reads as a ledger line: the
    backstop's reason shows the name quoted, on the one line of its attempt."""
    worker = [f"printf x > \"$G/$(printf 'x\\n{FORGED}')\""]
    repo, summary, _recorder = run_attack(tmp_path, worker, "none")
    assert summary.status == "stopped"
    lines = ledger_lines(run_cli, repo)
    assert len(lines) == 1, lines
    assert f'.git/"x\\n{FORGED}" was added' in lines[0]
    show = run_cli("show", repo / "plan", "T-001")
    assert FORGED not in [line.strip() for line in show.output.splitlines()], show.output


def test_a_name_that_is_not_utf8_in_your_repository_may_be_deleted(tmp_path: Path) -> None:
    """A file of yours named in Latin-1: the agent deletes it, the reviewer reads the change
    (its name shown escaped), and the task is done."""
    repo = user_repo(tmp_path)
    name = os.fsdecode(b"caf\xe9.txt")
    (repo / name).write_text("old\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a latin-1 name")
    repo, summary, recorder = run_attack(tmp_path, ["rm caf*.txt"], "none", repo=repo)
    assert concluded(recorder) == {"T-001": ("DONE", "did it"), "T-002": ("DONE", "did it")}
    assert name not in result_files(repo, summary)


# --- resume: a run killed with the hostile file in place moves on --------------------------

CRASHING = Path(__file__).with_name("crashing_run.py")


def crashing(mode: str, repo: Path, replay: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(CRASHING), mode, str(repo / "plan"), str(repo), str(replay)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run([*command, *flags], capture_output=True, text=True, env=env, check=False)


RESUMED = {
    "a name that is not UTF-8": (
        ["printf x > \"$(printf 'caf\\351.txt')\""],
        "its name is not UTF-8",
    ),
    "folders nested past PATH_MAX, made unwritable": (
        ["i=0; while [ $i -lt 2500 ]; do mkdir d && cd d || exit 1; i=$((i+1)); done; "
         "echo x > f; chmod 555 ."],
        screen.TOO_LONG,
    ),
    "immutable files and a FIFO": (
        ["mkdir -p imm; echo x > imm/f; chattr +i imm/f imm 2>/dev/null; mkfifo README.md.new"],
        "a named pipe (FIFO)",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", list(RESUMED))
def test_a_run_killed_after_the_agent_left_it_resumes_and_moves_on(
    tmp_path: Path, home: Path, name: str
) -> None:
    """Killed after the worker's unit, before its files were taken: the resume removes the
    interrupted attempt's workspace, the next attempt fails with the reason, and the run ends."""
    worker, reason = RESUMED[name]
    repo = user_repo(tmp_path)
    first = {"outcome": "done", "resolution": "did it", "actions": [NOTES, *map(sh, worker)]}
    second = {"outcome": "done", "resolution": "did it", "actions": [{"write": "more.txt"}]}
    replay = script(tmp_path, {"T-001": [first], "T-002": [second]})
    killed = crashing("start", repo, replay, "--kill", "event:unit_finished:implementer")
    assert killed.returncode == -9, killed.stderr
    done = crashing("resume", repo, replay)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    state = StateDir.for_repo(repo)
    with Store.open(state.database) as store:
        (run,) = store.runs()
        attempts = store.attempts(run.id, "T-001")
        states = {t: s.status for t, s in store.task_states(run.id).items()}
    assert [a.status for a in attempts] == ["interrupted", "failed"]
    assert reason in str(attempts[-1].reason)
    assert states == {"T-001": "FAIL", "T-002": "DONE"}
    assert not Path(attempts[0].worktree).exists()  # the killed attempt's leftovers are gone
