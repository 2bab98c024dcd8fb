"""The agents a live run tries, and what each needs here: a key or a login (looked for in the
environment and under the home folder, never read), and its program. Each check answers why the
agent cannot run, or "" when it can, so the live test skips saying so.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tests import ROOT

SWITCH = "TASKHAND_LIVE"  # 1 (or true, yes): the same as `pytest --live`
OPT_IN = "live runs are opt-in: pytest --live (or TASKHAND_LIVE=1); they spend money"
NPM_BIN = ROOT / ".npm-agents" / "node_modules" / ".bin"
AIDER_BIN = ROOT / ".venv-aider" / "bin"
PROVIDER_KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY")


@dataclass(frozen=True)
class LiveAgent:
    """One agent as a live run uses it: `--agent NAME` and, unless TASKHAND_LIVE_<NAME>_MODEL
    names another, `model` (None: the program's own default)."""

    name: str
    program: str | None  # None: our own loop, no program to find
    install: str
    keys: tuple[str, ...]  # any one of these variables will do
    logins: tuple[str, ...]  # or any one of these files, under the home folder
    model: str | None = None

    def chosen_model(self, env: Mapping[str, str]) -> str | None:
        return env.get(f"{SWITCH}_{self.name.upper()}_MODEL") or self.model


AGENTS = (
    LiveAgent(
        "claude",
        "claude",
        "npm install -g @anthropic-ai/claude-code, or ./dev test (into .npm-agents)",
        ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"),
        (".claude/.credentials.json",),  # `claude` signed in (or $CLAUDE_CONFIG_DIR's)
        model="haiku",
    ),
    LiveAgent(
        "codex",
        "codex",
        "npm install -g @openai/codex, or ./dev test (into .npm-agents)",
        ("OPENAI_API_KEY", "CODEX_API_KEY"),
        (".codex/auth.json",),  # `codex login` (or $CODEX_HOME's)
    ),
    LiveAgent(
        "gemini",
        "gemini",
        "npm install -g @google/gemini-cli, or ./dev test (into .npm-agents)",
        # GOOGLE_API_KEY counts with GOOGLE_GENAI_USE_VERTEXAI=true (Vertex AI) only.
        ("GEMINI_API_KEY",),
        (".gemini/oauth_creds.json",),  # `gemini` signed in with Google (or $GEMINI_CLI_HOME's)
        model="gemini-2.5-flash",
    ),
    LiveAgent(
        "opencode",
        "opencode",
        "npm install -g opencode-ai, or ./dev test (into .npm-agents)",
        PROVIDER_KEYS,
        (".local/share/opencode/auth.json",),  # `opencode auth login` (or $XDG_DATA_HOME's)
    ),
    LiveAgent(
        "aider",
        "aider",
        "pipx install aider-chat, or ./dev setup_aider (into .venv-aider)",
        ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"),
        (),
    ),
    LiveAgent("openai", None, "", ("OPENAI_API_KEY",), (), model="gpt-4.1-mini"),
)


def opted_in(flag: bool, env: Mapping[str, str]) -> bool:
    """Whether live runs are asked for: `--live` (`flag`), or TASKHAND_LIVE set to a true value."""
    return flag or env.get(SWITCH, "").strip().lower() in ("1", "true", "yes")


def login_files(agent: LiveAgent, env: Mapping[str, str], home: Path) -> list[Path]:
    """Where the agent's login would be, its program's own folder variables honoured."""
    moved = {
        ".claude/": env.get("CLAUDE_CONFIG_DIR"),
        ".codex/": env.get("CODEX_HOME"),
        ".gemini/": str(Path(env["GEMINI_CLI_HOME"]) / ".gemini")
        if env.get("GEMINI_CLI_HOME")
        else None,
        ".local/share/": env.get("XDG_DATA_HOME"),
    }
    paths = []
    for login in agent.logins:
        path = home / login
        for prefix, folder in moved.items():
            if folder and login.startswith(prefix):
                path = Path(folder) / login.removeprefix(prefix)
        paths.append(path)
    return paths


def missing_login(agent: LiveAgent, env: Mapping[str, str], home: Path) -> str:
    """Why the agent has no key or login here, naming what was looked for; "" when it has."""
    if any(env.get(key) for key in agent.keys):
        return ""
    vertex = env.get("GOOGLE_GENAI_USE_VERTEXAI", "").strip().lower() in ("true", "1")
    if agent.name == "gemini" and vertex and env.get("GOOGLE_API_KEY"):
        return ""
    files = login_files(agent, env, home)
    if any(path.is_file() for path in files):
        return ""
    looked = " or ".join(agent.keys)
    if agent.name == "gemini":
        looked += " (or GOOGLE_API_KEY with GOOGLE_GENAI_USE_VERTEXAI=true)"
    if files:
        looked += ", or a login at " + " or ".join(str(path) for path in files)
    return f"{agent.name}: no key or login found (looked for {looked})"


def program(agent: LiveAgent, env: Mapping[str, str]) -> str | None:
    """The agent's program: on PATH, or where ./dev installs it."""
    if agent.program is None:
        return None
    path = os.pathsep.join([env.get("PATH", ""), str(NPM_BIN), str(AIDER_BIN)])
    return shutil.which(agent.program, path=path)


def missing_program(agent: LiveAgent, env: Mapping[str, str]) -> str:
    """Why the agent's program cannot run here, with how to install it; "" when it can."""
    if agent.program is None or program(agent, env):
        return ""
    return f"{agent.name}: {agent.program} is not installed (fix: {agent.install})"
