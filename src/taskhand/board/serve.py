"""Serving the board: uvicorn on loopback by default (another address only when asked, with a
warning), on a free port unless one is given, with a fresh token that is printed once and
never logged.
"""

from __future__ import annotations

import secrets
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskhand.board.app import Board, create
from taskhand.board.guard import Hosts, is_loopback
from taskhand.errors import UserError

LOOPBACK = "127.0.0.1"
STARTUP_SECONDS = 10.0


class BoardError(UserError):
    """A board that cannot be served; one line with the fix."""


def new_token() -> str:
    return secrets.token_urlsafe(24)


def free_port(host: str = LOOPBACK) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


@dataclass
class Served:
    """A board served from a background thread, so that a supervisor can keep the main one
    (where signals arrive)."""

    board: Board
    host: str
    port: int
    server: Any  # uvicorn.Server
    thread: threading.Thread

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    def wait(self) -> None:
        """Until the server stops, or Ctrl-C (then it stops)."""
        try:
            while self.thread.is_alive():
                self.thread.join(0.5)
        except KeyboardInterrupt:
            self.stop()

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def start(
    plan: Path,
    repo: Path,
    host: str = LOOPBACK,
    port: int | None = None,
    say: Callable[[str], None] = print,
) -> Served:
    """Serve the board in a background thread; `say` gets the address and the token once."""
    import uvicorn  # here: only the board needs the server

    chosen = port or free_port(host if is_loopback(host) else LOOPBACK)
    board = Board(plan.resolve(), repo.resolve(), new_token(), Hosts(host, chosen))
    if not is_loopback(host):
        say(
            f"warning: the board listens on {host}, reachable from other machines over plain "
            "HTTP; anyone with the token can read and move tasks"
        )
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, chosen))
        except OSError as exc:
            raise BoardError(
                f"port {chosen} on {host} cannot be used ({exc.strerror})",
                fix="give another with --port, or leave --port out for a free one",
            ) from None
    # access_log off: request lines are not needed, and nothing of a request is logged.
    config = uvicorn.Config(
        create(board), host=host, port=chosen, log_level="warning", access_log=False
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="taskhand-board", daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_SECONDS
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise BoardError(
                f"the board did not start on {host}:{chosen}", fix="try another --port"
            )
        time.sleep(0.02)
    served = Served(board, host, chosen, server, thread)
    # The token rides in the address's fragment, which a browser never sends to the server.
    say(f"board: {served.url}#token={board.token}  (plan {board.plan})")
    return served


def serve(
    plan: Path,
    repo: Path,
    host: str = LOOPBACK,
    port: int | None = None,
    say: Callable[[str], None] = print,
) -> None:
    """Serve the board until interrupted."""
    start(plan, repo, host, port, say).wait()
