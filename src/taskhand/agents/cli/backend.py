"""The cli backend: a coding agent's own program runs each unit in its worktree, through the
preset for that program; a final message without the outcome (or verdict) block gets one nudge
on the same session, and failures come back as outcomes with usage priced.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from taskhand.agents import prices as price_list
from taskhand.agents.base import AgentError
from taskhand.agents.cli import agent_home, config_guard, mcp, outcome_tool
from taskhand.agents.cli.calls import READERS, Calls, Stream
from taskhand.agents.cli.outcome import REJECTED, Found, outcome, parse_outcome, read_block
from taskhand.agents.cli.output import Report
from taskhand.agents.cli.presets import COMMAND_ENV, NAMES, PRESETS, Context, split_template
from taskhand.host import view
from taskhand.host.allowlist import agent_env
from taskhand.host.process import OUTPUT_LIMIT, Call, execute
from taskhand.host.sandbox import confine
from taskhand.host.secrets import Redactor
from taskhand.text import shorten
from taskhand.unit import CATEGORIES, Case, Outcome, Role, Unit

_BLOCKS = (
    'as fenced JSON: {"case": "done", "resolution": "..."}, or {"case": "question", "question": '
    '"...", "options": ["...", "..."]} (2 to 4 options), or {"case": "failed", "failure": "..."}.'
)
NUDGE = (
    f"Your last message did not end with the outcome block. Reply with only that block, {_BLOCKS}"
)
# The example is not itself a valid verdict, so an agent that echoes it is not taken to accept.
VERDICT_NUDGE = (
    "Your last message did not end with the verdict block. Reply with only that block, as "
    'fenced JSON: {"verdict": "accept or reject", "category": "...", "concern": "...", '
    '"evidence": ["file:symbol"], "next_step": "..."}. An accept leaves category and next_step '
    f"empty; a reject needs both, the category one of {', '.join(CATEGORIES)}."
)
STDERR_TAIL = 2000  # characters of stderr quoted in a failure


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
        passed: Sequence[str] = (),
        prices: Mapping[str, price_list.Price] | None = None,
        output_limit: int = OUTPUT_LIMIT,
        env: Mapping[str, str] | None = None,
        outer_sandbox: bool = False,  # taskhand sandboxes it: codex writers skip their own
    ) -> None:
        if preset not in PRESETS:
            raise AgentError(f"unknown cli preset {preset!r} (fix: use one of {', '.join(NAMES)})")
        environ = dict(os.environ if env is None else env)
        self.name = preset
        self.preset = PRESETS[preset]
        self.model = model
        self.extra = list(extra_args)
        self.output_limit = output_limit
        self.outer_sandbox = outer_sandbox
        self.prices = dict(prices) if prices is not None else price_list.table(environ)
        self.template = ""
        if preset == "custom":
            self.template = command or environ.get(COMMAND_ENV, "")
            words = split_template(self.template)
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
        # Built from the allow-list: the program's own variables, `keys`, and the plan's `passed`.
        self.env = {
            **dict(self.preset.env),
            **agent_env((*self.preset.variables, *keys), passed, environ),
        }
        self.redact = Redactor(environ)
        # Where the user's own settings and login are, for the unit's private home.
        self.user_home = {k: environ[k] for k in agent_home.VARIABLES if k in environ}
        self.program_files = view.program_folders(Path(self.program))

    def run(self, unit: Unit) -> Outcome:
        deadline = time.monotonic() + unit.timeout_seconds
        with tempfile.TemporaryDirectory(prefix="taskhand-cli-") as folder:
            # The scratch folder the program writes (its home among it), and beside it one of
            # taskhand's own files for it, which the sandbox shows read-only.
            scratch, fixed = Path(folder) / "scratch", Path(folder) / "fixed"
            scratch.mkdir(mode=0o700)
            fixed.mkdir(mode=0o700)
            home = agent_home.make(self.name, scratch, self.user_home)
            try:
                done = self._run(unit, scratch, fixed, home, deadline)
            finally:
                notes = agent_home.keep_login(home) if home is not None else []
            for note in notes:
                unit.record(done.transcript, {"role": "note", "content": note})
            return done

    def _run(
        self,
        unit: Unit,
        scratch: Path,
        fixed: Path,
        home: agent_home.Made | None,
        deadline: float,
    ) -> Outcome:
        model = unit.model or self.model
        context = Context(self.program, unit, scratch, self.env, model, self.extra, fixed=fixed)
        context.home = home.env if home else {}
        context.template = self.template
        context.prices = self.prices
        # Under taskhand's sandbox a writer needs no sandbox of the program's own.
        context.outer_sandbox = self.outer_sandbox or unit.sandbox.active
        transcript: list[dict[str, object]] = []
        unit.record(transcript, {"role": "user", "content": unit.prompt})
        if self.name in mcp.PRESETS:
            try:
                context.browser = mcp.server(unit, self.env)
            except LookupError as exc:
                return Outcome(Case.ERROR, failure=str(exc), transcript=transcript)
        if self.name in outcome_tool.PRESETS:
            context.outcome = outcome_tool.command(unit.role)
        configured = config_guard.seen(self.name, context.home, unit.worktree)
        report, calls, failure = self._attempt(context, unit.prompt, None, deadline, transcript)
        if failure:
            return self._end(Case.ERROR, report, transcript, context, failure=failure)
        found = self._found(context, report, calls, transcript)
        if isinstance(found, str) and self.preset.resumable and report.session:
            # Started again, the program reads its configuration again: not one that the
            # unit's processes rewrote (a model of their own, a plugin printing events).
            now = config_guard.seen(self.name, context.home, unit.worktree)
            moved = config_guard.changed(configured, now)
            if moved:
                failure = (
                    f"{found}; not nudged, since the unit's processes changed {self.name}'s "
                    f"configuration: {', '.join(moved[:5])}"
                )
                return self._end(Case.ERROR, report, transcript, context, failure=failure)
            first, asked = report, nudge(unit.role, found)
            if context.outcome:
                asked = outcome_tool.nudge(unit.role, asked)
            report, calls, failure = self._attempt(context, asked, first, deadline, transcript)
            if not self.preset.totals:
                report.usage = first.usage + report.usage
                report.priced = first.priced and report.priced
            if failure:
                return self._end(Case.ERROR, report, transcript, context, failure=failure)
            found = self._found(context, report, calls, transcript)
        if isinstance(found, str):
            return self._end(Case.ERROR, report, transcript, context, failure=found)
        return self._end(found.case, report, transcript, context, found=found)

    def _found(
        self,
        context: Context,
        report: Report,
        calls: Calls | None,
        transcript: list[dict[str, object]],
    ) -> Found | str:
        """The outcome: the first valid outcome-tool call in the program's own event stream,
        else the block its final message ends with (never a verdict read into prose: the
        block must be there); why neither otherwise. Nothing else is read: no file, and no
        tool's output (the final message is the program's own field for the model's text)."""
        role = context.unit.role
        if calls is None:
            return parse_outcome(report.text, role)
        if calls.block is not None:
            note = f"the outcome came through the {outcome_tool.SERVER} MCP server's tool"
            context.unit.record(transcript, {"role": "note", "content": note})
            return read_block(calls.block, role)
        written = parse_outcome(report.text, role)
        if isinstance(written, Found) or written.startswith(REJECTED):
            return written  # a block not accepted: the nudge says why
        return f"{calls.missing()}, and {written}"

    def _attempt(
        self,
        context: Context,
        prompt: str,
        resume: Report | None,
        deadline: float,
        transcript: list[dict[str, object]],
    ) -> tuple[Report, Calls | None, str]:
        """Run the program once: its report, the outcome calls its events record (None for a
        program without the outcome tools), and why the unit broke ("" when it did not)."""
        call = self.preset.call(context, prompt, resume)
        # The program runs in the unit's sandbox; its scratch folder (answer files) is its own,
        # taskhand's files for it (settings, servers, policies) it may only read.
        unit = context.unit
        readable = [Path(self.program), *self.program_files, context.own]
        if context.outcome:  # the outcome server is our own Python, wherever it is installed
            readable.append(outcome_tool.package_root())
        sandbox = unit.sandbox.with_readable(readable)
        writable = [unit.worktree, context.scratch]
        if context.browser and unit.browser:  # where the browser's server saves its pictures
            writable.append(unit.browser.shots)
        confined = Call(confine(sandbox, call.argv, writable, unit.worktree), call.stdin, call.env)
        env = {**self.env, **unit.env, **context.home, **call.env}
        calls = Calls(unit.role, READERS[self.name]) if context.outcome else None
        stream = Stream(self.output_limit, calls) if calls else None
        run = execute(
            confined,
            unit.worktree,
            env,
            deadline,
            self.output_limit,
            stdout=stream,
            sealed=self.preset.sealed,
        )
        if stream is not None:
            stream.end()
        unit.record(
            transcript, {"role": "agent", "argv": _shown(call, prompt), "exit_code": run.code}
        )
        if run.error:
            return Report(), calls, run.error
        if run.limit:
            return Report(), calls, f"{self.name} was stopped: {run.limit}"
        try:
            # A program that failed may print its report on stderr alone (gemini does).
            printed = run.stdout if run.stdout.strip() or not run.code else run.stderr
            report, unreadable = self.preset.parse(printed), ""
        except ValueError as exc:
            report, unreadable = Report(), f"{self.name} printed output we cannot read: {exc}"
        unit.record(transcript, *(_clip(event) for event in report.events))
        tail = run.stderr.strip()[-STDERR_TAIL:] or run.stdout.strip()[-STDERR_TAIL:]
        if run.timed_out:
            return report, calls, f"timed out after {context.unit.timeout_seconds:g} s"
        if report.error:
            return report, calls, f"{self.name} failed: {report.error}"
        if run.code != 0:
            return report, calls, f"{self.name} exited {run.code}: {tail or '(no output)'}"
        return report, calls, unreadable

    def _end(
        self,
        case: Case,
        report: Report,
        transcript: list[dict[str, object]],
        context: Context,
        *,
        failure: str = "",
        found: Found | None = None,
    ) -> Outcome:
        usage = report.usage
        model = report.model or context.model
        record = context.unit.record
        if not report.priced and usage.tokens_in + usage.tokens_out > 0:
            dollars = price_list.estimate(model or "", usage, self.prices)
            if dollars is None:
                record(transcript, {"role": "note", "content": f"no price for model {model!r}"})
            else:
                usage = replace(usage, cost=dollars, estimated=True)
        record(transcript, _clip({"role": "assistant", "content": report.text}, 20_000))
        return outcome(case, found, failure, usage, transcript, self.redact)


def nudge(role: Role, why: str = "") -> str:
    """What a unit is asked once when its final message lacks the block its role ends with,
    or ends with one that is not accepted (`why`, from `read_block`): what to fix."""
    if role.judges:
        return VERDICT_NUDGE
    if why.startswith(REJECTED):
        wrong = why.removeprefix(REJECTED)
        return f"Your outcome block was not accepted: {wrong}. Reply with it corrected, {_BLOCKS}"
    return NUDGE


def _shown(call: Call, prompt: str) -> list[str]:
    """The argv for the transcript, with the prompt (stored once already) left out."""
    return [arg.replace(prompt, "<prompt>") if prompt else arg for arg in call.argv]


def _clip(event: dict[str, object], limit: int = 4000) -> dict[str, object]:
    """An event for the transcript, with long strings (command output) cut to `limit`."""
    return {
        key: shorten(value, limit) if isinstance(value, str) else value
        for key, value in event.items()
    }
