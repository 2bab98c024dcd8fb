"""Gemini CLI run headless with only what taskhand sets: a home of its own in the unit's scratch
folder (GEMINI_CLI_HOME), whose settings select the auth type its key needs, declare our outcome
MCP server and turn off telemetry, usage statistics and update checks. Of ~/.gemini only a Google
sign-in is taken (agent_home.py); your settings, memory and `.env` there are never read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from taskhand.agents.cli.outcome_tool import SERVER as OUTCOME_SERVER

HOME = "GEMINI_CLI_HOME"  # where gemini keeps settings, sessions, .env and trust decisions
# Always named with -m: without a model gemini first asks a router model which one to use,
# a request that expects a JSON answer of its own.
DEFAULT_MODEL = "gemini-2.5-pro"
API_KEY_AUTH = "gemini-api-key"  # GEMINI_API_KEY, at GOOGLE_GEMINI_BASE_URL when set
VERTEX_AUTH = "vertex-ai"  # GOOGLE_GENAI_USE_VERTEXAI with GOOGLE_API_KEY or a service account
GOOGLE_AUTH = "oauth-personal"  # `gemini` signed in with Google: ~/.gemini/oauth_creds.json
# The program's own variables beyond its GEMINI_* namespace: keys, endpoints, Vertex's project.
VARIABLES = (
    "GEMINI_*",
    "GOOGLE_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_VERTEX_BASE_URL",
    "GOOGLE_GENAI_API_VERSION",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_GENAI_USE_GCA",  # Code Assist: a login of its own, for `gemini --acp` (acp/)
)


def auth_type(env: Mapping[str, str], signed_in: bool = False) -> str:
    """The auth type the given variables call for: Vertex AI when asked for, else the API key,
    else a Google sign-in when the unit's home holds one. Without one selected in its settings,
    gemini refuses to start ("Invalid auth method")."""
    if env.get("GOOGLE_GENAI_USE_VERTEXAI", "").strip().lower() in ("true", "1"):
        return VERTEX_AUTH
    return GOOGLE_AUTH if signed_in and not env.get("GEMINI_API_KEY") else API_KEY_AUTH


def settings(
    env: Mapping[str, str], outcome: list[str] | None = None, signed_in: bool = False
) -> dict[str, Any]:
    """The user settings taskhand gives gemini for one unit; with `outcome` (the command of our
    outcome tools' server), that server, trusted: its calls need no confirmation, which
    headless gemini could not ask for."""
    declared: dict[str, Any] = {}
    if outcome:
        server = {"command": outcome[0], "args": outcome[1:], "trust": True}
        declared["mcpServers"] = {OUTCOME_SERVER: server}
    return {
        **declared,
        "security": {"auth": {"selectedType": auth_type(env, signed_in)}},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        # taskhand's sandbox confines the program already; gemini's own needs docker or podman
        "tools": {"sandbox": False},
    }


# What a reader must not have: gemini's writing tools (and its memory, a file in its home), and
# its sub-agents, which bring tools of their own. Its shell stays, as claude's reviewers keep
# Bash: a reviewer runs the tests, and one that changes its copy with it is replaced.
READER_DENIED = ("write_file", "replace", "save_memory", "invoke_agent", "exit_plan_mode")


def reviewer_policy(folder: Path) -> Path:
    """A policy file (`--policy`) that takes the writing tools away from a reader, in yolo mode
    (every other tool runs without asking). Plan mode would keep its shell from it too, and an
    `allow` rule for the shell there still asks for a confirmation headless gemini refuses."""
    path = folder / "gemini-reviewer-policy.toml"
    rules = "\n".join(
        f'[[rule]]\ntoolName = "{tool}"\ndecision = "deny"\npriority = 900\n'
        for tool in READER_DENIED
    )
    path.write_text(rules, encoding="utf-8")
    return path


def outcome_policy(folder: Path) -> Path:
    """A policy file (`--policy`) that allows our outcome tools, and no other, in every approval
    mode: yolo allows them already, but plan mode denies every tool no rule names."""
    path = folder / "gemini-outcome-policy.toml"
    # With mcpName given, gemini reads toolName as the server's own name of the tool ("*": all
    # of them), and matches `mcp_taskhand_<tool>`.
    rule = f'[[rule]]\nmcpName = "{OUTCOME_SERVER}"\ntoolName = "*"\ndecision = "allow"\n'
    path.write_text(f"{rule}priority = 100\n", encoding="utf-8")
    return path


def tool_name(tool: str) -> str:
    """The name gemini gives an MCP tool of our outcome server, as the model sees and calls it."""
    return f"mcp_{OUTCOME_SERVER}_{tool}"


def environment(
    home: Path, env: Mapping[str, str], outcome: list[str] | None = None
) -> dict[str, str]:
    """Write gemini's settings into `home` (the unit's, in its scratch folder, holding a copy of
    your Google sign-in when you have one: agent_home.py) and return the variables that point
    gemini at it. Sessions land there too, so a nudge can resume one."""
    folder = home / ".gemini"
    folder.mkdir(parents=True, exist_ok=True)
    signed_in = (folder / "oauth_creds.json").is_file()
    text = json.dumps(settings(env, outcome, signed_in), indent=2)
    (folder / "settings.json").write_text(text, encoding="utf-8")
    return {
        HOME: str(home),
        "GEMINI_SANDBOX": "false",  # the variable would override the setting
        "GEMINI_TELEMETRY_ENABLED": "false",
    }
