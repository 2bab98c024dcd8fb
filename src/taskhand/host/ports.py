"""A free loopback port for each attempt's workspace, `$TASKHAND_PORT`: what its setup command,
its agents, its checks and the app started for it listen on, so dev servers of workspaces side
by side never collide. A port is held by one workspace at a time and rests after it is given
back, so the next workspace gets another.
"""

from __future__ import annotations

import socket
import threading
from collections import deque

VARIABLE = "TASKHAND_PORT"
TRIES = 32  # probes for a port no workspace holds or gave back lately
RESTING = 256  # ports given back lately, not handed out again while others are free

_lock = threading.Lock()
_held: dict[str, int] = {}
_resting: deque[int] = deque(maxlen=RESTING)


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on now (someone may take it before its user)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def claim(owner: str) -> int:
    """The port of `owner` (a workspace's path), chosen on its first claim."""
    with _lock:
        if owner in _held:
            return _held[owner]
        taken = {*_held.values(), *_resting}
        port = free_port()
        for _ in range(TRIES):
            if port not in taken:
                break
            port = free_port()
        _held[owner] = port
        return port


def release(owner: str) -> None:
    """`owner` is gone: its port rests."""
    with _lock:
        port = _held.pop(owner, None)
        if port is not None:
            _resting.append(port)


def env_of(owner: str) -> dict[str, str]:
    """$TASKHAND_PORT for the processes of `owner`'s workspace ({} when it holds none)."""
    with _lock:
        port = _held.get(owner)
    return {VARIABLE: str(port)} if port is not None else {}
