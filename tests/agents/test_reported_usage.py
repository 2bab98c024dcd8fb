"""Usage exactly as each agent reports it: cache writes and thinking tokens read from output
shaped as the real programs print it, kept inside the totals (never counted twice), and priced
at their own rates when the agent gives no dollars."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from acp.schema import Usage as AcpUsage

from taskhand.agents import prices
from taskhand.agents.acp.backend import reported_usage
from taskhand.agents.base import AgentError
from taskhand.agents.cli.aider import parse as parse_aider_run
from taskhand.agents.cli.output import (
    parse_aider,
    parse_claude,
    parse_codex,
    parse_gemini,
    parse_opencode,
)
from taskhand.agents.openai.loop import OpenAIAgent
from taskhand.unit import Case, Role, Unit, Usage
from tests.agents import test_acp as acp_test
from tests.agents import test_aider as aider_test
from tests.agents.test_cli import AIDER, CLAUDE_DONE, CODEX_DONE, GEMINI, opencode_events
from tests.fakes import scripted_openai as openai
from tests.fakes.scripted_openai import ScriptedOpenAI, reply, tool_call


def parts(usage: Usage) -> tuple[int, int, int, int, int]:
    return (
        usage.tokens_in,
        usage.tokens_out,
        usage.tokens_cached,
        usage.tokens_cache_write,
        usage.tokens_thinking,
    )


def test_claude_cache_writes_and_thinking_from_its_result() -> None:
    # claude 2.1.332's result, with a thinking model's figures in both its usage objects
    shown = CLAUDE_DONE.replace('"thinkingTokens":0', '"thinkingTokens":35').replace(
        '"thinking_tokens":0', '"thinking_tokens":35'
    )
    report = parse_claude(shown)
    # Anthropic counts input apart from cache reads and writes, and thinking inside output.
    assert parts(report.usage) == (2200 + 300 + 400, 90, 300, 400, 35)
    without_model_usage = json.loads(shown) | {"modelUsage": {}}
    assert parts(parse_claude(json.dumps(without_model_usage)).usage) == parts(report.usage)


def test_codex_cache_writes_and_reasoning_from_its_turn() -> None:
    shown = CODEX_DONE.replace('"cache_write_input_tokens":0', '"cache_write_input_tokens":200')
    shown = shown.replace('"reasoning_output_tokens":0', '"reasoning_output_tokens":64')
    # codex's input counts cached and written tokens, its output the reasoning ones.
    assert parts(parse_codex(shown).usage) == (2300, 90, 1100, 200, 64)


def test_gemini_thoughts_are_thinking_inside_output() -> None:
    assert parts(parse_gemini(GEMINI).usage) == (24939, 40 + 154, 21263, 0, 154)


def test_opencode_cache_writes_and_reasoning_per_step() -> None:
    # each of two steps: input 1200 fresh, 3000 read, 5 written; output 80 plus 10 reasoning
    report = parse_opencode(opencode_events("Done."))
    assert parts(report.usage) == (2 * 4205, 2 * 90, 2 * 3000, 2 * 5, 2 * 10)
    assert report.usage.cost == pytest.approx(0.015)


# aider 0.86.2's lines for replies from an Anthropic-style server: "sent" counts the cache
# writes; with both hits and writes the cost goes on a line of its own.
ANTHROPIC_AIDER = (
    "Tokens: 4.1k sent, 2.5k cache write, 42 received. Cost: $0.01 message, $0.01 session.\n"
    "Tokens: 1.7k sent, 700 cache write, 200 cache hit, 40 received.\n"
    "Cost: $0.0041 message, $0.0141 session.\n"
)


def test_aider_cache_writes_from_its_usage_lines() -> None:
    assert parts(parse_aider(AIDER).usage) == (3000 + 12450, 42 + 3200, 1200, 0, 0)
    report = parse_aider(ANTHROPIC_AIDER)
    assert parts(report.usage) == (5800, 82, 200, 3200, 0)
    assert report.usage.cost == pytest.approx(0.0141) and report.priced


def test_aider_events_give_the_exact_tokens_and_the_text_the_cache_parts() -> None:
    lines = ANTHROPIC_AIDER.splitlines()
    stdout = "\n".join(
        [
            lines[0],
            '{"event": "message_send", "properties": {"prompt_tokens": 4120, "completion_tokens":'
            ' 42, "cost": 0.01, "total_cost": 0.01}, "user_id": "u", "time": 2}',
            *lines[1:],
            '{"event": "message_send", "properties": {"prompt_tokens": 1700, "completion_tokens":'
            ' 40, "cost": 0.0041, "total_cost": 0.0141}, "user_id": "u", "time": 3}',
        ]
    )
    report = parse_aider_run(stdout)
    assert parts(report.usage) == (4120 + 1700, 82, 200, 3200, 0)
    assert report.usage.cost == pytest.approx(0.0141)


def test_real_aider_reports_cache_writes_and_its_own_dollars(tmp_path: Path) -> None:
    class Cached(aider_test.Model):
        """The scripted model, its usage as an Anthropic-style server reports it."""

        def __call__(self, asked: openai.Recorded) -> openai.Step:
            said = super().__call__(asked)
            assert isinstance(said, dict)
            usage = {"prompt_tokens": 1000, "completion_tokens": 40}
            usage |= {"cache_creation_input_tokens": 700, "cache_read_input_tokens": 200}
            return reply(said["choices"][0]["message"]["content"], usage=usage)

    work, home = aider_test.workspace(tmp_path), tmp_path / "home"
    home.mkdir()
    with openai.ScriptedOpenAI(respond=Cached()) as api:
        agent = aider_test.agent(tmp_path, api, home)
        outcome = agent.run(aider_test.confined(work)("Make hello.txt say hi."))
    assert outcome.case is Case.DONE, outcome.failure
    # aider's sent: 1000 prompt (the 200 read among them) and the 700 written.
    assert parts(outcome.usage) == (1700, 40, 200, 700, 0)
    # Its own dollars, writes at 1.25 times input and reads at 0.1 (aider's Anthropic rule):
    # 1000 at $2, 700 at $2.50, 200 at $0.20, 40 out at $8 per million.
    expected = (1000 * 2.0 + 700 * 2.5 + 200 * 0.2 + 40 * 8.0) / 1e6
    assert outcome.usage.cost == pytest.approx(expected, rel=0.01)
    assert not outcome.usage.estimated


def test_acp_parts_are_added_in_only_when_its_total_says_they_are_apart() -> None:
    apart = AcpUsage(
        input_tokens=1000,
        output_tokens=200,
        cached_read_tokens=3000,
        cached_write_tokens=500,
        thought_tokens=80,
        total_tokens=1000 + 200 + 3000 + 500 + 80,
    )
    assert parts(reported_usage(apart)) == (4500, 280, 3000, 500, 80)
    inside = AcpUsage(
        input_tokens=4500,
        output_tokens=280,
        cached_read_tokens=3000,
        cached_write_tokens=500,
        thought_tokens=80,
        total_tokens=4500 + 280,
    )
    assert parts(reported_usage(inside)) == (4500, 280, 3000, 500, 80)


def test_an_acp_agents_cache_writes_and_thoughts_over_the_protocol(tmp_path: Path) -> None:
    outcome = acp_test.run("thinking", tmp_path)
    assert outcome.case is Case.DONE, outcome.failure
    # 1000 in and 200 out, the cache parts and the thoughts apart as its total shows.
    assert parts(outcome.usage) == (4500, 280, 3000, 500, 80)


def test_openai_reasoning_and_anthropic_style_cache_writes(tmp_path: Path) -> None:
    submit = tool_call("submit_case", {"case": "done", "resolution": "ok"})
    with ScriptedOpenAI() as server:
        server.add(
            reply(
                tool_calls=[tool_call("bash", {"command": "true"})],
                usage={
                    "prompt_tokens": 5000,
                    "completion_tokens": 300,
                    "prompt_tokens_details": {"cached_tokens": 0},
                    "cache_creation_input_tokens": 4000,  # a LiteLLM proxy before Claude
                    "completion_tokens_details": {"reasoning_tokens": 120},
                },
            ),
            reply(
                tool_calls=[submit],
                usage={
                    "prompt_tokens": 5400,
                    "completion_tokens": 50,
                    "prompt_tokens_details": {"cached_tokens": 4000, "cache_write_tokens": 300},
                    "completion_tokens_details": {"reasoning_tokens": None},
                },
            ),
        )
        agent = OpenAIAgent("claude-sonnet-4-5", base_url=server.url, api_key="k", backoff=0.0)
        worktree = tmp_path / "w"
        worktree.mkdir()
        outcome = agent.run(Unit(Role.IMPLEMENTER, "T-001", 1, "Say done.", worktree, 30.0))
    assert outcome.case is Case.DONE, outcome.failure
    assert parts(outcome.usage) == (10400, 350, 4000, 4300, 120)
    # claude-sonnet-4-5: 2100 fresh at $3, 4000 read at $0.30, 4300 written at $3.75, 350 out
    # at $15 per million.
    expected = (2100 * 3.0 + 4000 * 0.30 + 4300 * 3.75 + 350 * 15.0) / 1e6
    assert outcome.usage.cost == pytest.approx(expected) and outcome.usage.estimated


def test_openai_cache_writes_apart_from_prompt_tokens_are_added_in(tmp_path: Path) -> None:
    # A server whose total_tokens shows the writes outside prompt_tokens (Anthropic's count).
    submit = tool_call("submit_case", {"case": "done", "resolution": "ok"})
    apart = {"prompt_tokens": 1200, "completion_tokens": 50, "cache_creation_input_tokens": 3000}
    with ScriptedOpenAI() as server:
        server.add(reply(tool_calls=[submit], usage=apart | {"total_tokens": 4250}))
        agent = OpenAIAgent("claude-haiku-4-5", base_url=server.url, api_key="k", backoff=0.0)
        worktree = tmp_path / "w"
        worktree.mkdir()
        outcome = agent.run(Unit(Role.IMPLEMENTER, "T-001", 1, "Say done.", worktree, 30.0))
    assert parts(outcome.usage) == (4200, 50, 0, 3000, 0)
    assert outcome.usage.cost == pytest.approx((1200 * 1.0 + 3000 * 1.25 + 50 * 5.0) / 1e6)


def test_cache_writes_cost_their_own_price_and_thinking_bills_once() -> None:
    usage = Usage(1_000_000, 100_000, 600_000, tokens_cache_write=300_000, tokens_thinking=40_000)
    # claude-haiku-4-5: 100k fresh at $1, 600k read at $0.10, 300k written at $1.25, 100k out
    # (thinking among them) at $5.
    assert prices.estimate("claude-haiku-4-5", usage) == pytest.approx(0.1 + 0.06 + 0.375 + 0.5)
    # A model whose price has no cache-write rate bills writes as input.
    assert prices.estimate("gpt-4o", usage) == pytest.approx(
        (100_000 * 2.5 + 600_000 * 1.25 + 300_000 * 2.5 + 100_000 * 10) / 1e6
    )


def test_a_price_file_may_give_a_cache_write_rate(tmp_path: Path) -> None:
    path = tmp_path / "prices.toml"
    path.write_text('["my-claude"]\ninput = 2\noutput = 10\ncached = 0.2\ncache_write = 2.5\n')
    table = prices.load(path)
    assert table["my-claude"] == prices.Price(2.0, 10.0, 0.2, 2.5)
    usage = Usage(1_000_000, 0, 0, tokens_cache_write=1_000_000)
    assert prices.estimate("my-claude", usage, table) == pytest.approx(2.5)
    path.write_text('["my-claude"]\ninput = 2\noutput = 10\ncache_write = "a lot"\n')
    with pytest.raises(AgentError, match="my-claude"):
        prices.load(path)
