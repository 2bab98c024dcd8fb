"""The real `aider` (from .venv-aider, made by `./dev test`, or TASKHAND_AIDER) against a scripted
Chat Completions server on 127.0.0.1: SEARCH/REPLACE edits, a reviewer that reads the file it
names, a plan with a rejection and a fix, nothing left in the workspace or the home folder, and
its usage and dollars in `taskhand stats`."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from taskhand.agents.cli import aider
from taskhand.agents.cli.backend import NUDGE, CliAgent
from taskhand.agents.prices import Price
from taskhand.host.sandbox import bwrap_problem
from taskhand.unit import Case, Role, Sandbox, Unit
from tests import ROOT
from tests.agents.test_cli import unit
from tests.conftest import RunCli
from tests.fakes import scripted_openai as openai
from tests.plans import md_plan, md_task
from tests.runs import git, make_repo

VARIABLE = "TASKHAND_AIDER"
INSTALL = "./dev test, or python3 -m venv .venv-aider && .venv-aider/bin/pip install aider-chat"
MODEL = "scripted-coder"  # unknown to aider: its prices come from our table, via the metadata
PRICE = Price(2.0, 8.0)
SHOWN = re.compile(r"^hello\.txt\n```\n(.*?)^```", re.M | re.S)  # a file as aider shows it
DONE = 'Done.\n\n```json\n{"case": "done", "resolution": "hello.txt says hi"}\n```\n'


def real_aider() -> Path:
    """The installed aider, from TASKHAND_AIDER or .venv-aider; the test is skipped without it."""
    found = Path(os.environ.get(VARIABLE) or ROOT / ".venv-aider" / "bin" / "aider")
    if not os.access(found, os.X_OK):
        pytest.skip(f"aider is not installed at {found} (fix: {INSTALL})")
    return found


def on_path() -> str:
    """PATH with aider's folder last: the rest of its venv (python, pip) stays behind the
    system's. (A link elsewhere would not do: the sandbox shows a program where it resolves.)"""
    return f"{os.environ['PATH']}{os.pathsep}{real_aider().parent}"


def edit(search: str, replace_with: str, then: str = DONE) -> str:
    """A reply in aider's diff format: one SEARCH/REPLACE block on hello.txt, then `then`."""
    block = f"hello.txt\n```\n<<<<<<< SEARCH\n{search}=======\n{replace_with}>>>>>>> REPLACE\n```"
    return f"I will change hello.txt.\n\n{block}\n\n{then}"


def verdict(accept: bool, concern: str) -> str:
    body = {"verdict": "accept" if accept else "reject", "concern": concern, "evidence": []}
    if not accept:
        body |= {"category": "acceptance_gap", "next_step": "leave one line: hi"}
    return f"I read it.\n\n```json\n{json.dumps(body)}\n```\n"


class Model:
    """Answers aider as a model would, from what each request shows, and keeps the usage it
    sent. It cannot see a file until aider adds it to the chat, which aider does for a file
    the prompt or a reply names: so it first asks for hello.txt, then edits or judges what the
    file holds; a writer told of the rejection fixes it."""

    def __init__(self) -> None:
        self.sent: list[tuple[int, int]] = []

    def __call__(self, asked: openai.Recorded) -> openai.Step:
        messages = asked.body["messages"]
        said = "\n".join(str(m["content"]) for m in messages)
        shown = [
            found
            for m in messages
            if m["role"] == "user"
            for found in SHOWN.findall(str(m["content"]))
            if not found.startswith("<<<<<<<")
        ]
        if not shown:
            text = "Let me read hello.txt first."
        elif "Your verdict" in said:  # the evaluator's prompt
            once = shown[-1] == "hi\n"
            text = verdict(once, "hello.txt says hi once" if once else "hello.txt says hi twice")
        elif "says hi twice" in said:  # the retry, told why
            text = edit(shown[-1], "hi\n")
        else:
            text = edit(shown[-1], "hi\nhi\n")
        usage = (1000 + 100 * len(self.sent), 40 + len(self.sent))
        self.sent.append(usage)
        return openai.reply(text, usage={"prompt_tokens": usage[0], "completion_tokens": usage[1]})


def workspace(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "work", {"README.md": "# project\n", "hello.txt": "hello\n"})


