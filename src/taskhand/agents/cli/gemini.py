"""Gemini CLI run headless with only what taskhand sets: a home of its own in the unit's scratch
folder (GEMINI_CLI_HOME), whose settings select the auth type its key needs and turn off
telemetry, usage statistics and update checks; the user's ~/.gemini is never read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

HOME = "GEMINI_CLI_HOME"  # where gemini keeps settings, sessions, .env and trust decisions
# Always named with -m: without a model gemini first asks a router model which one to use,
# a request that expects a JSON answer of its own.
DEFAULT_MODEL = "gemini-2.5-pro"
API_KEY_AUTH = "gemini-api-key"  # GEMINI_API_KEY, at GOOGLE_GEMINI_BASE_URL when set
VERTEX_AUTH = "vertex-ai"  # GOOGLE_GENAI_USE_VERTEXAI with GOOGLE_API_KEY or a service account
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


def auth_type(env: Mapping[str, str]) -> str:
    """The auth type the given variables call for: Vertex AI when asked for, else the API key.
    Without one selected in its settings, gemini refuses to start ("Invalid auth method")."""
    vertex = env.get("GOOGLE_GENAI_USE_VERTEXAI", "").strip().lower() in ("true", "1")
    return VERTEX_AUTH if vertex else API_KEY_AUTH


def settings(env: Mapping[str, str]) -> dict[str, Any]:
    """The user settings taskhand gives gemini for one unit."""
    return {
        "security": {"auth": {"selectedType": auth_type(env)}},
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


def reviewer_policy(scratch: Path) -> Path:
    """A policy file (`--policy`) that takes the writing tools away from a reader, in yolo mode
    (every other tool runs without asking). Plan mode would keep its shell from it too, and an
    `allow` rule for the shell there still asks for a confirmation headless gemini refuses."""
    path = scratch / "gemini-reviewer-policy.toml"
    rules = "\n".join(
        f'[[rule]]\ntoolName = "{tool}"\ndecision = "deny"\npriority = 900\n'
        for tool in READER_DENIED
    )
    path.write_text(rules, encoding="utf-8")
    return path


def environment(scratch: Path, env: Mapping[str, str]) -> dict[str, str]:
    """Write gemini's home under `scratch` (its settings file, nothing else yet) and return the
    variables that point gemini at it. Sessions land there too, so a nudge can resume one."""
    home = scratch / "gemini-home"
    folder = home / ".gemini"
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(settings(env), indent=2)
    (folder / "settings.json").write_text(text, encoding="utf-8")
    return {
        HOME: str(home),
        "GEMINI_SANDBOX": "false",  # the variable would override the setting
        "GEMINI_TELEMETRY_ENABLED": "false",
    }
