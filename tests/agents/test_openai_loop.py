"""The openai backend against a scripted Chat Completions server: real HTTP, tools, worktree."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from taskhand.agents import prices
from taskhand.agents.base import AgentError
from taskhand.agents.openai.loop import NUDGE, VERDICT_NUDGE, OpenAIAgent
from taskhand.unit import Case, Question, Role, Unit, Usage, Verdict
from tests.fakes.scripted_openai import EMPTY, Delay, Raw, ScriptedOpenAI, Status, reply, tool_call

KEY = "sk-test-key-abcdef123"
PLANTED = "sk-planted-secret-123"


@pytest.fixture
def server() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as scripted:
        yield scripted


@pytest.fixture(autouse=True)
def no_ambient_config(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "TASKHAND_PRICES"):
        monkeypatch.delenv(name, raising=False)


def make_agent(server: ScriptedOpenAI, **options: Any) -> OpenAIAgent:
    settings: dict[str, Any] = {"base_url": server.url, "api_key": KEY, "backoff": 0.0}
    return OpenAIAgent("gpt-4o-mini", **(settings | options))


def make_unit(
    tmp_path: Path,
    prompt: str = "Add greet(name) to greet.py.",
    role: Role = Role.IMPLEMENTER,
    timeout: float = 30.0,
) -> Unit:
    worktree = tmp_path / "worktree"
    worktree.mkdir(exist_ok=True)
    return Unit(role, "T-001", 1, prompt, worktree, timeout)


def call(name: str, arguments: dict[str, Any] | str, **usage: Any) -> dict[str, Any]:
    return reply(tool_calls=[tool_call(name, arguments)], usage=usage or None)


def submit(**fields: Any) -> dict[str, Any]:
    return call("submit_case", fields)


DONE = submit(case="done", resolution="Added greet().")
ACCEPT = call("submit_verdict", {"verdict": "accept", "concern": "greet() works."})
REJECT = {
    "verdict": "reject",
    "category": "weak_test",
    "concern": "The test never calls greet with a name.",
    "evidence": ["test_greet.py:test_greet"],
    "next_step": "Assert greet('ada') == 'hello ada'.",
}


def tool_results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def test_a_task_is_done_through_write_bash_and_submit_case(
    server: ScriptedOpenAI, tmp_path: Path
) -> None:
    program = "def greet(name):\n    return f'hello {name}'\n"
    criteria = [{"criterion": "greets by name", "evidence": "greet.py:greet"}]
    server.add(
        call("write", {"path": "greet.py", "content": program}),
        call("bash", {"command": "python3 -c 'import greet; print(greet.greet(\"ada\"))'"}),
        submit(case="done", resolution="Added greet().", criteria=criteria, workarounds=[]),
    )
    unit = make_unit(tmp_path)

    outcome = make_agent(server).run(unit)

    assert outcome.case is Case.DONE, outcome.failure
    assert outcome.resolution == "Added greet()."
    assert (unit.worktree / "greet.py").read_text() == program
    first, _, last = server.bodies
    assert first["model"] == "gpt-4o-mini"
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert first["messages"][1]["content"] == unit.prompt
    assert "submit_case" in first["messages"][0]["content"]
    offered = {tool["function"]["name"] for tool in first["tools"]}
    assert offered == {"read", "write", "edit", "glob", "grep", "bash", "submit_case"}
    assert tool_results(last)[0].startswith("wrote")
    assert "hello ada" in tool_results(last)[1]
    assert [m["role"] for m in last["messages"]][2:] == ["assistant", "tool"] * 2
    assert outcome.usage == Usage(30, 15, 0, outcome.usage.cost, estimated=True)
    assert outcome.transcript[-1] == {
        "role": "outcome",
        "submission": {
            "case": "done",
            "resolution": "Added greet().",
            "criteria": criteria,
            "workarounds": [],
        },
    }


def test_each_message_reaches_the_units_hook_as_it_happens(
    server: ScriptedOpenAI, tmp_path: Path
) -> None:
    server.add(call("write", {"path": "a.txt", "content": "a\n"}), DONE)
    unit = make_unit(tmp_path)
    told: list[tuple[dict[str, object], int]] = []  # each message, and the requests made by then
    unit.on_message = lambda m: told.append((m, len(server.bodies)))

    outcome = make_agent(server).run(unit)

    assert outcome.case is Case.DONE, outcome.failure
    assert [m for m, _ in told] == outcome.transcript  # every message, in order, as returned
    shown = [(m["role"], asked) for m, asked in told]
    assert shown == [
        ("system", 0),
        ("user", 0),
        ("assistant", 1),
        ("tool", 1),  # the tool's result, before the next request
        ("assistant", 2),
        ("tool", 2),
        ("outcome", 2),
    ]
    assert told[3][0]["ok"] is True  # told whole, with whether the call went well


def test_a_server_error_is_retried_without_counting_a_turn(
    server: ScriptedOpenAI, tmp_path: Path
) -> None:
    server.add(
        Status(500, "upstream broke"),
        reply(
            tool_calls=[tool_call("submit_case", {"case": "done", "resolution": "ok"})],
            usage={"prompt_tokens": 100, "completion_tokens": 20},
        ),
    )

    outcome = make_agent(server, max_turns=1).run(make_unit(tmp_path))

    assert outcome.case is Case.DONE, outcome.failure
    assert len(server.requests) == 2
    assert (outcome.usage.tokens_in, outcome.usage.tokens_out) == (100, 20)
    assert {"role": "retry", "attempt": 1, "error": "HTTP 500: upstream broke"} in (
        outcome.transcript
    )


def test_rate_limits_and_unavailable_are_retried(server: ScriptedOpenAI, tmp_path: Path) -> None:
    server.add(Status(429, "slow down"), Status(503, "overloaded"), DONE)

    outcome = make_agent(server, max_turns=1).run(make_unit(tmp_path))

    assert outcome.case is Case.DONE, outcome.failure
    assert len(server.requests) == 3


def test_empty_answers_are_retried_without_counting_a_turn(
    server: ScriptedOpenAI, tmp_path: Path
) -> None:
    no_choices = reply(usage={"prompt_tokens": None, "completion_tokens": None}) | {"choices": []}
    server.add(EMPTY, no_choices, DONE)

    outcome = make_agent(server, max_turns=1).run(make_unit(tmp_path))

    assert outcome.case is Case.DONE, outcome.failure
    assert len(server.requests) == 3
    # Billed empty answers count; null token counts (some servers send them) count as none.
    assert outcome.usage.tokens_in == 20


def test_spent_retries_end_the_unit_naming_the_last_error(
    server: ScriptedOpenAI, tmp_path: Path
) -> None:
    server.add(*[Status(502, f"bad gateway {n}") for n in range(3)])

    outcome = make_agent(server, retries=2).run(make_unit(tmp_path))

    assert outcome.case is Case.ERROR
    assert outcome.failure == (
        "the provider failed 3 times; the last error: HTTP 502: bad gateway 2"
    )
    assert outcome.usage.tokens_in == 0


def test_connection_errors_are_retried_then_named(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    agent = OpenAIAgent(
        "gpt-4o-mini", base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY, backoff=0.0
    )

    outcome = agent.run(make_unit(tmp_path))

    assert outcome.case is Case.ERROR
    assert outcome.failure.startswith("the provider failed 5 times; the last error: Connection")


def test_a_request_timeout_is_retried(server: ScriptedOpenAI, tmp_path: Path) -> None:
    server.add(Delay(2, DONE), DONE)

    outcome = make_agent(server, request_timeout=0.2, max_turns=1).run(make_unit(tmp_path))

    assert outcome.case is Case.DONE, outcome.failure
    assert {"role": "retry", "attempt": 1, "error": "Request timed out."} in outcome.transcript


def test_a_client_error_fails_the_unit_at_once(server: ScriptedOpenAI, tmp_path: Path) -> None:
    server.add(Status(400, "The model 'gpt-nope' does not exist"), DONE)

    outcome = make_agent(server).run(make_unit(tmp_path))

    assert outcome.case is Case.ERROR
    assert outcome.failure == (
        "the provider refused the request (HTTP 400: The model 'gpt-nope' does not exist)"
    )
    assert len(server.requests) == 1


def test_an_error_without_the_error_shape_is_named_by_its_text(
    server: ScriptedOpenAI, tmp_path: Path
) -> None:
    server.add(Raw(502, "<html>Bad Gateway</html>"), Raw(503, ""), DONE)

    outcome = make_agent(server, max_turns=1).run(make_unit(tmp_path))

    assert outcome.case is Case.DONE, outcome.failure
    retries = [m["error"] for m in outcome.transcript if m.get("role") == "retry"]
    assert retries == ["HTTP 502: <html>Bad Gateway</html>", "HTTP 503: Error code: 503"]


def test_an_answer_that_is_not_json_ends_the_unit(server: ScriptedOpenAI, tmp_path: Path) -> None:
    server.add(Raw(200, "upstream says hello"), DONE)

    outcome = make_agent(server).run(make_unit(tmp_path))

    assert outcome.case is Case.ERROR
    assert outcome.failure.startswith("the provider's answer could not be read: it is not JSON")
    assert len(server.requests) == 1


def test_malformed_tool_arguments_get_a_corrective_result(
    server: ScriptedOpenAI, tmp_path: Path
) -> None:
    server.add(
        call("write", '{"path": "greet.py", "content": '),
        call("submit_case", "{case: done}"),
        DONE,
    )
    unit = make_unit(tmp_path)

    outcome = make_agent(server).run(unit)

    assert outcome.case is Case.DONE, outcome.failure
    results = tool_results(server.bodies[2])
    assert "not valid JSON" in results[0]
    assert "not valid JSON" in results[1]
    assert not (unit.worktree / "greet.py").exists()
    assert [entry.get("ok") for entry in outcome.transcript if entry["role"] == "tool"] == [
        False,
        False,
        True,
    ]


def test_a_silent_answer_gets_one_nudge(server: ScriptedOpenAI, tmp_path: Path) -> None:
    server.add(reply("I added the function."), DONE)

    outcome = make_agent(server).run(make_unit(tmp_path))

    assert outcome.case is Case.DONE, outcome.failure
    nudged = server.bodies[1]["messages"]
    assert nudged[-2] == {"role": "assistant", "content": "I added the function."}
    assert nudged[-1] == {"role": "user", "content": NUDGE}


def test_a_second_silent_answer_is_an_error(server: ScriptedOpenAI, tmp_path: Path) -> None:
    server.add(reply("Done, I think."), call("glob", {"pattern": "**"}), reply("All good."), DONE)

    outcome = make_agent(server).run(make_unit(tmp_path))

    assert outcome.case is Case.ERROR
    assert outcome.failure == "the model answered twice without calling a tool (last: 'All good.')"
    assert len(server.requests) == 3


def test_the_turn_cap_ends_the_unit(server: ScriptedOpenAI, tmp_path: Path) -> None:
    server.add(*[call("bash", {"command": "true"}) for _ in range(3)], DONE)

    outcome = make_agent(server, max_turns=3).run(make_unit(tmp_path))

    assert outcome.case is Case.ERROR
    assert outcome.failure == "the model used all 3 turns without submitting"
    assert len(server.requests) == 3


def test_an_invalid_submission_is_corrected_then_accepted(
    server: ScriptedOpenAI, tmp_path: Path
) -> None:
    server.add(
        submit(case="question", question="Which format?", options=["CSV"]),
        submit(case="done"),
        submit(case="question", question="Which format?", options=["CSV", "JSON", "both"]),
    )

    outcome = make_agent(server).run(make_unit(tmp_path))

    assert outcome.case is Case.QUESTION
    assert outcome.question == Question("Which format?", ["CSV", "JSON", "both"])
    results = tool_results(server.bodies[2])
    assert "2 to 4 options" in results[0]
    assert "needs a resolution" in results[1]


def test_a_failed_outcome_carries_its_reason(server: ScriptedOpenAI, tmp_path: Path) -> None:
    server.add(submit(case="failed", failure="The spec contradicts itself."))

    outcome = make_agent(server).run(make_unit(tmp_path))

    assert outcome.case is Case.FAILED
    assert outcome.failure == "The spec contradicts itself."
    assert outcome.question is None


def test_a_reviewer_is_offered_submit_verdict_and_no_writing_tools(
    server: ScriptedOpenAI, tmp_path: Path
) -> None:
    server.add(call("write", {"path": "x.py", "content": "x = 1\n"}), ACCEPT)
    unit = make_unit(tmp_path, role=Role.EVALUATOR)

    outcome = make_agent(server).run(unit)

    assert outcome.case is Case.DONE, outcome.failure
    first = server.bodies[0]
    offered = {tool["function"]["name"] for tool in first["tools"]}
    assert offered == {"read", "glob", "grep", "bash", "submit_verdict"}
    schema = first["tools"][0]["function"]["parameters"]
    assert schema["required"] == ["verdict", "concern"]
    assert schema["properties"]["verdict"]["enum"] == ["accept", "reject"]
    assert "weak_test" in schema["properties"]["category"]["enum"]
    system = first["messages"][0]["content"]
    assert "review" in system and "run commands" in system and "submit_verdict" in system
    assert "submit_case" not in system
    assert "read-only" in tool_results(server.bodies[1])[0]
    assert not (unit.worktree / "x.py").exists()


def test_a_reviewer_accepts(server: ScriptedOpenAI, tmp_path: Path) -> None:
    server.add(call("bash", {"command": "echo tests pass"}), ACCEPT)

    outcome = make_agent(server).run(make_unit(tmp_path, role=Role.EVALUATOR))

    assert outcome.case is Case.DONE, outcome.failure
    assert outcome.verdict == Verdict(True, concern="greet() works.")
    assert outcome.usage.tokens_in == 20
    assert outcome.transcript[-1] == {
        "role": "outcome",
        "submission": {"verdict": "accept", "concern": "greet() works."},
    }


def test_a_reviewer_rejects_with_category_evidence_and_next_step(
    server: ScriptedOpenAI, tmp_path: Path
) -> None:
    server.add(call("submit_verdict", {**REJECT, "category": "WEAK_TEST"}))

    outcome = make_agent(server).run(make_unit(tmp_path, role=Role.EVALUATOR))

    assert outcome.case is Case.DONE, outcome.failure
    assert outcome.verdict == Verdict.parse(REJECT)
    assert outcome.verdict is not None and not outcome.verdict.accepted


def test_an_invalid_verdict_is_corrected_then_accepted(
    server: ScriptedOpenAI, tmp_path: Path
) -> None:
    server.add(
        call("submit_verdict", {**REJECT, "category": None}),
        call("submit_verdict", "[1, 2]"),
        call("submit_verdict", REJECT),
    )

    outcome = make_agent(server).run(make_unit(tmp_path, role=Role.EVALUATOR))

    assert outcome.case is Case.DONE, outcome.failure
    assert outcome.verdict == Verdict.parse(REJECT)
    first, second = tool_results(server.bodies[2])
    assert first.startswith("error: submit_verdict was not accepted: a reject needs a category")
    assert first.endswith("; call it again")
    assert second == "error: the arguments of submit_verdict must be a JSON object; call it again"


def test_each_role_is_told_which_tool_finishes_it(server: ScriptedOpenAI, tmp_path: Path) -> None:
    server.add(DONE, ACCEPT, ACCEPT, DONE)

    review = make_agent(server).run(make_unit(tmp_path, role=Role.EVALUATOR))
    work = make_agent(server).run(make_unit(tmp_path))

    assert (review.case, work.case) == (Case.DONE, Case.DONE)
    assert review.verdict is not None and work.verdict is None
    assert tool_results(server.bodies[1]) == [
        "error: submit_case is not offered to the evaluator; finish by calling submit_verdict"
    ]
    assert tool_results(server.bodies[3]) == [
        "error: submit_verdict is not offered to the implementer; finish by calling submit_case"
    ]


def test_a_silent_reviewer_is_nudged_toward_submit_verdict(
    server: ScriptedOpenAI, tmp_path: Path
) -> None:
    server.add(reply("It looks fine to me."), reply("Really fine."))

    outcome = make_agent(server).run(make_unit(tmp_path, role=Role.EVALUATOR))

    assert outcome.case is Case.ERROR and outcome.verdict is None
    assert server.bodies[1]["messages"][-1] == {"role": "user", "content": VERDICT_NUDGE}
    assert "submit_verdict" in VERDICT_NUDGE


def test_secrets_are_scrubbed_from_the_verdict(
    server: ScriptedOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_API_KEY", PLANTED)
    server.add(call("submit_verdict", {**REJECT, "concern": f"It prints {PLANTED}."}))

    outcome = make_agent(server).run(make_unit(tmp_path, role=Role.EVALUATOR))

    assert outcome.verdict is not None
    assert outcome.verdict.concern == "It prints [redacted]."
    assert PLANTED not in json.dumps(outcome.transcript)


def test_a_cost_the_provider_reports_is_used_as_is(server: ScriptedOpenAI, tmp_path: Path) -> None:
    server.add(
        call("bash", {"command": "true"}, prompt_tokens=1000, completion_tokens=50, cost=0.002),
        reply(
            tool_calls=[tool_call("submit_case", {"case": "done", "resolution": "ok"})],
            usage={
                "prompt_tokens": 1200,
                "completion_tokens": 60,
                "prompt_tokens_details": {"cached_tokens": 1000},
                "cost": 0.0005,
            },
        ),
    )

    outcome = make_agent(server).run(make_unit(tmp_path))

    assert outcome.usage == Usage(2200, 110, 1000, outcome.usage.cost, estimated=False)
    assert outcome.usage.cost == pytest.approx(0.0025)


def test_without_a_reported_cost_the_price_table_estimates_it(
    server: ScriptedOpenAI, tmp_path: Path
) -> None:
    server.add(
        call(
            "submit_case",
            {"case": "done", "resolution": "ok"},
            prompt_tokens=1_000_000,
            completion_tokens=100_000,
            prompt_tokens_details={"cached_tokens": 400_000},
        )
    )

    outcome = make_agent(server).run(make_unit(tmp_path))

    # gpt-4o-mini: 600k fresh at $0.15, 400k cached at $0.075, 100k out at $0.60 per million.
    assert outcome.usage == Usage(1_000_000, 100_000, 400_000, outcome.usage.cost, True)
    assert outcome.usage.cost == pytest.approx(0.18)


def test_an_unpriced_model_costs_zero_flagged_estimated(
    server: ScriptedOpenAI, tmp_path: Path
) -> None:
    server.add(DONE, DONE)
    priced = make_agent(server).run(make_unit(tmp_path))
    unit = make_unit(tmp_path)
    unit.model = "local/unknown-model"

    outcome = make_agent(server).run(unit)

    assert priced.usage.cost > 0
    assert priced.usage.estimated
    assert server.bodies[-1]["model"] == "local/unknown-model"
    assert (outcome.usage.cost, outcome.usage.estimated) == (0.0, True)


def test_prices_come_from_a_file_named_by_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(
        '["my-model"]\ninput = 1.0\noutput = 2.0\n\n["gpt-4o"]\ninput = 9\noutput = 9\n'
    )

    table = prices.table({"TASKHAND_PRICES": str(path)})

    assert table["my-model"] == prices.Price(1.0, 2.0)
    assert table["gpt-4o"] == prices.Price(9.0, 9.0)
    assert table["gpt-4o-mini"] == prices.DEFAULT["gpt-4o-mini"]
    assert prices.estimate("openrouter/my-model", Usage(1_000_000, 500_000, 0), table) == 2.0
    assert prices.estimate("nobody-knows", Usage(10, 10)) is None


def test_a_bad_price_file_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"my-model": {"input": "cheap", "output": 1}}))

    with pytest.raises(AgentError, match=r"model 'my-model' \(fix: write entries like"):
        OpenAIAgent("my-model", api_key=KEY, env={"TASKHAND_PRICES": str(path)})


def test_a_missing_key_is_refused_at_construction() -> None:
    with pytest.raises(AgentError) as refused:
        OpenAIAgent("gpt-4o", env={})

    assert str(refused.value) == (
        "OPENAI_API_KEY is not set (fix: export it, or set a base URL of a local server "
        "and any key)"
    )


def test_key_and_base_url_come_from_the_environment(server: ScriptedOpenAI, tmp_path: Path) -> None:
    server.add(DONE)
    agent = OpenAIAgent("gpt-4o", env={"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": server.url})

    outcome = agent.run(make_unit(tmp_path))

    assert outcome.case is Case.DONE, outcome.failure
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"


def test_an_organization_and_a_project_from_the_environment_are_sent(
    server: ScriptedOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.add(DONE, DONE)
    monkeypatch.delenv("OPENAI_ORG_ID", raising=False)
    monkeypatch.delenv("OPENAI_PROJECT_ID", raising=False)
    make_agent(server).run(make_unit(tmp_path))
    monkeypatch.setenv("OPENAI_ORG_ID", "org-1")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-2")
    make_agent(server).run(make_unit(tmp_path))

    plain, scoped = (r.headers for r in server.requests)
    assert "openai-organization" not in plain
    assert "openai-project" not in plain
    assert (scoped["openai-organization"], scoped["openai-project"]) == ("org-1", "proj-2")


def test_secrets_never_travel(
    server: ScriptedOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_API_KEY", PLANTED)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    unit = make_unit(tmp_path, prompt=f"Use the key {PLANTED} (and never {KEY}).")
    (unit.worktree / "config.txt").write_text(f"key={PLANTED}\nother={KEY}\n")
    server.add(
        call("read", {"path": "config.txt"}),
        call("bash", {"command": f"env; echo ${{MY_API_KEY:-unset}}; echo {PLANTED}"}),
        submit(case="done", resolution=f"Configured {PLANTED}."),
    )
    agent = OpenAIAgent("gpt-4o", base_url=server.url, backoff=0.0)

    outcome = agent.run(unit)

    assert outcome.case is Case.DONE, outcome.failure
    assert "[redacted]" in tool_results(server.bodies[2])[0]
    assert "unset" in tool_results(server.bodies[2])[1]
    for request in server.requests:
        assert request.headers.pop("authorization") == f"Bearer {KEY}"
        seen = request.raw.decode() + json.dumps(request.headers)
        assert PLANTED not in seen
        assert KEY not in seen
    kept = json.dumps(outcome.transcript) + outcome.resolution + outcome.failure
    assert PLANTED not in kept
    assert KEY not in kept
    assert KEY not in repr(agent) + repr(agent.redact)


def test_a_slow_provider_runs_into_the_unit_time_limit(
    server: ScriptedOpenAI, tmp_path: Path
) -> None:
    server.add(Delay(10, DONE))
    started = time.monotonic()

    outcome = make_agent(server).run(make_unit(tmp_path, timeout=0.5))

    assert outcome.case is Case.ERROR
    assert outcome.failure == "the unit ran out of time"
    assert time.monotonic() - started < 3


def test_a_slow_command_runs_into_the_unit_time_limit(
    server: ScriptedOpenAI, tmp_path: Path
) -> None:
    server.add(call("bash", {"command": "sleep 10"}), DONE)
    started = time.monotonic()

    outcome = make_agent(server).run(make_unit(tmp_path, timeout=0.8))

    assert outcome.case is Case.ERROR
    assert outcome.failure == "the unit ran out of time"
    assert time.monotonic() - started < 3
    assert "timed out" in str(outcome.transcript[-1]["content"])


def test_the_case_maps_each_criterion_to_its_evidence(
    server: ScriptedOpenAI, tmp_path: Path
) -> None:
    server.add(
        submit(
            case="done",
            resolution="Added greet().",
            criteria=[{"criterion": "greets by name", "evidence": "greet.py:greet"}],
            workarounds=["no i18n"],
            uncertainties=["unicode names untested"],
        )
    )
    outcome = make_agent(server).run(make_unit(tmp_path))
    assert outcome.report.criteria[0].evidence == "greet.py:greet"
    assert (outcome.report.workarounds, outcome.report.uncertainties) == (
        ["no i18n"],
        ["unicode names untested"],
    )
