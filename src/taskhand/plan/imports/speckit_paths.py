"""The paths a Spec Kit task's text names, and the scope they make: `paths` is a hard gate (a
task may change nothing else), so an imported task's paths must never forbid what its own text
asks for. A name the text does not place (`index.ts`, `components/Card.tsx`) matches at any
depth; a text that names paths only as examples, or ones outside the repository, leaves the
task's paths open, said in the import report.
"""

from __future__ import annotations

import re

_SEGMENT = r"(?:[\w.@+*-]|\{[\w.@+*,-]+\})+"
_PATH = re.compile(rf"(?<![\w/.@+~:{{}}-])((?:{_SEGMENT}/)+(?:{_SEGMENT})?)")
_CODE = re.compile(r"`([^`\s]+)`")
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,10}$")
_BRACES = re.compile(r"\{([^{}]*)\}")
# Folders a repository's paths start with: a bare `src/hooks` under one is a path.
ROOTS = frozenset({
    "src", "lib", "app", "apps", "packages", "pkg", "cmd", "internal", "tests", "test", "spec",
    "specs", "docs", "doc", "scripts", "frontend", "backend", "web", "server", "client", "api",
    "public", "assets", "config", "bin", "tools", "crates", "modules", "services", "include",
    "examples", "migrations", "db", "static", "templates", "site", "cli", "core", "infra",
    "deploy", "e2e", "android", "ios", "plugins", "extensions",
})  # fmt: skip
_PLACEHOLDER = re.compile(r"[<>\[\]]|\.\.\.|XXX|\[name\]", re.I)
_MACHINE = re.compile(
    r"(?<![\w.])(?:~/|/Users/|/home/|/root/|/tmp/|/etc/|[A-Z]:\\)|(?<![\w.:/])/[\w.-]+/\S*\.\w{1,10}\b"
)
_EXAMPLES = re.compile(
    r"\be\.g\.|\bsuch as\b|\bfor example\b|\betc\b|\band any\b|\bacross (?:all|the)\b|"
    r"\bthroughout\b|\bthe (?:whole|entire) (?:codebase|project|repository|site|app)\b|"
    r"\ball (?:other |remaining )?(?:files|components|pages|modules|tests|screens)\b",
    re.I,
)


def paths_in(text: str) -> list[str]:
    """File and folder paths the text names: `a/b.py`, `docs/`, `src/lib/{db,api}` (two),
    a bare `src/hooks` under a common top folder, or any name in backquotes
    (`package.json`, `src/hooks`)."""
    found: list[str] = []
    quoted = {c.strip("./").rstrip(".,;:") for c in _CODE.findall(text)}
    for match in _PATH.finditer(text):
        for path in _expand(match[1].rstrip(".,;:")):
            if _is_path(path, path.strip("./") in quoted or match[1] in quoted):
                found.append(path)
    for code in _CODE.findall(text):
        code = code.rstrip(".,;:")
        if "/" not in code and _EXTENSION.search(code) and not code.startswith("."):
            found.append(code)
        elif "/" not in code and code.startswith(".") and len(code) > 1:
            found.append(code)  # `.gitignore`, `.env.example`
    return [p for p in dict.fromkeys(found) if p and not p.startswith("/")]


def _expand(path: str) -> list[str]:
    """`src/{core,games}/` as `src/core/` and `src/games/`."""
    brace = _BRACES.search(path)
    if not brace:
        return [path]
    return [
        p
        for option in brace[1].split(",")
        for p in _expand(path[: brace.start()] + option.strip() + path[brace.end() :])
    ]


def _is_path(path: str, quoted: bool) -> bool:
    if path.endswith("/") or _EXTENSION.search(path) or quoted:
        return True
    return path.split("/")[0] in ROOTS and "/" in path  # a bare folder: `src/hooks`


def scope(paths: list[str], text: str, roots: set[str]) -> tuple[list[str], str | None]:
    """The paths a task may change, from those its text names, and why they are left open
    (none: the task may change anything) when the text does not pin its work down."""
    machine = _MACHINE.search(text)
    if machine:
        return [], f"its text names {machine[0]!r}, a path of one machine, not the repository's"
    odd = next((p for p in paths if _PLACEHOLDER.search(p)), None)
    if odd:
        return [], f"its text names {odd!r}, which holds a placeholder"
    example = _EXAMPLES.search(text) if paths else None
    if example:
        return [], (
            f"its text names paths as examples ({example[0]!r}), so its work may go beyond "
            "them; name them in its task file to scope it"
        )
    named = [p for p in paths if not any(o.endswith(f"/{p}") for o in paths)]  # `x.ts`, a/x.ts
    return [_placed(p, roots) for p in named], None


def _placed(path: str, roots: set[str]) -> str:
    """A path under a known top folder as written; any other name at any depth, since the
    text may name it under another folder (`components/` inside `src/features/x/`)."""
    first = path.split("/")[0]
    if first in roots or (first.startswith(".") and "/" in path) or path.startswith("**"):
        return path
    return f"**/{path}"


def top_folders(all_paths: list[list[str]]) -> set[str]:
    """The known top folders and those the file's tasks start their paths with, three times
    or more: `weather/` in a project whose package is `weather`."""
    counts: dict[str, int] = {}
    for paths in all_paths:
        for first in {p.split("/")[0] for p in paths if "/" in p.rstrip("/")}:
            counts[first] = counts.get(first, 0) + 1
    return set(ROOTS) | {first for first, n in counts.items() if n >= 3}
