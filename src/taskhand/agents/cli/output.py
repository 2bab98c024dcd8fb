"""Reading what each cli agent printed: its final message, token usage, dollars where it reports
them, the session to resume and its own errors, from JSON, JSONL or aider's plain text.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from taskhand.text import shorten
from taskhand.unit import Usage


@dataclass
class Report:
    """What one run of a program said: its final message, usage, and the session to resume."""

    text: str = ""
    usage: Usage = field(default_factory=Usage)
    priced: bool = False  # the program reported dollars itself
    session: str = ""
    model: str = ""
    error: str = ""  # the program's own report of failure
    events: list[dict[str, object]] = field(default_factory=list)


def parse_claude(stdout: str) -> Report:
    """`claude -p --output-format stream-json --verbose`: JSONL events, the last one the result
    object (`--output-format json` prints it alone). On a resumed session `usage` covers the
    last run only, while `modelUsage` and `total_cost_usd` cover the whole session. Input
    tokens leave out cache reads and writes (Anthropic's API); thinking is inside output."""
    results = [event for event in _jsonl(stdout) if event.get("type") == "result"]
    if not results:
        raise ValueError(f"no result object in {_excerpt(stdout)}")
    data = results[-1]
    result = data.get("result")
    report = Report(
        text=result if isinstance(result, str) else "", session=_str(data, "session_id")
    )
    cost = data.get("total_cost_usd")
    per_model = data.get("modelUsage")
    if isinstance(per_model, dict) and per_model:
        report.model = str(next(iter(per_model)))
        for counts in per_model.values():
            fresh, read, made = (
                _int(counts, k)
                for k in ("inputTokens", "cacheReadInputTokens", "cacheCreationInputTokens")
            )
            out, thinking = _int(counts, "outputTokens"), _int(counts, "thinkingTokens")
            report.usage += _usage(fresh + read + made, out, read, made, thinking)
    else:
        usage = data.get("usage")
        fresh, read, made = (
            _int(usage, k)
            for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
        )
        thinking = _int(
            usage.get("output_tokens_details") if isinstance(usage, dict) else None,
            "thinking_tokens",
        )
        report.usage = _usage(
            fresh + read + made, _int(usage, "output_tokens"), read, made, thinking
        )
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        report.usage.cost, report.priced = float(cost), True
    subtype = _str(data, "subtype")
    if data.get("is_error") or subtype not in ("", "success"):
        errors = data.get("errors")
        said = "; ".join(map(str, errors)) if isinstance(errors, list) else report.text
        kind = "" if subtype == "success" else subtype
        report.error = ": ".join(part for part in (kind, said) if part) or "is_error"
    report.events = [{k: v for k, v in data.items() if k != "result"}]
    return report


def parse_codex(stdout: str) -> Report:
    """`codex exec --json`: JSONL events. `turn.completed` carries the thread's token totals
    (a resumed thread's included); codex reports no dollars. As in OpenAI's API, input counts
    the cached and cache-written tokens, and output the reasoning ones."""
    report, finished, complaint = Report(), False, ""
    for event in _jsonl(stdout):
        kind = event.get("type")
        item = event.get("item")
        if kind == "thread.started":
            report.session = _str(event, "thread_id")
        elif kind == "item.completed" and isinstance(item, dict):
            if item.get("type") == "agent_message":
                report.text = _str(item, "text")
            report.events.append(item)
        elif kind == "turn.completed":
            usage, finished = event.get("usage"), True
            tokens_in, out = _int(usage, "input_tokens"), _int(usage, "output_tokens")
            read, written = (
                _int(usage, "cached_input_tokens"),
                _int(usage, "cache_write_input_tokens"),
            )
            report.usage = _usage(
                tokens_in, out, read, written, _int(usage, "reasoning_output_tokens")
            )
        elif kind == "turn.failed":
            error = event.get("error")
            report.error = _str(error, "message") or "the turn failed"
            finished = True
        elif kind == "error":  # also retries ("Reconnecting... 2/5"), so not final by itself
            complaint = _str(event, "message")
    if not finished:
        report.error = complaint or "codex ended without completing its turn"
    return report


def parse_gemini(stdout: str) -> Report:
    """`gemini --output-format stream-json`: JSONL events from `init` (the session) to `result`
    (status, error, and per model its tokens). The final message is the model's text after its
    last tool call. Input tokens include the cached ones; output counts candidates alone, so
    the thoughts (billed as output) are what the total holds beyond the two."""
    report, complaint = Report(session="latest"), ""
    result: dict[str, Any] | None = None
    for event in _jsonl(stdout):
        kind = event.get("type")
        if kind == "init":
            report.session = _str(event, "session_id") or report.session
            report.model = _str(event, "model")
        elif kind == "message" and event.get("role") == "assistant":
            report.text += _str(event, "content")
        elif kind in ("tool_use", "tool_result"):
            report.text = ""
        elif kind == "error" and event.get("severity") == "error":
            complaint = _str(event, "message")
        elif kind == "result":
            result = event
    if result is None:
        raise ValueError(f"no result event in {_excerpt(stdout)}")
    stats = result.get("stats")
    models = stats.get("models") if isinstance(stats, dict) else None
    if isinstance(models, dict) and models:
        report.model = str(next(iter(models)))
        for tokens in models.values():
            prompt, candidates = _int(tokens, "input_tokens"), _int(tokens, "output_tokens")
            thoughts = max(0, _int(tokens, "total_tokens") - prompt - candidates)
            report.usage += _usage(
                prompt, candidates + thoughts, _int(tokens, "cached"), 0, thoughts
            )
    if result.get("status") == "error":
        said = _str(result.get("error"), "message") or complaint or "the run failed"
        # An API error quotes the server's own JSON: "[API Error: {"error": {"message": ...}}]"
        with contextlib.suppress(ValueError):
            server, _ = json.JSONDecoder().raw_decode(said, said.index("{"))
            said = (
                _str(server.get("error") if isinstance(server, dict) else None, "message") or said
            )
        report.error = said
    report.events = [{k: v for k, v in result.items() if k != "type"}]
    return report


def parse_opencode(stdout: str) -> Report:
    """`opencode run --format json`: JSONL {type, sessionID, part}. The final message is the text
    of the last step; each step_finish carries tokens (input without cache reads and writes,
    output without reasoning, so we add them in) and dollars."""
    report, step_text = Report(), list[str]()
    for event in _jsonl(stdout):
        kind, part = event.get("type"), event.get("part")
        report.session = _str(event, "sessionID") or report.session
        if kind == "step_start":
            step_text = []
        elif kind == "text" and isinstance(part, dict):
            step_text.append(_str(part, "text"))
            report.text = "\n".join(step_text)
        elif kind == "step_finish" and isinstance(part, dict):
            tokens = part.get("tokens")
            cache = tokens.get("cache") if isinstance(tokens, dict) else None
            read, written = _int(cache, "read"), _int(cache, "write")
            fresh, reasoning = _int(tokens, "input"), _int(tokens, "reasoning")
            out = _int(tokens, "output") + reasoning
            cost = part.get("cost")
            dollars = float(cost) if isinstance(cost, int | float) else 0.0
            step = _usage(fresh + read + written, out, read, written, reasoning)
            step.cost = dollars
            report.usage += step
            report.priced = report.priced or dollars > 0
            report.events.append(part)
        elif kind == "error":
            error = event.get("error")
            data = error.get("data") if isinstance(error, dict) else None
            report.error = _str(data, "message") or _str(error, "name") or "error"
    return report


AIDER_TOKENS = re.compile(
    r"Tokens: ([\d.,]+[kM]?) sent(?:, ([\d.,]+[kM]?) cache write)?(?:, ([\d.,]+[kM]?) cache hit)?"
    r", ([\d.,]+[kM]?) received\.(?:\s+Cost: \$([\d.]+) message, \$([\d.]+) session\.)?"
)


def parse_aider(stdout: str) -> Report:
    """aider prints text; each model reply ends with "Tokens: 2.3k sent, 1.1k cache hit, 150
    received. Cost: $0.01 message, $0.02 session." (rounded figures; the cost goes on a line
    of its own when there are both cache hits and writes). "sent" counts the cache writes;
    aider reports no thinking tokens."""
    report = Report(text=stdout, session="chat-history")
    for match in AIDER_TOKENS.finditer(stdout):
        sent, written, hit, received, _message, session = match.groups()
        report.usage += _usage(_count(sent), _count(received), _count(hit), _count(written))
        if session is not None:
            report.usage.cost, report.priced = float(session), True
    return report


def parse_text(stdout: str) -> Report:
    return Report(text=stdout)


def _usage(tokens_in: int, out: int, cached: int, written: int = 0, thinking: int = 0) -> Usage:
    """Usage with the parts inside the totals: cache reads and writes in `tokens_in`, thinking
    in `out`."""
    return Usage(tokens_in, out, cached, tokens_cache_write=written, tokens_thinking=thinking)


# ---- reading JSON leniently


def _jsonl(text: str) -> list[dict[str, Any]]:
    events = []
    for line in text.splitlines():
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict):
                events.append(value)
    if not events:
        raise ValueError(f"no JSON events in {_excerpt(text)}")
    return events


def _excerpt(text: str) -> str:
    text = text.strip()
    return repr(shorten(text, 200)) if text else "(nothing)"


def _int(data: object, key: str) -> int:
    value = data.get(key) if isinstance(data, dict) else None
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _str(data: object, key: str) -> str:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, str) else ""


def _count(figure: str | None) -> int:
    """aider's rounded token figures: "842", "2.3k", "1,204", "1.2M"."""
    if not figure:
        return 0
    scale = {"k": 1_000, "M": 1_000_000}.get(figure[-1], 1)
    return round(float(figure.rstrip("kM").replace(",", "")) * scale)
