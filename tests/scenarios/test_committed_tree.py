"""What lands is what was judged, and what did not land stays out of the user's repository.

Attacks by a worker (replay agent actions) on the gate: files its workspace holds that the
commit leaves out, attributes that make a checkout's bytes differ from the committed ones.
The acceptance commands must run on exactly the tree that lands, byte for byte. And a
rejected candidate's objects (a 32 MiB file) must never reach the user's `.git/objects`,
while an accepted one's are there, whole, for plain git.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from taskhand.state.paths import StateDir
from taskhand.state.records import Attempt
from taskhand.state.store import Store
from tests.git_objects import added, broken, copies, held
from tests.plans import md_task
from tests.runs import attempt, git, make_repo, run_plan, script, write
from tests.scenarios.test_hostile_agents import needs_bwrap

WC = "def count(text):\n    return 0  # wrong: the task is to count the words\n"
CHECK = "python3 -c 'import wc; assert wc.count(\"a b c\") == 3, wc.__file__'"


def plan_files(criterion: str) -> dict[str, str]:
    body = f"## Description\nMake it right.\n\n## Acceptance criteria\n- `$ {criterion}` passes\n"
    return {
        "plan/overview.md": "# Feature\n\n## Goal\nShip it.\n",
        "plan/T-001-fix.md": md_task("T-001", "Fix it", body),
    }


def attempts(repo: Path) -> list[Attempt]:
    state = StateDir.for_repo(repo)
    with Store.open(state.database) as store:
        run = store.latest_run()
        assert run is not None
        return store.attempts(run.id)


def test_a_check_passes_only_on_what_is_committed(tmp_path: Path) -> None:
    """The worker hides a `wc/` package shadowing wc.py behind a .gitignore that ignores
    itself: in its workspace the check passes, in the committed tree it cannot."""
    repo = make_repo(tmp_path / "repo", {"wc.py": WC, **plan_files(CHECK)})
    shadow = "def count(text):\n    return len(text.split())\n"
    hiding = attempt(
        write("notes.md", "counted\n"),
        write("wc/__init__.py", shadow),
        write(".gitignore", ".gitignore\nwc/\n"),
        {"run": ["sh", "-c", CHECK]},  # it passes here: the worker's own proof
    )
    replay = script(tmp_path, {"T-001": [hiding]})
    summary, record = run_plan(repo / "plan", repo, replay, max_attempts=1)

    assert summary.status == "failed"
    [tried] = attempts(repo)
    assert tried.status == "failed" and tried.candidate_sha
    candidate = tried.candidate_sha
    names = git(repo, "--git-dir", str(StateDir.for_repo(repo).depot(tried.run_id)), "ls-tree",
                "-r", "--name-only", candidate).split()  # fmt: skip
    assert "wc/__init__.py" not in names and ".gitignore" not in names  # not in the result
    [command] = [e for e in record.of("gate") if e.data["name"] == "command"]
    assert command.data["ok"] is False
    assert "AssertionError" in tried.reason and "wc.py" in tried.reason  # the check's output
    assert git(repo, "rev-parse", summary.run_branch).strip() == tried.base_sha  # nothing landed


# The files a candidate holds, as the user committed them, and what a checkout that obeyed the
# attributes would write instead: CRLF, UTF-16, an expanded $Id$, a smudged file.
EXACT = {
    "crlf.txt": b"one\ntwo\n",
    "utf16.txt": "h\u00e9llo\n".encode(),
    "ident.c": b"/* $Id$ */\n",
    "filtered.dat": b"the clean bytes\n",
    "notes.md": b"# notes\n",
}
ATTRIBUTES = (
    "crlf.txt eol=crlf\nutf16.txt working-tree-encoding=UTF-16\nident.c ident\n"
    "filtered.dat filter=trap\n"
)
# The check: each file's bytes against the blob the commit holds (known before the run).
SAME = """import hashlib, sys
want = {want}
bad = []
for name, blob in sorted(want.items()):
    data = open(name, "rb").read()
    have = hashlib.sha1(b"blob %d\\0" % len(data) + data).hexdigest()
    print(name, "same" if have == blob else "differs: %r" % data[:40])
    bad += [name] if have != blob else []
sys.exit(1 if bad else 0)
"""


def test_a_check_sees_exactly_the_committed_bytes(tmp_path: Path) -> None:
    """The candidate's .gitattributes and the user's repository ask for every rewrite a
    checkout can make; the acceptance command reads the files and finds the blobs' bytes."""
    want = {n: hashlib.sha1(b"blob %d\0" % len(d) + d).hexdigest() for n, d in EXACT.items()}
    repo = make_repo(tmp_path / "repo", {"same.py": SAME.format(want=json.dumps(want)),
                                         **plan_files("python3 same.py")})  # fmt: skip
    for name, data in EXACT.items():
        (repo / name).write_bytes(data)
    git(repo, "add", *EXACT)
    git(repo, "commit", "-q", "-m", "files")
    (repo / ".gitattributes").write_text(ATTRIBUTES)  # after the files, which it would rewrite
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-q", "-m", "attributes")
    marker = tmp_path / "smudged"
    git(repo, "config", "filter.trap.smudge", f"sh -c 'touch {marker}; echo SMUDGED'")
    git(repo, "config", "filter.trap.clean", "cat")
    git(repo, "config", "core.autocrlf", "true")
    (repo / ".git" / "info" / "attributes").write_text("*.md text eol=crlf\n")
    replay = script(tmp_path, {"T-001": [attempt(write("done.txt", "done\n"))]})
    summary, record = run_plan(repo / "plan", repo, replay, max_attempts=1)

    [command] = [e for e in record.of("gate") if e.data["name"] == "command"]
    [tried] = attempts(repo)
    assert command.data["ok"] is True, tried.reason
    assert summary.status == "completed"
    assert not marker.exists()  # no filter ran, in the harness or for the check


