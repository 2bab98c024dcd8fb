"""The real `gemini` CLI (from .npm-agents or PATH) against a scripted Gemini API on 127.0.0.1:
headless with only what taskhand sets, the prompt on stdin, usage as the server sent it, the
outcome from the fenced block with one nudge, and a whole plan with a rejection and a fix."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from taskhand.agents.cli import agent_home, gemini, outcome_tool
from taskhand.agents.cli.backend import NUDGE, CliAgent
from taskhand.agents.outcome_mcp import tools
from taskhand.agents.prices import DEFAULT
from taskhand.unit import Case, Role
from tests import ROOT
from tests.agents.test_cli import ACCEPT, DONE, REJECT, unit
from tests.conftest import RunCli
from tests.fakes import scripted_gemini as scripted
from tests.fakes.local_server import Logged
from tests.plans import md_plan, md_task
from tests.runs import git, make_repo

AGENT_BIN = ROOT / ".npm-agents" / "node_modules" / ".bin"
INSTALL = "npm install --prefix .npm-agents @google/gemini-cli@0.61.0, as ./dev test does"
KEY = "test-key-local"
MAIN = f"/v1beta/models/{gemini.DEFAULT_MODEL}:streamGenerateContent?alt=sse"


def real_gemini() -> str:
    found = shutil.which("gemini", path=f"{AGENT_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    if found is None:
        pytest.skip(f"gemini is not installed (fix: {INSTALL})")
    return found


def gemini_env(tmp_path: Path, api: scripted.ScriptedGemini) -> dict[str, str]:
    """All a person sets for gemini: its key and endpoint, with a home of nothing but that."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    path = f"{Path(real_gemini()).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return {
        "PATH": path,
        "HOME": str(home),
        "GEMINI_API_KEY": KEY,
        "GOOGLE_GEMINI_BASE_URL": api.url,
    }


def agent(tmp_path: Path, api: scripted.ScriptedGemini) -> CliAgent:
    return CliAgent("gemini", env=gemini_env(tmp_path, api))


def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "worktree")


def answers(request: Logged) -> list[dict[str, Any]]:
    """The function responses a request carries back to the model."""
    parts = [p for c in request.body["contents"] for p in c["parts"]]
    return [p["functionResponse"]["response"] for p in parts if "functionResponse" in p]


def offered(request: Logged) -> set[str]:
    return {f["name"] for t in request.body["tools"] for f in t.get("functionDeclarations", [])}


def test_real_gemini_writes_the_file_and_reports_usage_as_the_server_sent_it(
    tmp_path: Path,
) -> None:
    work = repo(tmp_path)
    write = ("write_file", {"file_path": str(work / "hello.txt"), "content": "hi\n"})
    script = [
        scripted.Turn(calls=[write], thought="Write it.", prompt_tokens=1000, thoughts_tokens=70),
        scripted.Turn(text=DONE, prompt_tokens=1300, cached_tokens=900, candidates_tokens=40),
    ]
    with scripted.ScriptedGemini(script) as api:
        outcome = agent(tmp_path, api).run(unit(work))
    assert (outcome.case, outcome.resolution) == (Case.DONE, "added hello.txt"), outcome.failure
    assert (work / "hello.txt").read_text() == "hi\n"
    # Every request is the main loop's, on the model taskhand names: no routing call first.
    assert [(r.method, r.path) for r in api.requests] == [("POST", MAIN)] * 2
    assert api.keys == [KEY, KEY]
    prompt, candidates, cached, thoughts = api.served_usage()
    usage = outcome.usage
    assert (usage.tokens_in, usage.tokens_out, usage.tokens_cached) == (
        prompt,
        candidates + thoughts,  # thinking bills as output
        cached,
    )
    assert usage.tokens_thinking == thoughts > 0  # and is shown apart
    price = DEFAULT[gemini.DEFAULT_MODEL]
    assert price.cached is not None
    dollars = (prompt - cached) * price.input + cached * price.cached
    dollars += (candidates + thoughts) * price.output
    assert usage.cost == pytest.approx(dollars / 1e6) and usage.estimated
    assert answers(api.requests[1])[0]["output"].startswith("Successfully created")


