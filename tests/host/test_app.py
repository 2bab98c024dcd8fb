"""The project's app as the runner runs it: a real server started in a worktree on a free port,
polled until it answers, stopped with everything it started; and every way it can go wrong."""

from __future__ import annotations

import shlex
import socket
import sys
import urllib.request
from pathlib import Path

import pytest

from taskhand.config import AppConfig
from taskhand.host.allowlist import child_env
from taskhand.host.app import PORT_TRIES, AppError, running
from taskhand.host.sandbox import bwrap_problem, choose
from tests.gates.test_checks import gone

PYTHON = shlex.quote(sys.executable)
SERVE = f"exec {PYTHON} -m http.server $PORT --bind 127.0.0.1"
PAGE = "<!doctype html><title>Bookmarks</title><h1>Saved bookmarks</h1>"


def site(tmp_path: Path) -> Path:
    worktree = tmp_path / "worktree"
    worktree.mkdir()
    (worktree / "index.html").write_text(PAGE, encoding="utf-8")
    return worktree


def fetch(url: str) -> str:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=5) as answer:
        return str(answer.read().decode())


def refused(app: AppConfig, worktree: Path) -> str:
    """The one-line error `running` refuses `app` with; the block never runs."""
    with pytest.raises(AppError) as caught, running(app, worktree, child_env()):
        pytest.fail("the block must not run")
    message = str(caught.value)
    assert "\n" not in message and "(fix: " in message
    return message


def pids(worktree: Path, *names: str) -> list[int]:
    return [int((worktree / name).read_text().strip()) for name in names]


# The app records its own pid (it leads its group) and a child's it leaves running.
RECORDING = f"echo $$ > app.pid; sleep 300 & echo $! > child.pid; {SERVE}"


def test_the_app_answers_on_its_port_and_is_stopped_whole(tmp_path: Path) -> None:
    worktree = site(tmp_path)
    with running(AppConfig(start=RECORDING), worktree, child_env()) as url:
        assert url.startswith("http://127.0.0.1:") and not url.endswith(":$PORT/")
        assert "Saved bookmarks" in fetch(url)
        leader, child = pids(worktree, "app.pid", "child.pid")
        assert not gone(leader, within=0) and not gone(child, within=0)
    assert gone(leader, within=0) and gone(child, within=0)


def test_the_app_is_stopped_when_the_block_raises(tmp_path: Path) -> None:
    worktree = site(tmp_path)
    with (
        pytest.raises(RuntimeError, match="the unit broke"),
        running(AppConfig(start=RECORDING), worktree, child_env()),
    ):
        raise RuntimeError("the unit broke")
    assert all(gone(pid, within=0) for pid in pids(worktree, "app.pid", "child.pid"))


def test_ready_is_polled_with_the_port_and_its_path(tmp_path: Path) -> None:
    worktree = site(tmp_path)
    (worktree / "health").write_text("ok", encoding="utf-8")
    # A server that needs a moment before it listens.
    app = AppConfig(
        start=f"sleep 0.5; {SERVE}",
        url="http://localhost:${PORT}/index.html",
        ready="http://127.0.0.1:$PORT/health",
    )
    with running(app, worktree, child_env()) as url:
        assert url.startswith("http://localhost:") and url.endswith("/index.html")
        assert "Saved bookmarks" in fetch(url)


def test_an_app_that_never_answers_is_named_with_its_output(tmp_path: Path) -> None:
    worktree = site(tmp_path)
    app = AppConfig(start="echo booting the bookmarks app; echo $$ > app.pid; exec sleep 300")
    app.ready_seconds = 1.0
    message = refused(app, worktree)
    assert message.startswith("[app] in taskhand.toml: the app did not answer http://127.0.0.1:")
    assert "within 1 s" in message and "booting the bookmarks app" in message
    assert message.endswith("(fix: check start and ready, or raise ready_seconds)")
    assert gone(pids(worktree, "app.pid")[0], within=0)


def test_an_app_that_exits_at_once_is_named_with_its_exit_code(tmp_path: Path) -> None:
    app = AppConfig(start="echo 'cannot read config.yml' >&2; exit 3")
    message = refused(app, site(tmp_path))
    assert "exited before it answered (exit code 3)" in message
    assert "cannot read config.yml" in message
    assert "fix: make start run the app in the foreground" in message


def test_a_start_command_that_is_not_found_says_so(tmp_path: Path) -> None:
    app = AppConfig(start="no-such-server-taskhand --port $PORT")
    message = refused(app, site(tmp_path))
    assert "start command was not found" in message and "no-such-server-taskhand" in message
    assert "(fix: install the program start names, or correct start)" in message


def test_a_taken_port_is_retried_on_another(tmp_path: Path) -> None:
    worktree = site(tmp_path)
    first_time_taken = (
        "echo $PORT >> ports; "
        "if [ ! -e tried ]; then touch tried; "
        "echo 'OSError: [Errno 98] Address already in use' >&2; exit 1; fi; " + SERVE
    )
    with running(AppConfig(start=first_time_taken), worktree, child_env()) as url:
        assert "Saved bookmarks" in fetch(url)
    ports = (worktree / "ports").read_text().split()
    assert len(ports) == 2 and url == f"http://127.0.0.1:{ports[1]}/"


def test_a_port_always_taken_ends_with_the_fix(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        app = AppConfig(
            start=f"echo $PORT >> ports; exec {PYTHON} -m http.server {taken} --bind 127.0.0.1",
            url=f"http://127.0.0.1:{taken}/",
        )
        worktree = site(tmp_path)
        message = refused(app, worktree)
    assert f"port taken {PORT_TRIES} times" in message and "Address already in use" in message
    assert "(fix: make start listen on $PORT" in message
    assert len((worktree / "ports").read_text().split()) == PORT_TRIES


@pytest.mark.parametrize("key", ["url", "ready"])
def test_an_address_that_is_not_http_is_refused_before_anything_starts(
    tmp_path: Path, key: str
) -> None:
    worktree = site(tmp_path)
    app = AppConfig(start="touch started; " + SERVE, **{key: "localhost:$PORT"})
    assert f"{key} = 'localhost:$PORT' is not an http" in refused(app, worktree)
    assert not (worktree / "started").exists()


def test_no_app_declared_is_refused(tmp_path: Path) -> None:
    assert "no app is declared (fix: set start" in refused(AppConfig(), site(tmp_path))


@pytest.mark.skipif(bool(bwrap_problem()), reason=f"no bubblewrap here: {bwrap_problem()}")
def test_in_the_sandbox_the_app_writes_only_its_worktree(tmp_path: Path) -> None:
    worktree = site(tmp_path)
    outside = tmp_path / "outside.txt"
    sandbox, _ = choose("bwrap")
    start = f"touch {shlex.quote(str(outside))} 2>/dev/null; touch inside.txt; {SERVE}"
    with running(AppConfig(start=start), worktree, child_env(), sandbox=sandbox) as url:
        assert "Saved bookmarks" in fetch(url)
    assert (worktree / "inside.txt").exists() and not outside.exists()
