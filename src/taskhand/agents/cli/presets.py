"""The cli presets: for each agent program (claude, codex, gemini, opencode, aider, or a command
template) its flags for writing and reviewing roles, how the prompt goes in, how a session
resumes, which variables it may see, and which parser reads its output.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from taskhand.agents.base import AgentError
from taskhand.agents.cli import aider, claude, gemini, mcp, opencode, outcome_tool
from taskhand.agents.cli.codex_sandbox import helper_path, sandbox_mode
from taskhand.agents.cli.output import (
    Report,
    parse_claude,
    parse_codex,
    parse_gemini,
    parse_opencode,
    parse_text,
)
from taskhand.agents.prices import Price
from taskhand.host.process import Call
from taskhand.unit import Unit

COMMAND_ENV = "TASKHAND_AGENT_CMD"
OUTCOME_HINT = "End your final message with the fenced JSON outcome block the task asks for."
CLAUDE_WRITE_TOOLS = "Bash,Edit,Write,NotebookEdit,Read,Glob,Grep"
CLAUDE_READ_TOOLS = "Read,Glob,Grep,Bash"
# The variables a program may see, beyond the allow-list every child gets (allowlist.py): its
# credentials, endpoint and own settings. `NAME_*` is a prefix: the program's own namespace.
# opencode, aider and custom commands may use any provider; add more with `keys=` or the plan's
# `[env] pass`.
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
PROVIDERS = (
    *PROVIDER_KEYS,
    "OPENAI_BASE_URL",
    "OPENAI_API_BASE",
    "ANTHROPIC_BASE_URL",
    "OLLAMA_API_BASE",
)
CLAUDE_VARIABLES = (
    "ANTHROPIC_*",
    "CLAUDE_*",  # CLAUDE_CONFIG_DIR, CLAUDE_CODE_OAUTH_TOKEN, CLAUDE_CODE_USE_BEDROCK, ...
    "DISABLE_TELEMETRY",
    "DISABLE_ERROR_REPORTING",
    "DISABLE_AUTOUPDATER",
    "DISABLE_NON_ESSENTIAL_MODEL_CALLS",
    "IS_SANDBOX",
    "MAX_THINKING_TOKENS",
    "BASH_DEFAULT_TIMEOUT_MS",
    "BASH_MAX_TIMEOUT_MS",
    "AWS_ACCESS_KEY_ID",  # Bedrock
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_REGION",
    "AWS_PROFILE",
    "GOOGLE_APPLICATION_CREDENTIALS",  # Vertex
    "CLOUD_ML_REGION",
)
CODEX_VARIABLES = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_ORGANIZATION",
    "OPENAI_PROJECT",
    "CODEX_*",  # CODEX_API_KEY, CODEX_HOME
)


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
    # taskhand's own files for the program (settings, MCP servers, policies, schemas): a
    # folder its processes can read and not write (the scratch folder when none is given).
    fixed: Path | None = None
    outer_sandbox: bool = False  # taskhand runs the program inside a sandbox of its own
    browser: list[str] | None = None  # the unit's browser: the MCP server's command (mcp.py)
    outcome: list[str] | None = None  # the outcome tools' MCP server (outcome_tool.py)
    home: dict[str, str] = field(default_factory=dict)  # the unit's private home (agent_home.py)
    prices: Mapping[str, Price] = field(default_factory=dict)  # the run's price table

    @property
    def writing(self) -> bool:
        return self.unit.role.writes

    @property
    def own(self) -> Path:
        """Where taskhand writes its own files for the program."""
        return self.fixed or self.scratch


@dataclass(frozen=True)
class Preset:
    program: str
    package: str  # where the program comes from, for the error that says it is missing
    variables: tuple[str, ...]  # what the program may see beyond the allow-list
    call: Callable[[Context, str, Report | None], Call]  # (context, prompt, run to resume)
    parse: Callable[[str], Report]
    resumable: bool = True
    totals: bool = False  # a resumed run reports the whole session's usage, not its own
    env: tuple[tuple[str, str], ...] = ()  # defaults for the program's environment
    # Its stdout and stderr are sockets no other process can reopen (host/process.py); aider's
    # are pipes, since it opens /dev/stdout itself (and runs no commands that could forge them).
    sealed: bool = True


def _claude_call(ctx: Context, prompt: str, resume: Report | None) -> Call:
    # The events, tool calls among them, one a line; the last line is the result.
    argv = [ctx.program, "-p", "--output-format", "stream-json", "--verbose"]
    argv += claude.flags(ctx.home, ctx.own)
    browsing = f",{mcp.CLAUDE_TOOLS}" if ctx.browser else ""
    if ctx.outcome:
        browsing += f",mcp__{outcome_tool.SERVER}"
    if ctx.writing:
        argv += [
            "--permission-mode",
            "acceptEdits",
            f"--allowedTools={CLAUDE_WRITE_TOOLS}{browsing}",
        ]
    else:  # only the reading tools exist, and anything else is refused without asking
        argv += [
            "--permission-mode",
            "dontAsk",
            f"--tools={CLAUDE_READ_TOOLS}",
            f"--allowedTools={CLAUDE_READ_TOOLS}{browsing}",
        ]
    if ctx.browser or ctx.outcome:  # our servers and no other: none of the user's own
        ours = {outcome_tool.SERVER: ctx.outcome} if ctx.outcome else {}
        config = mcp.claude_config(ctx.browser, ctx.own, ours)
        argv += ["--mcp-config", str(config), "--strict-mcp-config"]
    if ctx.model:
        argv += ["--model", ctx.model]
    if resume is not None:
        argv += ["--resume", resume.session]
        if ctx.outcome:  # the nudge's answer in the outcome's shape (StructuredOutput)
            argv += ["--json-schema", json.dumps(outcome_tool.schema(ctx.unit.role))]
    else:
        hint = outcome_tool.hint(ctx.unit.role) if ctx.outcome else OUTCOME_HINT
        argv += ["--append-system-prompt", hint, *claude.memory(ctx.home, ctx.own)]
    return Call([*argv, *ctx.extra], stdin=prompt)


def _codex_call(ctx: Context, prompt: str, resume: Report | None) -> Call:
    sandbox = sandbox_mode(ctx.writing, ctx.outer_sandbox)
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
    if ctx.browser:
        argv += mcp.codex_flags(ctx.browser)
    if ctx.outcome:
        argv += mcp.codex_flags(ctx.outcome, outcome_tool.SERVER, required=True)
    argv += ctx.extra
    if resume is not None and ctx.outcome:  # the nudge's answer as JSON in the outcome's shape
        argv += ["--output-schema", str(outcome_tool.schema_file(ctx.unit.role, ctx.own))]
    if resume is not None:
        argv += ["resume", resume.session]
    path = helper_path(ctx.program, ctx.own / "codex-path", ctx.env.get("PATH", ""))
    if ctx.outcome and resume is None:  # codex has no system prompt of ours: the prompt says it
        prompt = f"{prompt}\n\n{outcome_tool.hint(ctx.unit.role)}"
    return Call([*argv, "-"], stdin=prompt, env={"PATH": path})


def _gemini_call(ctx: Context, prompt: str, resume: Report | None) -> Call:
    # yolo: no tool asks; a reader's policy takes the writing tools away (gemini.py)
    argv = [ctx.program, "--output-format", "stream-json", "--skip-trust"]
    argv += ["--approval-mode", "yolo"]
    argv += ["-m", ctx.model or gemini.DEFAULT_MODEL]
    if resume is not None:
        argv += ["--resume", resume.session]
    home = Path(ctx.home.get(gemini.HOME) or ctx.scratch / "gemini-home")
    env = gemini.environment(home, ctx.env, ctx.outcome)
    servers = []
    if ctx.browser:
        settings, policy = mcp.gemini_files(ctx.browser, ctx.own)
        servers.append(mcp.SERVER)
        argv += ["--policy", str(policy)]
        env[mcp.GEMINI_SETTINGS] = str(settings)
    if ctx.outcome:
        servers.append(outcome_tool.SERVER)
        argv += ["--policy", str(gemini.outcome_policy(ctx.own))]
        if resume is None:  # gemini has no system prompt of ours: the prompt says it
            prompt = f"{prompt}\n\n{outcome_tool.hint(ctx.unit.role)}"
    if servers:  # ours and no other
        argv += ["--allowed-mcp-server-names", ",".join(servers)]
    if not ctx.writing:
        argv += ["--policy", str(gemini.reviewer_policy(ctx.own))]
    # The prompt on stdin, byte for byte (a non-terminal stdin is headless mode): an argument
    # holds at most 128 KiB.
    return Call([*argv, *ctx.extra], stdin=prompt, env=env)


def _opencode_call(ctx: Context, prompt: str, resume: Report | None) -> Call:
    return opencode.call(
        ctx.program,
        writing=ctx.writing,
        model=ctx.model,
        base_url=ctx.env.get("OPENAI_BASE_URL", ""),
        folder=ctx.own / "opencode",
        title=f"taskhand {ctx.unit.task_id} {ctx.unit.role}",
        extra=list(ctx.extra),
        prompt=prompt,
        resume=resume,
        outcome=ctx.outcome,
        hint=outcome_tool.hint(ctx.unit.role) if ctx.outcome else "",
    )


def _aider_call(ctx: Context, prompt: str, resume: Report | None) -> Call:
    base_url = ctx.env.get("OPENAI_API_BASE") or ctx.env.get("OPENAI_BASE_URL", "")
    return aider.call(
        ctx.program,
        prompt,
        scratch=ctx.scratch,
        writing=ctx.writing,
        model=ctx.model,
        base_url=base_url,
        prices=ctx.prices,
        resume=resume is not None,
        extra=list(ctx.extra),
    )


def _custom_call(ctx: Context, prompt: str, resume: Report | None) -> Call:
    words = split_template(ctx.template)
    prompt_file = ctx.own / "prompt.md"
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


def split_template(template: str) -> list[str]:
    try:
        return shlex.split(template)
    except ValueError as exc:
        raise AgentError(f"{COMMAND_ENV}: {exc} (fix: balance its quotes)") from None


PRESETS: dict[str, Preset] = {
    "claude": Preset(
        "claude",
        "npm @anthropic-ai/claude-code",
        CLAUDE_VARIABLES,
        _claude_call,
        parse_claude,
        totals=True,
        # Our MCP servers' tools offered from the first turn: claude would otherwise start
        # the first turn before they connect, and hide them behind its tool search.
        env=(
            ("DISABLE_AUTOUPDATER", "1"),
            ("MCP_CONNECTION_NONBLOCKING", "false"),
            ("ENABLE_TOOL_SEARCH", "false"),
        ),
    ),
    "codex": Preset(
        "codex",
        "npm @openai/codex",
        CODEX_VARIABLES,
        _codex_call,
        parse_codex,
        totals=True,
    ),
    "gemini": Preset(
        "gemini",
        "npm @google/gemini-cli",
        gemini.VARIABLES,
        _gemini_call,
        parse_gemini,
    ),
    "opencode": Preset(
        "opencode",
        "npm opencode-ai",
        ("OPENCODE_*", *PROVIDERS),
        _opencode_call,
        parse_opencode,
    ),
    "aider": Preset(
        "aider",
        "PyPI aider-chat",
        ("AIDER_*", *PROVIDERS),
        _aider_call,
        aider.parse,
        env=aider.ENV,
        sealed=False,
    ),
    "custom": Preset("", "", PROVIDERS, _custom_call, parse_text, resumable=False),
}
NAMES = tuple(PRESETS)


def variables_for(program: str) -> tuple[str, ...]:
    """The variables of the agent family a program's name says it belongs to (an ACP adapter
    such as `claude-code-acp` or `codex-acp`, or `gemini --acp`); none for any other program."""
    name = Path(program).name
    for family in ("claude", "codex", "gemini", "opencode"):
        if name.startswith(family):
            return PRESETS[family].variables
    return ()