def test_real_gemini_runs_headless_with_only_what_taskhand_sets(tmp_path: Path) -> None:
    work = repo(tmp_path)
    home = tmp_path / "home"
    planted = {  # a person's own gemini setup, none of which a unit may read
        ".gemini/settings.json": json.dumps(
            {"security": {"auth": {"selectedType": "oauth-personal"}}}
        ),
        ".gemini/GEMINI.md": "PLANTED-MEMORY",
        ".env": "GEMINI_API_KEY=planted-key\n",
    }
    for name, text in planted.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text)
    look = 'echo "home=$GEMINI_CLI_HOME"; cat "$GEMINI_CLI_HOME/.gemini/settings.json"'
    script = [
        scripted.Turn(calls=[("run_shell_command", {"command": look})]),
        scripted.Turn(text=DONE),
    ]
    with scripted.ScriptedGemini(script) as api:
        env = gemini_env(tmp_path, api)
        outcome = CliAgent("gemini", env=env).run(unit(work))
    assert outcome.case is Case.DONE, outcome.failure
    assert api.keys == [KEY, KEY]
    assert "PLANTED" not in json.dumps([r.body for r in api.requests])
    output = answers(api.requests[1])[0]["output"]
    seen = output.split("Output: ", 1)[1].split("\nProcess Group")[0]
    own_home, _, settings = seen.partition("\n")
    assert own_home.startswith("home=") and not own_home.startswith(f"home={home}")
    given = json.loads(settings)
    assert set(given.pop("mcpServers")) == {tools.SERVER}  # our outcome tools' server alone
    assert given == gemini.settings(env)
    assert gemini.settings(env)["security"]["auth"] == {"selectedType": "gemini-api-key"}
    # gemini wrote nothing into the home: its sessions went to the unit's scratch folder
    assert sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file()) == sorted(
        planted
    )


def test_real_gemini_gets_the_prompt_on_stdin_byte_for_byte(tmp_path: Path) -> None:
    # Over 128 KiB, which no single argument may hold; quotes, backslashes, lines and unicode.
    prompt = "Write \"hello.txt\" \\n with 'quotes' — ünïcode\n  indented\n" * 3000
    with scripted.ScriptedGemini([scripted.Turn(text=DONE)]) as api:
        outcome = agent(tmp_path, api).run(unit(repo(tmp_path), prompt))
    assert outcome.case is Case.DONE, outcome.failure
    [first] = api.requests
    # The prompt, then the line that tells of the outcome tools (gemini has no system prompt
    # of ours to carry it).
    hint = outcome_tool.hint(Role.IMPLEMENTER)
    assert first.body["contents"][0]["parts"][-1] == {"text": f"{prompt}\n\n{hint}"}


def test_real_gemini_is_nudged_once_by_resuming_its_session(tmp_path: Path) -> None:
    script = [
        scripted.Turn(text="All done.", prompt_tokens=1000, candidates_tokens=100),
        scripted.Turn(text=DONE, prompt_tokens=3000, cached_tokens=800, candidates_tokens=7),
    ]
    with scripted.ScriptedGemini(script) as api:
        outcome = agent(tmp_path, api).run(unit(repo(tmp_path)))
    assert (outcome.case, outcome.resolution) == (Case.DONE, "added hello.txt"), outcome.failure
    resumed = api.requests[-1].body["contents"]
    assert {"role": "model", "parts": [{"text": "All done."}]} in resumed
    nudged = outcome_tool.nudge(Role.IMPLEMENTER, NUDGE)
    assert resumed[-1] == {"role": "user", "parts": [{"text": nudged}]}
    prompt, candidates, cached, _ = api.served_usage()  # each run reports its own usage
    usage = outcome.usage
    assert (usage.tokens_in, usage.tokens_out, usage.tokens_cached) == (prompt, candidates, cached)


