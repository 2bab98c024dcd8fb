"""`[setup]`: files copied from the checkout and a command run in each attempt's workspace
before its agent, a free $TASKHAND_PORT per workspace for the setup, the agent and the checks;
a copied file never lands on the run branch, and its secrets reach no prompt or event."""

from __future__ import annotations

import json
import os
from pathlib import Path

from taskhand.config import Setup
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from tests.conftest import RunCli
from tests.plans import md_plan, md_task
from tests.runs import attempt, git, make_repo, run_plan, script, write

SECRET = "hunter2-correct-horse-battery"
SETUP = Setup(
    [".env", "config/local.json"],
    'mkdir -p build && cp config/local.json build/seen.json && echo "$TASKHAND_PORT" > build/port',
)


def plan_files(ids: list[str], criteria: str) -> dict[str, str]:
    files = {str(k): str(v) for k, v in md_plan().items()}
    for task_id in ids:
        body = f"## Description\nDo it.\n\n## Acceptance criteria\n{criteria}"
        files[f"{task_id}-task.md"] = md_task(task_id, f"Task {task_id}", body=body)
    return {f"plan/{k}": v for k, v in files.items()}


def repo_with_setup(tmp_path: Path, ids: list[str], criteria: str = "- it works\n") -> Path:
    """A repository whose `.env` is ignored and whose `config/local.json` is committed and
    changed locally (so not ignored): both hold what must never leave the checkout."""
    committed = {
        "README.md": "# p\n",
        ".gitignore": ".env\nbuild/\n",
        "config/local.json": '{"db": "example"}\n',
        **plan_files(ids, criteria),
    }
    repo = make_repo(tmp_path / "repo", committed)
    (repo / ".env").write_text(f"API_TOKEN={SECRET}\nDEBUG=1\n")
    (repo / "config" / "local.json").write_text('{"db": "local", "password": "pw-local-9876"}\n')
    return repo


def looks(task_id: str) -> dict[str, object]:
    """What the agent does: reads the copied files and the setup's work, writes down its
    port, changes a copied file, and says the secret in its resolution."""
    command = (
        "grep -q API_TOKEN .env && test -f build/seen.json && echo saw > saw.txt; "
        f'echo "$TASKHAND_PORT" > port-{task_id}.txt; echo more >> config/local.json'
    )
    return attempt({"run": ["sh", "-c", command]}, resolution=f"Done; the token was {SECRET}.")


def test_setup_runs_before_the_agent_and_its_files_stay_out(tmp_path: Path) -> None:
    checks = (
        "- `$ test -f saw.txt` the agent saw the copied files and the setup's work\n"
        "- `$ grep -q API_TOKEN .env` the checks see the copied file\n"
        '- `$ sh -c \'test -n "$TASKHAND_PORT" && test "$(cat build/port)" = "$TASKHAND_PORT"\'`'
        " setup and checks share the port\n"
    )
    repo = repo_with_setup(tmp_path, ["T-001", "T-002"], checks)
    replay = script(tmp_path, {"T-001": [looks("T-001")], "T-002": [looks("T-002")]})
    summary, record = run_plan(repo / "plan", repo, replay, settings={"setup": SETUP})
    assert summary.status == "completed", [e.data for e in record.of("gate")]
    branch = summary.run_branch
    files = git(repo, "ls-tree", "-r", "--name-only", branch).split()
    assert {"saw.txt", "port-T-001.txt", "port-T-002.txt"} <= set(files)
    assert ".env" not in files and not any(f.startswith("build/") for f in files)
    # The agent changed the copied file; the run branch keeps the committed one.
    assert git(repo, "show", f"{branch}:config/local.json") == '{"db": "example"}\n'
    ports = {git(repo, "show", f"{branch}:port-{t}.txt").strip() for t in ("T-001", "T-002")}
    assert len(ports) == 2 and all(p.isdigit() for p in ports)
    # The checkout is as it was.
    assert (repo / ".env").read_text() == f"API_TOKEN={SECRET}\nDEBUG=1\n"
    assert "more" not in (repo / "config" / "local.json").read_text()
    # No secret of a copied file reached an event, a prompt or a transcript.
    state = StateDir.for_repo(repo)
    with Store.open(state.database) as store:
        logged = json.dumps([e.as_json() for e in store.events(summary.run_id)])
        prompts = [u.transcript for u in store.units(summary.run_id)]
    assert "T-001" in logged and SECRET not in logged and "pw-local-9876" not in logged
    for transcript in prompts:
        text = Path(str(transcript)).read_text()
        assert SECRET not in text and "pw-local-9876" not in text


