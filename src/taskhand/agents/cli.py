"""The cli backends: a coding agent's own program (claude, codex, gemini, opencode, aider, or a
command template) runs each unit in its worktree. A preset knows the program's flags for writing
and reviewing roles, how the prompt goes in, and how to read its final message, usage and cost.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from taskhand.agents import prices as price_list
from taskhand.agents.base import AgentError, Case, Outcome, Question, Role, Unit, Usage
from taskhand.secrets import Redactor, clean_env

COMMAND_ENV = "TASKHAND_AGENT_CMD"
NUDGE = (
    "Your last message did not end with the outcome block. Reply with only that block, as "
    'fenced JSON: {"case": "done", "resolution": "..."}, or {"case": "question", "question": '
    '"...", "options": ["...", "..."]}, or {"case": "failed", "failure": "..."}.'
)
OUTCOME_HINT = "End your final message with the fenced JSON outcome block the task asks for."
OUTPUT_LIMIT = 16 * 1024 * 1024  # stdout kept; the first MiB and the rest from the end
STDERR_TAIL = 2000  # characters of stderr quoted in a failure
GRACE_SECONDS = 3.0  # between SIGTERM and SIGKILL of a timed-out program
CLAUDE_WRITE_TOOLS = "Bash,Edit,Write,NotebookEdit,Read,Glob,Grep"
CLAUDE_READ_TOOLS = "Read,Glob,Grep,Bash"
# Credentials that opencode, aider and custom commands may need; add more with `keys=`.
PROVIDER_KEYS = tuple(
    f"{provider}_API_KEY"
    for provider in (
        "ANTHROPIC",
        "OPENAI",
        "GEMINI",
        "GOOGLE",
        "OPENROUTER",
        "DEEPSEEK",
        "GROQ",
        "MISTRAL",
        "XAI",
    )
)


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


@dataclass
class Call:
    """One invocation: the argv, and the text for stdin (None: stdin is /dev/null)."""

    argv: list[str]
    stdin: str | None = None


@dataclass
class Context:
    """What a preset needs to build its argv for one unit."""

    program: str
    unit: Unit
    scratch: Path  # a private folder outside the worktree, gone after the unit
    env: Mapping[str, str]
    model: str | None
    extra: Sequence[str]
    template: str = ""

    @property
    def writing(self) -> bool:
        return self.unit.role is Role.IMPLEMENTER


@dataclass(frozen=True)
class Preset:
    program: str
    package: str  # where the program comes from, for the error that says it is missing
    keys: tuple[str, ...]  # credential variables the program may see
    call: Callable[[Context, str, Report | None], Call]  # (context, prompt, run to resume)
    parse: Callable[[str], Report]
    resumable: bool = True
    totals: bool = False  # a resumed run reports the whole session's usage, not its own
    env: tuple[tuple[str, str], ...] = ()  # defaults for the program's environment


class CliAgent:
    """Runs units through an agent's command-line program; failures come back as outcomes."""

    def __init__(
        self,
        preset: str,
        *,
        model: str | None = None,
        command: str | None = None,
        program: str | None = None,
        extra_args: Sequence[str] = (),
        keys: Sequence[str] = (),
        prices: Mapping[str, price_list.Price] | None = None,
        output_limit: int = OUTPUT_LIMIT,
        env: Mapping[str, str] | None = None,
    ) -> None:
        if preset not in PRESETS:
            raise AgentError(f"unknown cli preset {preset!r} (fix: use one of {', '.join(NAMES)})")
        environ = dict(os.environ if env is None else env)
        self.name = preset
        self.preset = PRESETS[preset]
        self.model = model
        self.extra = list(extra_args)
        self.output_limit = output_limit
        self.prices = dict(prices) if prices is not None else price_list.table(environ)
        self.template = ""
        if preset == "custom":
            self.template = command or environ.get(COMMAND_ENV, "")
            words = _split(self.template)
            if not words:
                raise AgentError(
                    f"the custom agent needs a command (fix: set {COMMAND_ENV}, e.g. "
                    "'my-agent --prompt-file {prompt_file}')"
                )
            wanted, source = words[0], f"the command in {COMMAND_ENV}"
        else:
            wanted, source = program or self.preset.program, self.preset.package
        found = shutil.which(wanted, path=environ.get("PATH"))
        if found is None:
            raise AgentError(f"{wanted!r} is not on PATH (fix: install {source})")
        self.program = found
        allowed = {*self.preset.keys, *keys}
        self.env = {
            **dict(self.preset.env),
            **clean_env(environ),
            **{k: environ[k] for k in allowed if k in environ},
        }
        self.redact = Redactor(environ)

    def run(self, unit: Unit) -> Outcome:
        deadline = time.monotonic() + unit.timeout_seconds
        with tempfile.TemporaryDirectory(prefix="taskhand-cli-") as scratch:
            model = unit.model or self.model
            context = Context(self.program, unit, Path(scratch), self.env, model, self.extra)
            context.template = self.template
            transcript: list[dict[str, object]] = [{"role": "user", "content": unit.prompt}]
            report, failure = self._attempt(context, unit.prompt, None, deadline, transcript)
            if failure:
                return self._end(Case.ERROR, report, transcript, context.model, failure=failure)
            found = parse_outcome(report.text)
            if isinstance(found, str) and self.preset.resumable and report.session:
                first = report
                report, failure = self._attempt(context, NUDGE, first, deadline, transcript)
                if not self.preset.totals:
                    report.usage = first.usage + report.usage
                    report.priced = first.priced and report.priced
                if failure:
                    return self._end(Case.ERROR, report, transcript, context.model, failure=failure)
                found = parse_outcome(report.text)
            if isinstance(found, str):
                return self._end(Case.ERROR, report, transcript, context.model, failure=found)
            return self._end(found.case, report, transcript, context.model, found=found)

    def _attempt(
        self,
        context: Context,
        prompt: str,
        resume: Report | None,
        deadline: float,
        transcript: list[dict[str, object]],
    ) -> tuple[Report, str]:
        """Run the program once: its report, and why the unit broke ("" when it did not)."""
        call = self.preset.call(context, prompt, resume)
        run = execute(call, context.unit.worktree, self.env, deadline, self.output_limit)
        transcript.append({"role": "agent", "argv": _shown(call, prompt), "exit_code": run.code})
        if run.error:
            return Report(), run.error
        try:
            report, unreadable = self.preset.parse(run.stdout), ""
        except ValueError as exc:
            report, unreadable = Report(), f"{self.name} printed output we cannot read: {exc}"
        transcript.extend(_clip(event) for event in report.events)
        tail = run.stderr.strip()[-STDERR_TAIL:] or run.stdout.strip()[-STDERR_TAIL:]
        if run.timed_out:
            return report, f"timed out after {context.unit.timeout_seconds:g} s"
        if report.error:
            return report, f"{self.name} failed: {report.error}"
        if run.code != 0:
            return report, f"{self.name} exited {run.code}: {tail or '(no output)'}"
        return report, unreadable

    def _end(
        self,
        case: Case,
        report: Report,
        transcript: list[dict[str, object]],
        model: str | None,
        *,
        failure: str = "",
        found: Found | None = None,
    ) -> Outcome:
        usage = report.usage
        model = report.model or model
        if not report.priced and usage.tokens_in + usage.tokens_out > 0:
            dollars = price_list.estimate(model or "", usage, self.prices)
            if dollars is None:
                transcript.append({"role": "note", "content": f"no price for model {model!r}"})
            else:
                usage = Usage(usage.tokens_in, usage.tokens_out, usage.tokens_cached, dollars, True)
        transcript.append(_clip({"role": "assistant", "content": report.text}, 20_000))
        return Outcome(
            case,
            resolution=self.redact(found.resolution if found else ""),
            failure=self.redact(failure or (found.failure if found else "")),
            question=found.question if found else None,
            usage=usage,
            transcript=self.redact.value(transcript),
        )


