"""An HTTP server on 127.0.0.1, on a free port, in a thread: the base of the scripted servers."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass
class Logged:
    """One request a scripted server received."""

    method: str
    path: str
    body: dict[str, Any]


class LocalServer:
    """Serves until the `with` block ends. Subclasses set their state, then call __init__."""

    path = ""  # appended to the base URL (e.g. "/v1" for OpenAI-style clients)

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        # A short poll interval: shutdown() waits up to one of them, once per test.
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}{self.path}"

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)
