"""Serving the board: uvicorn on loopback by default (another address only when asked, with a
warning), on a free port unless one is given, with a fresh token that is printed once and
never logged.
"""

from __future__ import annotations

import ipaddress
import secrets
import socket
from collections.abc import Callable
from pathlib import Path

from taskhand.board.app import Board, create
from taskhand.errors import UserError

LOOPBACK = "127.0.0.1"


class BoardError(UserError):
    """A board that cannot be served; one line with the fix."""


def new_token() -> str:
    return secrets.token_urlsafe(24)


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def free_port(host: str = LOOPBACK) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def serve(
    plan: Path,
    repo: Path,
    host: str = LOOPBACK,
    port: int | None = None,
    say: Callable[[str], None] = print,
) -> None:
    """Serve the board until interrupted; `say` gets the address and the token."""
    import uvicorn  # here: only the board needs the server

    board = Board(plan.resolve(), repo.resolve(), new_token())
    chosen = port or free_port(host if is_loopback(host) else LOOPBACK)
    if not is_loopback(host):
        say(
            f"warning: the board listens on {host}, reachable from other machines; "
            "anyone with the token can move tasks"
        )
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, chosen))
        except OSError as exc:
            raise BoardError(
                f"port {chosen} on {host} cannot be used ({exc.strerror})",
                fix="give another with --port, or leave --port out for a free one",
            ) from None
    # The token rides in the address's fragment, which a browser never sends to the server.
    say(f"board: http://{host}:{chosen}/#token={board.token}  (plan {board.plan})")
    # access_log off: request lines are not needed, and nothing of a request is logged.
    uvicorn.run(create(board), host=host, port=chosen, log_level="warning", access_log=False)
