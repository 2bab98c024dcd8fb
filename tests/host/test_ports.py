"""$TASKHAND_PORT: one free loopback port per workspace, the same for all its processes, never
the port of another workspace alive, nor one just given back."""

from __future__ import annotations

import socket

from taskhand.host import ports


def test_each_workspace_has_its_own_port_while_it_lives() -> None:
    first, second = ports.claim("/ws/a"), ports.claim("/ws/b")
    try:
        assert first != second
        assert ports.claim("/ws/a") == first
        assert ports.env_of("/ws/a") == {"TASKHAND_PORT": str(first)}
        with socket.socket() as server:  # free: a dev server can listen on it
            server.bind(("127.0.0.1", first))
    finally:
        ports.release("/ws/a")
        ports.release("/ws/b")
    assert ports.env_of("/ws/a") == {}


def test_a_port_given_back_rests() -> None:
    given_back = ports.claim("/ws/old")
    ports.release("/ws/old")
    later = [ports.claim(f"/ws/new-{n}") for n in range(5)]
    try:
        assert given_back not in later and len(set(later)) == 5
    finally:
        for n in range(5):
            ports.release(f"/ws/new-{n}")
