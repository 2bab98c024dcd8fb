"""The tools' JSON schemas as the model sees them, and the check of a call's arguments against
its tool's own schema: unknown, missing, mistyped or out-of-range arguments are refused.
"""

from __future__ import annotations

import json
import math
from typing import Any

from taskhand.agents.tool_paths import ToolError, show

DEFAULT_READ_LINES = 2000


def _schema(
    name: str, description: str, properties: dict[str, Any], optional: tuple[str, ...] = ()
) -> dict[str, Any]:
    required = [key for key in properties if key not in optional]
    # Closed objects, so a misspelt argument is reported rather than silently dropped.
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    parameters |= {"required": required, "additionalProperties": False}
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


def _arg(kind: str, description: str, **rules: Any) -> dict[str, Any]:
    return {"type": kind, "description": description, **rules}


_PATH = "Path relative to the workspace root, e.g. src/app.py."

SCHEMAS: list[dict[str, Any]] = [
    _schema(
        "read",
        "Read a text file. Lines come back numbered; use offset and limit for long files.",
        {
            "path": _arg("string", _PATH),
            "offset": _arg("integer", "First line to return, counting from 1.", minimum=1),
            "limit": _arg("integer", f"Most lines (default {DEFAULT_READ_LINES}).", minimum=1),
        },
        optional=("offset", "limit"),
    ),
    _schema(
        "write",
        "Create or overwrite a file with the given content; missing folders are created.",
        {"path": _arg("string", _PATH), "content": _arg("string", "The whole new content.")},
    ),
    _schema(
        "edit",
        "Replace text in a file. `old` must match exactly once, whitespace and indentation "
        "included; read the file first.",
        {
            "path": _arg("string", _PATH),
            "old": _arg("string", "The exact text to replace."),
            "new": _arg("string", "The text to put in its place."),
        },
    ),
    _schema(
        "glob",
        "List files whose workspace-relative path matches a pattern: * and ? stay within one "
        "folder, ** spans folders (src/**/*.py); a pattern without wildcards names a file or "
        "a whole folder.",
        {"pattern": _arg("string", "For example **/*.py or tests/")},
    ),
    _schema(
        "grep",
        "Search file contents with a Python regular expression; prints path:line:text.",
        {
            "pattern": _arg("string", "A Python regular expression."),
            "path": _arg("string", "File or folder to search (default: the whole workspace)."),
            "glob": _arg("string", "Only files matching this; without a / it matches names."),
        },
        optional=("path", "glob"),
    ),
    _schema(
        "bash",
        "Run a bash command in the workspace root. stdout and stderr come back together with "
        "the exit code; stdin is empty; long output is cut in the middle.",
        {
            "command": _arg("string", "The command line to run."),
            "timeout": _arg("number", "Seconds before it is killed (capped).", exclusiveMinimum=0),
        },
        optional=("timeout",),
    ),
]

# Offered only to a unit with a browser (a designer's or qa's): the app and workspace files.
BROWSER_SCHEMAS: list[dict[str, Any]] = [
    _schema(
        "browser_open",
        "Open a page in the headless browser: the app's address (http://127.0.0.1:PORT/...), "
        "a path on the app (/settings), or a file of the workspace (prototype/index.html). "
        "Nothing else opens: no other site, no file outside the workspace.",
        {"url": _arg("string", "The address, app path or workspace file to open.")},
    ),
    _schema(
        "browser_click",
        "Click the first element a selector matches, and wait for the page it loads.",
        {"selector": _arg("string", "A CSS selector, or text=Save for the element's text.")},
    ),
    _schema(
        "browser_type",
        "Fill an input or text area with text, replacing what it held.",
        {
            "selector": _arg("string", "A CSS selector of the field, e.g. input[name=q]."),
            "text": _arg("string", "The text to type."),
        },
    ),
    _schema(
        "browser_text",
        "The visible text of the page, or of the elements a selector matches.",
        {"selector": _arg("string", "Only the elements this matches (default: the whole page).")},
        optional=("selector",),
    ),
    _schema(
        "browser_screenshot",
        "Save what the browser shows, 1440x900, as a PNG picture people will look at.",
        {"name": _arg("string", "The picture's name, e.g. prototype or found-1 (no folders).")},
    ),
]

_PARAMETERS: dict[str, dict[str, Any]] = {
    s["function"]["name"]: s["function"]["parameters"] for s in [*SCHEMAS, *BROWSER_SCHEMAS]
}
_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,), "number": (int, float)}
_NOUNS = {"string": "a string", "integer": "a whole number", "number": "a number"}


def check_arguments(name: str, arguments: str | dict[str, Any]) -> dict[str, Any]:
    """The call's arguments checked against the tool's own schema."""
    parsed: object = arguments
    if isinstance(arguments, str):
        try:
            # Some models send "" for a call without arguments.
            parsed = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            raise ToolError(
                f"the arguments for {name} are not valid JSON ({exc.msg} at character "
                f"{exc.pos}); send one JSON object"
            ) from None
    if not isinstance(parsed, dict):
        raise ToolError(f"the arguments for {name} must be a JSON object, not {_kind(parsed)}")
    spec = _PARAMETERS[name]
    properties: dict[str, Any] = spec["properties"]
    # A null optional argument is the model saying "default"; take it so.
    given = {k: v for k, v in parsed.items() if v is not None or k in spec["required"]}
    for key in given:
        if key not in properties:
            raise ToolError(
                f"{name} has no argument {show(str(key))}; it takes {', '.join(properties)}"
            )
    for key in spec["required"]:
        if key not in given:
            raise ToolError(f"{name} needs the argument {key!r}")
    for key, value in given.items():
        prop = properties[key]
        if isinstance(value, bool) or not isinstance(value, _TYPES[prop["type"]]):
            raise ToolError(
                f"argument {key!r} of {name} must be {_NOUNS[prop['type']]}, not {_kind(value)}"
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise ToolError(f"argument {key!r} of {name} must be a finite number")
        if "minimum" in prop and value < prop["minimum"]:
            raise ToolError(f"argument {key!r} of {name} must be at least {prop['minimum']}")
        if "exclusiveMinimum" in prop and value <= prop["exclusiveMinimum"]:
            raise ToolError(f"argument {key!r} of {name} must be above {prop['exclusiveMinimum']}")
    return given


def _kind(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "true or false"}
    if value is None:
        return "null"
    return names.get(type(value), "a number" if isinstance(value, int | float) else "a value")
