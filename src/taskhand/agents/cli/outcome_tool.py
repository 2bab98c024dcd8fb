"""The outcome tools for an agent program (claude, codex, gemini, opencode): the command that
starts our MCP server for a unit, what the model is told of it, and the schemas of its answer
when nudged. The server only answers the model; the harness reads the calls from the program's
own event stream (calls.py), never from anything the server or the unit could write.
"""

from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path
from typing import Any

import taskhand
from taskhand.agents.outcome_mcp import tools
from taskhand.unit import Role

# The programs given the outcome tools; the others end in a block.
PRESETS = ("claude", "codex", "gemini", "opencode")
SERVER = tools.SERVER


# Imports our server from the folder given first, wherever taskhand is installed: a variable
# such as PYTHONPATH could say it too, but gemini refuses to pass that one to a server.
BOOT = (
    "import os, sys; sys.path[0:0] = sys.argv.pop(1).split(os.pathsep); "
    "from taskhand.agents.outcome_mcp.server import main; main()"
)


def package_root() -> Path:
    """The folder taskhand is imported from, for the server's import path and its sandbox."""
    return Path(taskhand.__file__).resolve().parent.parent


def command(role: Role) -> list[str]:
    """The argv that starts the outcome server of a unit of `role`."""
    # -P: the worktree (the server's working folder) is not put on the import path, so no
    # module an agent leaves there is imported in place of ours.
    return [sys.executable, "-P", "-c", BOOT, import_path(), "--role", role.value]


def import_path() -> str:
    """Where the server imports from: taskhand's own folder, then every folder this process
    imports from (its site-packages, wherever this Python finds them)."""
    found = [str(package_root())]
    found += [p for p in sys.path if p and os.path.isabs(p) and os.path.isdir(p)]
    return os.pathsep.join(dict.fromkeys(found))


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


def schema_file(role: Role, folder: Path) -> Path:
    """The strict schema in a file of `folder`, for codex `--output-schema`."""
    path = folder / f"outcome-schema-{role.value}.json"
    path.write_text(json.dumps(schema(role, strict=True)), encoding="utf-8")
    return path
