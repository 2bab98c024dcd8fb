"""Who the board answers, in raw HTTP against the real server on loopback: a request whose
Host is not the board's address (a page of another site whose name was pointed at 127.0.0.1,
DNS rebinding) is refused on every route, reads, moves and the event stream alike; every
`/api/` route needs the token in a header (never in the address); and every answer carries
headers that keep a browser from sniffing, framing or caching it."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskhand.board.guard import Hosts
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from tests.board.test_app import TOKEN, serving
from tests.board.test_details import drawer_repo

SECRET_WORDS = ("Dark mode toggle", "Colour names", "header.html", "toggle.txt")


class Answer:
    """What came back: the status, the headers (lower-case names) and the body's first bytes."""

    def __init__(self, raw: bytes) -> None:
        head, _, self.body = raw.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split()[1]) if lines[0] else 0
        self.headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            self.headers[name.strip().lower()] = value.strip()

    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


def raw(
    port: int,
    method: str,
    path: str,
    host: str | None,
    token: str | None = None,
    body: bytes = b"",
    **more: str,
) -> Answer:
    """One request written byte by byte (the Host as given: a browser that rebound a name
    sends that name), read until the server closes or a moment passes (the event stream
    never closes)."""
    lines = [f"{method} {path} HTTP/1.1"]
    if host is not None:
        lines.append(f"Host: {host}")
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in more.items()]
    lines += [f"Content-Length: {len(body)}", "Connection: close", "", ""]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall("\r\n".join(lines).encode() + body)
        conn.settimeout(1.5)
        got = b""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                chunk = conn.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            got += chunk
    return Answer(got)


@pytest.fixture
def drawn(tmp_path: Path) -> Iterator[tuple[int, Path, list[str]]]:
    """The board over a plan the replay agent ran (attempts, transcripts, pictures), and each
    of its read routes with a real id in it."""
    repo = drawer_repo(tmp_path)
    with Store.open(StateDir.for_repo(repo).database) as store:
        run = store.runs()[0].id
        attempt = store.attempts(run, "T-001")[-1].id
        unit = store.units(run, "T-001")[-1].id
    reads = [
        "/api/plan",
        "/api/events",
        "/api/tasks/T-001",
        f"/api/tasks/T-001/attempts/{attempt}/diff",
        f"/api/tasks/T-001/units/{unit}/transcript",
        "/api/tasks/T-001/pictures/found-2.png",
    ]
    with serving(repo) as port:
        yield port, repo, reads


PARK = ("POST", "/api/tasks/T-002/park", json.dumps({"why": "planted"}).encode())


def parked(port: int) -> bool:
    plan = raw(port, "GET", "/api/plan", f"127.0.0.1:{port}", TOKEN)
    return any(t["lifecycle"] == "parked" for t in json.loads(plan.body)["tasks"])


BORROWED = [
    "evil.example:{port}",  # a name the attacker's DNS pointed at 127.0.0.1
    "127.0.0.1.nip.io:{port}",
    "localhost.evil.example:{port}",
    "127.0.0.1:{other}",  # the right address, another port: not the board's origin
    "[::1]:{port}",  # the board is not served there
    "",
]


def test_a_request_for_another_host_is_refused_on_every_route(
    drawn: tuple[int, Path, list[str]],
) -> None:
    port, _, reads = drawn
    routes = [("GET", "/", b""), ("GET", "/static/board.js", b"")]
    routes += [("GET", path, b"") for path in reads] + [PARK]
    for host in BORROWED:
        borrowed = host.format(port=port, other=port + 1)
        for method, path, body in routes:
            # The token too: a page that has it is still refused under another name.
            json_only = {"Content_Type": "application/json"}
            answer = raw(port, method, path, borrowed, TOKEN, body, **json_only)
            assert answer.status == 421, (host, path, answer.status, answer.text()[:200])
            assert answer.text() == f"This board answers only at http://127.0.0.1:{port}/\n"
    # No Host at all: the server refuses such a request before the board sees it.
    assert raw(port, "GET", "/api/plan", None, TOKEN).status == 400
    assert not parked(port)  # the moves under a borrowed name changed nothing


