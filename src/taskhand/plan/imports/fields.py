"""The fields of one task in a JSON file another tool wrote, read as the plan needs them: a
value of another kind than the field holds is reported where it is, and never written as
Python prints it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from taskhand.plan.imports.draft import Dropped
from taskhand.text import plural


@dataclass
class Fields:
    entry: dict[str, Any]
    at: str  # the entry's JSON path: "$.master.tasks[2]"
    key: str  # the entry's id, as reports name it: "3", "3.2"
    dropped: list[Dropped]

    def of(self, name: str, kind: type) -> Any:
        """The field when it is of `kind` (None when absent); another kind is reported."""
        value = self.entry.get(name)
        if value is None or (isinstance(value, kind) and not isinstance(value, bool)):
            return value
        want = "a list" if kind is list else "text"
        self.report(name, f"{self.key}'s {name} is {kind_of(value)}, not {want}: left out")
        return None

    def text(self, name: str) -> str:
        """A field that holds text; a number is its digits, a list of texts one a line."""
        value = self.entry.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            self.report(
                name,
                f"{self.key}'s {name} is a list, not text: its {plural(len(value), 'text')} "
                "are kept, one a line",
            )
            return "\n".join(value)
        return self.of(name, str) or ""

    def lines(self, name: str) -> list[str]:
        """Criteria from a text (one per line, list marks taken off) or a list of texts."""
        value = self.entry.get(name)
        if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            value = self.of(name, str)
        found = []
        for text in value if isinstance(value, list) else [value] if value else []:
            for line in text.split("\n"):
                line = re.sub(r"^\s*(?:[-*\u2022]|\d+[.)])\s+", "", line).strip()
                if line:
                    found.append(line)
        return found

    def words(self, name: str) -> str:
        """A note's value as text: a list of texts or numbers joined with commas."""
        value = self.entry.get(name)
        if isinstance(value, list) and all(
            isinstance(v, str | int | float) and not isinstance(v, bool) for v in value
        ):
            return ", ".join(str(v) for v in value)
        return self.text(name).strip()

    def report(self, name: str, what: str) -> None:
        self.dropped.append(Dropped(f"{self.at}.{name}", what))


def kind_of(value: Any) -> str:
    """What a JSON value is, in words."""
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return f"{json.dumps(value)} (a boolean)"
    return "a number" if isinstance(value, int | float) else "text"


def shown(value: Any) -> str:
    """A value of the file as JSON writes it, short: never a Python repr."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."
