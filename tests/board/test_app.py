"""The board's HTTP edge against a real server on loopback: it shows what `show --json` shows,
its event stream resumes from Last-Event-ID without a gap or a repeat, and a change needs the
token and a JSON body; a move made there is the CLI's move."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from taskhand.board.app import Board, create
from taskhand.board.guard import Hosts, is_loopback
from taskhand.board.serve import BoardError, free_port, serve
from tests.conftest import RunCli
from tests.pipeline.test_full import plan_repo, replay
from tests.runs import run_plan

TOKEN = "test-token-0123456789"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """A gated full-pipeline plan whose task waits for its plan's approval, and its board."""
    repo = plan_repo(tmp_path, "markdown", kind="logic")
    summary, _ = run_plan(
        repo / "plan", repo, replay(tmp_path, "T-001", {}), settings={"pipeline": "full"}
    )
    assert summary.status == "waiting"
    with serving(repo) as port:
        yield port, repo


@contextmanager
def serving(repo: Path, token: str = TOKEN, port: int | None = None) -> Iterator[int]:
    """The board of `repo`'s plan, with `token`, on loopback at `port` (a free one if None),
    which it gives."""
    port = port or free_port()
    app = create(Board((repo / "plan").resolve(), repo, token, Hosts("127.0.0.1", port)))
    # A page's event stream never ends on its own: stopping cuts it after a second.
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="critical", timeout_graceful_shutdown=1
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "the board did not start"
        time.sleep(0.02)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(10)