def agent(tmp_path: Path, api: openai.ScriptedOpenAI, home: Path) -> CliAgent:
    env = {
        **os.environ,
        "PATH": on_path(),
        "HOME": str(home),
        "OPENAI_BASE_URL": api.url,
        "OPENAI_API_KEY": "test-key-local",
    }
    return CliAgent("aider", model=MODEL, env=env, prices={MODEL: PRICE})


def confined(work: Path, role: Role = Role.IMPLEMENTER) -> Callable[[str], Unit]:
    """A unit in `work`, in bubblewrap where the machine has it."""
    sandbox = Sandbox("bwrap") if not bwrap_problem() else Sandbox()
    return lambda prompt: replace(unit(work, prompt, role, timeout=120), sandbox=sandbox)


def leftovers(work: Path) -> list[str]:
    """What git sees in the worktree besides hello.txt, ignored files included."""
    status = git(work, "status", "--porcelain", "--ignored", "--untracked-files=all")
    return [line[3:] for line in status.splitlines() if line[3:] != "hello.txt"]


def test_real_aider_edits_with_search_replace_and_leaves_nothing_else(tmp_path: Path) -> None:
    work, home = workspace(tmp_path), tmp_path / "home"
    home.mkdir()
    model = Model()
    with openai.ScriptedOpenAI(respond=model) as api:
        outcome = agent(tmp_path, api, home).run(confined(work)("Make hello.txt say hi."))
    assert (outcome.case, outcome.resolution) == (Case.DONE, "hello.txt says hi"), outcome.failure
    assert (work / "hello.txt").read_text() == "hi\nhi\n"
    assert leftovers(work) == [] and not (work / "Done.").exists()
    assert list(home.iterdir()) == []  # aider's home was the unit's own
    body = api.requests[0].body
    assert body["model"] == MODEL and body.get("stream") is not True
    assert "SEARCH" in json.dumps(body["messages"])  # the diff format's instructions
    [(sent, received)] = model.sent  # the prompt names hello.txt: aider shows it at once
    usage = outcome.usage
    assert (usage.tokens_in, usage.tokens_out) == (sent, received)
    assert usage.cost == pytest.approx((sent * 2.0 + received * 8.0) / 1e6)
    assert not usage.estimated  # aider priced it, from the metadata file we wrote


def test_real_aider_reviewer_reads_the_file_it_names_and_writes_nothing(tmp_path: Path) -> None:
    work, home = workspace(tmp_path), tmp_path / "home"
    home.mkdir()
    (work / "hello.txt").write_text("hi\n")
    with openai.ScriptedOpenAI(respond=Model()) as api:
        review = confined(work, Role.EVALUATOR)("Your verdict on the change, please.")
        outcome = agent(tmp_path, api, home).run(review)
    assert outcome.verdict is not None, outcome.failure
    assert outcome.verdict.accepted and outcome.verdict.concern == "hello.txt says hi once"
    assert len(api.requests) == 2  # its reply named hello.txt: aider added it and asked again
    assert (work / "hello.txt").read_text() == "hi\n" and leftovers(work) == []
    assert list(home.iterdir()) == []


def test_usage_from_the_analytics_events_and_cache_hits_from_the_text() -> None:
    stdout = (
        '{"event": "launched", "properties": {}, "user_id": "u", "time": 1}\n'
        "Reply one.\nTokens: 2.3k sent, 1.1k cache hit, 150 received. "
        "Cost: $0.0042 message, $0.0042 session.\n"
        '{"event": "message_send", "properties": {"prompt_tokens": 2345, "completion_tokens": '
        '150, "cost": 0.00421, "total_cost": 0.00421}, "user_id": "u", "time": 2}\n'
        "Reply two.\nTokens: 12k sent, 9 received. Cost: $0.02 message, $0.03 session.\n"
        '{"event": "message_send", "properties": {"prompt_tokens": 12001, "completion_tokens": '
        '9, "cost": 0.0241, "total_cost": 0.0283}, "user_id": "u", "time": 3}\n'
    )
    report = aider.parse(stdout)
    assert (report.usage.tokens_in, report.usage.tokens_out) == (14346, 159)
    assert report.usage.tokens_cached == 1100 and report.priced
    assert report.usage.cost == pytest.approx(0.02831)
    assert '"event"' not in report.text and "Reply two." in report.text


