"""The cli backends: parsers on output recorded from the real programs, flags and process
handling through stand-in programs, and the real `claude` and `codex` (from .npm-agents or PATH)
against scripted servers on 127.0.0.1."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from taskhand import agents
from taskhand.agents.base import AgentError
from taskhand.agents.cli import outcome_tool, presets
from taskhand.agents.cli.backend import NUDGE, VERDICT_NUDGE, CliAgent
from taskhand.agents.cli.outcome import parse_outcome
from taskhand.agents.cli.output import (
    parse_aider,
    parse_claude,
    parse_codex,
    parse_gemini,
    parse_opencode,
)
from taskhand.agents.prices import Price
from taskhand.unit import Case, Question, Role, Unit, Verdict
from tests import ROOT
from tests.fakes import scripted_anthropic as anthropic
from tests.fakes import scripted_responses as responses
from tests.gates.test_checks import gone
from tests.runs import make_repo

AGENT_BIN = ROOT / ".npm-agents" / "node_modules" / ".bin"
INSTALL = "npm install --prefix .npm-agents @anthropic-ai/claude-code @openai/codex"
DONE = 'Wrote hello.txt.\n\n```json\n{"case": "done", "resolution": "added hello.txt"}\n```'
ACCEPT = (
    'Checked it.\n\n```json\n{"verdict": "accept", "concern": "hello.txt is there", '
    '"evidence": ["hello.txt"]}\n```'
)

# ---- output recorded from claude 2.1.332 and codex-cli 0.171.0 against the scripted servers

CLAUDE_DONE = (
    '{"duration_api_ms":51,"stop_reason":"end_turn","session_id":"56d7f4ca-7145-484a-8de6-bb3a216'
    'be5af","total_cost_usd":0.012660000000000001,"usage":{"input_tokens":2200,"cache_creation_in'
    'put_tokens":400,"cache_read_input_tokens":300,"output_tokens":90,"output_tokens_details":{"t'
    'hinking_tokens":0},"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"servi'
    'ce_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_toke'
    'ns":0},"inference_geo":"","iterations":[],"speed":"standard","fallback_credit":null},"modelU'
    'sage":{"claude-opus-5-5":{"inputTokens":2200,"outputTokens":90,"cacheReadInputTokens":300,"c'
    'acheCreationInputTokens":400,"webSearchRequests":0,"costUSD":0.012660000000000001,"contextWi'
    'ndow":1000000,"maxOutputTokens":128000,"thinkingTokens":0,"cacheCreationEphemeral5mInputToke'
    'ns":0,"cacheCreationEphemeral1hInputTokens":0,"canonicalModel":"claude-opus-5-5","provider":'
    '"firstParty","costBasis":"list"}},"permission_denials":[],"terminal_reason":"completed","fas'
    't_mode_state":"off","fast_mode_disabled_reason":"sdk_opt_in_required","subagent_stats":{"spa'
    'wned":0,"requested":{"background":0,"foreground":0,"unset":0},"started_in_background":0,"max'
    '_depth":0,"spawned_by_subagents":0,"completed":0,"failed":0,"killed":{"parent":0,"user":0,"s'
    'ystem":0},"refused":{"depth_limit":0,"concurrency_limit":0,"budget":0},"by_type":{}},"safety'
    '_stops":0,"is_error":false,"num_turns":2,"subtype":"success","api_error_status":null,"result'
    '":"Wrote hello.txt.\\n\\n```json\\n{\\"case\\": \\"done\\", \\"resolution\\": \\"added hello'
    '.txt\\"}\\n```","ttft_ms":223,"type":"result","duration_ms":332,"uuid":"30a27ee9-81db-4199-8'
    '515-831161beeefc","ttft_stream_ms":220,"time_to_request_ms":206,"first_content_frame_ms":221'
    ',"queued_turn_count":0,"result_index":0}\n'
)

CLAUDE_MAX_TURNS = (
    '{"duration_api_ms":35,"stop_reason":"tool_use","session_id":"4582ffb3-437c-457d-91a6-9600921'
    '80f85","total_cost_usd":0.0008,"usage":{"input_tokens":100,"cache_creation_input_tokens":0,"'
    'cache_read_input_tokens":0,"output_tokens":20,"output_tokens_details":{"thinking_tokens":0},'
    '"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":"standard"'
    ',"cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"inference_g'
    'eo":"","iterations":[],"speed":"standard","fallback_credit":null},"modelUsage":{"claude-opus'
    '-5-5":{"inputTokens":100,"outputTokens":20,"cacheReadInputTokens":0,"cacheCreationInputToken'
    's":0,"webSearchRequests":0,"costUSD":0.0008,"contextWindow":1000000,"maxOutputTokens":128000'
    ',"thinkingTokens":0,"cacheCreationEphemeral5mInputTokens":0,"cacheCreationEphemeral1hInputTo'
    'kens":0,"canonicalModel":"claude-opus-5-5","provider":"firstParty","costBasis":"list"}},"per'
    'mission_denials":[],"terminal_reason":"max_turns","fast_mode_state":"off","fast_mode_disable'
    'd_reason":"sdk_opt_in_required","subagent_stats":{"spawned":0,"requested":{"background":0,"f'
    'oreground":0,"unset":0},"started_in_background":0,"max_depth":0,"spawned_by_subagents":0,"co'
    'mpleted":0,"failed":0,"killed":{"parent":0,"user":0,"system":0},"refused":{"depth_limit":0,"'
    'concurrency_limit":0,"budget":0},"by_type":{}},"safety_stops":0,"is_error":true,"num_turns":'
    '2,"subtype":"error_max_turns","errors":["Reached maximum number of turns (1)"],"type":"resul'
    't","duration_ms":197,"uuid":"6a62324a-8766-48c0-93bd-1366161bc7fc","queued_turn_count":0,"re'
    'sult_index":0}\n'
)

CLAUDE_API_ERROR = (
    '{"duration_api_ms":0,"stop_reason":"stop_sequence","session_id":"44f11a95-06eb-4f96-a7b7-39e'
    '5a3da66eb","total_cost_usd":0,"usage":{"output_tokens_details":{"thinking_tokens":0},"input_'
    'tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0,"ser'
    'ver_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":"standard","ca'
    'che_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"inference_geo":'
    '"","iterations":[],"speed":"standard","fallback_credit":null},"modelUsage":{},"permission_de'
    'nials":[],"terminal_reason":"api_error","fast_mode_state":"off","fast_mode_disabled_reason":'
    '"sdk_opt_in_required","subagent_stats":{"spawned":0,"requested":{"background":0,"foreground"'
    ':0,"unset":0},"started_in_background":0,"max_depth":0,"spawned_by_subagents":0,"completed":0'
    ',"failed":0,"killed":{"parent":0,"user":0,"system":0},"refused":{"depth_limit":0,"concurrenc'
    'y_limit":0,"budget":0},"by_type":{}},"safety_stops":0,"is_error":true,"num_turns":1,"subtype'
    '":"success","api_error_status":400,"api_error_type":"api_error","result":"API Error: 400 scr'
    'ipted refusal","type":"result","duration_ms":414,"uuid":"26631cc9-79d0-4de6-a5c9-6ffd8feecc4'
    '2","queued_turn_count":0,"result_index":0}\n'
)

CODEX_DONE = (
    '{"type":"thread.started","thread_id":"01a23742-a35e-7a21-9da9-7a8cbeaff7ed"}\n{"type":"item.'
    'completed","item":{"id":"item_0","type":"error","message":"Model metadata for `gpt-5` not fo'
    'und. Defaulting to fallback metadata; this can degrade performance and cause issues."}}\n{"t'
    'ype":"turn.started"}\n{"type":"item.started","item":{"id":"item_1","type":"command_execution'
    '","command":"/bin/bash -lc \\"printf \'hi\\\\\\\\n\' > hello.txt\\"","aggregated_output":"",'
    '"exit_code":null,"status":"in_progress"}}\n{"type":"item.completed","item":{"id":"item_1","t'
    'ype":"command_execution","command":"/bin/bash -lc \\"printf \'hi\\\\\\\\n\' > hello.txt\\"",'
    '"aggregated_output":"","exit_code":0,"status":"completed"}}\n{"type":"item.completed","item"'
    ':{"id":"item_2","type":"agent_message","text":"Wrote hello.txt.\\n\\n```json\\n{\\"case\\": '
    '\\"done\\", \\"resolution\\": \\"added hello.txt\\"}\\n```"}}\n{"type":"turn.completed","usa'
    'ge":{"input_tokens":2300,"cached_input_tokens":1100,"cache_write_input_tokens":0,"output_tok'
    'ens":90,"reasoning_output_tokens":0}}\n'
)

CODEX_FAILED = (
    '{"type":"thread.started","thread_id":"01a23742-a76f-7220-be2b-24698d845aa2"}\n{"type":"turn.'
    'started"}\n{"type":"error","message":"{\\"error\\": {\\"message\\": \\"scripted refusal\\", '
    '\\"type\\": \\"server_error\\"}}"}\n{"type":"turn.failed","error":{"message":"{\\"error\\": '
    '{\\"message\\": \\"scripted refusal\\", \\"type\\": \\"server_error\\"}}"}}\n'
)

# codex-cli 0.171.0 falling back from WebSockets to HTTPS (shortened to its event types)
CODEX_RETRIED = (
    '{"type":"thread.started","thread_id":"01a23740-13f8-7a63-b0a9-469a2c70673e"}\n'
    '{"type":"turn.started"}\n'
    '{"type":"error","message":"Reconnecting... 2/5 (unexpected status 404 Not Found)"}\n'
    '{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Falling back '
    'from WebSockets to HTTPS transport."}}\n'
    '{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"Done."}}\n'
    '{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":0,'
    '"cache_write_input_tokens":0,"output_tokens":20,"reasoning_output_tokens":0}}\n'
)

# gemini 0.61.0 `--output-format stream-json` against the scripted server: a tool call, then
# the final message (24939 prompt tokens, 21263 of them cached; 40 candidates; 154 thoughts)


def gemini_events(text: str) -> str:
    stats = {"total_tokens": 25133, "input_tokens": 24939, "output_tokens": 40, "cached": 21263}
    return "\n".join(
        [
            '{"type":"init","timestamp":"2026-12-04T17:39:21.753Z","session_id":"a0554014-b803-4b4'
            '9-bca0-dcb936b88a01","model":"gemini-2.5-pro"}',
            '{"type":"message","timestamp":"2026-12-04T17:39:21.756Z","role":"user","content":"Wr'
            'ite hello.txt."}',
            '{"type":"message","timestamp":"2026-12-04T17:39:21.900Z","role":"assistant","content'
            '":"Let me write it.","delta":true}',
            '{"type":"tool_use","timestamp":"2026-12-04T17:39:21.961Z","tool_name":"write_file","'
            'tool_id":"write_file__write_file_1796405961819_0","parameters":{"file_path":"hello.tx'
            't","content":"hi\\n"}}',
            '{"type":"tool_result","timestamp":"2026-12-04T17:39:22.105Z","tool_id":"write_file__'
            'write_file_1796405961819_0","status":"success"}',
            json.dumps(
                {
                    "type": "message",
                    "timestamp": "2026-12-04T17:39:22.133Z",
                    "role": "assistant",
                    "content": text,
                    "delta": True,
                }
            ),
            json.dumps(
                {
                    "type": "result",
                    "timestamp": "2026-12-04T17:39:22.143Z",
                    "status": "success",
                    "stats": {
                        **stats,
                        "input": 3676,
                        "duration_ms": 390,
                        "tool_calls": 1,
                        "models": {"gemini-2.5-pro": {**stats, "input": 3676}},
                    },
                }
            ),
        ]
    )


GEMINI = gemini_events(DONE)
GEMINI_ACCEPT = gemini_events(ACCEPT)
# A failure as gemini's handleError reports it in stream-json: a result with the error.
GEMINI_ERROR = json.dumps(
    {
        "type": "result",
        "timestamp": "2026-12-04T17:39:22.143Z",
        "status": "error",
        "error": {"type": "FatalAuthenticationError", "message": "no key"},
        "stats": {"total_tokens": 0, "input_tokens": 0, "output_tokens": 0, "models": {}},
    }
)

# ---- shapes from the programs' documentation (opencode's `run --format json` events; aider's
# usage line)


def opencode_events(text: str, session: str = "ses_494719016ffe85dkDMj0FPRbHK") -> str:
    def event(kind: str, **part: Any) -> str:
        envelope = {"type": kind, "timestamp": 1767036059338, "sessionID": session}
        return json.dumps({**envelope, "part": {"sessionID": session, **part}})

    tokens = {"input": 1200, "output": 80, "reasoning": 10, "cache": {"read": 3000, "write": 5}}
    return "\n".join(
        [
            event("step_start", type="step-start", snapshot="46358aa5"),
            event("text", type="text", text="Let me write it.", time={"start": 1, "end": 2}),
            event(
                "tool_use",
                type="tool",
                tool="write",
                callID="call_1",
                state={"status": "completed", "input": {"filePath": "hello.txt"}},
            ),
            event(
                "step_finish", type="step-finish", reason="tool-calls", cost=0.0125, tokens=tokens
            ),
            event("step_start", type="step-start", snapshot="46358aa6"),
            event("text", type="text", text=text, time={"start": 3, "end": 4}),
            event("step_finish", type="step-finish", reason="stop", cost=0.0025, tokens=tokens),
        ]
    )


OPENCODE_ERROR = json.dumps(
    {
        "type": "error",
        "timestamp": 1,
        "sessionID": "ses_1",
        "error": {"name": "ProviderAuthError", "data": {"message": "missing API key"}},
    }
)
AIDER = (
    "Aider v0.86.2\nModel: openai/gpt-4.1 with diff edit format\nGit repo: .git with 3 files\n"
    "Repo-map: using 4096 tokens, auto refresh\n\nhello.txt\n```\n<<<<<<< SEARCH\n=======\nhi\n"
    ">>>>>>> REPLACE\n```\n\n"
    "Tokens: 3.0k sent, 1.2k cache hit, 42 received. Cost: $0.0063 message, $0.0063 session.\n"
    "Applied edit to hello.txt\n"
    f"{DONE}\n\n"
    "Tokens: 12,450 sent, 3,200 received. Cost: $0.052 message, $0.0583 session.\n"
)


# ---- the outcome block


def test_the_last_fenced_block_with_a_case_is_the_outcome() -> None:
    text = (
        'Plan:\n```json\n{"case": "failed", "failure": "draft"}\n```\nthen\n```python\nx = 1\n```\n'
        'Final:\n```json\n{"case": "done", "resolution": "added it"}\n```\n'
    )
    found = parse_outcome(text)
    assert not isinstance(found, str)
    assert (found.case, found.resolution) == (Case.DONE, "added it")


def test_a_bare_object_counts_when_nothing_is_fenced() -> None:
    found = parse_outcome('All set. {"case": "failed", "failure": "no network"} bye')
    assert not isinstance(found, str)
    assert (found.case, found.failure) == (Case.FAILED, "no network")


def test_a_question_keeps_its_options_in_order() -> None:
    found = parse_outcome(
        '```\n{"case": "question", "question": "Which DB?", "options": ["sqlite", "pg"]}\n```'
    )
    assert not isinstance(found, str)
    assert found.case is Case.QUESTION
    assert found.question == Question("Which DB?", ["sqlite", "pg"])


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("I did it.", "no outcome block"),
        ('```json\n{"case": "maybe"}\n```', "case 'maybe'"),
        ('```json\n{"case": "question"}\n```', "no question text"),
        ('```json\n{"case": "done", \n```', "no outcome block"),
    ],
)
def test_a_missing_or_wrong_block_says_why(text: str, reason: str) -> None:
    found = parse_outcome(text)
    assert isinstance(found, str)
    assert reason in found


# ---- the verdict block a reviewer ends with

REJECT = {
    "verdict": "reject",
    "category": "acceptance_gap",
    "concern": "Empty files crash.",
    "evidence": ["wc.py:count"],
    "next_step": "Return 0 for empty input.",
}


def test_a_reviewer_ends_with_the_last_fenced_verdict_block() -> None:
    text = (
        '```json\n{"verdict": "accept", "concern": "draft"}\n```\nOn second thought:\n'
        f"```json\n{json.dumps(REJECT)}\n```\n"
        '```json\n{"case": "done", "resolution": "not a verdict"}\n```\n'
    )
    found = parse_outcome(text, Role.EVALUATOR)
    assert not isinstance(found, str)
    assert found.case is Case.DONE
    assert found.verdict == Verdict(
        False, "acceptance_gap", "Empty files crash.", ["wc.py:count"], "Return 0 for empty input."
    )


def test_a_bare_verdict_counts_when_nothing_is_fenced() -> None:
    found = parse_outcome(
        'Looks right. {"verdict": "ACCEPT", "concern": "tests pass"}', Role.EVALUATOR
    )
    assert not isinstance(found, str)
    assert found.verdict == Verdict(True, concern="tests pass")


def test_each_role_reads_only_its_own_block() -> None:
    assert parse_outcome(DONE, Role.EVALUATOR) == (
        "the reviewer's final message has no verdict block (a fenced JSON with a verdict)"
    )
    assert "no outcome block" in str(parse_outcome(ACCEPT))


@pytest.mark.parametrize(
    ("verdict", "reason"),
    [
        ({"verdict": "maybe"}, "verdict must be accept or reject (got 'maybe')"),
        ({**REJECT, "category": "ugly"}, "a reject needs a category, one of acceptance_gap"),
        ({**REJECT, "next_step": ""}, "a reject needs a next_step"),
        ({"verdict": "accept", "category": "weak_test"}, "an accept takes no category"),
    ],
)
def test_an_unusable_verdict_says_why(verdict: dict[str, Any], reason: str) -> None:
    found = parse_outcome(f"```json\n{json.dumps(verdict)}\n```", Role.EVALUATOR)
    assert isinstance(found, str)
    assert found.startswith("the reviewer's verdict block is not usable: " + reason)


# ---- parsers on recorded and documented output


def test_claude_result_recorded_from_the_real_program() -> None:
    report = parse_claude(CLAUDE_DONE)
    assert not isinstance(parse_outcome(report.text), str)
    assert report.session == "56d7f4ca-7145-484a-8de6-bb3a216be5af"
    assert (report.usage.tokens_in, report.usage.tokens_out) == (2200 + 300 + 400, 90)
    assert report.usage.tokens_cached == 300
    assert report.usage.cost == pytest.approx(0.01266)
    assert report.priced and report.model == "claude-opus-5-5" and not report.error


def test_claude_errors_recorded_from_the_real_program() -> None:
    assert parse_claude(CLAUDE_MAX_TURNS).error == (
        "error_max_turns: Reached maximum number of turns (1)"
    )
    assert parse_claude(CLAUDE_API_ERROR).error == "API Error: 400 scripted refusal"


def test_codex_events_recorded_from_the_real_program() -> None:
    report = parse_codex(CODEX_DONE)
    assert report.text == DONE
    assert report.session == "01a23742-a35e-7a21-9da9-7a8cbeaff7ed"
    assert (report.usage.tokens_in, report.usage.tokens_out, report.usage.tokens_cached) == (
        2300,
        90,
        1100,
    )
    assert not report.priced and not report.error
    assert [e["type"] for e in report.events] == ["error", "command_execution", "agent_message"]


def test_codex_failure_and_retries_recorded_from_the_real_program() -> None:
    assert "scripted refusal" in parse_codex(CODEX_FAILED).error
    retried = parse_codex(CODEX_RETRIED)
    assert (retried.error, retried.text) == ("", "Done.")


def test_gemini_events_recorded_from_the_real_program() -> None:
    report = parse_gemini(GEMINI)
    assert report.text == DONE and report.model == "gemini-2.5-pro"  # after the last tool call
    assert (report.usage.tokens_in, report.usage.tokens_out, report.usage.tokens_cached) == (
        24939,
        40 + 154,  # the thoughts: what the total holds beyond prompt and candidates
        21263,
    )
    assert report.session == "a0554014-b803-4b49-bca0-dcb936b88a01" and not report.priced
    assert parse_gemini("Loaded cached credentials.\n" + GEMINI_ERROR).error == "no key"


def test_opencode_documented_events() -> None:
    report = parse_opencode(opencode_events(DONE))
    assert report.text == DONE  # the last step's text only
    assert report.session == "ses_494719016ffe85dkDMj0FPRbHK"
    assert (report.usage.tokens_in, report.usage.tokens_out, report.usage.tokens_cached) == (
        2 * 4205,
        2 * 90,
        2 * 3000,
    )
    assert report.usage.cost == pytest.approx(0.015) and report.priced
    assert parse_opencode(OPENCODE_ERROR).error == "missing API key"


def test_aider_documented_usage_lines() -> None:
    report = parse_aider(AIDER)
    assert (report.usage.tokens_in, report.usage.tokens_out, report.usage.tokens_cached) == (
        3000 + 12450,
        42 + 3200,
        1200,
    )
    assert report.usage.cost == pytest.approx(0.0583) and report.priced
    assert not isinstance(parse_outcome(report.text), str)


@pytest.mark.parametrize(
    "parse", [parse_claude, parse_codex, parse_gemini, parse_opencode], ids=lambda p: p.__name__
)
def test_nonsense_output_is_refused(parse: Callable[[str], object]) -> None:
    with pytest.raises(ValueError, match="no JSON"):
        parse("Segmentation fault (core dumped)\n")


# ---- construction


def test_an_unknown_preset_lists_the_valid_ones() -> None:
    with pytest.raises(AgentError, match="claude, codex, gemini, opencode, aider, custom"):
        CliAgent("cursor")


def test_the_registry_knows_every_preset_by_name() -> None:
    # The registry names them without importing the presets; a preset it forgot could be
    # neither chosen nor accepted by `validate`.
    assert agents.CLI_NAMES == presets.NAMES


@pytest.mark.parametrize(
    ("preset", "package"),
    [
        ("claude", "npm @anthropic-ai/claude-code"),
        ("codex", "npm @openai/codex"),
        ("gemini", "npm @google/gemini-cli"),
        ("opencode", "npm opencode-ai"),
        ("aider", "PyPI aider-chat"),
    ],
)
def test_a_missing_program_names_its_package(tmp_path: Path, preset: str, package: str) -> None:
    with pytest.raises(AgentError, match=f"'{preset}' is not on PATH \\(fix: install {package}"):
        CliAgent(preset, env={"PATH": str(tmp_path)})


def test_custom_needs_a_command_that_exists(tmp_path: Path) -> None:
    with pytest.raises(AgentError, match="TASKHAND_AGENT_CMD"):
        CliAgent("custom", env={"PATH": str(tmp_path)})
    with pytest.raises(AgentError, match="'no-such-agent' is not on PATH"):
        CliAgent("custom", env={"PATH": str(tmp_path), "TASKHAND_AGENT_CMD": "no-such-agent -x"})


# ---- running a program: the custom preset with small Python programs


def unit(
    worktree: Path,
    prompt: str = "Write hello.txt.",
    role: Role = Role.IMPLEMENTER,
    timeout: float = 30.0,
    model: str | None = None,
) -> Unit:
    worktree.mkdir(parents=True, exist_ok=True)
    return Unit(role, "T-001", 1, prompt, worktree, timeout, model)


def program(tmp_path: Path, name: str, body: str) -> Path:
    """A Python program at tmp_path/bin/name."""
    path = tmp_path / "bin" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"#!{sys.executable}\nimport json, os, sys, time\n{body}\n")
    path.chmod(0o755)
    return path


def base_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}", **extra}


def test_custom_template_fills_placeholders_and_reads_the_outcome(tmp_path: Path) -> None:
    body = (
        "prompt = open(sys.argv[1]).read()\n"
        "open('seen.json', 'w').write(json.dumps([prompt, *sys.argv[2:]]))\n"
        f"print({DONE!r})"
    )
    program(tmp_path, "my-agent", body)
    env = base_env(tmp_path, TASKHAND_AGENT_CMD="my-agent {prompt_file} '{worktree}' {model}")
    work = tmp_path / "work tree"
    outcome = CliAgent("custom", env=env).run(unit(work, model="m-1"))
    assert (outcome.case, outcome.resolution) == (Case.DONE, "added hello.txt")
    assert json.loads((work / "seen.json").read_text()) == ["Write hello.txt.", str(work), "m-1"]


def test_custom_without_prompt_file_gets_the_prompt_on_stdin(tmp_path: Path) -> None:
    program(tmp_path, "my-agent", f"assert sys.stdin.read() == 'Do it.'\nprint({DONE!r})")
    outcome = CliAgent("custom", command="my-agent", env=base_env(tmp_path)).run(
        unit(tmp_path / "w", "Do it.")
    )
    assert outcome.case is Case.DONE


def test_a_missing_block_is_an_error_when_the_program_cannot_resume(tmp_path: Path) -> None:
    program(tmp_path, "my-agent", "print('I am done, trust me.')")
    outcome = CliAgent("custom", command="my-agent", env=base_env(tmp_path)).run(
        unit(tmp_path / "w")
    )
    assert outcome.case is Case.ERROR
    assert "no outcome block" in outcome.failure


def test_a_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    body = (
        "import subprocess\n"
        "child = subprocess.Popen(['sleep', '60'])\n"
        "open('child.pid', 'w').write(str(child.pid))\n"
        "time.sleep(60)"
    )
    program(tmp_path, "slow-agent", body)
    work = tmp_path / "w"
    started = time.monotonic()
    outcome = CliAgent("custom", command="slow-agent", env=base_env(tmp_path)).run(
        unit(work, timeout=1.5)
    )
    assert time.monotonic() - started < 10
    assert (outcome.case, outcome.failure) == (Case.ERROR, "timed out after 1.5 s")
    assert gone(int((work / "child.pid").read_text()))


def test_a_failing_program_reports_its_stderr_tail(tmp_path: Path) -> None:
    body = "print('x' * 5000, file=sys.stderr)\nprint('auth failed', file=sys.stderr)\nsys.exit(3)"
    program(tmp_path, "bad-agent", body)
    outcome = CliAgent("custom", command="bad-agent", env=base_env(tmp_path)).run(
        unit(tmp_path / "w")
    )
    assert outcome.case is Case.ERROR
    assert outcome.failure.startswith("custom exited 3: xxx")
    assert outcome.failure.endswith("auth failed") and len(outcome.failure) < 2100


def test_huge_output_is_capped_and_the_end_still_read(tmp_path: Path) -> None:
    program(tmp_path, "loud-agent", f"print('x' * 3_000_000)\nprint({DONE!r})")
    agent = CliAgent("custom", command="loud-agent", output_limit=64 * 1024, env=base_env(tmp_path))
    outcome = agent.run(unit(tmp_path / "w"))
    assert outcome.case is Case.DONE
    assert len(str(outcome.transcript[-1]["content"])) < 30_000


def test_secrets_stay_out_but_the_presets_keys_go_in(tmp_path: Path) -> None:
    body = (
        "print(json.dumps({k: os.environ.get(k) for k in ('PLANTED_TOKEN', 'OPENAI_API_KEY')}),"
        " file=sys.stderr)\nsys.exit(1)"
    )
    program(tmp_path, "env-agent", body)
    env = base_env(tmp_path, PLANTED_TOKEN="planted-secret-1", OPENAI_API_KEY="sk-test-abcdef")
    outcome = CliAgent("custom", command="env-agent", env=env).run(unit(tmp_path / "w"))
    assert '"PLANTED_TOKEN": null' in outcome.failure
    assert '"OPENAI_API_KEY": "[redacted]"' in outcome.failure  # it went in, and is scrubbed


def test_the_workspaces_port_reaches_the_program(tmp_path: Path) -> None:
    body = "print(os.environ.get('TASKHAND_PORT'), file=sys.stderr)\nsys.exit(1)"
    program(tmp_path, "port-agent", body)
    work = unit(tmp_path / "w")
    work.env = {"TASKHAND_PORT": "45678"}
    outcome = CliAgent("custom", command="port-agent", env=base_env(tmp_path)).run(work)
    assert "45678" in outcome.failure


# ---- presets through stand-ins: the flags each role gets, and the nudge


# The stand-in finds its log and replies beside its bin folder: the environment it is given is
# the preset's allow-list, as a real program's is.
STAND_IN = """
here = os.path.dirname(os.path.dirname(os.path.abspath(sys.argv[0])))
log = os.path.join(here, 'calls.json')
calls = json.load(open(log)) if os.path.exists(log) else []
argv = sys.argv[1:]
message = open(argv[argv.index('--message-file') + 1]).read() if '--message-file' in argv else None
calls.append({'argv': argv, 'stdin': sys.stdin.read(), 'cwd': os.getcwd(), 'message': message})
json.dump(calls, open(log, 'w'))
replies = json.load(open(os.path.join(here, 'replies.json')))
sys.stdout.write(replies[min(len(calls), len(replies)) - 1])
"""


def stand_in(tmp_path: Path, name: str, replies: list[str]) -> tuple[dict[str, str], Path]:
    """Put a program called `name` on PATH that logs each call and prints the next reply."""
    program(tmp_path, name, STAND_IN)
    (tmp_path / "replies.json").write_text(json.dumps(replies))
    log = tmp_path / "calls.json"
    return base_env(tmp_path), log


def calls(log: Path) -> list[dict[str, Any]]:
    return list(json.loads(log.read_text()))


def test_gemini_flags_by_role_and_an_estimated_cost(tmp_path: Path) -> None:
    env, log = stand_in(tmp_path, "gemini", [GEMINI, GEMINI_ACCEPT])
    agent = CliAgent("gemini", env=env, prices={"gemini-2.5-pro": Price(1.25, 10.0, 0.31)})
    outcome = agent.run(unit(tmp_path / "w", "Write hello.txt."))
    review = agent.run(unit(tmp_path / "w", "Review.", Role.EVALUATOR))
    writer, reviewer = calls(log)
    assert review.verdict == Verdict(True, concern="hello.txt is there", evidence=["hello.txt"])
    assert writer["argv"][:7] == [
        "--output-format",
        "stream-json",
        "--skip-trust",
        "--approval-mode",
        "yolo",
        "-m",
        "gemini-2.5-pro",  # always a model: without one gemini asks a router model first
    ]
    # our outcome tools' server, and the policy that allows its tools
    assert writer["argv"][7] == "--policy"
    assert writer["argv"][9:] == ["--allowed-mcp-server-names", "taskhand"]
    hint = outcome_tool.hint(Role.IMPLEMENTER)
    assert (writer["stdin"], reviewer["stdin"]) == (
        f"Write hello.txt.\n\n{hint}",
        f"Review.\n\n{outcome_tool.hint(Role.EVALUATOR)}",
    )
    # yolo too: a reader's policy, the last one given, takes the writing tools away
    assert reviewer["argv"][4] == "yolo"
    assert reviewer["argv"][-1].endswith("gemini-reviewer-policy.toml")
    assert outcome.case is Case.DONE
    expected = ((24939 - 21263) * 1.25 + 21263 * 0.31 + 194 * 10.0) / 1e6
    assert outcome.usage.cost == pytest.approx(expected) and outcome.usage.estimated


def test_a_model_without_a_price_leaves_the_cost_unknown(tmp_path: Path) -> None:
    env, _ = stand_in(tmp_path, "gemini", [GEMINI])
    outcome = CliAgent("gemini", env=env, prices={}).run(unit(tmp_path / "w"))
    assert (outcome.usage.cost, outcome.usage.estimated) == (0.0, False)
    assert {"role": "note", "content": "no price for model 'gemini-2.5-pro'"} in outcome.transcript


def test_opencode_is_nudged_once_in_its_session(tmp_path: Path) -> None:
    env, log = stand_in(
        tmp_path, "opencode", [opencode_events("Done, no block."), opencode_events(DONE)]
    )
    outcome = CliAgent("opencode", model="anthropic/claude-x", env=env).run(unit(tmp_path / "w"))
    first, second = calls(log)
    assert first["argv"] == [
        "run",
        "--format",
        "json",
        "--agent",
        "build",
        "-m",
        "anthropic/claude-x",
        "--title",
        "taskhand T-001 implementer",
    ]
    assert first["stdin"] == "Write hello.txt."  # on stdin: as an argument it came quoted
    assert second["argv"][-2:] == ["--session", "ses_494719016ffe85dkDMj0FPRbHK"]
    # opencode has our outcome tools: the nudge asks for the tool first, then the block
    assert second["stdin"] == outcome_tool.nudge(Role.IMPLEMENTER, NUDGE)
    assert (outcome.case, outcome.resolution) == (Case.DONE, "added hello.txt")
    assert outcome.usage.cost == pytest.approx(0.03) and not outcome.usage.estimated
    assert outcome.usage.tokens_out == 4 * 90


def asking(*options: str) -> str:
    block = {"case": "question", "question": "Where should it live?", "options": list(options)}
    return f"I must ask.\n\n```json\n{json.dumps(block)}\n```"


@pytest.mark.parametrize("options", [["Header"], [], ["a", "b", "c", "d", "e"]])
def test_a_question_without_2_to_4_options_goes_back_to_the_agent_as_its_error(
    tmp_path: Path, options: list[str]
) -> None:
    env, log = stand_in(
        tmp_path,
        "opencode",
        [opencode_events(asking(*options)), opencode_events(asking("Header", "Settings"))],
    )
    outcome = CliAgent("opencode", env=env).run(unit(tmp_path / "w"))
    nudged = calls(log)[1]["stdin"]
    assert "was not accepted: a question needs 2 to 4 lettered options" in nudged
    assert f"it gave {len(options)}" in nudged
    assert outcome.case is Case.QUESTION and outcome.question is not None
    assert outcome.question.options == ["Header", "Settings"]  # the agent's own correction


def test_each_message_reaches_the_units_hook_as_each_run_of_the_program_ends(
    tmp_path: Path,
) -> None:
    env, log = stand_in(
        tmp_path, "opencode", [opencode_events("Done, no block."), opencode_events(DONE)]
    )
    work = unit(tmp_path / "w")
    told: list[tuple[dict[str, object], int]] = []  # each message, and the runs made by then
    work.on_message = lambda m: told.append((m, len(calls(log)) if log.exists() else 0))
    outcome = CliAgent("opencode", env=env).run(work)
    assert outcome.case is Case.DONE
    assert [m for m, _ in told] == outcome.transcript  # every message, in order, as returned
    assert told[0] == ({"role": "user", "content": "Write hello.txt."}, 0)
    # The first run's messages (its events too) came before the nudge ran the program again.
    runs = [(m.get("role") or m.get("type"), made) for m, made in told[1:-1]]
    steps = ["agent", "step-finish", "step-finish"]
    assert runs == [(kind, 1) for kind in steps] + [(kind, 2) for kind in steps]


def test_opencode_reviewer_uses_the_plan_agent(tmp_path: Path) -> None:
    env, log = stand_in(tmp_path, "opencode", [opencode_events(ACCEPT)])
    CliAgent("opencode", env=env).run(unit(tmp_path / "w", role=Role.EVALUATOR))
    assert calls(log)[0]["argv"][:5] == ["run", "--format", "json", "--agent", "plan"]


def test_a_reviewer_is_nudged_for_its_verdict_block(tmp_path: Path) -> None:
    verdict = f"Found a gap.\n```json\n{json.dumps(REJECT)}\n```"
    env, log = stand_in(
        tmp_path, "opencode", [opencode_events("Looks fine."), opencode_events(verdict)]
    )
    outcome = CliAgent("opencode", env=env).run(unit(tmp_path / "w", role=Role.EVALUATOR))
    assert calls(log)[1]["stdin"] == outcome_tool.nudge(Role.EVALUATOR, VERDICT_NUDGE)
    assert "tests_pass_but_wrong" in VERDICT_NUDGE
    assert isinstance(parse_outcome(VERDICT_NUDGE, Role.EVALUATOR), str)  # an echo is no verdict
    assert outcome.case is Case.DONE, outcome.failure
    assert outcome.verdict == Verdict.parse(REJECT)
    assert (outcome.resolution, outcome.question) == ("", None)


def test_a_reviewer_without_a_verdict_after_the_nudge_is_an_error(tmp_path: Path) -> None:
    env, log = stand_in(tmp_path, "opencode", [opencode_events(DONE)])
    outcome = CliAgent("opencode", env=env).run(unit(tmp_path / "w", role=Role.EVALUATOR))
    assert len(calls(log)) == 2
    assert outcome.case is Case.ERROR and outcome.verdict is None
    assert outcome.failure == (
        "the agent never called submit_verdict, and the reviewer's final message has no "
        "verdict block (a fenced JSON with a verdict)"
    )


def test_a_malformed_verdict_is_an_error_with_the_reason(tmp_path: Path) -> None:
    broken = f"```json\n{json.dumps({**REJECT, 'concern': ''})}\n```"
    env, _ = stand_in(tmp_path, "opencode", [opencode_events(broken)])
    outcome = CliAgent("opencode", env=env).run(unit(tmp_path / "w", role=Role.EVALUATOR))
    assert outcome.case is Case.ERROR and outcome.verdict is None
    assert outcome.failure == (
        "the agent never called submit_verdict, and the reviewer's verdict block is not usable: "
        "a reject needs a concern: what is wrong, in one to three sentences"
    )


def test_secrets_are_scrubbed_from_the_verdict(tmp_path: Path) -> None:
    leaky = {**REJECT, "concern": "It logs sk-test-abcdef.", "evidence": ["sk-test-abcdef"]}
    program(tmp_path, "my-agent", f"print({json.dumps(leaky)!r})")
    env = base_env(tmp_path, OPENAI_API_KEY="sk-test-abcdef")
    outcome = CliAgent("custom", command="my-agent", env=env).run(
        unit(tmp_path / "w", role=Role.EVALUATOR)
    )
    assert outcome.verdict is not None, outcome.failure
    assert (outcome.verdict.concern, outcome.verdict.evidence) == (
        "It logs [redacted].",
        ["[redacted]"],
    )


def test_aider_flags_by_role_and_the_message_file(tmp_path: Path) -> None:
    env, log = stand_in(tmp_path, "aider", [AIDER, AIDER.replace(DONE, ACCEPT)])
    agent = CliAgent("aider", model="gpt-4.1", env=env)
    outcome = agent.run(unit(tmp_path / "w"))
    agent.run(unit(tmp_path / "w", role=Role.EVALUATOR))
    writer, reviewer = calls(log)
    assert writer["message"] == "Write hello.txt." and writer["cwd"] == str(tmp_path / "w")
    assert {"--yes-always", "--no-auto-commits", "--no-gitignore"} <= set(writer["argv"])
    assert "--dry-run" not in writer["argv"]
    assert {"--chat-mode", "ask", "--dry-run"} <= set(reviewer["argv"])
    assert outcome.case is Case.DONE and outcome.usage.cost == pytest.approx(0.0583)


def test_the_worktree_stays_clean_of_agent_files(tmp_path: Path) -> None:
    """Scratch files (prompt, aider history) live outside the worktree."""
    env, _ = stand_in(tmp_path, "aider", [AIDER])
    work = make_repo(tmp_path / "w")
    CliAgent("aider", env=env).run(unit(work))
    status = subprocess.run(["git", "status", "--porcelain"], cwd=work, capture_output=True)
    assert status.stdout == b""


# ---- the real programs against scripted servers


def real(name: str) -> str:
    """The installed program, from .npm-agents first; the test is skipped without it."""
    found = shutil.which(name, path=f"{AGENT_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    if found is None:
        pytest.skip(f"{name} is not installed (fix: {INSTALL})")
    return found


def real_env(tmp_path: Path, program: str, **extra: str) -> dict[str, str]:
    """The environment for a real agent: its folder on PATH, and a home of its own."""
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    path = f"{Path(program).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    own = {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}
    return {**os.environ, "PATH": path, **own, "CODEX_HOME": str(home / ".codex"), **extra}


def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "worktree")


def claude_agent(tmp_path: Path, api: anthropic.ScriptedAnthropic, **extra: str) -> CliAgent:
    env = real_env(
        tmp_path,
        real("claude"),
        ANTHROPIC_BASE_URL=api.url,
        ANTHROPIC_API_KEY="test",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        **extra,
    )
    return CliAgent("claude", env=env)


def served_claude(api: anthropic.ScriptedAnthropic) -> tuple[int, int, int]:
    """Tokens in (cache included), out, and cached, over every reply the server sent."""
    turns = api.served
    return (
        sum(t.input_tokens + t.cache_read + t.cache_creation for t in turns),
        sum(t.output_tokens for t in turns),
        sum(t.cache_read for t in turns),
    )


def write_turn(work: Path, **usage: int) -> anthropic.Turn:
    return anthropic.Turn(
        tools=[("Write", {"file_path": str(work / "hello.txt"), "content": "hi\n"})], **usage
    )


def test_real_claude_writes_the_file_and_reports_usage_and_cost(tmp_path: Path) -> None:
    work = repo(tmp_path)
    script = [
        write_turn(work, input_tokens=1000, output_tokens=50, cache_creation=400),
        anthropic.Turn(text=DONE, input_tokens=1200, output_tokens=40, cache_read=300),
    ]
    with anthropic.ScriptedAnthropic(script) as api:
        outcome = claude_agent(tmp_path, api).run(unit(work))
    assert (outcome.case, outcome.resolution) == (Case.DONE, "added hello.txt"), outcome.failure
    assert (work / "hello.txt").read_text() == "hi\n"
    usage = outcome.usage
    assert (usage.tokens_in, usage.tokens_out, usage.tokens_cached) == served_claude(api)
    assert usage.cost > 0 and not usage.estimated
    assert {(r.method, r.path.split("?")[0]) for r in api.requests} == {("POST", "/v1/messages")}
    assert {t["name"] for t in api.main_requests()[0].body["tools"]} >= {"Write", "Bash"}


def test_real_claude_is_nudged_once_by_resuming_its_session(tmp_path: Path) -> None:
    work = repo(tmp_path)
    # The nudge gives claude the outcome's schema: it answers through its StructuredOutput.
    structured = ("StructuredOutput", {"case": "done", "resolution": "added hello.txt"})
    script = [
        anthropic.Turn(text="All done.", input_tokens=1000, output_tokens=100),
        anthropic.Turn(tools=[structured], input_tokens=3000, output_tokens=7),
        anthropic.Turn(text="Done.", input_tokens=3100, output_tokens=2),
    ]
    with anthropic.ScriptedAnthropic(script) as api:
        outcome = claude_agent(tmp_path, api).run(unit(work))
    assert (outcome.case, outcome.resolution) == (Case.DONE, "added hello.txt"), outcome.failure
    resumed = api.main_requests()[1].body["messages"]
    assert {"role": "assistant", "content": "All done."} in [
        {"role": m["role"], "content": m["content"][0]["text"]}
        for m in resumed
        if m["role"] == "assistant"
    ]
    assert json.dumps(NUDGE)[1:-1] in json.dumps(resumed[-1])
    usage = outcome.usage
    assert (usage.tokens_in, usage.tokens_out) == served_claude(api)[:2]


def test_real_claude_reviewer_has_no_writing_tools(tmp_path: Path) -> None:
    work = repo(tmp_path)
    with anthropic.ScriptedAnthropic([write_turn(work), anthropic.Turn(text=ACCEPT)]) as api:
        outcome = claude_agent(tmp_path, api).run(unit(work, role=Role.EVALUATOR))
    assert outcome.case is Case.DONE, outcome.failure
    assert outcome.verdict and outcome.verdict.accepted
    assert not (work / "hello.txt").exists()
    offered = {t["name"] for t in api.main_requests()[0].body["tools"]}
    assert "Read" in offered and not offered & {"Write", "Edit", "NotebookEdit"}
    refusal = api.main_requests()[-1].body["messages"][-1]["content"][0]
    assert refusal["type"] == "tool_result" and refusal["is_error"]


def test_real_claude_api_error_is_an_error_outcome(tmp_path: Path) -> None:
    refusals = [anthropic.Turn(text="scripted refusal", status=400)] * 8
    with anthropic.ScriptedAnthropic(refusals) as api:
        agent = claude_agent(tmp_path, api, CLAUDE_CODE_MAX_RETRIES="0")
        outcome = agent.run(unit(repo(tmp_path)))
    assert outcome.case is Case.ERROR
    assert outcome.failure == "claude failed: API Error: 400 scripted refusal"


def codex_agent(
    tmp_path: Path, api: responses.ScriptedResponses, outer_sandbox: bool = False
) -> CliAgent:
    env = real_env(tmp_path, real("codex"), OPENAI_BASE_URL=api.url, OPENAI_API_KEY="test")
    no_retries = [
        "-c",
        "model_providers.taskhand.request_max_retries=0",
        "-c",
        "model_providers.taskhand.stream_max_retries=0",
    ]
    return CliAgent(
        "codex", model="gpt-5", extra_args=no_retries, env=env, outer_sandbox=outer_sandbox
    )


def shell(command: str, **usage: int) -> responses.Turn:
    return responses.Turn(calls=[("exec_command", {"cmd": command})], **usage)


def test_real_codex_writes_the_file_and_estimates_the_cost(tmp_path: Path) -> None:
    work = repo(tmp_path)
    script = [
        shell("printf 'hi\\n' > hello.txt", input_tokens=1000, cached_tokens=200, output_tokens=50),
        responses.Turn(text=DONE, input_tokens=1300, cached_tokens=900, output_tokens=40),
    ]
    with responses.ScriptedResponses(script) as api:
        outcome = codex_agent(tmp_path, api).run(unit(work))
    assert (outcome.case, outcome.resolution) == (Case.DONE, "added hello.txt"), outcome.failure
    assert (work / "hello.txt").read_text() == "hi\n"
    usage = outcome.usage
    assert (usage.tokens_in, usage.tokens_out, usage.tokens_cached) == (2300, 90, 1100)
    expected = ((2300 - 1100) * 1.25 + 1100 * 0.125 + 90 * 10.0) / 1e6  # gpt-5 list prices
    assert usage.cost == pytest.approx(expected) and usage.estimated
    assert {(r.method, r.path) for r in api.requests} == {("POST", "/v1/responses")}
    assert api.requests[0].body["model"] == "gpt-5"


def test_real_codex_is_nudged_once_by_resuming_its_thread(tmp_path: Path) -> None:
    work = repo(tmp_path)
    script = [responses.Turn(text="All done."), responses.Turn(text=DONE, input_tokens=300)]
    with responses.ScriptedResponses(script) as api:
        outcome = codex_agent(tmp_path, api).run(unit(work))
    assert outcome.case is Case.DONE, outcome.failure
    resumed = json.dumps(api.requests[-1].body["input"])
    assert "All done." in resumed and json.dumps(NUDGE)[1:-1] in resumed
    assert (outcome.usage.tokens_in, outcome.usage.tokens_out) == (400, 40)  # thread totals


def test_real_codex_reviewer_sandbox_is_read_only(tmp_path: Path) -> None:
    work = repo(tmp_path)
    script = [shell("printf 'hi\\n' > hello.txt"), responses.Turn(text=ACCEPT)]
    with responses.ScriptedResponses(script) as api:
        outcome = codex_agent(tmp_path, api).run(unit(work, role=Role.EVALUATOR))
    assert outcome.case is Case.DONE, outcome.failure
    assert outcome.verdict and outcome.verdict.accepted
    assert not (work / "hello.txt").exists()
    assert "Read-only file system" in json.dumps(api.requests[-1].body["input"])


def test_real_codex_failed_turn_is_an_error_outcome(tmp_path: Path) -> None:
    refusals = [responses.Turn(text="scripted refusal", status=400)] * 3
    with responses.ScriptedResponses(refusals) as api:
        outcome = codex_agent(tmp_path, api).run(unit(repo(tmp_path)))
    assert outcome.case is Case.ERROR
    assert outcome.failure.startswith("codex failed: ") and "scripted refusal" in outcome.failure
