"""The board's HTTP edge: what the plan looks like now (`GET /api/plan`, the reader `show
--json` uses), its events live (`GET /api/events`, Server-Sent Events that resume from
`Last-Event-ID`), and a person's moves (`POST /api/tasks/{task}/{move}`, JSON only). Every
`/api/` route needs the token printed at start, and only the board's own address is answered
(`board.guard`). Task and agent text are data here, never markup, and redacted as every output.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from taskhand import config
from taskhand.board import changes, details, diffs, reader, transcripts
from taskhand.board.guard import Guard, Hosts
from taskhand.errors import UserError
from taskhand.host.secrets import Redactor
from taskhand.pipeline.lifecycle import Move
from taskhand.run import moves
from taskhand.state.events import Event
from taskhand.state.paths import StateDir
from taskhand.text import dumps
from taskhand.workspace import setup_files

HEARTBEAT_SECONDS = 15.0  # a comment line, so proxies and browsers keep the stream open
BODY_BYTES = 64 * 1024  # a move's body is a few words; anything larger is refused


@dataclass(frozen=True)
class Board:
    """One plan, in one repository, behind one token, served at one address."""

    plan: Path
    repo: Path
    token: str
    hosts: Hosts


def create(board: Board) -> Guard:
    """The board's application (uvicorn serves it; tests may too)."""
    redact = redactor(board)
    plan = changes.Answer(board.plan, _database(board), partial(_read_plan, board, redact))
    routes = [
        Route("/", _page, methods=["GET"]),
        Mount("/static", StaticFiles(packages=[("taskhand.board", "static")]), name="static"),
        Route("/api/plan", partial(_plan, plan, redact), methods=["GET"]),
        Route("/api/events", partial(_events, board, redact), methods=["GET"]),
        Route("/api/tasks/{task}", partial(_details, board, redact), methods=["GET"]),
        Route(
            "/api/tasks/{task}/pictures/{name}", partial(_picture, board, redact), methods=["GET"]
        ),
        Route("/api/tasks/{task}/attempts/{attempt:int}/diff", partial(_diff, board, redact)),
        Route("/api/tasks/{task}/units/{unit:int}/transcript", partial(_transcript, board, redact)),
        Route("/api/tasks/{task}/{move}", partial(_move, board, redact), methods=["POST"]),
    ]
    return Guard(Starlette(routes=routes), board.hosts, board.token)


def redactor(board: Board) -> Redactor:
    """The run's own rule (pipeline/harness.py): the environment's secrets, those of the files
    `[setup] copy` names, and whatever is shaped like a credential. What the board serves comes
    from the plan, the repository and agents: a secret committed in a diff is scrubbed too."""
    try:
        copied = config.build(board.plan).setup.copy
    except UserError:  # a plan edited into something invalid: its routes say so
        copied = []
    return Redactor(extra=setup_files.secrets_in(board.repo, copied))


STATIC = Path(__file__).with_name("static")
# The page loads only its own files (pictures come as blobs the page read with the token);
# nothing of a task can run as script in it, and no other page may frame it.
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data: blob:; "
    "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
}


async def _page(request: Request) -> Response:
    return FileResponse(STATIC / "index.html", headers=PAGE_HEADERS)


async def _plan(plan: changes.Answer, redact: Redactor, request: Request) -> Response:
    try:
        body = await run_in_threadpool(plan.body)
    except UserError as exc:  # the plan was edited into something invalid: say so
        return _refused(redact, exc)
    return Response(body, media_type="application/json")


def _read_plan(board: Board, redact: Redactor) -> bytes:
    return dumps(redact.value(reader.plan_data(board.plan, board.repo)), compact=True).encode()


def _database(board: Board) -> Path:
    return StateDir.for_repo(board.repo).database


async def _details(board: Board, redact: Redactor, request: Request) -> Response:
    task = request.path_params["task"]
    try:
        found = await run_in_threadpool(details.task_details, board.plan, board.repo, task)
    except UserError as exc:
        return _refused(redact, exc)
    if found is None:
        return _error(404, f"no task {task!r} in the plan", "pick a task the board shows")
    return _json(redact, found)


# A picture is shown, never run: an SVG opened on its own may hold script, and this forbids it.
PICTURE_HEADERS = {"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'"}
PICTURE_TYPES = {".png": "image/png", ".svg": "image/svg+xml"}  # the names details.PICTURE takes


async def _picture(board: Board, redact: Redactor, request: Request) -> Response:
    task, name = request.path_params["task"], request.path_params["name"]
    try:
        path = await run_in_threadpool(details.picture, board.plan, board.repo, task, name)
    except UserError as exc:
        return _refused(redact, exc)
    if path is None:
        return _error(404, f"no picture {name!r} of {task}", "pick one the drawer lists")
    # The type from the name alone (the system's table could say otherwise): an image, never
    # a page, whatever bytes the file holds; nosniff keeps the browser to it.
    kind = PICTURE_TYPES[path.suffix]
    return FileResponse(path, media_type=kind, headers=PICTURE_HEADERS)


async def _diff(board: Board, redact: Redactor, request: Request) -> Response:
    task, attempt = request.path_params["task"], request.path_params["attempt"]
    read = partial(diffs.attempt_diff, board.plan, board.repo, task, attempt)
    return await _drawer_part(redact, read, f"no attempt {attempt} of {task} here")


async def _transcript(board: Board, redact: Redactor, request: Request) -> Response:
    task, unit = request.path_params["task"], request.path_params["unit"]
    raw = request.query_params.get("tail", "")
    tail = int(raw) if raw.isdigit() else transcripts.TAIL
    read = partial(transcripts.unit_transcript, board.plan, board.repo, task, unit, tail)
    return await _drawer_part(redact, read, f"no transcript of unit {unit} of {task} here")


