"""What every request to the board passes first: its `Host` must be an address the board is
served at (a page of another site whose name was pointed at loopback, DNS rebinding, is
refused before any route reads), every `/api/` route needs the token in the Authorization
header (reads as well as moves: no cookie, nothing in an address), and every answer carries
headers that keep a browser from sniffing, framing, caching or referring it.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

# Every answer: never sniffed into another type, never framed, never cached, never referred;
# one that sets no policy of its own (JSON, the event stream, a script) loads and runs nothing.
HEADERS = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
    "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
}
WILDCARDS = ("0.0.0.0", "::")


@dataclass(frozen=True)
class Hosts:
    """The `Host` values a board served at `host`:`port` answers: the address it listens on,
    and `localhost` when it listens on loopback. Served on every address (0.0.0.0), any IP
    address with its port: a literal address names no site, so no rebinding can use it."""

    host: str
    port: int

    def names(self) -> frozenset[str]:
        host = self.host.lower().strip("[]")
        if host == "localhost":
            return frozenset({"localhost", "127.0.0.1", "::1"})
        if is_loopback(host) or host in WILDCARDS:
            return frozenset({host, "localhost"})
        return frozenset({host})

    def admits(self, given: str) -> bool:
        name, port = _split(given.strip().lower())
        if (port or "80") != str(self.port):  # a browser leaves the default port out
            return False
        if name in self.names():
            return True
        return self.host.strip("[]") in WILDCARDS and _is_address(name)

    def shown(self) -> str:
        """Where to open the board, for a refusal to name."""
        host = self.host.strip("[]")
        return f"http://{f'[{host}]' if ':' in host else host}:{self.port}/"


def _split(given: str) -> tuple[str, str]:
    """A Host value's name (an IPv6 address without its brackets) and port ("" if none)."""
    if given.startswith("["):
        name, _, rest = given[1:].partition("]")
        if rest and not rest.startswith(":"):
            return "", ""  # nothing but a port may follow the brackets
        return name, rest[1:]
    name, _, port = given.partition(":")
    return name, port


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"


class Guard:
    """The ASGI layer around the board's app: the Host, the token, the headers."""

    def __init__(self, app: App, hosts: Hosts, token: str) -> None:
        self.app, self.hosts, self.token = app, hosts, token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in scope["headers"]]
        hosts = [value for name, value in headers if name == "host"]
        if len(hosts) != 1 or not self.hosts.admits(hosts[0]):
            # Plain words, no data: a page that reached here through a borrowed name reads this.
            text = f"This board answers only at {self.hosts.shown()}\n"
            await _answer(send, 421, "text/plain; charset=utf-8", text.encode())
            return
        if scope["path"].startswith("/api/") and not self._has_token(
            dict(headers).get("authorization", "")
        ):
            refusal = {
                "error": "the board's data needs its token",
                "fix": "open the address taskhand board printed (it ends in #token=...), "
                "or send Authorization: Bearer TOKEN",
            }
            await _answer(send, 401, "application/json", json.dumps(refusal).encode())
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = _added(list(message.get("headers", [])))
            await send(message)

        await self.app(scope, receive, with_headers)

    def _has_token(self, given: str) -> bool:
        scheme, _, value = given.strip().partition(" ")
        value = value.strip()
        return (
            scheme.lower() == "bearer"
            and bool(value)
            and hmac.compare_digest(value.encode(), self.token.encode())
        )


def _added(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """`headers` with the guard's, each unless the answer set it itself (the page its policy)."""
    present = {name.lower() for name, _ in headers}
    for name, value in HEADERS.items():
        if name.encode() not in present:
            headers.append((name.encode(), value.encode()))
    return headers


async def _answer(send: Send, status: int, kind: str, body: bytes) -> None:
    headers = _added([(b"content-type", kind.encode())])
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