# ---- the outcome block at the end of the final message


@dataclass
class Found:
    case: Case
    resolution: str = ""
    failure: str = ""
    question: Question | None = None


TAIL_SEARCHED = 20_000  # characters from the end searched for a bare {...} outcome


def parse_outcome(text: str) -> Found | str:
    """The outcome the final message ends with: the last fenced JSON block that has a "case",
    else the last {...} object that has one; a string saying what is wrong otherwise."""
    candidates = [b for b in map(_load, _fenced(text)) if b is not None and "case" in b]
    if not candidates:
        decoder, tail = json.JSONDecoder(), text[-TAIL_SEARCHED:]
        for start in (m.start() for m in re.finditer(r"\{", tail)):
            with contextlib.suppress(ValueError):
                value, _ = decoder.raw_decode(tail, start)
                if isinstance(value, dict) and "case" in value:
                    candidates.append(value)
    if not candidates:
        return "the agent's final message has no outcome block (a fenced JSON with a case)"
    block = candidates[-1]
    case = str(block.get("case", "")).strip().lower()
    if case == "done":
        return Found(Case.DONE, resolution=_text(block.get("resolution")))
    if case == "failed":
        return Found(Case.FAILED, failure=_text(block.get("failure")) or "the agent gave up")
    if case == "question":
        options = block.get("options")
        listed = [str(o) for o in options] if isinstance(options, list) else []
        question = _text(block.get("question"))
        if question:
            return Found(Case.QUESTION, question=Question(question, listed))
        return "the agent's outcome block asks a question but gives no question text"
    return f"the agent's outcome block has case {case!r} (expected done, question or failed)"