def test_a_copied_file_that_is_not_ignored_stays_out_too(tmp_path: Path) -> None:
    repo = repo_with_setup(tmp_path, ["T-001", "T-002"])
    (repo / ".gitignore").write_text("build/\n")  # .env now shows as untracked
    git(repo, "commit", "-qam", "no longer ignored")
    (repo / "notes.env").write_text("TOKEN=abcdefgh12345678\n")
    replay = script(
        tmp_path,
        {
            "T-001": [attempt(write(".env", "API_TOKEN=rewritten\n"))],
            "T-002": [attempt(write(".env", "API_TOKEN=x\n"), write("a.txt", "a\n"))],
        },
    )
    setup = Setup([".env", "notes.env"])
    summary, record = run_plan(
        repo / "plan", repo, replay, max_attempts=1, settings={"setup": setup}
    )
    # T-001 changed only a copied file, which is no change at all; T-002's other file lands.
    [failed] = record.of("attempt_failed")
    assert (failed.task_id, failed.data["reason"]) == ("T-001", "the attempt changed no files")
    files = git(repo, "ls-tree", "-r", "--name-only", summary.run_branch).split()
    assert "a.txt" in files and ".env" not in files and "notes.env" not in files


def test_a_failing_setup_fails_the_attempt_with_its_output(tmp_path: Path) -> None:
    repo = repo_with_setup(tmp_path, ["T-001"])
    replay = script(tmp_path, {"T-001": [attempt(write("a.txt", "a\n"))]})
    setup = Setup(
        [".env"], f"echo resolving packages; echo {SECRET}; echo 'E404 left-pad' >&2; exit 3"
    )
    summary, record = run_plan(
        repo / "plan", repo, replay, max_attempts=2, settings={"setup": setup}
    )
    assert summary.status == "failed"
    reasons = [str(e.data["reason"]) for e in record.of("attempt_failed")]
    assert len(reasons) == 2
    assert all("the setup command failed: `bash -c" in r and "exited 3" in r for r in reasons)
    assert all("E404 left-pad" in r and SECRET not in r for r in reasons)
    with Store.open(StateDir.for_repo(repo).database) as store:
        assert not [u for u in store.units(summary.run_id)]  # no agent ran
        ledger = store.ledger(summary.run_id, "T-001", 5)
    assert [e.outcome for e in ledger] == ["setup_failed", "setup_failed"]


def test_a_copied_file_gone_from_the_checkout_fails_the_attempt(tmp_path: Path) -> None:
    repo = repo_with_setup(tmp_path, ["T-001"])
    (repo / ".env").unlink()
    replay = script(tmp_path, {"T-001": [attempt(write("a.txt", "a\n"))]})
    setup = Setup([".env"])
    summary, record = run_plan(
        repo / "plan", repo, replay, max_attempts=1, settings={"setup": setup}
    )
    assert summary.status == "failed"
    [failed] = record.of("attempt_failed")
    assert "[setup] copy: .env does not exist in your checkout" in str(failed.data["reason"])


def test_bad_setup_is_one_line_naming_the_file_and_line(tmp_path: Path, run_cli: RunCli) -> None:
    repo = repo_with_setup(tmp_path, ["T-001"])
    replay = script(tmp_path, {"T-001": [attempt(write("a.txt", "a\n"))]})
    settings = repo / "plan" / "taskhand.toml"
    settings.write_text('[setup]\nrun = "true"\ncopy = ["../secrets.env"]\n')
    result = run_cli("run", repo / "plan", "--script", replay)
    assert result.exit_code != 0
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output
    assert "taskhand.toml:3: " in result.stderr
    assert "'../secrets.env', which leaves its folder through '..' (fix: " in result.stderr

    (repo / "elsewhere.txt").write_text("not a setting\n")
    (repo / ".env").unlink()
    os.symlink("elsewhere.txt", repo / ".env")
    settings.write_text('[setup]\ncopy = [".env"]\n')
    result = run_cli("run", repo / "plan", "--script", replay)
    assert result.exit_code != 0 and result.stderr.count("\n") == 1
    assert "taskhand.toml:2: error: [setup] copy: .env is a symbolic link" in result.stderr
    assert not StateDir.for_repo(repo).database.exists()  # refused before anything was made
    checked = run_cli("validate", repo / "plan")
    assert "taskhand.toml:2: error: [setup] copy: .env is a symbolic link" in checked.output