def test_every_read_needs_the_token_in_a_header(drawn: tuple[int, Path, list[str]]) -> None:
    port, _, reads = drawn
    here = f"127.0.0.1:{port}"
    for path in reads:
        for token in (None, "", "not-the-token", TOKEN + "x", TOKEN[:-1]):
            answer = raw(port, "GET", path, here, token)
            assert answer.status == 401, (path, token, answer.status)
            assert not any(word in answer.text() for word in SECRET_WORDS), path
            assert json.loads(answer.body)["fix"].startswith("open the address taskhand board")
        # Never from the address: a token there would reach logs, history and Referer.
        joiner = "&" if "?" in path else "?"
        assert raw(port, "GET", f"{path}{joiner}token={TOKEN}", here).status == 401
        assert raw(port, "GET", path, here, Cookie=f"token={TOKEN}").status == 401
        for name in (here, f"localhost:{port}", f"LOCALHOST:{port}"):
            answer = raw(port, "GET", path, name, TOKEN)
            assert answer.status == 200, (path, name, answer.status, answer.text()[:200])
    # The plan's data with the token; the event stream sends its events.
    assert any(word in raw(port, "GET", reads[0], here, TOKEN).text() for word in SECRET_WORDS)
    assert "data: {" in raw(port, "GET", "/api/events", here, TOKEN).text()
    # The page and its own files hold no data of the plan: they load without the token.
    for path in ("/", "/static/board.js", "/static/api.js"):
        answer = raw(port, "GET", path, here)
        assert answer.status == 200 and not any(w in answer.text() for w in SECRET_WORDS)


def test_a_move_needs_the_token_and_the_boards_host(drawn: tuple[int, Path, list[str]]) -> None:
    port, _, _ = drawn
    method, path, body = PARK
    here = f"127.0.0.1:{port}"
    json_only = {"Content_Type": "application/json"}
    assert raw(port, method, path, here, None, body, **json_only).status == 401
    assert raw(port, method, path, "evil.example", TOKEN, body, **json_only).status == 421
    assert not parked(port)
    assert raw(port, method, path, here, TOKEN, body, **json_only).status == 200
    assert parked(port)
    raw(port, "POST", "/api/tasks/T-002/reopen", here, TOKEN, b"{}", **json_only)


def test_every_answer_keeps_the_browser_from_sniffing_framing_or_caching_it(
    drawn: tuple[int, Path, list[str]],
) -> None:
    port, repo, reads = drawn
    here = f"127.0.0.1:{port}"
    for path in ["/", "/static/board.js", *reads]:
        answer = raw(port, "GET", path, here, TOKEN)
        assert answer.headers["x-content-type-options"] == "nosniff", path
        assert answer.headers["referrer-policy"] == "no-referrer", path
        assert answer.headers["x-frame-options"] == "DENY", path
        assert answer.headers["cache-control"] == "no-store", path
        policy = answer.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in policy or "default-src 'none'" in policy, path
    page = raw(port, "GET", "/", here).headers["content-security-policy"]
    assert "default-src 'self'" in page and "'unsafe-inline'" not in page
    # A picture is an image whatever its bytes: an agent's .png that is a page stays an image,
    # and an SVG never runs script.
    folder = StateDir.for_repo(repo).artifacts(repo / "plan", "T-001")
    (folder / "page.png").write_text("<html><script>alert(1)</script></html>")
    (folder / "drawing.svg").write_text(
        "<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>"
    )
    for name, kind in (("page.png", "image/png"), ("drawing.svg", "image/svg+xml")):
        answer = raw(port, "GET", f"/api/tasks/T-001/pictures/{name}", here, TOKEN)
        assert answer.status == 200 and answer.headers["content-type"] == kind, name
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["content-security-policy"].startswith("default-src 'none'")
    for name in ("page.png", "drawing.svg"):
        (folder / name).unlink()


def test_the_hosts_a_board_answers_are_the_address_it_is_served_at() -> None:
    loopback = Hosts("127.0.0.1", 8123)
    assert loopback.admits("127.0.0.1:8123") and loopback.admits("localhost:8123")
    others = ["127.0.0.1:8124", "127.0.0.1", "[::1]:8123", "evil.example:8123"]
    others += ["127.0.0.1:8123.evil.example", "evil@127.0.0.1:8123", "localhost.:8123"]
    for other in others:
        assert not loopback.admits(other), other
    six = Hosts("::1", 8123)
    assert six.admits("[::1]:8123") and six.admits("localhost:8123")
    assert not six.admits("127.0.0.1:8123") and not six.admits("[::1]x:8123")
    named = Hosts("localhost", 8123)
    assert {h for h in ("127.0.0.1:8123", "[::1]:8123", "localhost:8123") if named.admits(h)} == {
        "127.0.0.1:8123",
        "[::1]:8123",
        "localhost:8123",
    }
    # On every address, any address literal (which no rebinding can borrow), never a name.
    everywhere = Hosts("0.0.0.0", 8123)
    assert everywhere.admits("192.168.1.20:8123") and everywhere.admits("[fe80::1]:8123")
    assert everywhere.admits("localhost:8123")
    assert not everywhere.admits("evil.example:8123")
    assert not everywhere.admits("192.168.1.20:8124")
    assert Hosts("127.0.0.1", 80).admits("127.0.0.1")  # a browser leaves the default port out