def _fenced(text: str) -> list[str]:
    """The bodies of the ``` fenced blocks in `text`, whatever their language."""
    blocks: list[str] = []
    body: list[str] | None = None
    for line in text.splitlines():
        if line.strip().startswith("```"):
            if body is None:
                body = []
            else:
                blocks.append("\n".join(body))
                body = None
        elif body is not None:
            body.append(line)
    return blocks


def _load(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _text(value: object) -> str:
    return "" if value is None else value if isinstance(value, str) else json.dumps(value)


# ---- running a program


@dataclass
class Finished:
    code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    error: str = ""  # it could not start


def execute(
    call: Call, cwd: Path, env: Mapping[str, str], deadline: float, limit: int = OUTPUT_LIMIT
) -> Finished:
    """Run `call` in its own process group; killed at the deadline, output capped."""
    try:
        proc = subprocess.Popen(
            call.argv,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL if call.stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return Finished(None, "", "", error=f"{call.argv[0]} could not start: {exc}")
    out, err = _Capture(limit, head=min(limit // 2, 1 << 20)), _Capture(64 * 1024, head=0)
    threads = [
        threading.Thread(target=out.drain, args=(proc.stdout,), daemon=True),
        threading.Thread(target=err.drain, args=(proc.stderr,), daemon=True),
    ]
    if proc.stdin is not None:
        threads.append(threading.Thread(target=_feed, args=(proc.stdin, call.stdin), daemon=True))
    for thread in threads:
        thread.start()
    timed_out = False
    try:
        proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        timed_out = True
        _signal_group(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            _signal_group(proc.pid, signal.SIGKILL)
            proc.wait()
    # Children left behind would hold the pipes open and outlive the unit.
    _signal_group(proc.pid, signal.SIGKILL)
    for thread in threads:
        thread.join(5)
    for pipe, thread in zip((proc.stdout, proc.stderr), threads, strict=False):
        if pipe is not None and not thread.is_alive():  # a reader still blocked holds its lock
            pipe.close()
    return Finished(proc.returncode, out.text(), err.text(), timed_out)


def _feed(pipe: IO[bytes], text: str | None) -> None:
    with contextlib.suppress(OSError):
        pipe.write((text or "").encode())
    with contextlib.suppress(OSError):
        pipe.close()


def _signal_group(pgid: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


class _Capture:
    """The first `head` bytes and a bounded tail, so endless output costs bounded memory."""

    def __init__(self, limit: int, head: int) -> None:
        self.limit, self.head_limit = limit, head
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def drain(self, pipe: IO[bytes]) -> None:
        with contextlib.suppress(OSError, ValueError):
            for chunk in iter(lambda: pipe.read1(65536), b""):  # type: ignore[attr-defined]
                room = self.head_limit - len(self.head)
                if room > 0:
                    self.head += chunk[:room]
                    chunk = chunk[room:]
                self.tail += chunk
                excess = len(self.tail) - (self.limit - self.head_limit)
                if excess > 0:
                    del self.tail[:excess]
                    self.dropped += excess

    def text(self) -> str:
        gap = f"\n[{self.dropped} bytes left out]\n".encode() if self.dropped else b""
        return bytes(self.head + gap + self.tail).decode("utf-8", "replace")


def _shown(call: Call, prompt: str) -> list[str]:
    """The argv for the transcript, with the prompt (stored once already) left out."""
    return [arg.replace(prompt, "<prompt>") if prompt else arg for arg in call.argv]


def _split(template: str) -> list[str]:
    try:
        return shlex.split(template)
    except ValueError as exc:
        raise AgentError(f"{COMMAND_ENV}: {exc} (fix: balance its quotes)") from None


def _clip(event: dict[str, object], limit: int = 4000) -> dict[str, object]:
    """An event for the transcript, with long strings (command output) cut to `limit`."""
    return {
        key: value[:limit] + "..." if isinstance(value, str) and len(value) > limit else value
        for key, value in event.items()
    }


# ---- presets: argv for one unit, and the reading of what the program printed


def _claude_call(ctx: Context, prompt: str, resume: Report | None) -> Call:
    argv = [ctx.program, "-p", "--output-format", "json"]
    if ctx.writing:
        argv += ["--permission-mode", "acceptEdits", f"--allowedTools={CLAUDE_WRITE_TOOLS}"]
    else:  # only the reading tools exist, and anything else is refused without asking
        argv += [
            "--permission-mode",
            "dontAsk",
            f"--tools={CLAUDE_READ_TOOLS}",
            f"--allowedTools={CLAUDE_READ_TOOLS}",
        ]
    if ctx.model:
        argv += ["--model", ctx.model]
    if resume is not None:
        argv += ["--resume", resume.session]
    else:
        argv += ["--append-system-prompt", OUTCOME_HINT]
    return Call([*argv, *ctx.extra], stdin=prompt)


def parse_claude(stdout: str) -> Report:
    """`claude -p --output-format json`: one result object. On a resumed session `usage` covers
    the last run only, while `modelUsage` and `total_cost_usd` cover the whole session."""
    data = _last_object(stdout)
    if data.get("type") != "result":
        raise ValueError(f"expected a result object, got type {data.get('type')!r}")
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
            report.usage += Usage(fresh + read + made, _int(counts, "outputTokens"), read)
    else:
        usage = data.get("usage")
        fresh, read, made = (
            _int(usage, k)
            for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
        )
        report.usage = Usage(fresh + read + made, _int(usage, "output_tokens"), read)
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


def _codex_call(ctx: Context, prompt: str, resume: Report | None) -> Call:
    sandbox = "workspace-write" if ctx.writing else "read-only"
    argv = [ctx.program, "exec", "--json", "--skip-git-repo-check", "--sandbox", sandbox]
    argv += ["-C", str(ctx.unit.worktree)]
    if ctx.model:
        argv += ["-m", ctx.model]
    base_url = ctx.env.get("OPENAI_BASE_URL", "")
    if base_url:  # codex reads no base-URL variable; a provider of our own carries it
        provider = {
            "name": "taskhand",
            "base_url": base_url,
            "env_key": "OPENAI_API_KEY",
            "wire_api": "responses",
        }
        argv += ["-c", 'model_provider="taskhand"']
        for key, value in provider.items():
            argv += ["-c", f"model_providers.taskhand.{key}={json.dumps(value)}"]
    argv += ctx.extra
    if resume is not None:
        argv += ["resume", resume.session]
    return Call([*argv, "-"], stdin=prompt)


def parse_codex(stdout: str) -> Report:
    """`codex exec --json`: JSONL events. `turn.completed` carries the thread's token totals
    (a resumed thread's included); codex reports no dollars."""
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
            cached = _int(usage, "cached_input_tokens")
            report.usage = Usage(_int(usage, "input_tokens"), _int(usage, "output_tokens"), cached)
        elif kind == "turn.failed":
            error = event.get("error")
            report.error = _str(error, "message") or "the turn failed"
            finished = True
        elif kind == "error":  # also retries ("Reconnecting... 2/5"), so not final by itself
            complaint = _str(event, "message")
    if not finished:
        report.error = complaint or "codex ended without completing its turn"
    return report


def _gemini_call(ctx: Context, prompt: str, resume: Report | None) -> Call:
    mode = "yolo" if ctx.writing else "plan"
    argv = [ctx.program, "--output-format", "json", "--skip-trust", "--approval-mode", mode]
    if ctx.model:
        argv += ["-m", ctx.model]
    if resume is not None:
        argv += ["--resume", resume.session]
    return Call([*argv, *ctx.extra, f"--prompt={prompt}"])


def parse_gemini(stdout: str) -> Report:
    """`gemini --output-format json`: {session_id, response, stats: {models: {name: {tokens}}},
    error}. Prompt tokens include the cached ones; thoughts are billed as output."""
    data = _last_object(stdout)
    report = Report(text=_str(data, "response"), session=_str(data, "session_id") or "latest")
    stats = data.get("stats")
    models = stats.get("models") if isinstance(stats, dict) else None
    if isinstance(models, dict):
        for name, entry in models.items():
            tokens = entry.get("tokens") if isinstance(entry, dict) else None
            out = _int(tokens, "candidates") + _int(tokens, "thoughts")
            report.usage += Usage(_int(tokens, "prompt"), out, _int(tokens, "cached"))
            report.model = report.model or str(name)
    error = data.get("error")
    if error:
        report.error = _str(error, "message") or json.dumps(error)
    report.events = [{k: v for k, v in data.items() if k != "response"}]
    return report


def _opencode_call(ctx: Context, prompt: str, resume: Report | None) -> Call:
    argv = [ctx.program, "run", "--format", "json"]
    argv += ["--agent", "build", "--auto"] if ctx.writing else ["--agent", "plan"]
    if ctx.model:
        argv += ["-m", ctx.model]
    if resume is not None:
        argv += ["--session", resume.session]
    return Call([*argv, *ctx.extra, "--", prompt])


def parse_opencode(stdout: str) -> Report:
    """`opencode run --format json`: JSONL {type, sessionID, part}. The final message is the text
    of the last step; each step_finish carries tokens (input without cache) and dollars."""
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
            fresh, out = _int(tokens, "input"), _int(tokens, "output") + _int(tokens, "reasoning")
            cost = part.get("cost")
            dollars = float(cost) if isinstance(cost, int | float) else 0.0
            report.usage += Usage(fresh + read + written, out, read, dollars)
            report.priced = report.priced or dollars > 0
            report.events.append(part)
        elif kind == "error":
            error = event.get("error")
            data = error.get("data") if isinstance(error, dict) else None
            report.error = _str(data, "message") or _str(error, "name") or "error"
    return report


def _aider_call(ctx: Context, prompt: str, resume: Report | None) -> Call:
    message = ctx.scratch / "message.md"
    message.write_text(prompt, encoding="utf-8")
    argv = [
        ctx.program,
        "--message-file",
        str(message),
        "--yes-always",
        "--no-auto-commits",
        "--no-dirty-commits",
        "--no-pretty",
        "--no-stream",
        "--no-check-update",
        "--no-show-model-warnings",
        "--no-gitignore",
        "--analytics-disable",
        "--chat-history-file",
        str(ctx.scratch / "chat.md"),
        "--input-history-file",
        str(ctx.scratch / "input.history"),
    ]
    if not ctx.writing:
        argv += ["--chat-mode", "ask", "--dry-run"]
    if ctx.model:
        argv += ["--model", ctx.model]
    if resume is not None:
        argv += ["--restore-chat-history"]
    return Call([*argv, *ctx.extra])


AIDER_TOKENS = re.compile(
    r"Tokens: ([\d.,]+[kM]?) sent(?:, ([\d.,]+[kM]?) cache write)?(?:, ([\d.,]+[kM]?) cache hit)?"
    r", ([\d.,]+[kM]?) received\.(?: Cost: \$([\d.]+) message, \$([\d.]+) session\.)?"
)


def parse_aider(stdout: str) -> Report:
    """aider prints text; each model reply ends with "Tokens: 2.3k sent, 1.1k cache hit, 150
    received. Cost: $0.01 message, $0.02 session." (rounded figures)."""
    report = Report(text=stdout, session="chat-history")
    for match in AIDER_TOKENS.finditer(stdout):
        sent, _written, hit, received, _message, session = match.groups()
        report.usage += Usage(_count(sent), _count(received), _count(hit))
        if session is not None:
            report.usage.cost, report.priced = float(session), True
    return report


def _custom_call(ctx: Context, prompt: str, resume: Report | None) -> Call:
    words = _split(ctx.template)
    prompt_file = ctx.scratch / "prompt.md"
    prompt_file.write_text(prompt, encoding="utf-8")
    values = {
        "{prompt_file}": str(prompt_file),
        "{worktree}": str(ctx.unit.worktree),
        "{model}": ctx.model or "",
    }
    argv = [ctx.program]
    for word in words[1:]:
        for placeholder, value in values.items():
            word = word.replace(placeholder, value)
        argv.append(word)
    by_file = any("{prompt_file}" in word for word in words)
    return Call([*argv, *ctx.extra], stdin=None if by_file else prompt)


def parse_text(stdout: str) -> Report:
    return Report(text=stdout)


PRESETS: dict[str, Preset] = {
    "claude": Preset(
        "claude",
        "npm @anthropic-ai/claude-code",
        (
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "AWS_BEARER_TOKEN_BEDROCK",
            "GOOGLE_APPLICATION_CREDENTIALS",
        ),
        _claude_call,
        parse_claude,
        totals=True,
        env=(("DISABLE_AUTOUPDATER", "1"),),
    ),
    "codex": Preset(
        "codex",
        "npm @openai/codex",
        ("OPENAI_API_KEY", "CODEX_API_KEY"),
        _codex_call,
        parse_codex,
        totals=True,
    ),
    "gemini": Preset(
        "gemini",
        "npm @google/gemini-cli",
        ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS"),
        _gemini_call,
        parse_gemini,
    ),
    "opencode": Preset(
        "opencode", "npm opencode-ai", PROVIDER_KEYS, _opencode_call, parse_opencode
    ),
    "aider": Preset("aider", "PyPI aider-chat", PROVIDER_KEYS, _aider_call, parse_aider),
    "custom": Preset("", "", PROVIDER_KEYS, _custom_call, parse_text, resumable=False),
}
NAMES = tuple(PRESETS)


# ---- reading JSON leniently


def _last_object(text: str) -> dict[str, Any]:
    """The JSON object a program printed, or the last one where it printed more than that."""
    with contextlib.suppress(ValueError):
        value = json.loads(text)
        if isinstance(value, dict):
            return value
    decoder, found = json.JSONDecoder(), None
    for match in re.finditer(r"^\{", text, re.M):
        with contextlib.suppress(ValueError):
            value, _ = decoder.raw_decode(text, match.start())
            if isinstance(value, dict):
                found = value
    if found is None:
        raise ValueError(f"no JSON object in {_excerpt(text)}")
    return found


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
    return repr(text[:200] + "...") if len(text) > 200 else repr(text) if text else "(nothing)"


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
