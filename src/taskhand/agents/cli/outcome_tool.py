"""The outcome tools for an agent program (claude, codex, gemini, opencode): the command that
starts our MCP server for a unit, and the harness's reading of the file it writes, each line
checked again as the server checked it, the first valid one taken.
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import taskhand
from taskhand.agents.cli.outcome import Found, read_block
from taskhand.agents.outcome_mcp import tools
from taskhand.unit import Role

# The programs given the outcome tools; the others end in a block.
PRESETS = ("claude", "codex", "gemini", "opencode")
SERVER = tools.SERVER
FILE = "outcome.jsonl"  # in the unit's scratch folder: outside the worktree, gone after it
READ_LIMIT = 1_000_000  # bytes of the file read: a shell that floods it is cut off here
LINES_READ = 100  # calls looked at before the harness gives up on the file


def package_root() -> Path:
    """The folder taskhand is imported from, for the server's PYTHONPATH and its sandbox."""
    return Path(taskhand.__file__).resolve().parent.parent


def command(role: Role, scratch: Path) -> list[str]:
    """The argv that starts the outcome server of a unit of `role`; it appends to FILE."""
    # -P: the worktree (the server's working folder) is not put on the import path, so no
    # module an agent leaves there is imported in place of ours.
    module = "taskhand.agents.outcome_mcp"
    return [sys.executable, "-P", "-m", module, "--role", role.value, "--out", str(scratch / FILE)]


def env() -> dict[str, str]:
    """What the server needs in its environment: where taskhand is (PYTHONPATH only)."""
    return {"PYTHONPATH": str(package_root())}


Server = tuple[list[str], Mapping[str, str]]  # an MCP server: its argv and its environment


def server(argv: list[str]) -> Server:
    """The server started by `argv` (`command`), as a program's own config declares it."""
    return argv, env()


def hint(role: Role) -> str:
    """What the agent is told about the tools, beside the prompt's fenced-block instruction."""
    name = tools.finisher(role)
    ask = " (or ask, when a person must decide)" if not role.judges else ""
    return (
        f"Finish by calling the {name} tool of the {SERVER} MCP server{ask}, once, last. "
        "Only if you have no such tool, end your final message with the fenced JSON block "
        "the task asks for."
    )


def nudge(role: Role, fallback: str) -> str:
    """The nudge for a unit that ended without an outcome: the tool first, then the block."""
    return f"You have not called the {tools.finisher(role)} tool. Call it now. {fallback}"


def schema(role: Role, *, strict: bool = False) -> dict[str, Any]:
    """The JSON schema of the role's finishing tool, for a CLI's structured final answer
    (claude `--json-schema`, codex `--output-schema`). `strict`: the form OpenAI's strict
    mode takes, every property required (the optional ones nullable), none other allowed."""
    shaped: dict[str, Any] = copy.deepcopy(tools.offered(role)[0]["parameters"])
    if strict:
        shaped = _strict(shaped)
    return shaped


def _strict(node: Any) -> Any:
    if isinstance(node, dict):
        node = {key: _strict(value) for key, value in node.items()}
        properties = node.get("properties")
        if node.get("type") == "object" and isinstance(properties, dict):
            for key, value in properties.items():
                kind = value.get("type")
                if key not in node.get("required", []) and isinstance(kind, str):
                    value["type"] = [kind, "null"]
                    if "enum" in value:
                        value["enum"] = [*value["enum"], None]
            node["required"] = list(properties)
            node["additionalProperties"] = False
    elif isinstance(node, list):
        node = [_strict(item) for item in node]
    return node


def schema_file(role: Role, scratch: Path) -> Path:
    """The strict schema in a file of the unit's scratch folder, for codex `--output-schema`."""
    path = scratch / f"outcome-schema-{role.value}.json"
    path.write_text(json.dumps(schema(role, strict=True)), encoding="utf-8")
    return path


def read(scratch: Path, role: Role) -> Found | str:
    """The outcome of the first valid call in the unit's file; why there is none otherwise."""
    path = scratch / FILE
    try:
        with path.open("rb") as file:
            data = file.read(READ_LIMIT)
    except FileNotFoundError:
        return f"the agent never called {tools.finisher(role)}"
    except OSError as exc:
        return f"the outcome file could not be read ({exc.strerror})"
    last = ""
    for line in data.decode("utf-8", "replace").splitlines()[:LINES_READ]:
        try:
            call = json.loads(line)
        except ValueError:
            last = "a line of the outcome file is not JSON"
            continue
        if not isinstance(call, dict):
            last = "a line of the outcome file is not a JSON object"
            continue
        block = tools.accept(str(call.get("tool")), call.get("arguments"), role)
        if isinstance(block, str):
            last = block.removeprefix("error: ")
            continue
        return read_block(block, role)
    return f"no call of {tools.finisher(role)} was valid ({last or 'the file is empty'})"