async def _drawer_part(redact: Redactor, read: Callable[[], Any], missing: str) -> Response:
    """What the drawer asked for, read away from the event loop; 404 when there is none."""
    try:
        found = await run_in_threadpool(read)
    except UserError as exc:
        return _refused(redact, exc)
    if found is None:
        return _error(404, missing, "pick one the drawer lists")
    if isinstance(found, diffs.Missing):
        return _error(404, found.what, found.fix)
    return _json(redact, found)


def _json(redact: Redactor, found: Any) -> Response:
    """What a route found, as JSON with every string in it redacted."""
    return JSONResponse(redact.value(json.loads(dumps(found))))


# Each move: the library call, from the task id and the JSON body's fields.
MOVES: dict[str, Callable[[Board, str, dict[str, Any]], Any]] = {
    Move.SUBMIT: lambda b, t, d: moves.submit(t, b.plan, b.repo),
    Move.ANSWER: lambda b, t, d: moves.answer(
        t, str(d.get("question", "")), str(d.get("option", "")), str(d.get("note", "")),
        b.plan, b.repo,
    ),
    Move.RESPOND: lambda b, t, d: moves.respond(t, str(d.get("text", "")), b.plan, b.repo),
    Move.APPROVE: lambda b, t, d: moves.approve(t, b.plan, b.repo),
    Move.REVISE: lambda b, t, d: moves.revise(t, str(d.get("text", "")), b.plan, b.repo),
    Move.COMMENT: lambda b, t, d: moves.comment(t, str(d.get("text", "")), b.plan, b.repo),
    Move.ACCEPT: lambda b, t, d: moves.accept(t, b.plan, b.repo),
    Move.REOPEN: lambda b, t, d: moves.reopen(t, b.plan, b.repo),
    Move.PARK: lambda b, t, d: moves.park(t, str(d.get("why", "")), b.plan, b.repo),
}  # fmt: skip


async def _move(board: Board, redact: Redactor, request: Request) -> Response:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":  # (the token, in a header, the guard checked)
        return _error(415, "a change is JSON only", "send Content-Type: application/json")
    body = await request.body()
    if len(body) > BODY_BYTES:
        return _error(413, "the body is too large", f"send at most {BODY_BYTES} bytes of JSON")
    try:
        data = json.loads(body or b"{}")
    except (ValueError, UnicodeDecodeError):
        return _error(400, "the body is not JSON", 'send a JSON object, e.g. {"text": "..."}')
    if not isinstance(data, dict):
        return _error(400, "the body is not a JSON object", 'send {"text": "..."} or {}')
    name, task = request.path_params["move"], request.path_params["task"]
    if name not in MOVES:
        return _error(404, f"no move {name!r} here", f"use one of {', '.join(MOVES)}")
    try:
        moved = await run_in_threadpool(MOVES[name], board, task, data)
    except UserError as exc:  # refused: where the task stands does not open this move
        return _refused(redact, exc, "see taskhand show for the moves open")
    return _json(redact, moved.as_json())


async def _events(board: Board, redact: Redactor, request: Request) -> Response:
    """The plan's events as they are written, from just after `Last-Event-ID` (or `after`);
    a first connection with `tail=N` starts N ids before the newest (a page's Live dock
    needs the latest, not the whole history)."""
    raw = request.headers.get("last-event-id") or request.query_params.get("after")
    tail = request.query_params.get("tail", "")
    if raw is None and tail.isdigit():
        newest = await run_in_threadpool(reader.newest_event, board.plan, board.repo)
        after = max(0, newest - int(tail))
    else:
        after = int(raw) if raw and raw.isdigit() else 0
    stream = _stream(board, redact, request, after)
    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream, media_type="text/event-stream", headers=headers)


async def _stream(
    board: Board, redact: Redactor, request: Request, after: int
) -> AsyncIterator[str]:
    """The events are read only when the database's change counter moved; looking at it is
    cheap, so an event reaches the page within a few milliseconds of its write."""
    version = changes.Version(_database(board))
    seen: int | None = None
    quiet_since = time.monotonic()
    caught_up = False
    yield "retry: 1000\n\n"
    try:
        while not await request.is_disconnected():
            now = version.now()  # before the read: a write during it is read at the next look
            if now is None or now != seen:
                seen = now
                found = await run_in_threadpool(events_after, board, after)
                for event in found:
                    after = event.id
                    # One message type: the kind is in the data, so a page hears every kind.
                    shown = dumps(redact.value(event.as_json()), compact=True)
                    yield f"id: {event.id}\ndata: {shown}\n\n"
                    quiet_since = time.monotonic()
                if not caught_up:  # what was written before the connection has all been sent
                    caught_up = True
                    yield "event: caught_up\ndata: {}\n\n"
            if time.monotonic() - quiet_since >= HEARTBEAT_SECONDS:
                quiet_since = time.monotonic()
                yield ": still here\n\n"
            await asyncio.sleep(changes.LOOK_SECONDS)
    finally:
        version.close()


def events_after(board: Board, after: int) -> list[Event]:
    """Every event of the plan's runs with an id above `after`, oldest first."""
    return reader.events_after(board.plan, board.repo, after)


def _refused(
    redact: Redactor, exc: UserError, fix: str = "fix the plan (taskhand validate says how)"
) -> JSONResponse:
    """A UserError as a 409; its words may quote the plan, so they are redacted too."""
    return _error(409, redact(exc.what), redact(exc.fix or fix))


def _error(status: int, what: str, fix: str) -> JSONResponse:
    return JSONResponse({"error": what, "fix": fix}, status_code=status)