BIG = 32 * 1024 * 1024
REJECT = {
    "verdict": "reject",
    "category": "acceptance_gap",
    "concern": "A 32 MiB file has no business here.",
    "evidence": ["big.bin"],
    "next_step": "Remove big.bin.",
}


def test_a_rejected_candidate_leaves_no_object_in_the_users_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", plan_files("test -f a.txt"))
    before = held(repo)
    filler = ["python3", "-c", f"import os; open('big.bin', 'wb').write(os.urandom({BIG}))"]
    replay = script(
        tmp_path,
        {
            "T-001": [
                attempt(write("a.txt", "a\n"), {"run": filler}, review=REJECT),
                # Built on the rejected work (its workspace holds big.bin): removed here.
                attempt({"delete": "big.bin"}, write("a.txt", "a, without the big file\n")),
            ]
        },
    )
    summary, _ = run_plan(repo / "plan", repo, replay)
    assert summary.status == "completed"
    rejected, accepted = attempts(repo)
    assert rejected.status == "rejected" and accepted.status == "passed"
    assert rejected.candidate_sha and accepted.candidate_sha
    depot = StateDir.for_repo(repo).depot(rejected.run_id)

    thrown = added(depot, rejected.candidate_sha)
    big = git(repo, "--git-dir", str(depot), "rev-parse", f"{rejected.candidate_sha}:big.bin")
    assert big.strip() in thrown
    now = held(repo)
    assert not thrown & now, "objects of the rejected candidate reached the user's repository"
    kept = added(depot, accepted.candidate_sha)
    assert kept <= now and now - before == kept  # the accepted one's, and nothing else
    assert max(copies(repo).values()) == 1
    # Plain git in the user's repository: the branches are whole, and read and check out.
    assert broken(repo) == ""
    assert "+a, without the big file" in git(repo, "log", "-p", accepted.branch)
    git(repo, "checkout", "-q", accepted.branch)
    assert (repo / "a.txt").read_text() == "a, without the big file\n"
    assert not (repo / "big.bin").exists()
    assert git(repo, "rev-parse", summary.run_branch) == git(repo, "rev-parse", accepted.branch)


def test_a_task_branch_aimed_at_a_rejected_candidate_is_taken_away(tmp_path: Path) -> None:
    """Unconfined, a worker points its task's branch at the rejected candidate it builds on,
    whose objects are only in the run's depot: the branch would be broken for plain git. The
    guard deletes it (none of the task's work landed) and stops the run."""
    repo = make_repo(tmp_path / "repo", plan_files("test -f a.txt"))
    ref = '"$G/refs/heads/taskhand/T-001-fix-it"'
    aim = (
        'G=$(dirname "$(head -n1 .git/objects/info/alternates)"); '
        f'mkdir -p "$G/refs/heads/taskhand"; git rev-parse HEAD > {ref}'
    )
    replay = script(
        tmp_path,
        {
            "T-001": [
                attempt(write("a.txt", "a\n"), review=REJECT),
                attempt({"run": ["sh", "-c", aim]}, write("a.txt", "a again\n")),
            ]
        },
    )
    summary, _ = run_plan(repo / "plan", repo, replay, sandbox="none")
    rejected, aimed = attempts(repo)
    assert rejected.status == "rejected" and aimed.status == "violation"
    assert "the task branch taskhand/T-001-fix-it was made at " in (aimed.reason or "")
    assert "taskhand/T-001-fix-it" not in git(repo, "branch", "--format=%(refname:short)")
    assert broken(repo) == ""
    assert summary.status == "stopped"


@needs_bwrap
def test_an_agents_own_commit_works_in_a_sandbox_and_lands_as_the_users(tmp_path: Path) -> None:
    """The sandbox's home is empty (no ~/.gitconfig), yet an agent that commits as it goes
    can; what lands is the harness's commit, by the user's identity, not the agent's."""
    repo = make_repo(tmp_path / "repo", {"wc.py": WC, **plan_files("true")})
    committing = attempt(
        write("wc.py", "def count(text):\n    return len(text.split())\n"),
        {
            "run": [
                "sh",
                "-c",
                "git add -A && git commit -qm 'count words'"
                " && git log -1 --format=%an > committed-by.txt",
            ]
        },
    )
    git(repo, "config", "user.name", "Ada Lovelace")
    git(repo, "config", "user.email", "ada@example.invalid")
    replay = script(tmp_path, {"T-001": [committing]})
    summary, record = run_plan(repo / "plan", repo, replay, sandbox="bwrap", max_attempts=1)

    assert summary.status == "completed", record.of("gate")
    [tried] = attempts(repo)
    assert tried.status == "passed"
    # The agent's commit was made (it wrote who made it only after), and did not land as such.
    landed = git(repo, "show", f"{summary.run_branch}:committed-by.txt")
    assert landed == "taskhand agent\n"
    author = git(repo, "log", "-1", "--format=%an <%ae>", summary.run_branch).strip()
    assert author == "Ada Lovelace <ada@example.invalid>"
