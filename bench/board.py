"""Board benchmark: the board's page and event stream on a plan of 1,000 tasks with a run going.

Setup (not timed): a git repository holding a Markdown plan of ``--tasks`` tasks (default
1,000) written by the generator of ``plans.py``; a real run of it with the replay agent, stopped
by a token cap after ``--units`` units (default 20): a task writes the test its acceptance
command runs (``python -m pytest``) and is reviewed, or (every fifth task) asks a question, so
some cards wait for a person. Then the real board (``board.app.create(Board(...))`` under
uvicorn) in a child process on a free loopback port, and headless Debian chromium driven through
Playwright. "A run going" is the setup run's own events written again to its log through the
store's append (``Store.event``, what ``Harness.emit`` calls), in their order, run-level ones
left out. What it measures:

* first full render: from navigation to every card of the plan in the DOM (``--selector``,
  default ``[data-task]``) and to the next frame after that, from ``performance.now()`` marks
  set by a MutationObserver; a fresh browser context per load (cold HTTP cache), the median of
  ``--loads`` loads: with the board idle, with the run writing ``--pace`` events a second, and
  once more after the memory phase, when the log holds ``--stream`` more events;
* sizes: the page's own files (as the browser loaded them), ``GET /api/plan`` (per task, and
  its time from a plain HTTP client), and the SSE frames of the run's events (median and
  largest); what a page opened now receives of the log;
* event delay: ``--events`` events (default 50) written at uneven intervals (20-250 ms), from
  just before each write (``time.time()``) to its arrival in a listener of the stream (read with
  ``fetch`` and the token, as the page reads it) in an open board page (``Date.now()``, the
  same clock): median, p90 and max;
* memory over ``--stream`` events (default 10,000) written at ``--rate`` a second to an open
  page: after each 1,000, once the page has read the plan for the last of them, the board
  server's RSS (``VmRSS``) and, after a forced garbage collection (CDP), the page's JS heap, DOM
  nodes and listeners; growth per 1,000 events is the least-squares slope from 1,000 on. Also
  how often the page read the plan.

Targets (from the issue): first render under 500 ms (with the run writing), event delay under
100 ms median, memory flat over 10,000 events (here: each figure grows by under 1% of its
1,000-event value per 1,000 events).

Run it with::

    .venv/bin/python bench/board.py                  # the table, the targets beside the figures
    .venv/bin/python bench/board.py --json           # machine-readable output
    .venv/bin/python bench/board.py --tree ../other  # serve another checkout's board (before/after)
    ./dev bench board [ARGS]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import taskhand
except ImportError:  # run without the package installed: use the source tree
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    import taskhand
sys.path.insert(0, str(Path(__file__).resolve().parent))  # plans.py, the plan generator

from plans import generate, markdown_id, write_markdown
from taskhand import config as runconfig
from taskhand.run import launch
from taskhand.state.events import Event, EventKind
from taskhand.state.paths import StateDir
from taskhand.state.store import Store

RENDER_TARGET_MS = 500.0
DELAY_TARGET_MS = 100.0
FLAT_PER_1K = 0.01  # "flat": under 1% of the 1,000-event figure per 1,000 events more
TOKEN = "bench-token-0123456789"
TOKENS_PER_UNIT = 1000  # what each scripted unit reports, so the run's token cap counts units
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
RUN_KINDS = {EventKind.RUN_STARTED, EventKind.RUN_FINISHED, EventKind.RUN_RESUMED}
RUN_KINDS |= {EventKind.RUN_INTERRUPTED}
WORK = {  # a render figure: the page's main-thread time by then, from CDP Performance.getMetrics
    "script": "ScriptDuration",
    "style": "RecalcStyleDuration",
    "layout": "LayoutDuration",
}
MEMORY = {  # sample key: label
    "server_rss_kib": "server RSS KiB",
    "js_heap_kib": "page JS heap KiB",
    "dom_nodes": "page DOM nodes",
    "js_listeners": "page listeners",
}


def note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# --- setup (not timed) ---------------------------------------------------------------------


@dataclass(frozen=True)
class Setup:
    repo: Path
    plan: Path
    run_id: str
    run_status: str
    events: list[Event]  # the setup run's log
    seconds: float

    @property
    def database(self) -> Path:
        return StateDir.for_repo(self.repo).database

    def load(self) -> Iterator[Event]:
        """The run's events again, less the run-level ones, over and over."""
        kept = [e for e in self.events if e.kind not in RUN_KINDS]
        while True:
            yield from kept