def test_real_gemini_without_a_block_after_the_nudge_is_an_error(tmp_path: Path) -> None:
    script = [scripted.Turn(text="Looks fine."), scripted.Turn(text="Still fine.")]
    with scripted.ScriptedGemini(script) as api:
        outcome = agent(tmp_path, api).run(unit(repo(tmp_path), role=Role.EVALUATOR))
    assert len(api.requests) == 2
    assert (outcome.case, outcome.verdict) == (Case.ERROR, None)
    assert outcome.failure == (
        "the agent never called submit_verdict, and the reviewer's final message has no "
        "verdict block (a fenced JSON with a verdict)"
    )


def test_real_gemini_reviewer_reads_and_runs_the_tests_but_cannot_write(tmp_path: Path) -> None:
    work = repo(tmp_path)
    write = ("write_file", {"file_path": str(work / "hello.txt"), "content": "hi\n"})
    edit = ("replace", {"file_path": str(work / "README.md"), "old_string": "#", "new_string": "!"})
    test = ("run_shell_command", {"command": "test -s README.md && echo the-check-passed"})
    script = [
        scripted.Turn(calls=[write]),
        scripted.Turn(calls=[edit]),
        scripted.Turn(calls=[test]),
        scripted.Turn(text=ACCEPT),
    ]
    with scripted.ScriptedGemini(script) as api:
        outcome = agent(tmp_path, api).run(unit(work, role=Role.EVALUATOR))
    assert outcome.case is Case.DONE, outcome.failure
    assert outcome.verdict and outcome.verdict.accepted
    assert not (work / "hello.txt").exists()
    assert (work / "README.md").read_text().startswith("#")
    for request in api.requests:
        tools = offered(request)
        assert not tools & {"write_file", "replace", "save_memory", "invoke_agent"}
        assert {"read_file", "run_shell_command"} <= tools
    refused_write, refused_edit, ran = answers(api.requests[3])  # each call's answer, in order
    assert "error" in refused_write and "error" in refused_edit
    assert "the-check-passed" in json.dumps(ran)


def test_real_gemini_api_error_is_an_error_outcome(tmp_path: Path) -> None:
    with scripted.ScriptedGemini([scripted.Turn(text="scripted refusal", status=400)] * 4) as api:
        outcome = agent(tmp_path, api).run(unit(repo(tmp_path)))
    assert outcome.case is Case.ERROR
    assert outcome.failure == "gemini failed: scripted refusal"
    assert len(api.requests) == 1  # a 400 is not retried


def test_without_a_model_gemini_asks_a_router_first(tmp_path: Path) -> None:
    """Why the preset always names the model: the scripted server answers the routing call,
    and the main request then goes to the model the router picked."""
    work = repo(tmp_path)
    with scripted.ScriptedGemini([scripted.Turn(text=DONE)]) as api:
        env = gemini_env(tmp_path, api)
        env |= gemini.environment(tmp_path / "scratch" / "gemini-home", env)
        argv = [real_gemini(), "--output-format", "json", "--skip-trust"]
        run = subprocess.run(
            argv, input=b"Hi.", env=env, cwd=work, capture_output=True, timeout=120
        )
    assert run.returncode == 0, run.stderr.decode()[-2000:]
    routing, main = api.requests
    assert routing.path.endswith(":generateContent") and "streamGenerateContent" not in routing.path
    assert main.path.endswith(":streamGenerateContent?alt=sse")
    assert json.loads(run.stdout)["response"] == DONE


def test_vertex_ai_is_selected_when_asked_for() -> None:
    assert gemini.auth_type({"GOOGLE_GENAI_USE_VERTEXAI": "true"}) == gemini.VERTEX_AUTH
    assert gemini.auth_type({"GEMINI_API_KEY": "k"}) == gemini.API_KEY_AUTH
    assert gemini.auth_type({"GEMINI_API_KEY": "k"}, signed_in=True) == gemini.API_KEY_AUTH


