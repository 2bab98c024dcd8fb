"""Secrets never travel: which environment variables hold them, and how to scrub their values.

Every event and transcript passes through a Redactor before it is stored or shown; what a
child process is given is decided elsewhere, by an allow-list (allowlist.py).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar, cast

# TOKEN but not TOKENS, so limits such as MAX_TOKENS stay with the agent.
SECRET_NAME = re.compile(r"KEY|TOKEN(?!S)|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.I)
# Shorter values ("1", "true", "dev") would turn ordinary words into redactions everywhere.
MIN_SECRET_LENGTH = 6
REDACTED = "[redacted]"

T = TypeVar("T")


def is_secret_name(name: str) -> bool:
    return SECRET_NAME.search(name) is not None


def secret_values(env: Mapping[str, str] | None = None, extra: Iterable[str] = ()) -> list[str]:
    """Values of secret-named variables in `env` (default os.environ), plus `extra`, longest first.

    Longest first, so a secret that contains another is redacted whole rather than in part.
    """
    source = os.environ if env is None else env
    found = [value for name, value in source.items() if is_secret_name(name)]
    found.extend(extra)
    return _longest_first(found)


def redact(text: str, secrets: Sequence[str]) -> str:
    """`text` with every occurrence of every secret replaced by "[redacted]"."""
    pattern = _pattern(secrets)
    return text if pattern is None else pattern.sub(REDACTED, text)


class Redactor:
    """Scrubs known secret values from text and from nested event or transcript data.

    Built once, from the environment as it stands (default os.environ) plus `extra`, the API
    keys read from config; `Redactor({}, extra=values)` scrubs just the values given.
    """

    def __init__(self, env: Mapping[str, str] | None = None, extra: Iterable[str] = ()) -> None:
        self.secrets = tuple(secret_values(env, extra))
        self._pattern = _pattern(self.secrets)

    def __call__(self, text: str) -> str:
        return text if self._pattern is None else self._pattern.sub(REDACTED, text)

    def value(self, obj: T) -> T:
        """`obj` with every string inside it redacted, dict keys included; other values as they are.

        Dicts, lists and tuples are copied, never changed in place.
        """
        if isinstance(obj, str):
            return cast(T, self(obj))
        if isinstance(obj, dict):
            return cast(T, {self.value(k): self.value(v) for k, v in obj.items()})
        if isinstance(obj, list):
            return cast(T, [self.value(item) for item in obj])
        if isinstance(obj, tuple):
            return cast(T, tuple(self.value(item) for item in obj))
        return obj

    def __repr__(self) -> str:
        # The default repr would print the secrets into any log that shows this object.
        return f"Redactor({len(self.secrets)} secrets)"


def _longest_first(values: Iterable[str]) -> list[str]:
    unique = {v for v in values if len(v) >= MIN_SECRET_LENGTH}
    return sorted(unique, key=lambda v: (-len(v), v))


def _pattern(secrets: Sequence[str]) -> re.Pattern[str] | None:
    # One alternation, longest first: replacing one secret at a time could leave the tail of a
    # longer secret that contains a shorter one, or match across an earlier "[redacted]".
    values = sorted({s for s in secrets if s}, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, values))) if values else None