def write_script(path: Path, tasks: int) -> None:
    """Each task writes the test its acceptance command runs; every fifth asks a question."""
    script: dict[str, list[dict[str, Any]]] = {}
    usage = {"tokens_in": TOKENS_PER_UNIT, "tokens_out": 0}
    for n in range(1, tasks + 1):
        if n % 5 == 0:
            options = [f"src/big/module_{n}.py", "a new module", "leave it"]
            question = f"Which module should step {n} change?"
            entry = {"outcome": "question", "question": question, "options": options, **usage}
        else:
            test = {"write": f"tests/test_{n}.py", "text": "def test_it():\n    assert True\n"}
            review = {"verdict": "accept", **usage}  # the reviewer's unit is the one counted
            entry = {"actions": [test], "tokens_in": 0, "tokens_out": 0, "review": review}
        script[markdown_id(n, tasks)] = [entry]
    path.write_text(json.dumps({"tasks": script}), encoding="utf-8")


def make_setup(root: Path, tasks: int, units: int) -> Setup:
    repo = root / "repo"
    repo.mkdir(parents=True)
    subprocess.run([*GIT, "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "README.md").write_text("# big\n\nThe board benchmark's project.\n", encoding="utf-8")
    write_markdown(generate(tasks), repo / "plan")
    subprocess.run([*GIT, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(repo), "commit", "-q", "-m", "Plan"], check=True)
    script = root / "replay.json"
    write_script(script, tasks)
    config = runconfig.RunConfig(
        agent="replay",
        script=str(script),
        caps=runconfig.Caps(run_tokens=units * TOKENS_PER_UNIT),
        lenses=["general"],
    )
    began = time.perf_counter()
    summary = launch.start(repo / "plan", config, lambda event: None, repo, new=True)
    seconds = time.perf_counter() - began
    with Store.open(StateDir.for_repo(repo).database) as store:
        events = store.events(summary.run_id)
    note(f"setup run: {len(events)} events in {seconds:.1f} s, ended {summary.status}")
    return Setup(repo, repo / "plan", summary.run_id, summary.status, events, seconds)


# --- the board (a child process, so its memory is its own) ----------------------------------


def serve_child(plan: str, repo: str, port: str) -> None:
    from dataclasses import fields

    import uvicorn

    from taskhand.board.app import Board, create

    board = [Path(plan), Path(repo), TOKEN]
    if "hosts" in {f.name for f in fields(Board)}:  # a board that checks the Host it is asked at
        from taskhand.board.guard import Hosts

        board.append(Hosts("127.0.0.1", int(port)))
    app = create(Board(*board))
    uvicorn.run(app, host="127.0.0.1", port=int(port), log_level="warning", access_log=False)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def board_server(setup: Setup, source: Path, log: Path) -> Iterator[tuple[int, int]]:
    """The board served by the taskhand of `source` (a src folder): (port, pid)."""
    port = free_port()
    paths = [str(source), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    argv = [sys.executable, __file__, "--serve", str(setup.plan), str(setup.repo), str(port)]
    with open(log, "wb") as out:
        child = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if child.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"the board did not start:\n{log.read_text()}") from None
                time.sleep(0.05)
        yield port, child.pid
    finally:
        child.terminate()
        child.wait(10)


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise SystemExit(f"no VmRSS for process {pid}")


READ = {"Authorization": f"Bearer {TOKEN}"}  # every read of the board's data needs the token


def get(port: int, path: str) -> bytes:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("GET", path, headers=READ)
        answer = conn.getresponse()
        body = answer.read()
        if answer.status != 200:
            raise SystemExit(f"GET {path}: {answer.status} {body[:300]!r}")
        return body
    finally:
        conn.close()


def sse_frames(port: int, until: int) -> list[bytes]:
    """The stream's frames from the first event up to id `until`, as sent."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/api/events", headers=READ)
    answer = conn.getresponse()
    frames: list[bytes] = []
    frame = b""
    try:
        while True:
            line = answer.readline()  # the body's lines, its chunks undone
            if not line:
                raise SystemExit("the event stream ended early")
            frame += line
            if line in (b"\n", b"\r\n"):
                if frame.startswith(b"id: "):
                    frames.append(frame)
                    if int(frame.split(b"\n", 1)[0][4:]) >= until:
                        return frames
                frame = b""
    finally:
        conn.close()


class Writer:
    """A run going: the setup run's events written again at `pace` a second, in a thread."""

    def __init__(self, setup: Setup, pace: float) -> None:
        self.setup, self.pace = setup, pace
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._write, daemon=True)

    def _write(self) -> None:
        events = self.setup.load()
        with Store.open(self.setup.database) as store:
            while not self.stop.wait(1 / self.pace):
                append(store, self.setup.run_id, next(events))

    def __enter__(self) -> Writer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


def append(store: Store, run_id: str, event: Event) -> Event:
    return store.event(run_id, event.kind, event.task_id, **event.data)


# --- the browser ------------------------------------------------------------------------------

MARKS = """
(() => {
  const want = %d, selector = %s;
  window.__bench = {};
  new MutationObserver((_, observer) => {
    if (document.querySelectorAll(selector).length < want) return;
    observer.disconnect();
    window.__bench.dom = performance.now();
    requestAnimationFrame(() => setTimeout(() => { window.__bench.frame = performance.now(); }));
  }).observe(document, { childList: true, subtree: true });
})();
"""

# When the page first asked for the plan and had it, how often it asked, and the bytes of its
# own files (the document, and every script and style sheet it loaded, modules included).
LOADED = """() => {
  const entries = performance.getEntriesByType("resource");
  const plans = entries.filter((e) => e.name.endsWith("/api/plan"));
  const files = { "/": performance.getEntriesByType("navigation")[0].decodedBodySize };
  for (const e of entries.filter((e) => new URL(e.name).pathname.startsWith("/static/"))) {
    files[new URL(e.name).pathname] = e.decodedBodySize;
  }
  return { plan_start: plans[0].startTime, plan_end: plans[0].responseEnd,
    plan_reads: plans.length, files };
}"""

# The stream read as the page reads it: fetch with the token's header (an EventSource cannot
# send one), each event counted (and, if `keep`, timed) as its frame arrives.
LISTEN = """([after, keep, token]) => new Promise((resolve) => {
  window.__arrived = {};
  window.__count = 0;
  const headers = { "Authorization": `Bearer ${token}` };
  fetch(`/api/events?after=${after}`, { headers }).then(async (answer) => {
    resolve(true);
    const reader = answer.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end;
      while ((end = buffer.indexOf("\\n\\n")) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const id = /^id: (\\d+)$/m.exec(frame);
        if (!id || frame.includes("event: ")) continue;
        window.__count += 1;
        if (keep) window.__arrived[id[1]] = Date.now();
      }
    }
  });
})"""


@dataclass
class Browser:
    """Headless chromium on the board: fresh contexts, polls (the page's content policy
    refuses the eval that page.wait_for_function needs) and the page's plan reads."""

    browser: Any
    address: str
    tasks: int
    selector: str
    reads: list[int] = field(default_factory=lambda: [0, 0])  # the last page's plan reads:
    # asked, ended

    def context(self, marks: bool = False) -> tuple[Any, Any]:
        context = self.browser.new_context(viewport={"width": 1440, "height": 900})
        if marks:
            context.add_init_script(MARKS % (self.tasks, json.dumps(self.selector)))
        page = context.new_page()
        self.reads = [0, 0]
        page.on("request", lambda r: self._count(r, 0))
        page.on("requestfinished", lambda r: self._count(r, 1))
        page.on("requestfailed", lambda r: self._count(r, 1))
        return context, page

    def _count(self, request: Any, which: int) -> None:
        if request.url.endswith("/api/plan"):
            self.reads[which] += 1

    def until(self, page: Any, predicate: str, seconds: float = 60) -> None:
        deadline = time.monotonic() + seconds
        while not page.evaluate(predicate):
            if time.monotonic() > deadline:
                raise SystemExit(f"the page did not reach {predicate} in {seconds:g} s")
            page.wait_for_timeout(20)

    def open(self) -> tuple[Any, Any]:
        """A page of the board with every card shown."""
        context, page = self.context()
        page.goto(self.address)
        cards = f"document.querySelectorAll({json.dumps(self.selector)}).length"
        self.until(page, f"() => {cards} >= {self.tasks}")
        return context, page

    def listen(self, page: Any, store: Store, run_id: str, keep: bool) -> None:
        """A listener of the page's own, from the log's end now: it counts what arrives and,
        if `keep`, when."""
        after = max((e.id for e in store.events(run_id)), default=0)
        page.evaluate(LISTEN, [after, keep, TOKEN])

    def received(self, page: Any, want: int, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while (got := page.evaluate("window.__count")) < want:
            if time.monotonic() > deadline:
                raise SystemExit(f"the page received {got} of {want} events in {seconds:g} s")
            page.wait_for_timeout(50)

    def settle(self, page: Any, quiet: float = 1.0, seconds: float = 60) -> None:
        """Until no plan read is under way and none began for `quiet` seconds."""
        deadline = time.monotonic() + seconds
        last, since = list(self.reads), time.monotonic()
        while time.monotonic() - since < quiet or self.reads[0] != self.reads[1]:
            if time.monotonic() > deadline:
                raise SystemExit(f"the page kept reading the plan for {seconds:g} s")
            page.wait_for_timeout(100)
            if self.reads != last:
                last, since = list(self.reads), time.monotonic()


# --- the figures ------------------------------------------------------------------------------


def measure_render(b: Browser, loads: int) -> dict[str, Any]:
    rows = []
    for _ in range(loads):
        context, page = b.context(marks=True)
        cdp = context.new_cdp_session(page)
        cdp.send("Performance.enable")
        page.goto(b.address)
        b.until(page, "() => window.__bench && window.__bench.frame !== undefined")
        # Where the page's main thread spent its time by then (script, style, layout).
        spent = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
        work = {k: spent[name] * 1e3 for k, name in WORK.items()}
        rows.append({**page.evaluate("window.__bench"), **page.evaluate(LOADED), **work})
        context.close()
    files = next(row.pop("files") for row in rows)
    keys = ("dom", "frame", "plan_start", "plan_end", "plan_reads", *WORK)
    return {
        "loads": rows,
        "median": {k: statistics.median(r[k] for r in rows) for k in keys},
        "page_files": files,
        "page_bytes": sum(files.values()),
    }


def measure_sizes(port: int, setup: Setup, tasks: int) -> dict[str, Any]:
    times = []
    for _ in range(5):
        began = time.perf_counter()
        plan = get(port, "/api/plan")
        times.append((time.perf_counter() - began) * 1e3)
    if len(json.loads(plan)["tasks"]) != tasks:
        raise SystemExit(f"/api/plan does not show {tasks} tasks")
    frames = [len(f) for f in sse_frames(port, max(e.id for e in setup.events))]
    return {
        "plan_bytes": len(plan),
        "plan_bytes_per_task": len(plan) / tasks,
        "plan_get_ms": {"median": statistics.median(times), "best": min(times)},
        "event_frame_bytes": {"median": statistics.median(frames), "max": max(frames)},
        "log_events": len(frames),
        "log_bytes": sum(frames),
    }


def measure_delay(b: Browser, setup: Setup, count: int) -> dict[str, Any]:
    """To the board's page (whose own work on each event may hold its main thread), and to a
    quiet page of the same origin, in another context (the server's share alone)."""
    context, page = b.open()
    other = b.browser.new_context(bypass_csp=True)  # the style sheet's policy forbids a fetch
    quiet = other.new_page()
    quiet.goto(b.address.split("#")[0] + "static/board.css")  # a document with no script
    rng = random.Random(12)
    written: dict[int, float] = {}
    events = setup.load()
    with Store.open(setup.database) as store:
        for listening in (page, quiet):
            b.listen(listening, store, setup.run_id, keep=True)
        for _ in range(count):
            at = time.time() * 1e3
            written[append(store, setup.run_id, next(events)).id] = at
            page.wait_for_timeout(rng.uniform(20, 250))  # uneven: no rhythm to fall in with
    found = {}
    for name, listening in (("board", page), ("quiet", quiet)):
        b.received(listening, count, 30)
        arrived = listening.evaluate("window.__arrived")
        delays = [arrived[str(i)] - at for i, at in written.items()]
        found[name] = {
            "median_ms": statistics.median(delays),
            "p90_ms": percentile(delays, 0.9),
            "max_ms": max(delays),
        }
    context.close()
    other.close()
    return {"events": count, **found}


def sample(cdp: Any, pid: int) -> dict[str, float]:
    cdp.send("HeapProfiler.collectGarbage")
    heap = cdp.send("Runtime.getHeapUsage")
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return {
        "server_rss_kib": rss_kib(pid),
        "js_heap_kib": heap["usedSize"] / 1024,
        "dom_nodes": metrics["Nodes"],
        "js_listeners": metrics["JSEventListeners"],
    }


def slope(points: list[tuple[float, float]]) -> float:
    mx = statistics.fmean(x for x, _ in points)
    my = statistics.fmean(y for _, y in points)
    den = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / den if den else 0.0


def measure_memory(b: Browser, setup: Setup, pid: int, total: int, rate: float) -> dict[str, Any]:
    context, page = b.open()
    cdp = context.new_cdp_session(page)
    cdp.send("Performance.enable")
    b.settle(page)
    samples = {0: sample(cdp, pid)}
    reads_before = b.reads[0]
    burst = max(1, round(rate / 20))  # every 50 ms
    events = setup.load()
    began = time.perf_counter()
    sent = 0
    with Store.open(setup.database) as store:
        b.listen(page, store, setup.run_id, keep=False)
        while sent < total:
            mark = min(total, sent + 1000)
            while sent < mark:
                for _ in range(min(burst, mark - sent)):
                    append(store, setup.run_id, next(events))
                    sent += 1
                page.wait_for_timeout(max(0.0, began + sent / rate - time.perf_counter()) * 1e3)
            b.received(page, sent, 120)
            b.settle(page)
            samples[sent] = sample(cdp, pid)
            note(f"memory: {sent:,} events, {samples[sent]}")
    seconds = time.perf_counter() - began
    reads = b.reads[0] - reads_before
    context.close()
    counted = [(n / 1000, s) for n, s in samples.items() if n >= min(1000, total)]
    per_1k = {k: slope([(x, s[k]) for x, s in counted]) for k in MEMORY}
    return {
        "events": total,
        "seconds": seconds,
        "plan_reads": reads,
        "samples": {str(n): s for n, s in samples.items()},
        "growth_per_1k": per_1k,
    }


# --- report -----------------------------------------------------------------------------------


def verdicts(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    render = results["render_running"]["median"]["frame"]
    delay = results["delay"]["board"]["median_ms"]
    memory = results["memory"]
    first = memory["samples"][str(min(1000, memory["events"]))]
    flat = {k: memory["growth_per_1k"][k] <= FLAT_PER_1K * first[k] for k in MEMORY}
    return {
        "render": {
            "target": f"first full render, the run writing, < {RENDER_TARGET_MS:.0f} ms",
            "value": render,
            "holds": render < RENDER_TARGET_MS,
        },
        "delay": {
            "target": f"event delay to the board's page, median < {DELAY_TARGET_MS:.0f} ms",
            "value": delay,
            "holds": delay < DELAY_TARGET_MS,
        },
        "memory": {
            "target": f"memory flat: growth per 1k events < {FLAT_PER_1K:.0%} of the 1k figure",
            "value": flat,
            "holds": all(flat.values()),
        },
    }


def _holds(check: dict[str, Any]) -> str:
    return "HOLDS" if check["holds"] else "MISSED"


def render_lines(label: str, r: dict[str, Any]) -> list[str]:
    m = r["median"]
    return [
        f"  {label:<34} {m['dom']:>7.0f} {m['frame']:>7.0f} {m['plan_start']:>7.0f}"
        f" {m['plan_end']:>7.0f} {m['plan_reads']:>6.0f} {m['script']:>7.0f} {m['style']:>6.0f}"
        f" {m['layout']:>6.0f}"
    ]


def table(results: dict[str, Any], args: argparse.Namespace) -> str:
    s, d, m = results["sizes"], results["delay"], results["memory"]
    checks = results["targets"]
    run = results["run"]
    lines = [
        f"plan: {results['tasks']:,} tasks (Markdown); the board of {results['tree']}",
        f"setup run: {run['events']} events in {run['seconds']:.0f} s, {run['status']}",
        "",
        f"first full render, ms from navigation (median of {args.loads} loads, fresh context each)",
        f"  {'':<34} {'DOM':>7} {'frame':>7} {'plan ->':>7} {'plan <-':>7} {'reads':>6}"
        f" {'script':>7} {'style':>6} {'layout':>6}",
        *render_lines("idle", results["render_idle"]),
        *render_lines(f"the run writing {args.pace:g} events/s", results["render_running"]),
        *render_lines(f"idle, {m['events']:,} more events in the log", results["render_after"]),
        f"  target: the frame, the run writing, < {RENDER_TARGET_MS:.0f} ms: "
        f"{_holds(checks['render'])}",
        "",
        "sizes",
        f"  the page (html, js, css)     {results['render_idle']['page_bytes']:>10,} B"
        f" in {len(results['render_idle']['page_files'])} files",
        f"  GET /api/plan                {s['plan_bytes']:>10,} B  {s['plan_bytes_per_task']:.0f} B"
        f" a task; {s['plan_get_ms']['median']:.0f} ms median, {s['plan_get_ms']['best']:.0f} ms"
        " best of 5 (plain HTTP client, idle)",
        f"  an SSE event frame           {s['event_frame_bytes']['median']:>10,.0f} B  median,"
        f" {s['event_frame_bytes']['max']:,} B the largest",
        f"  the log a new page receives  {s['log_bytes']:>10,} B  {s['log_events']} events (setup"
        " run only)",
        "",
        f"event delay, from the write to a listener in the page ({d['events']} events, ms)",
        f"  {'':<34} {'median':>7} {'p90':>7} {'max':>7}",
        *(
            f"  {label:<34} {d[k]['median_ms']:>7.1f} {d[k]['p90_ms']:>7.1f} {d[k]['max_ms']:>7.1f}"
            for k, label in (("board", "the board's page"), ("quiet", "a page with no script"))
        ),
        f"  target: the board's page, median < {DELAY_TARGET_MS:.0f} ms: {_holds(checks['delay'])}",
        "",
        f"memory over {m['events']:,} events written at {args.rate:g}/s to an open page"
        f" ({m['seconds']:.0f} s; the page read the plan {m['plan_reads']} times,"
        f" {m['plan_reads'] / max(1, m['events']) * 1000:.0f} per 1k events)",
        f"  {'':<20} {'at 0':>12} {'after 1k':>12} {'after all':>12} {'per 1k':>10}",
    ]
    first = str(min(1000, m["events"]))
    for key, label in MEMORY.items():
        values = [m["samples"][k][key] for k in ("0", first, str(m["events"]))]
        lines.append(
            f"  {label:<20} {values[0]:>12,.0f} {values[1]:>12,.0f} {values[2]:>12,.0f}"
            f" {m['growth_per_1k'][key]:>+10,.1f}"
        )
    lines.append(f"  target: {checks['memory']['target']}: {_holds(checks['memory'])}")
    lines += [
        "",
        "DOM: every card in the document; frame: the next frame after it (rAF, then a task);",
        "plan ->/<-: the page's first /api/plan asked/answered; reads: /api/plan reads a load;",
        "script, style, layout: the page's main-thread time in each by the frame (CDP metrics).",
        "delay: time.time() before Store.event to Date.now() in a listener of the stream.",
        "memory: after each 1k events and the page's last plan read; the JS heap, nodes and",
        "listeners after a forced GC; per 1k: least-squares slope over the samples from 1k on.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=1000, help="tasks in the plan (1000)")
    parser.add_argument("--units", type=int, default=20, help="units the setup run does (20)")
    parser.add_argument("--loads", type=int, default=5, help="page loads per render figure (5)")
    parser.add_argument("--pace", type=float, default=10, help="events/s of the run going (10)")
    parser.add_argument("--events", type=int, default=50, help="events timed for the delay (50)")
    parser.add_argument("--stream", type=int, default=10_000, help="events for memory (10000)")
    parser.add_argument("--rate", type=float, default=250, help="events/s for memory (250)")
    parser.add_argument("--selector", default="[data-task]", help="a card in the page")
    parser.add_argument("--tree", type=Path, help="serve the board of this checkout instead")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
    parser.add_argument("--serve", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve_child(*args.serve)
        return 0
    if shutil.which("chromium") is None:
        raise SystemExit("chromium is not installed (fix: apt-get install chromium)")
    if args.tasks < 10 or args.stream < 1 or args.loads < 1 or args.events < 1:
        parser.error("--tasks needs at least 10; --stream, --loads and --events at least 1")
    source = (args.tree / "src" if args.tree else Path(taskhand.__file__).parents[1]).resolve()
    if not (source / "taskhand" / "board" / "app.py").is_file():
        parser.error(f"--tree: no src/taskhand/board/app.py in {args.tree}")
    from playwright.sync_api import sync_playwright

    # Stopped by a signal: leave through the `finally`s, so the board's process ends too.
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
    results: dict[str, Any] = {"tasks": args.tasks, "tree": str(source.parent)}
    with tempfile.TemporaryDirectory(prefix="taskhand-bench-board-") as name:
        root = Path(name)
        os.environ["TASKHAND_HOME"] = str(root / "home")
        # The acceptance commands' `python` is this one, which has pytest.
        os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])
        setup = make_setup(root, args.tasks, args.units)
        results["run"] = {
            "events": len(setup.events),
            "status": setup.run_status,
            "seconds": setup.seconds,
        }
        with (
            board_server(setup, source, root / "board.log") as (port, pid),
            sync_playwright() as driver,
        ):
            chromium = driver.chromium.launch(executable_path=shutil.which("chromium"))
            b = Browser(chromium, f"http://127.0.0.1:{port}/#token={TOKEN}", args.tasks,
                        args.selector)  # fmt: skip
            results["render_idle"] = measure_render(b, args.loads)
            note(f"render, idle: {results['render_idle']['median']}")
            with Writer(setup, args.pace):
                results["render_running"] = measure_render(b, args.loads)
            note(f"render, the run writing: {results['render_running']['median']}")
            results["sizes"] = measure_sizes(port, setup, args.tasks)
            results["delay"] = measure_delay(b, setup, args.events)
            note(f"delay: {results['delay']}")
            results["memory"] = measure_memory(b, setup, pid, args.stream, args.rate)
            results["render_after"] = measure_render(b, max(1, args.loads // 2))
            note(f"render after: {results['render_after']['median']}")
            chromium.close()
    results["targets"] = verdicts(results)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(table(results, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