def test_no_cost_printed_leaves_the_dollars_to_the_price_table() -> None:
    """aider prints no cost for a model it has no prices for: the backend estimates then."""
    stdout = (
        "Reply.\nTokens: 1.2k sent, 56 received.\n"
        '{"event": "message_send", "properties": {"prompt_tokens": 1234, "completion_tokens": '
        '56, "cost": 0.0, "total_cost": 0.0}, "user_id": "u", "time": 2}\n'
    )
    report = aider.parse(stdout)
    assert (report.usage.tokens_in, report.usage.tokens_out, report.usage.cost) == (1234, 56, 0)
    assert not report.priced


CRITERIA = (
    "## Description\nMake hello.txt say hi.\n\n## Acceptance criteria\n"
    "- `$ grep -q hi hello.txt`\n- hello.txt says hi once\n"
)


def test_a_plan_run_by_real_aider_with_a_rejection_and_a_fix(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = {f"plan/{k}": str(v) for k, v in md_plan().items()}
    plan["plan/T-001-hello.md"] = md_task("T-001", "Say hi", body=CRITERIA)
    repo = make_repo(
        tmp_path / "repo", {"README.md": "# project\n", "hello.txt": "hello\n", **plan}
    )
    home = tmp_path / "home"
    home.mkdir()
    prices = tmp_path / "prices.toml"
    prices.write_text(f'["{MODEL}"]\ninput = 2.0\noutput = 8.0\n')
    model = Model()
    with openai.ScriptedOpenAI(respond=model) as api:
        for name, value in {
            "PATH": on_path(),
            "HOME": str(home),
            "OPENAI_BASE_URL": api.url,
            "OPENAI_API_KEY": "test-key-local",
            "TASKHAND_PRICES": str(prices),
        }.items():
            monkeypatch.setenv(name, value)
        result = run_cli("run", repo / "plan", "--agent", "aider", "--model", MODEL)
    assert result.exit_code == 0, result.output
    branch = git(repo, "branch", "--list", "taskhand/run-*", "--format=%(refname:short)").strip()
    assert git(repo, "show", f"{branch}:hello.txt") == "hi\n"
    changed = git(repo, "diff", "--name-only", f"main..{branch}").split()
    assert changed == ["hello.txt"]  # no Done., no .aider* files, no tags cache
    assert list(home.iterdir()) == []
    ledger = json.loads(run_cli("ledger", "T-001", "--repo", repo, "--json").output)
    assert "says hi twice" in json.dumps(ledger)  # the reviewer's rejection, then the fix
    stats = json.loads(run_cli("stats", "--repo", repo, "--json").output)
    [task] = stats["tasks"]
    sent, received = sum(s for s, _ in model.sent), sum(r for _, r in model.sent)
    assert (task["units"], task["tokens_in"], task["tokens_out"]) == (4, sent, received)
    assert task["cost"] == pytest.approx((sent * 2.0 + received * 8.0) / 1e6, rel=1e-6)
    assert task["estimated"] is False


def test_real_aider_is_nudged_once_on_its_restored_chat(tmp_path: Path) -> None:
    work, home = workspace(tmp_path), tmp_path / "home"
    home.mkdir()
    first = openai.reply(edit("hello\n", "hi\n", then="All done."))
    block = '```json\n{"case": "done", "resolution": "it says hi"}\n```'  # names no file
    with openai.ScriptedOpenAI(first, openai.reply(block)) as api:
        outcome = agent(tmp_path, api, home).run(confined(work)("Make hello.txt say hi."))
    assert (outcome.case, outcome.resolution) == (Case.DONE, "it says hi"), outcome.failure
    assert len(api.requests) == 2
    nudged = api.requests[-1].body["messages"]
    assert nudged[-1]["content"].startswith(NUDGE)
    assert "All done." in json.dumps(nudged)  # the first run's reply, restored
    assert (outcome.usage.tokens_in, outcome.usage.tokens_out) == (20, 10)  # both runs
    assert (work / "hello.txt").read_text() == "hi\n" and leftovers(work) == []