def test_a_google_sign_in_is_copied_into_the_units_home_and_selected(tmp_path: Path) -> None:
    """Without a key, your `gemini` signed in with Google is what the unit uses: its tokens are
    copied into the unit's home (and back when gemini refreshed them); nothing else of yours."""
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "oauth_creds.json").write_text('{"refresh_token": "r"}')
    (home / ".gemini" / "GEMINI.md").write_text("your memory")
    (tmp_path / "scratch").mkdir()
    made = agent_home.make("gemini", tmp_path / "scratch", {"HOME": str(home)})
    assert made is not None
    own = Path(made.env[gemini.HOME])
    env = gemini.environment(own, {})
    assert env[gemini.HOME] == str(own)
    settings = json.loads((own / ".gemini" / "settings.json").read_text())
    assert settings["security"]["auth"]["selectedType"] == gemini.GOOGLE_AUTH
    assert (own / ".gemini" / "oauth_creds.json").read_text() == '{"refresh_token": "r"}'
    assert not (own / ".gemini" / "GEMINI.md").exists()
    (own / ".gemini" / "oauth_creds.json").write_text('{"refresh_token": "r2"}')
    agent_home.keep_login(made)
    assert (home / ".gemini" / "oauth_creds.json").read_text() == '{"refresh_token": "r2"}'


# ---- a whole plan


CRITERIA = "## Description\nWrite hello.txt.\n\n## Acceptance criteria\n- `$ test -s hello.txt`\n"


def shell(command: str, **usage: int) -> scripted.Turn:
    return scripted.Turn(calls=[("run_shell_command", {"command": command})], **usage)


def verdict(block: dict[str, Any], **usage: int) -> scripted.Turn:
    return scripted.Turn(text=f"Checked it.\n```json\n{json.dumps(block)}\n```", **usage)


def test_a_plan_run_by_real_gemini_with_a_rejection_and_a_fix(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {str(k): str(v) for k, v in md_plan().items()}
    files["T-001-hello.md"] = md_task("T-001", "Say hello", body=CRITERIA)
    plan_repo = make_repo(tmp_path / "repo", {f"plan/{k}": v for k, v in files.items()})
    script = [
        shell("printf 'hi\\n' > hello.txt", prompt_tokens=1000, thoughts_tokens=30),
        scripted.Turn(text=DONE, prompt_tokens=1200, cached_tokens=700, candidates_tokens=40),
        verdict(REJECT, prompt_tokens=800, candidates_tokens=30),
        shell("printf 'hello\\n' > hello.txt", prompt_tokens=1100, cached_tokens=500),
        scripted.Turn(text=DONE, prompt_tokens=1400, cached_tokens=900, candidates_tokens=45),
        verdict({"verdict": "accept", "concern": "hello.txt says hello."}, prompt_tokens=900),
    ]
    with scripted.ScriptedGemini(script) as api:
        for name, value in gemini_env(tmp_path, api).items():
            monkeypatch.setenv(name, value)
        result = run_cli("run", plan_repo / "plan", "--agent", "gemini")
        assert result.exit_code == 0, result.output
    branch = git(plan_repo, "branch", "--list", "taskhand/run-*", "--format=%(refname:short)")
    assert git(plan_repo, "show", f"{branch.strip()}:hello.txt") == "hello\n"
    # The fix's prompt carries the reviewer's reasons.
    assert REJECT["next_step"] in json.dumps(api.main_requests()[3].body["contents"])
    stats = json.loads(run_cli("stats", "--repo", plan_repo, "--json").output)
    [task] = stats["tasks"]
    prompt, candidates, cached, thoughts = api.served_usage()
    assert (task["units"], task["tokens_in"], task["tokens_out"], task["tokens_cached"]) == (
        4,
        prompt,
        candidates + thoughts,
        cached,
    )
    assert task["tokens_thinking"] == thoughts > 0
    assert task["cost"] > 0 and task["estimated"] is True
