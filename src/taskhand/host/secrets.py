"""Secrets never travel: the one rule for what is secret (a variable's name, a value's shape)
and the Redactor that scrubs known values and secret-shaped text from everything stored or shown.

What a child process is given is decided elsewhere, by an allow-list (allowlist.py).
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar, cast
from urllib.parse import unquote

# TOKEN but not TOKENS, so limits such as MAX_TOKENS stay visible; AUTH but not AUTHOR, so
# GIT_AUTHOR_NAME does; PAT only as a whole word (GH_PAT), never inside PATH.
SECRET_NAME = re.compile(
    r"KEY|TOKEN(?!S)|SECRET|PASSWORD|PASSWD|CREDENTIAL|COOKIE|DSN|AUTH(?!OR)|AUTHORIZATION"
    r"|(?<![A-Z])PAT(?![A-Z])",
    re.I,
)
# Shorter values ("1", "true", "dev") would turn ordinary words into redactions everywhere.
MIN_SECRET_LENGTH = 6
REDACTED = "[redacted]"

# Credentials whose prefix says what they are; each needs a random-looking body of some length,
# so words that merely start alike ("sk-learn", "task-list") stay.
TOKEN = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"gh[pousr]_[A-Za-z0-9]{30,}"  # GitHub: personal, OAuth, server, user, refresh
    r"|github_pat_[A-Za-z0-9_]{30,}"  # GitHub fine-grained
    r"|sk-(?:ant|proj|svcacct|admin)-[A-Za-z0-9_-]{20,}"  # Anthropic; OpenAI project, service
    r"|sk-(?=[A-Za-z0-9_-]{0,200}[0-9])[A-Za-z0-9_-]{20,}"  # OpenAI and compatible (with a digit)
    r"|xox[abposr]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,}"  # Slack
    r"|(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])"  # AWS access key ids
    r"|glpat-[A-Za-z0-9_-]{20,}"  # GitLab
    r"|npm_[A-Za-z0-9]{36,}"  # npm
    r"|AIza[A-Za-z0-9_-]{35}"  # Google API keys
    r"|(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,}"  # Stripe
    r"|hf_[A-Za-z0-9]{30,}"  # Hugging Face
    r"|pypi-[A-Za-z0-9_-]{50,}"  # PyPI upload tokens
    r"|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"  # SendGrid
    r"|eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"  # JSON Web Tokens
    # A private key block up to its end line; its body may hold single dashes (DEK-Info), never
    # five, so a run of BEGIN lines without an END is scanned once, not once for each.
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----(?:[^-]|-(?!----))*(?:-----END [A-Z ]*PRIVATE KEY-----)?"
    r")"
)
# scheme://user:PASSWORD@host, and scheme://KEY@host (Sentry's DSN, tokens as the user name).
URL_CREDENTIALS = re.compile(
    r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}://"
    r"(?P<user>[^\s:/@]*)(?::(?P<password>[^\s/@]*))?@"
)
BEARER = re.compile(r"\b(?i:bearer|basic)\s+(?P<token>[A-Za-z0-9._~+/=-]{16,})")
# KEY=VALUE, KEY: VALUE, "key": "value" (and the same JSON-escaped inside a string).
ASSIGNMENT = re.compile(
    r"(?<![A-Za-z0-9_.-])(?P<key>[A-Za-z_][A-Za-z0-9_.-]*)"
    r"\\?[\"']?\s*[:=]\s*\\?[\"']?(?P<value>[A-Za-z0-9+/=_.~-]{8,})"
)
REFERENCE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")  # os.environ, settings.API_KEY
NOT_SECRET_PREFIXES = ("sha1-", "sha256-", "sha384-", "sha512-", "/", ".", "~")  # SRI, paths
RANDOM_LENGTH = 20
RANDOM_BITS = 3.5  # bits a character: random base62 of 20 chars has about 4.0, English words 3
URL_KEY_LENGTH = 20

T = TypeVar("T")


def is_secret_name(name: str) -> bool:
    return SECRET_NAME.search(name) is not None


def looks_random(value: str) -> bool:
    """A value that reads as a generated credential: long, upper and lower case letters and
    digits mixed, and high in entropy. Hex (commit ids, digests, UUIDs) never qualifies."""
    return (
        len(value) >= RANDOM_LENGTH
        and not value.startswith(NOT_SECRET_PREFIXES)
        and any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() for c in value)
        and entropy(value) >= RANDOM_BITS
    )


def entropy(value: str) -> float:
    """Shannon entropy of `value`, in bits a character."""
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def secret_assignment(key: str, value: str) -> bool:
    """Whether `value`, given as `key`'s value, is a secret. Under a secret-looking key any
    credential-like value is (a 40-hex token included); under a plain key only a random one."""
    if not is_secret_name(key):
        return looks_random(value)
    return (
        len(value) >= 8
        and any(c.isalpha() for c in value)
        and not REFERENCE.fullmatch(value)
        and (any(c.isdigit() for c in value) or (len(value) >= 16 and entropy(value) >= 3.5))
    )


def secret_spans(text: str) -> list[tuple[int, int]]:
    """Where in `text` secret-shaped values stand, as merged (start, end) spans."""
    spans = sorted(_spans(text))
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _spans(text: str) -> Iterator[tuple[int, int]]:
    for match in TOKEN.finditer(text):
        yield match.span()
    for match in URL_CREDENTIALS.finditer(text):
        if match["password"]:
            yield match.span("password")
        elif _url_key(match["user"]):
            yield match.span("user")
    for match in BEARER.finditer(text):
        yield match.span("token")
    for match in ASSIGNMENT.finditer(text):
        if secret_assignment(match["key"], match["value"]):
            yield match.span("value")


def _url_key(user: str) -> bool:
    """A URL's user name that is a key (a Sentry DSN's), not a person's or a service's name."""
    return (
        len(user) >= URL_KEY_LENGTH
        and any(c.isdigit() for c in user)
        and any(c.isalpha() for c in user)
        and entropy(user) >= 3.0
    )


def scrub_shapes(text: str) -> str:
    """`text` with every secret-shaped value replaced by "[redacted]"."""
    for start, end in reversed(secret_spans(text)):
        text = text[:start] + REDACTED + text[end:]
    return text


def secret_parts(name: str, value: str) -> list[str]:
    """The secrets an environment variable holds: all of it under a secret-looking name; else
    each secret-shaped part, read as the text `NAME=value` (a URL's password in both spellings)."""
    if is_secret_name(name):
        return [value]
    line = f"{name}={value}"
    found = [line[start:end] for start, end in secret_spans(line)]
    return [*found, *(unquote(part) for part in found)]


def secret_values(env: Mapping[str, str] | None = None, extra: Iterable[str] = ()) -> list[str]:
    """The secrets in `env` (default os.environ), whatever their variables' names, plus
    `extra`; longest first, so a secret that contains another is redacted whole."""
    source = os.environ if env is None else env
    found = [part for name, value in source.items() for part in secret_parts(name, value)]
    found.extend(extra)
    return _longest_first(found)


def redact(text: str, secrets: Sequence[str]) -> str:
    """`text` with every occurrence of every secret replaced by "[redacted]"."""
    pattern = _pattern(secrets)
    return text if pattern is None else pattern.sub(REDACTED, text)


class Redactor:
    """Scrubs known secret values, then secret-shaped text, from text and from nested event or
    transcript data.

    Built once, from the environment as it stands (default os.environ) plus `extra`, the API
    keys read from config; `Redactor({}, extra=values)` scrubs just the values given (and shapes).
    """

    def __init__(self, env: Mapping[str, str] | None = None, extra: Iterable[str] = ()) -> None:
        self.secrets = tuple(secret_values(env, extra))
        self._pattern = _pattern(self.secrets)

    def __call__(self, text: str) -> str:
        known = text if self._pattern is None else self._pattern.sub(REDACTED, text)
        return scrub_shapes(known)

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


def strip_secrets(value: Any) -> Any:
    """`value` without any mapping key that names a secret, and with secret-shaped text
    scrubbed from its strings."""
    if isinstance(value, dict):
        return {
            k: strip_secrets(v)
            for k, v in value.items()
            if not (isinstance(k, str) and is_secret_name(k))
        }
    if isinstance(value, list):
        return [strip_secrets(v) for v in value]
    if isinstance(value, str):
        return scrub_shapes(value)
    return value