def call(
    port: int, method: str, path: str, body: Any = None, token: str = TOKEN, **headers: str
) -> tuple[int, Any]:
    """One request to the board on `port`, with `token` (none when "") unless the headers
    carry their own Authorization."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body))
    if token and "Authorization" not in headers:
        headers["Authorization"] = f"Bearer {token}"
    conn.request(method, path, body=data, headers=headers)
    answer = conn.getresponse()
    try:
        raw = answer.read()
        is_json = (answer.getheader("Content-Type") or "").startswith("application/json")
        return answer.status, json.loads(raw or b"null") if is_json else raw.decode()
    finally:
        conn.close()


READ = {"Authorization": f"Bearer {TOKEN}"}
AUTH = {**READ, "Content-Type": "application/json"}


def test_the_board_shows_what_show_json_shows(
    served: tuple[int, Path], run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    port, repo = served
    status, board = call(port, "GET", "/api/plan")
    assert status == 200
    monkeypatch.chdir(repo)
    shown = json.loads(run_cli("show", repo / "plan", "--json").stdout)
    differ = {
        (t["id"], k)
        for t, u in zip(board["tasks"], shown["tasks"], strict=True)
        for k in t
        if t[k] != u[k]
    }
    assert differ == set(), differ
    [task] = board["tasks"]
    assert (task["lifecycle"], task["waiting"]) == ("planned", True)
    assert task["moves"] == ["approve", "revise", "comment", "park"]


def test_a_change_needs_the_token_and_json_and_is_the_clis_move(served: tuple[int, Path]) -> None:
    port, _ = served
    json_only = {"Content-Type": "application/json"}
    assert call(port, "POST", "/api/tasks/T-001/approve", {}, token="", **json_only)[0] == 401
    wrong = {**json_only, "Authorization": "Bearer not-the-token"}
    assert call(port, "POST", "/api/tasks/T-001/approve", {}, **wrong)[0] == 401
    form = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/x-www-form-urlencoded"}
    assert call(port, "POST", "/api/tasks/T-001/approve", b"a=b", **form)[0] == 415
    assert call(port, "GET", "/api/plan")[1]["tasks"][0]["lifecycle"] == "planned"  # unchanged
    status, refused = call(port, "POST", "/api/tasks/T-001/accept", {}, **AUTH)
    assert status == 409 and "approve" in refused["fix"], refused  # the moves open are named
    status, empty = call(port, "POST", "/api/tasks/T-001/revise", {"text": " "}, **AUTH)
    assert status == 409 and "says nothing" in empty["error"]
    status, moved = call(port, "POST", "/api/tasks/T-001/approve", {}, **AUTH)
    assert status == 200 and (moved["before"], moved["after"]) == ("planned", "ready")
    assert call(port, "GET", "/api/plan")[1]["tasks"][0]["lifecycle"] == "ready"


def read_events(
    port: int,
    last: int | None,
    until: str,
    by: str = "",
    seconds: float = 10,
    path: str = "/api/events",
    caught_up: list[int] | None = None,
) -> list[dict[str, Any]]:
    """The events the stream sends after `last` (Last-Event-ID), up to one of kind `until`
    (made `by` that move, when given); `caught_up` gets how many events came before the
    stream said it had sent all those written before it opened."""
    caught_up = caught_up if caught_up is not None else []
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=seconds)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    conn.request("GET", path, headers={**headers, "Last-Event-ID": str(last)} if last else headers)
    answer = conn.getresponse()
    assert answer.status == 200 and answer.getheader("Content-Type", "").startswith(
        "text/event-stream"
    )
    found: list[dict[str, Any]] = []
    deadline = time.monotonic() + seconds
    named = ""  # the `event:` line before a data line: only caught_up has one
    try:
        while time.monotonic() < deadline:
            line = answer.fp.readline().decode()
            if line.startswith("event: "):
                named = line[7:].strip()
            elif line.startswith("data: ") and named:
                assert (named, line) == ("caught_up", "data: {}\n")
                caught_up.append(len(found))
                named = ""
            elif line.startswith("data: "):
                found.append(json.loads(line[6:]))
                if found[-1]["kind"] == until and found[-1].get("by", by) == by:
                    return found
    except TimeoutError:
        pass
    finally:
        conn.close()
    raise AssertionError(f"no {until} event in {[e['kind'] for e in found]}")


def test_the_event_stream_resumes_after_the_last_event_it_sent(served: tuple[int, Path]) -> None:
    port, _ = served
    marks: list[int] = []
    first = read_events(port, None, "run_finished", caught_up=marks)
    ids = [e["id"] for e in first]
    assert ids == sorted(ids) and first[0]["kind"] == "run_started"
    done = threading.Event()

    def approve_soon() -> None:
        time.sleep(0.5)
        call(port, "POST", "/api/tasks/T-001/approve", {}, **AUTH)
        done.set()

    threading.Thread(target=approve_soon).start()
    later = read_events(
        port, ids[-1], "task_moved", by="approve", caught_up=marks
    )  # live: the move arrives while it listens
    assert done.wait(5)
    # A connection says once when it has sent what was written before it (a page reads the
    # plan again only for what comes after): at once here, where nothing came before.
    assert marks == [0], marks
    assert later[0]["id"] > ids[-1] and later[-1]["by"] == "approve"
    again = read_events(
        port, None, "task_moved", by="approve"
    )  # a reload from the start misses nothing
    assert [e["id"] for e in again] == ids + [e["id"] for e in later]
    # A page's first connection asks for the newest few only (its Live dock's).
    tail = read_events(port, None, "task_moved", by="approve", path="/api/events?tail=3")
    assert [e["id"] for e in tail] == [e["id"] for e in again][-3:]


def test_task_text_is_data_in_every_answer(served: tuple[int, Path]) -> None:
    port, repo = served
    task = repo / "plan" / "T-001-toggle.md"
    task.write_text(
        task.read_text().replace("title: Dark mode toggle", "title: <script>x</script>")
    )
    status, board = call(port, "GET", "/api/plan")
    assert status == 200 and board["tasks"][0]["title"] == "<script>x</script>"  # JSON, not HTML


def test_serving_names_a_port_it_cannot_use_and_keeps_to_loopback(tmp_path: Path) -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(BoardError, match=rf"port {port} on 127.0.0.1 cannot be used"):
            serve(tmp_path, tmp_path, port=port, say=lambda line: None)


def test_a_tasks_drawer_and_its_pictures_are_read_safely(served: tuple[int, Path]) -> None:
    port, repo = served
    status, found = call(port, "GET", "/api/tasks/T-001")
    assert status == 200
    assert found["plan"] == "(replay) the planner's work on T-001"
    assert [u["role"] for u in found["units"]] == ["writer", "explorer", "planner"]
    assert call(port, "GET", "/api/tasks/T-404")[0] == 404
    from taskhand.state.paths import StateDir

    folder = StateDir.for_repo(repo).artifacts(repo / "plan", "T-001")
    (folder / "prototype.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'><script/></svg>")
    (tmp := repo.parent / "secret.png").write_text("not yours")
    (folder / "link.png").symlink_to(tmp)
    assert call(port, "GET", "/api/tasks/T-001")[1]["pictures"] == ["prototype.svg"]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/api/tasks/T-001/pictures/prototype.svg", headers=READ)
    answer = conn.getresponse()
    answer.read()
    conn.close()
    assert answer.status == 200  # shown as a picture, its script never run:
    assert "default-src 'none'" in (answer.getheader("Content-Security-Policy") or "")
    for name in ("link.png", "..%2Fmap.md", "map.md", "%2Fetc%2Fpasswd"):
        assert call(port, "GET", f"/api/tasks/T-001/pictures/{name}")[0] == 404, name
