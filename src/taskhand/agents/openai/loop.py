"""The openai backend: our own tool loop over any OpenAI-compatible Chat Completions endpoint.

The model works in the unit's worktree through the shared tools and ends by calling
`submit_case`, or `submit_verdict` when it reviews. Provider hiccups are retried with backoff;
everything else becomes an outcome.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

from taskhand.agents import browser, tool_schemas, tools
from taskhand.agents import prices as price_list
from taskhand.agents.base import AgentError
from taskhand.agents.openai import chat, submissions
from taskhand.host.allowlist import child_env
from taskhand.host.secrets import Redactor
from taskhand.unit import (
    Case,
    CaseReport,
    Outcome,
    Question,
    Role,
    Unit,
    Usage,
    Verdict,
)

SYSTEM = (
    "You are the implementer of one task in a software project. Work only inside the workspace, "
    "the folder your tools start in. Verify your work before you finish: run the "
    "commands that prove it. Finish by calling submit_case: done with a resolution and the "
    "evidence for each criterion; question when a person must decide (2-4 options, the one you "
    "recommend first); failed with the reason when you cannot do it."
)
REVIEW_SYSTEM = (
    "You are the evaluator of one task in a software project: you review the candidate a worker "
    "made for it. Work only inside the workspace, the folder your tools start in: a copy of the "
    "candidate where you may read files and run commands (the tests among them), but not change "
    "files. Finish by calling submit_verdict: accept, or reject with the category, the concern, "
    "the evidence (file:symbol) and the next step the worker should take."
)
AUTHOR_SYSTEM = (
    "You are the author of a plan of tasks for a software project. Read the project in the "
    "workspace, the folder your tools start in, to name real paths and symbols; change nothing. "
    "Finish by calling submit_plan: done with the plan, or question when a person must decide "
    "(2-4 options, the one you recommend first) if the prompt allows questions."
)
NUDGE = "Call submit_case to finish, or continue working with the tools."
VERDICT_NUDGE = "Call submit_verdict to finish, or continue working with the tools."
OUT_OF_TIME = "the unit ran out of time"
WRITING_TOOLS = ("write", "edit")


class OpenAIAgent:
    """Runs units through a model behind an OpenAI-compatible endpoint; the key never leaves."""

    name = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        max_turns: int = 50,
        prices: Mapping[str, price_list.Price] | None = None,
        retries: int = 4,
        backoff: float = 0.5,
        request_timeout: float = 600.0,
        passed: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
    ) -> None:
        environ = dict(os.environ if env is None else env)
        key = api_key or environ.get("OPENAI_API_KEY", "")
        if not key:
            raise AgentError(
                "OPENAI_API_KEY is not set (fix: export it, or set a base URL of a local "
                "server and any key)"
            )
        self.model = model
        self.base_url = base_url or environ.get("OPENAI_BASE_URL") or None
        self.max_turns = max_turns
        self.prices = dict(prices) if prices is not None else price_list.table(environ)
        self.retries = retries
        self.backoff = backoff
        self.request_timeout = request_timeout
        self._api_key = key
        self._env = environ
        self._certificates = chat.Certificates()
        # The model's shell gets what a check gets: never the provider's key or endpoint.
        self.tool_env = child_env(passed=passed, env=environ)
        self.redact = Redactor(environ, extra=(key,))

    def run(self, unit: Unit) -> Outcome:
        # Each unit gets a client of its own, closed with the unit; the certificates, which
        # took longer to load than the rest of a client's making, are loaded once per agent.
        tls = self._certificates.get()
        with (
            chat.ChatClient(self.base_url, self._api_key, self._env, tls) as client,
            browser.session_for(unit, self.tool_env) as session,
        ):
            return _Session(self, unit, client, session).run()


class _Session:
    """One unit's conversation, from the first message to its outcome."""

    def __init__(
        self,
        agent: OpenAIAgent,
        unit: Unit,
        client: chat.ChatClient,
        session: browser.BrowserSession | None = None,
    ) -> None:
        self.agent, self.unit, self.client, self.browser = agent, unit, client, session
        self.model = unit.model or agent.model
        self.deadline = time.monotonic() + unit.timeout_seconds
        self.writable = unit.role.writes
        self.finisher = "submit_verdict" if unit.role.judges else "submit_case"
        finishing = submissions.SUBMIT_VERDICT if unit.role.judges else submissions.SUBMIT_CASE
        if unit.role is Role.AUTHOR:
            self.finisher, finishing = "submit_plan", submissions.SUBMIT_PLAN
        self.tools = [finishing] + [
            schema
            for schema in tool_schemas.SCHEMAS
            if self.writable or schema.get("function", {}).get("name") not in WRITING_TOOLS
        ]
        if session is not None:
            self.tools += tool_schemas.BROWSER_SCHEMAS
        self.messages: list[dict[str, Any]] = []
        self.transcript: list[dict[str, object]] = []
        self.usage = Usage()
        self.nudged = False

    def run(self) -> Outcome:
        role = self.unit.role
        system = AUTHOR_SYSTEM if role is Role.AUTHOR else REVIEW_SYSTEM if role.judges else SYSTEM
        self.add({"role": "system", "content": system})
        self.add({"role": "user", "content": self.unit.prompt})
        for _ in range(self.agent.max_turns):
            answer = self.ask()
            if isinstance(answer, str):
                return self.end(Case.ERROR, failure=answer)
            outcome = self.act(answer)
            if outcome is not None:
                return outcome
        turns = self.agent.max_turns
        return self.end(Case.ERROR, failure=f"the model used all {turns} turns without submitting")

    def ask(self) -> dict[str, Any] | str:
        """The model's next answer, or why there is none; failed calls do not count as turns."""
        last = ""
        for attempt in range(self.agent.retries + 1):
            if attempt:
                self.note(role="retry", attempt=attempt, error=last)
                time.sleep(min(self.agent.backoff * 2 ** (attempt - 1), self.left()))
            if self.left() <= 0:
                return OUT_OF_TIME
            try:
                completion = self.client.create(
                    self.model,
                    self.messages,
                    self.tools,
                    timeout=min(self.agent.request_timeout, self.left()),
                )
            except chat.StatusError as exc:
                last = str(exc)
                if exc.status != 429 and exc.status < 500:
                    return f"the provider refused the request ({last})"
                continue
            except chat.Unreachable as exc:
                last = str(exc)
                continue
            except chat.ProviderError as exc:
                return f"the provider's answer could not be read: {exc}"
            self.count(completion)
            message = _message(completion)
            if message.get("tool_calls") or _text(message.get("content")).strip():
                return message
            last = "the model gave an empty answer"
        if self.left() <= 0:
            return OUT_OF_TIME
        return f"the provider failed {self.agent.retries + 1} times; the last error: {last}"

    def act(self, message: dict[str, Any]) -> Outcome | None:
        """Carry out the answer's tool calls; the outcome once a valid submission arrives."""
        calls = [_without_nulls(c) for c in message.get("tool_calls") or [] if isinstance(c, dict)]
        entry: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
        if calls:
            entry["tool_calls"] = calls
        self.add(entry)
        if not calls:
            if self.nudged:
                said = " ".join(_text(message.get("content")).split())[:200]
                return self.end(
                    Case.ERROR,
                    failure=f"the model answered twice without calling a tool (last: {said!r})",
                )
            self.nudged = True
            nudge = VERDICT_NUDGE if self.unit.role.judges else NUDGE
            self.add({"role": "user", "content": nudge.replace("submit_case", self.finisher)})
            return None
        for call in calls:
            if self.left() <= 0:
                return self.end(Case.ERROR, failure=OUT_OF_TIME)
            call_id, kind, function = call.get("id"), call.get("type"), call.get("function")
            if kind != "function" or not isinstance(function, dict):
                self.reply(call_id, f"error: {kind} tool calls are not offered", ok=False)
                continue
            name, arguments = _text(function.get("name")), _text(function.get("arguments"))
            if name in ("submit_case", "submit_verdict", "submit_plan"):
                outcome = self.finish(call_id, name, arguments)
                if outcome is not None:
                    return outcome
            else:  # the tools answer malformed arguments themselves
                context = tools.ToolContext(
                    worktree=self.unit.worktree,
                    timeout_seconds=max(0.1, min(tools.ToolContext.timeout_seconds, self.left())),
                    env={**self.agent.tool_env, **self.unit.env},
                    writable=self.writable,
                    sandbox=self.unit.sandbox,
                    browser=self.browser,
                )
                result = tools.execute(name, arguments, context)
                self.reply(call_id, result.output, ok=result.ok)
        return None

    def finish(self, call_id: object, name: str, arguments: str) -> Outcome | None:
        """The outcome a valid submission gives; None once the model is told what to fix."""
        submission = submissions.parse(arguments, name)
        if name != self.finisher:
            role, finisher = self.unit.role, self.finisher
            problem = f"error: {name} is not offered to the {role}; finish by calling {finisher}"
        elif isinstance(submission, str):
            problem = submission
        elif name in ("submit_case", "submit_plan"):
            check = submissions.check if name == "submit_case" else submissions.check_plan
            problem = check(submission)
            if not problem:
                self.reply(call_id, "accepted", ok=True)
                return self.submit(submission)
        else:
            # Parsed from the redacted arguments, so no secret reaches the stored verdict.
            clean = self.agent.redact.value(submission)
            verdict = Verdict.parse(clean)
            if not isinstance(verdict, str):
                self.reply(call_id, "accepted", ok=True)
                self.note(role="outcome", submission=clean)
                return self.end(Case.DONE, verdict=verdict)
            problem = f"error: submit_verdict was not accepted: {verdict}; call it again"
        self.reply(call_id, problem, ok=False)
        return None

    def submit(self, arguments: dict[str, Any]) -> Outcome:
        arguments = self.agent.redact.value(arguments)
        case = Case(arguments["case"])
        question = None
        if case is Case.QUESTION:
            question = Question(str(arguments["question"]), [str(o) for o in arguments["options"]])
        self.note(role="outcome", submission=arguments)
        resolution = arguments.get("resolution") or ""
        if self.finisher == "submit_plan" and case is Case.DONE:  # the plan, as JSON text
            resolution = json.dumps(arguments.get("plan"))
        return self.end(
            case,
            resolution=str(resolution),
            failure=str(arguments.get("failure") or ""),
            question=question,
            report=CaseReport.from_json(arguments),
        )

    def count(self, completion: dict[str, Any]) -> None:
        """Add a billed call's tokens and dollars: as the provider reports, else estimated."""
        usage = completion.get("usage")
        if not isinstance(usage, dict):
            self.usage += Usage(estimated=True)
            return
        sent = _details(usage, "prompt_tokens_details")
        made = _details(usage, "completion_tokens_details")
        prompt, out = _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
        cached = _count(sent.get("cached_tokens"))
        # completion_tokens counts the reasoning ones, prompt_tokens the cached ones. Cache
        # writes come from Anthropic-style servers (a LiteLLM proxy's top-level field,
        # OpenRouter's detail): inside prompt_tokens unless total_tokens counts them apart.
        written = _count(usage.get("cache_creation_input_tokens") or sent.get("cache_write_tokens"))
        if written and _count(usage.get("total_tokens")) == prompt + out + written:
            prompt += written
        thinking = _count(made.get("reasoning_tokens"))
        call = Usage(prompt, out, cached, tokens_cache_write=written, tokens_thinking=thinking)
        reported = usage.get("cost")
        if isinstance(reported, int | float) and not isinstance(reported, bool):
            call.cost = float(reported)
        else:
            call.cost = price_list.estimate(self.model, call, self.agent.prices) or 0.0
            call.estimated = True
        self.usage += call

    def add(self, message: dict[str, Any], **shown: object) -> None:
        """Send-side history and transcript get the same redacted message; `shown` is for
        the transcript alone (whether a tool call went well)."""
        clean = self.agent.redact.value(message)
        self.messages.append(clean)
        self.unit.record(self.transcript, {**clean, **shown})

    def reply(self, call_id: object, output: str, *, ok: bool) -> None:
        self.add({"role": "tool", "tool_call_id": call_id, "content": output}, ok=ok)

    def note(self, **event: object) -> None:
        self.unit.record(self.transcript, self.agent.redact.value(event))

    def left(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def end(self, case: Case, **fields: Any) -> Outcome:
        fields["failure"] = self.agent.redact(fields.get("failure", ""))
        return Outcome(case, usage=self.usage, transcript=self.transcript, **fields)


def _message(completion: dict[str, Any]) -> dict[str, Any]:
    """The first choice's message; empty when the answer has none."""
    choices = completion.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    return message if isinstance(message, dict) else {}


def _without_nulls(value: Any) -> Any:
    """`value` without its null fields, at any depth: what the SDK sent back of a tool call."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    return value


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _details(usage: dict[str, Any], key: str) -> dict[str, Any]:
    value = usage.get(key)
    return value if isinstance(value, dict) else {}


def _count(value: object) -> int:
    """A token count as sent; a null (some compatible servers send them) counts as none."""
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0
