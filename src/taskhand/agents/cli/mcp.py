"""The browser of a unit run by an agent's own program (claude, codex, gemini): the
`@playwright/mcp` server, pointed at Debian's chromium, headless and without a profile on disk,
started in the unit's shots folder so that its pictures land there, and reaching only the app
(every other address goes to a proxy nobody runs; file:// it refuses by itself).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path

from taskhand.agents.browser import HEIGHT, NO_PROXY, WIDTH
from taskhand.unit import Unit

PRESETS = ("claude", "codex", "gemini")  # the programs given the server; the others get none
SERVER = "playwright"  # the server's name in each program's configuration
PROGRAM = "playwright-mcp"
PACKAGE = "@playwright/mcp"
INSTALL = f"npm install -g {PACKAGE}, and apt-get install chromium"
CLAUDE_TOOLS = f"mcp__{SERVER}"  # every tool of the server, for --allowedTools
GEMINI_SETTINGS = "GEMINI_CLI_SYSTEM_SETTINGS_PATH"  # gemini's settings file of highest rank
STARTUP_SECONDS = 60  # codex waits this long for the server to list its tools
# Starts the server in the shots folder: a screenshot it is asked to save under a plain name
# lands there, and the server's file access is held to that folder.
IN_FOLDER = 'cd "$1" && shift && exec "$@"'


def problem(env: Mapping[str, str]) -> str:
    """Why a program's unit cannot have a browser here, or "" when it can."""
    if shutil.which(PROGRAM, path=env.get("PATH")) is None:
        return f"{PROGRAM} is not installed"
    if shutil.which("chromium", path=env.get("PATH")) is None:
        return "chromium is not installed"
    return ""


def server(unit: Unit, env: Mapping[str, str]) -> list[str] | None:
    """The command that starts the MCP server for `unit`'s browser; None without a browser.
    Raises LookupError, with the fix, when the server or chromium is missing."""
    if unit.browser is None:
        return None
    missing = problem(env)
    if missing:
        raise LookupError(f"the unit's browser cannot start: {missing} (fix: {INSTALL})")
    program = shutil.which(PROGRAM, path=env.get("PATH"))
    chromium = shutil.which("chromium", path=env.get("PATH"))
    shots = unit.browser.shots.resolve()
    shots.mkdir(parents=True, exist_ok=True)
    argv = [
        str(program),
        "--headless",
        "--isolated",  # the profile lives in memory: nothing written to $HOME
        # As Playwright's own default: chromium's sandbox fails for root and inside bubblewrap,
        # which confines the whole server already when the unit has a sandbox.
        "--no-sandbox",
        "--executable-path", str(chromium),
        "--output-dir", str(shots),
        "--ignore-roots",  # its files are the shots folder's, not the client's workspace
        "--viewport-size", f"{WIDTH}x{HEIGHT}",
        "--proxy-server", NO_PROXY["server"],
        "--proxy-bypass", NO_PROXY["bypass"],
    ]  # fmt: skip
    shell = shutil.which("sh", path=env.get("PATH")) or "/bin/sh"
    return [shell, "-c", IN_FOLDER, "sh", str(shots), *argv]


def claude_config(
    command: list[str] | None, folder: Path, more: Mapping[str, list[str]] | None = None
) -> Path:
    """The file `--mcp-config` names, written in `folder`: the servers claude may use
    (`--strict-mcp-config`), the browser's (`command`, when the unit has one) and `more`, each
    a command by name."""
    path = folder / "mcp.json"
    servers: dict[str, object] = {}
    for name, argv in {SERVER: command, **(more or {})}.items():
        if argv:
            servers[name] = {"type": "stdio", "command": argv[0], "args": argv[1:]}
    path.write_text(json.dumps({"mcpServers": servers}, indent=2), encoding="utf-8")
    return path


def codex_flags(command: list[str], name: str = SERVER, required: bool = False) -> list[str]:
    """`-c` overrides that declare the server to codex, its tools approved in advance (codex
    exec cancels an MCP call that would need a person's approval). A required server is
    waited for before the first turn (else codex may start without its tools)."""
    values: dict[str, object] = {
        "command": command[0],
        "args": command[1:],
        "default_tools_approval_mode": "approve",
        "startup_timeout_sec": STARTUP_SECONDS,
    }
    if required:
        values["required"] = True
    flags = []
    for key, value in values.items():
        flags += ["-c", f"mcp_servers.{name}.{key}={_toml(value)}"]
    return flags


def _toml(value: object) -> str:
    """A value as a TOML literal: JSON is TOML for strings, numbers and arrays; a table inline."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def gemini_files(command: list[str], folder: Path) -> tuple[Path, Path]:
    """The settings file (given as GEMINI_CLI_SYSTEM_SETTINGS_PATH) that declares the server,
    and a policy file (`--policy`) that allows its tools in every approval mode, plan included,
    where gemini would otherwise deny them; both written in `folder`."""
    settings = folder / "gemini-settings.json"
    declared = {"command": command[0], "args": command[1:], "trust": True}
    settings.write_text(json.dumps({"mcpServers": {SERVER: declared}}, indent=2), "utf-8")
    policy = folder / "gemini-policy.toml"
    # With mcpName given, gemini reads toolName as the server's own name of a tool ("*": all).
    policy.write_text(
        f'[[rule]]\nmcpName = "{SERVER}"\ntoolName = "*"\ndecision = "allow"\npriority = 100\n',
        encoding="utf-8",
    )
    return settings, policy
