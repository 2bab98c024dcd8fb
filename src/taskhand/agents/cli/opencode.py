"""opencode's run: its argv, and the config file taskhand writes for it in the folder of its
own files for the unit (read-only to the unit; never the user's ~/.config/opencode):
permissions for the role, no sharing, updates or telemetry, and with OPENAI_BASE_URL and a
model, an OpenAI-compatible provider of ours for it.
"""

from __future__ import annotations

import json
from pathlib import Path

from taskhand.agents.cli.outcome_tool import SERVER as OUTCOME_SERVER
from taskhand.agents.cli.output import Report
from taskhand.host.process import Call

PROVIDER = "taskhand"  # the name of our provider in opencode's config: `-m taskhand/<model>`
CONFIG_ENV = "OPENCODE_CONFIG"
# Switches opencode reads from its environment. A workspace's own opencode.json is ignored, so
# that nothing an agent left in the worktree can loosen the permissions or swap the provider.
ENV = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_PROJECT_CONFIG": "1",
}
# A writer edits and runs commands in its worktree without being asked; a reviewer reads and
# runs commands (the tests) but edits nothing. Nothing outside the worktree either way.
WRITER = {"edit": "allow", "bash": "allow", "webfetch": "allow", "external_directory": "deny"}
READER = {"edit": "deny", "bash": "allow", "webfetch": "allow", "external_directory": "deny"}


def config(
    writing: bool,
    model: str | None,
    base_url: str,
    outcome: list[str] | None = None,
    instructions: Path | None = None,
) -> dict[str, object]:
    """opencode's config for one run: with a base URL and a model, our provider serves it; with
    `outcome` (the command of our outcome tools' server) that server, and the file of
    `instructions` that tells the model of its tools (the prompt itself stays as built)."""
    settings: dict[str, object] = {
        "autoupdate": False,
        "share": "disabled",
        "experimental": {"openTelemetry": False},  # its only telemetry, opt-in: kept off
        "permission": WRITER if writing else READER,
    }
    if outcome:
        server = {"type": "local", "command": list(outcome), "enabled": True}
        settings["mcp"] = {OUTCOME_SERVER: server}
    if instructions is not None:
        settings["instructions"] = [str(instructions)]
    if base_url and model:
        name = _own_model(model)
        settings["provider"] = {
            PROVIDER: {
                "npm": "@ai-sdk/openai-compatible",
                "name": PROVIDER,
                # opencode substitutes {env:NAME} itself: the key stays out of the file.
                "options": {"baseURL": "{env:OPENAI_BASE_URL}", "apiKey": "{env:OPENAI_API_KEY}"},
                "models": {name: {"name": name}},
            }
        }
        settings["model"] = f"{PROVIDER}/{name}"
    return settings


def call(
    program: str,
    *,
    writing: bool,
    model: str | None,
    base_url: str,
    folder: Path,
    title: str,
    extra: list[str],
    prompt: str,
    resume: Report | None,
    outcome: list[str] | None = None,
    hint: str = "",
) -> Call:
    """`opencode run --format json` with the prompt on stdin: as an argument it reached the
    model quoted, its own quotes backslash-escaped. `hint`: what the model is told of the
    outcome tools, in an instructions file beside the config (part of its system prompt)."""
    folder.mkdir(parents=True, exist_ok=True)
    told = None
    if hint:
        told = folder / "outcome-tools.md"
        told.write_text(hint + "\n", encoding="utf-8")
    path = folder / "opencode.json"
    settings = config(writing, model, base_url, outcome, told)
    path.write_text(json.dumps(settings, indent=2), encoding="utf-8")
    argv = [program, "run", "--format", "json", "--agent", "build" if writing else "plan"]
    ours = bool(base_url and model)
    if model:
        argv += ["-m", f"{PROVIDER}/{_own_model(model)}" if ours else model]
    # A title of our own spares the extra model call opencode makes to name a new session.
    argv += ["--session", resume.session] if resume is not None else ["--title", title]
    env = {**ENV, CONFIG_ENV: str(path)}
    if ours:  # our provider's model is in the config: models.dev has nothing to add
        env["OPENCODE_DISABLE_MODELS_FETCH"] = "1"
    return Call([*argv, *extra], stdin=prompt, env=env)


def _own_model(model: str) -> str:
    """The name the server knows: `taskhand/<name>` and `<name>` both mean it."""
    return model.removeprefix(f"{PROVIDER}/")
