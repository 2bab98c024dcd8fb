"""Run-loop benchmark: the harness's own time per task, on a small and on a large repository.

What it does, for a small repository (6 files) and a generated large one (``--files``,
default 20,000 files in nested folders, one commit, packed like a clone):

* writes a Markdown plan of ``--tasks`` (default 100) independent tasks, T-001..T-100, and
  a replay script in which each task writes one new file (``bench-out/T-NNN.txt``, the
  task's only allowed path) and is done at once: no sleep (unless ``--agent-seconds``), no
  command. The plan and the script lie outside the repository, so its tree is exactly the
  generated commit and the run starts with a clean checkout. Each task has one cheap
  acceptance command (``--check``, default ``true``), so the command gate runs;
  ``--check none`` leaves it out;
* runs the plan in-process with ``taskhand.launch.start(plan, RunConfig(agent="replay",
  script=...), listener, repo)``, with ``TASKHAND_HOME`` in a temporary folder. The
  listener records ``time.perf_counter()`` for each event, which splits each task's wall
  time into phases (see PHASES below). The replay agent's ``run()`` is wrapped to time the
  agent itself, and ``taskhand.workspace.git.run`` is wrapped to count the git processes the
  harness starts and the time spent in them (both wrappers cost about a microsecond a call);
* harness time per task = task wall time (from the previous task's Complete step to this
  task's Complete step) minus the agent's own time;
* times raw git on the same repository, ``--reps`` times (default 20, after 2 untimed
  warm-ups): ``git worktree add <path> -b <branch> <sha>``, then
  ``git worktree remove --force <path>``, and reports both the add alone and add + remove.
  The harness does both once per attempt, so add + remove is the like-for-like baseline;
  the issue's wording names ``git worktree add`` alone, so both ratios are printed.

The cost of ``git worktree add`` on a large repository is mostly creating its files, so it
depends on the filesystem the worktrees land on (``--dir``); the output names it. The first
``git add -A`` after a checkout reads every checked-out file again, since git finds them
"racily clean" (mtime equal to the index's, to the second). With an instant agent the
next index write (``git write-tree``) falls in that same second and reads them once more;
``--agent-seconds 1.1`` shows the cost with a slower agent.

Targets (from the issue): small repository, median harness time per task under 200 ms;
large repository, harness time per task at most 1.2 x what ``git worktree add`` costs.

Run it with::

    .venv/bin/python bench/run.py                   # 100 tasks, small and 20,000-file repos
    .venv/bin/python bench/run.py --tasks 30 --files 2000
    .venv/bin/python bench/run.py --check none      # no acceptance command per task
    .venv/bin/python bench/run.py --profile         # plus cProfile of a run on the large repo
    .venv/bin/python bench/run.py --dir /dev/shm    # another filesystem (here: tmpfs)
    .venv/bin/python bench/run.py --only large --agent-seconds 1.1   # a slower agent
    .venv/bin/python bench/run.py --json            # machine-readable output
"""

from __future__ import annotations

import argparse
import bisect
import cProfile
import functools
import io
import json
import os
import pstats
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import taskhand  # noqa: F401
except ImportError:  # run without the package installed: use the source tree
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from taskhand import config as runconfig
from taskhand.agents.replay import ReplayAgent
from taskhand.run import launch
from taskhand.state.events import Event
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from taskhand.unit import Outcome, Unit
from taskhand.workspace import git as taskhand_git

SMALL_TARGET_MS = 200.0
LARGE_TARGET_RATIO = 1.2
WARMUPS = 2
OUT_DIR = "bench-out"
IDENTITY = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
}
SMALL_FILES = {
    "README.md": "# app\n\nA small project for the run-loop benchmark.\n",
    ".gitignore": "__pycache__/\n",
    "pyproject.toml": '[project]\nname = "app"\nversion = "0.1.0"\n',
    "src/app/__init__.py": "",
    "src/app/main.py": "def main() -> int:\n    return 0\n",
    "tests/test_main.py": "from app.main import main\n\n\ndef test_main():\n"
    "    assert main() == 0\n",
}

# (key, label, event that starts it); each phase ends where the next one starts.
PHASES = (
    ("screen", "screen: reload plan, eligible, select", "previous Complete step"),
    ("claim", "claim + open attempt", "Select Task step"),
    ("worktree_add", "task branch + worktree add + prompt", "attempt_started"),
    ("unit", "agent unit (agent + transcript)", "unit_started"),
    ("commit_gates", "commit + gates", "unit_finished"),
    ("review", "review: copy, reviewer unit, wipe, check", "last gate event"),
    ("integrate", "integrate (move run branch)", "verdict"),
    ("worktree_remove", "worktree remove", "integrated"),
    ("conclude", "conclude + complete", "Conclude step"),
)
PHASE_KEYS = tuple(key for key, _, _ in PHASES)
# What split_tasks() calls the event that starts each phase after the first.
POINTS = (
    "select",
    "attempt",
    "unit_started",
    "unit_finished",
    "gates_end",
    "verdict",
    "integrated",
    "conclude",
)


# --- generation (not timed) -------------------------------------------------------------


def _sh(argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        argv,
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{shlex.join(argv)} failed: {done.stderr.strip() or done.stdout}")
    return done.stdout.strip()


def large_layout(files: int) -> list[str]:
    """`files` paths in nested folders: src/pkgNN/modNN/fileNNNNN.py, 50 files a folder."""
    return [f"src/pkg{i // 1000:02d}/mod{i // 50 % 20:02d}/file{i:05d}.py" for i in range(files)]


def make_repo(root: Path, files: int | None) -> tuple[str, int]:
    """A one-commit repository: the small project, or `files` generated files; (sha, files)."""
    root.mkdir(parents=True)
    if files is None:
        contents = SMALL_FILES
    else:
        contents = {path: f"# {path}\nVALUE = {i}\n" for i, path in enumerate(large_layout(files))}
    folders = {str(Path(path).parent) for path in contents}
    for folder in sorted(folders):
        (root / folder).mkdir(parents=True, exist_ok=True)
    for path, text in contents.items():
        with open(root / path, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
    _sh(["git", "init", "-q", "-b", "main", str(root)])
    _sh(["git", "-C", str(root), "add", "-A"])
    commit = ["git", "-C", str(root), "-c", "commit.gpgsign=false", "commit", "-q", "-m", "Base"]
    _sh(commit, env=IDENTITY)
    _sh(["git", "-C", str(root), "repack", "-a", "-d", "-q"])  # packed, as a clone would be
    _sh(["git", "-C", str(root), "prune-packed"])
    return _sh(["git", "-C", str(root), "rev-parse", "HEAD"]), len(contents)


def task_id(n: int) -> str:
    return f"T-{n:03d}"


def write_plan(folder: Path, tasks: int, check: str | None) -> None:
    """A Markdown plan of `tasks` independent tasks, each writing one file."""
    folder.mkdir(parents=True)
    (folder / "overview.md").write_text(
        "# Run-loop benchmark\n\n## Goal\nWrite one file per task, to time the harness.\n",
        encoding="utf-8",
    )
    criterion = f"- `$ {check}` passes\n" if check else ""
    for n in range(1, tasks + 1):
        tid = task_id(n)
        (folder / f"{tid}-write-file-{n}.md").write_text(
            f"---\nid: {tid}\ntitle: Write file {n}\npaths: {OUT_DIR}/{tid}.txt\n---\n\n"
            f"## Description\nWrite `{OUT_DIR}/{tid}.txt`.\n\n"
            f"## Acceptance criteria\n- the file names its task\n{criterion}",
            encoding="utf-8",
        )


def write_script(path: Path, tasks: int, agent_seconds: float = 0.0) -> None:
    """The replay script: each task writes its file and is done (after a sleep, if asked)."""
    parts = []
    for n in range(1, tasks + 1):
        tid = task_id(n)
        parts.append(
            f'[[tasks."{tid}"]]\noutcome = "done"\nresolution = "Wrote {OUT_DIR}/{tid}.txt."\n'
        )
        if agent_seconds > 0:
            parts.append(f'[[tasks."{tid}".actions]]\nsleep = {agent_seconds}\n')
        parts.append(
            f'[[tasks."{tid}".actions]]\nwrite = "{OUT_DIR}/{tid}.txt"\ntext = "{tid}\\n"\n\n'
        )
    path.write_text("".join(parts), encoding="utf-8")


# --- instrumentation ---------------------------------------------------------------------


@dataclass(frozen=True)
class Mark:
    at: float
    kind: str
    task_id: str | None
    message: str


@dataclass
class Recorder:
    """The run's listener: when each event arrived, by perf_counter."""

    marks: list[Mark] = field(default_factory=list)

    def __call__(self, event: Event) -> None:
        at = time.perf_counter()
        self.marks.append(Mark(at, event.kind, event.task_id, str(event.data.get("message", ""))))


@dataclass(frozen=True)
class GitCall:
    began: float
    seconds: float
    command: str


def _git_command(args: tuple[str, ...]) -> str:
    words = [a for a in args if not a.startswith("-")]
    if not words:
        return "?"
    return " ".join(words[:2]) if words[0] == "worktree" else words[0]


@contextmanager
def instrumented(agent_seconds: dict[str, float], calls: list[GitCall]) -> Iterator[None]:
    """Time the replay agent's run() per task, and every git process the harness starts."""
    original_run = ReplayAgent.run
    original_git = taskhand_git.run

    @functools.wraps(original_run)
    def run(self: ReplayAgent, unit: Unit) -> Outcome:
        began = time.perf_counter()
        try:
            return original_run(self, unit)
        finally:
            spent = time.perf_counter() - began
            agent_seconds[unit.task_id] = agent_seconds.get(unit.task_id, 0.0) + spent

    @functools.wraps(original_git)
    def counted(folder: Path, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        began = time.perf_counter()
        try:
            return original_git(folder, *args, **kwargs)
        finally:
            calls.append(GitCall(began, time.perf_counter() - began, _git_command(args)))

    setattr(ReplayAgent, "run", run)  # noqa: B010 (mypy refuses assigning to a method)
    setattr(taskhand_git, "run", counted)  # noqa: B010
    try:
        yield
    finally:
        setattr(ReplayAgent, "run", original_run)  # noqa: B010
        setattr(taskhand_git, "run", original_git)  # noqa: B010


@contextmanager
def taskhand_home(folder: Path) -> Iterator[None]:
    old = os.environ.get("TASKHAND_HOME")
    os.environ["TASKHAND_HOME"] = str(folder)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("TASKHAND_HOME", None)
        else:
            os.environ["TASKHAND_HOME"] = old


def filesystem(folder: Path) -> str:
    """The type and device of the mount that holds `folder` (from /proc/mounts), if known."""
    try:
        mounts = Path("/proc/mounts").read_text(encoding="utf-8").splitlines()
    except OSError:
        return "filesystem unknown"
    best = ("", "filesystem unknown")
    for line in mounts:
        parts = line.split()
        if len(parts) < 3:
            continue
        point = parts[1].replace("\\040", " ")
        inside = folder == Path(point) or Path(point) in folder.parents
        if inside and len(point) >= len(best[0]):
            best = (point, f"{parts[2]} on {point}")
    return best[1]


def git_version() -> str:
    return _sh(["git", "--version"]).removeprefix("git version ")


# --- splitting the event log into phases ---------------------------------------------------


@dataclass
class TaskTiming:
    task_id: str
    # Boundaries: start, then the start of each phase after the first, then the end.
    points: list[float]
    agent: float = 0.0

    @property
    def start(self) -> float:
        return self.points[0]

    @property
    def end(self) -> float:
        return self.points[-1]

    def phases(self) -> dict[str, float]:
        spans = {
            k: b - a for k, a, b in zip(PHASE_KEYS, self.points[:-1], self.points[1:], strict=True)
        }
        spans["total"] = self.end - self.start
        spans["agent"] = self.agent
        spans["harness"] = spans["total"] - self.agent
        return spans


def split_tasks(marks: list[Mark], agent_seconds: dict[str, float]) -> list[TaskTiming]:
    """One timing per task; the first task starts at the first Screen step."""
    timings: list[TaskTiming] = []
    boundary: float | None = None
    current: str | None = None
    seen: dict[str, float] = {}
    attempts = 0
    for mark in marks:
        message = mark.message
        if mark.kind == "step" and message == "TaskTrack STEP: Screen" and boundary is None:
            boundary = mark.at
        if mark.kind == "step" and message.startswith("TaskTrack STEP: Select Task "):
            current, seen, attempts = message.rsplit(" ", 1)[1], {"select": mark.at}, 0
            continue
        if current is None:
            continue
        if mark.kind == "attempt_started":
            attempts += 1
            seen.setdefault("attempt", mark.at)
        elif mark.kind == "attempt_failed":
            raise SystemExit(f"{current}: an attempt failed; the benchmark expects none")
        elif mark.kind in ("unit_started", "unit_finished"):
            seen.setdefault(mark.kind, mark.at)  # the worker's; the reviewer's come later
        elif mark.kind in ("verdict", "integrated"):
            seen[mark.kind] = mark.at
        elif mark.kind == "gate":
            seen["gates_end"] = mark.at
        elif mark.kind == "step" and message == "TaskTrack STEP: Conclude":
            seen["conclude"] = mark.at
        elif mark.kind == "step" and message == "TaskTrack STEP: Complete":
            missing = [k for k in POINTS if k not in seen]
            if missing or boundary is None or attempts != 1:
                raise SystemExit(f"{current}: events missing {missing} or {attempts} attempts")
            points = [boundary, *(seen[k] for k in POINTS), mark.at]
            timings.append(TaskTiming(current, points, agent_seconds.get(current, 0.0)))
            boundary, current = mark.at, None
    return timings


def git_by_phase(
    timings: list[TaskTiming], calls: list[GitCall]
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Per phase, each task's git seconds and git process count (by call start time)."""
    seconds = {k: [0.0] * len(timings) for k in (*PHASE_KEYS, "total")}
    counts = {k: [0.0] * len(timings) for k in (*PHASE_KEYS, "total")}
    starts = [t.start for t in timings]
    for call in calls:
        i = bisect.bisect_right(starts, call.began) - 1
        if i < 0 or call.began >= timings[i].end:
            continue  # run-level work: before the first task or after the last
        j = bisect.bisect_right(timings[i].points, call.began) - 1
        for key in (PHASE_KEYS[j], "total"):
            seconds[key][i] += call.seconds
            counts[key][i] += 1
    return seconds, counts


# --- statistics ----------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * q
    low = int(k)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (k - low)


def summary_ms(values: list[float]) -> dict[str, float]:
    """median, p10, p90 and mean, in milliseconds."""
    return {
        "median": percentile(values, 0.5) * 1e3,
        "p10": percentile(values, 0.1) * 1e3,
        "p90": percentile(values, 0.9) * 1e3,
        "mean": sum(values) / len(values) * 1e3 if values else float("nan"),
    }


# --- the measurements -----------------------------------------------------------------------


def git_baseline(repo: Path, sha: str, folder: Path, reps: int) -> dict[str, dict[str, float]]:
    """Raw `git worktree add -b` and `git worktree remove --force`, as the harness runs them."""
    folder.mkdir(parents=True)
    env = {"LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"}  # what taskhand.git sets as well
    add: list[float] = []
    remove: list[float] = []
    for i in range(WARMUPS + reps):
        path, branch = folder / f"wt-{i}", f"bench/wt-{i}"
        t0 = time.perf_counter()
        _sh(
            ["git", "-C", str(repo), "worktree", "add", "-q", str(path), "-b", branch, sha], env=env
        )
        t1 = time.perf_counter()
        _sh(["git", "-C", str(repo), "worktree", "remove", "--force", str(path)], env=env)
        t2 = time.perf_counter()
        _sh(["git", "-C", str(repo), "branch", "-q", "-D", branch])
        if i >= WARMUPS:
            add.append(t1 - t0)
            remove.append(t2 - t1)
    both = [a + r for a, r in zip(add, remove, strict=True)]
    return {"add": summary_ms(add), "remove": summary_ms(remove), "add_remove": summary_ms(both)}


@dataclass
class RunResult:
    timings: list[TaskTiming]
    calls: list[GitCall]
    wall: float
    before_first: float
    after_last: float
    command_seconds: list[float]


def run_plan(
    repo: Path, plan: Path, script: Path, home: Path, profiler: cProfile.Profile | None = None
) -> RunResult:
    """Run the plan in-process; check that every task was integrated."""
    recorder = Recorder()
    agent_seconds: dict[str, float] = {}
    calls: list[GitCall] = []
    config = runconfig.RunConfig(agent="replay", script=str(script))
    with taskhand_home(home), instrumented(agent_seconds, calls):
        began = time.perf_counter()
        if profiler is not None:
            profiler.enable()
        try:
            summary = launch.start(plan, config, recorder, repo, new=True)
        finally:
            if profiler is not None:
                profiler.disable()
        ended = time.perf_counter()
        if summary.status != "completed":
            raise SystemExit(f"the run ended {summary.status}: {summary.message}")
        with Store.open(StateDir.for_repo(repo).database) as store:
            run = store.get_run(summary.run_id)
            assert run is not None
            command_seconds = [
                g.seconds or 0.0
                for a in store.attempts(summary.run_id)
                for g in store.gates(a.id)
                if g.name == "command"
            ]
    timings = split_tasks(recorder.marks, agent_seconds)
    tasks = len(list(plan.glob("T-*.md")))
    span = f"{run.base_sha}..{summary.run_branch}"
    integrated = int(_sh(["git", "-C", str(repo), "rev-list", "--count", span]))
    if len(timings) != tasks or integrated != tasks:
        raise SystemExit(f"{len(timings)} tasks timed, {integrated} integrated, of {tasks}")
    return RunResult(
        timings,
        calls,
        ended - began,
        timings[0].start - began,
        ended - timings[-1].end,
        command_seconds,
    )


def measure_repo(
    label: str, files: int | None, tmp: Path, args: argparse.Namespace, note: Callable[[str], None]
) -> tuple[dict[str, Any], Path, str]:
    started = time.perf_counter()
    repo = tmp / label / "repo"
    sha, count = make_repo(repo, files)
    plan, script = tmp / label / "plan", tmp / label / "replay.toml"
    write_plan(plan, args.tasks, args.check)
    write_script(script, args.tasks, args.agent_seconds)
    note(f"{label}: {count:,} files generated in {time.perf_counter() - started:.1f} s")
    baseline = git_baseline(repo, sha, tmp / label / "baseline", args.reps)
    note(
        f"{label}: git worktree add {baseline['add']['median']:.1f} ms, "
        f"remove {baseline['remove']['median']:.1f} ms (median of {args.reps})"
    )
    result = run_plan(repo, plan, script, tmp / label / "home")
    spans = [t.phases() for t in result.timings]
    phases = {k: summary_ms([s[k] for s in spans]) for k in (*PHASE_KEYS, "agent", "total")}
    harness = summary_ms([s["harness"] for s in spans])
    git_seconds, git_counts = git_by_phase(result.timings, result.calls)
    by_command: dict[str, dict[str, float]] = {}
    in_tasks = [
        c for c in result.calls if result.timings[0].start <= c.began < result.timings[-1].end
    ]
    for call in in_tasks:
        entry = by_command.setdefault(call.command, {"calls": 0.0, "seconds": 0.0})
        entry["calls"] += 1
        entry["seconds"] += call.seconds
    n = len(result.timings)
    commands = {
        name: {
            "calls_per_task": e["calls"] / n,
            "ms_per_task": e["seconds"] / n * 1e3,
            "ms_per_call": e["seconds"] / e["calls"] * 1e3,
        }
        for name, e in sorted(by_command.items(), key=lambda kv: -kv[1]["seconds"])
    }
    add, both = baseline["add"]["median"], baseline["add_remove"]["median"]
    note(
        f"{label}: {n} tasks in {result.wall:.1f} s, "
        f"harness median {harness['median']:.1f} ms per task"
    )
    window = max(1, min(10, n // 3))
    trend = {
        "window": window,
        "first_ms": percentile([s["harness"] for s in spans[:window]], 0.5) * 1e3,
        "last_ms": percentile([s["harness"] for s in spans[-window:]], 0.5) * 1e3,
    }
    data = {
        "repo": label,
        "files": count,
        "tasks": n,
        "phases": phases,
        "harness": harness,
        "harness_trend": trend,
        "git": {
            "ms_by_phase": {k: summary_ms(v) for k, v in git_seconds.items()},
            "calls_by_phase": {k: percentile(v, 0.5) for k, v in git_counts.items()},
            "by_command": commands,
        },
        "acceptance_command": summary_ms(result.command_seconds)
        if result.command_seconds
        else None,
        "run": {
            "wall_s": result.wall,
            "before_first_task_s": result.before_first,
            "after_last_task_s": result.after_last,
        },
        "baseline": baseline,
        "ratio": {
            "harness_over_add": harness["median"] / add,
            "harness_over_add_remove": harness["median"] / both,
        },
    }
    return data, repo, sha


def profile_run(repo: Path, tmp: Path, args: argparse.Namespace) -> str:
    """A fresh run of the same plan on `repo` under cProfile (not timed): the hot spots."""
    stale = _sh(["git", "-C", str(repo), "for-each-ref", "--format=%(refname)", "refs/heads/"])
    for ref in stale.splitlines():
        if ref.startswith("refs/heads/taskhand/"):  # so the run creates them as the first did
            _sh(["git", "-C", str(repo), "update-ref", "-d", ref])
    plan, script = tmp / "profile" / "plan", tmp / "profile" / "replay.toml"
    write_plan(plan, args.tasks, args.check)
    write_script(script, args.tasks, args.agent_seconds)
    profiler = cProfile.Profile()
    run_plan(repo, plan, script, tmp / "profile" / "home", profiler)
    text = io.StringIO()
    stats = pstats.Stats(profiler, stream=text)
    text.write("== by own time (tottime), top 15 ==\n")
    stats.sort_stats("tottime").print_stats(15)
    text.write("== taskhand functions by cumulative time, top 30 ==\n")
    stats.sort_stats("cumulative").print_stats(r"taskhand[/\\]", 30)
    return text.getvalue()


# --- report -------------------------------------------------------------------------------


def _row(label: str, s: dict[str, float], git_ms: float | None, calls: float | None) -> str:
    extra = f"{git_ms:>9.1f} {calls:>6.0f}" if git_ms is not None and calls is not None else ""
    return (
        f"  {label:<38} {s['median']:>9.1f} {s['p10']:>8.1f} {s['p90']:>8.1f} {s['mean']:>8.1f}"
        f" {extra}"
    ).rstrip()


def _spread(s: dict[str, float]) -> str:
    return f"{s['median']:>8.1f} ms ({s['p10']:.1f}-{s['p90']:.1f})"


def table(results: list[dict[str, Any]], check: str | None, reps: int, agent_seconds: float) -> str:
    lines = []
    head = (
        f"  {'phase (ms per task)':<38} {'median':>9} {'p10':>8} {'p90':>8} {'mean':>8}"
        f" {'git ms':>9} {'git n':>6}"
    )
    for r in results:
        g = r["git"]
        lines += [
            f"{r['repo']} repository: {r['files']:,} files, {r['tasks']} tasks, acceptance "
            f"command: {'`' + check + '`' if check else 'none'}, agent: "
            + (f"sleeps {agent_seconds:g} s, then writes" if agent_seconds else "instant"),
            head,
            "  " + "-" * (len(head) - 2),
        ]
        for key, label, _ in PHASES:
            lines.append(
                _row(
                    label,
                    r["phases"][key],
                    g["ms_by_phase"][key]["median"],
                    g["calls_by_phase"][key],
                )
            )
            if key == "unit":
                lines.append(
                    _row("  of which the replay agent itself", r["phases"]["agent"], None, None)
                )
            if key == "commit_gates" and r["acceptance_command"] is not None:
                lines.append(
                    _row("  of which the acceptance command", r["acceptance_command"], None, None)
                )
        total_git = g["ms_by_phase"]["total"]["median"]
        lines += [
            _row("task total", r["phases"]["total"], total_git, g["calls_by_phase"]["total"]),
            _row("HARNESS (task total - agent)", r["harness"], None, None),
            f"  harness median of the first {r['harness_trend']['window']} tasks"
            f" {r['harness_trend']['first_ms']:.1f} ms, of the last"
            f" {r['harness_trend']['last_ms']:.1f} ms",
            "",
            "  git processes the harness started, per task, by command:",
        ]
        for name, c in r["git"]["by_command"].items():
            lines.append(
                f"    {name:<18} {c['calls_per_task']:>5.1f} calls {c['ms_per_task']:>8.1f} ms"
                f"   ({c['ms_per_call']:.2f} ms a call)"
            )
        b = r["baseline"]
        run = r["run"]
        lines += [
            "",
            f"  raw git, median of {reps} runs (p10-p90):",
            f"    git worktree add -b       {_spread(b['add'])}",
            f"    git worktree remove -f    {_spread(b['remove'])}",
            f"    add + remove              {_spread(b['add_remove'])}",
            f"  harness median / add = {r['ratio']['harness_over_add']:.2f}x;"
            f" / (add+remove) = {r['ratio']['harness_over_add_remove']:.2f}x",
            f"  whole run {run['wall_s']:.2f} s: {run['before_first_task_s'] * 1e3:.0f} ms before"
            f" the first task, {run['after_last_task_s'] * 1e3:.0f} ms after the last",
            "",
        ]
    lines += [
        "Phases run from the event that starts them to the event that starts the next:",
        *(f"  {label:<38} from {start}" for _, label, start in PHASES),
        "  (the first task's screen starts at the first Screen step, so it lacks one plan load)",
        "git ms / git n: median time in, and number of, git processes the harness started in",
        "the phase (from a wrapper on taskhand.workspace.git.run). HARNESS = task total - the",
        "replay agent's own run(); the acceptance command counts as harness time.",
    ]
    return "\n".join(lines)


def verdicts(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    small = next((r for r in results if r["repo"] == "small"), None)
    large = next((r for r in results if r["repo"] == "large"), None)
    if small is not None:
        median = small["harness"]["median"]
        out["small"] = {
            "target": f"median harness time per task < {SMALL_TARGET_MS:.0f} ms",
            "value_ms": median,
            "holds": median < SMALL_TARGET_MS,
        }
    if large is not None:
        median = large["harness"]["median"]
        for key, name in (("add_remove", "git worktree add + remove"), ("add", "git worktree add")):
            base = large["baseline"][key]["median"]
            out[f"large_vs_{key}"] = {
                "target": f"median harness time per task <= {LARGE_TARGET_RATIO} x ({name})",
                "value_ms": median,
                "baseline_ms": base,
                "ratio": median / base,
                "holds": median <= LARGE_TARGET_RATIO * base,
            }
    return out


def verdict_lines(checks: dict[str, dict[str, Any]]) -> list[str]:
    lines = []
    for key, v in checks.items():
        state = "HOLDS" if v["holds"] else "MISSED"
        if key == "small":
            lines.append(f"small repo: {v['target']}: {state} ({v['value_ms']:.1f} ms)")
        else:
            primary = " [baseline used: the harness adds and removes a worktree per attempt]"
            literal = " [the issue's literal wording]"
            lines.append(
                f"large repo: {v['target']}: {state} ({v['value_ms']:.1f} ms vs "
                f"{v['baseline_ms']:.1f} ms = {v['ratio']:.2f}x)"
                + (primary if key == "large_vs_add_remove" else literal)
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=100, help="tasks in the plan (default 100)")
    parser.add_argument(
        "--files", type=int, default=20_000, help="files in the large repository (default 20000)"
    )
    parser.add_argument(
        "--check",
        default="true",
        help="the acceptance command of every task (default: true); 'none' for no command",
    )
    parser.add_argument(
        "--reps", type=int, default=20, help="repetitions of the raw git baseline (default 20)"
    )
    parser.add_argument("--only", choices=("small", "large"), help="measure one repository only")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also profile one more run on the large repository (cProfile, untimed)",
    )
    parser.add_argument(
        "--agent-seconds",
        type=float,
        default=0.0,
        help="make the replay agent sleep this long per task before writing (default 0: "
        "instant); agent time is not harness time, but a slower agent changes what git finds",
    )
    parser.add_argument(
        "--dir",
        type=Path,
        help="folder for the repositories, state and worktrees (default: the system's temp "
        "folder); its filesystem sets what creating 20,000 files costs",
    )
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
    args = parser.parse_args(argv)
    if args.tasks < 1 or args.tasks > 999:
        parser.error("--tasks must be between 1 and 999")
    if args.agent_seconds < 0:
        parser.error("--agent-seconds cannot be negative")
    if args.files < 1 or args.reps < 1:
        parser.error("--files and --reps must be at least 1")
    args.check = None if args.check.strip().lower() in ("", "none") else args.check.strip()

    def note(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    results: list[dict[str, Any]] = []
    profile = ""
    if args.dir is not None:
        args.dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="taskhand-bench-run-", dir=args.dir) as name:
        tmp = Path(name).resolve()
        fs = filesystem(tmp)
        note(f"working in {tmp} ({fs}): repositories, plans beside them, state, worktrees")
        plan_repos = [("small", None), ("large", args.files)]
        repo: Path | None = None
        for label, files in plan_repos:
            if args.only and args.only != label:
                continue
            data, repo, _ = measure_repo(label, files, tmp, args, note)
            results.append(data)
        if args.profile and repo is not None:
            note("profiling one more run (untimed)")
            profile = profile_run(repo, tmp, args)
    checks = verdicts(results)
    if args.json:
        out = {
            "folder": str(tmp),
            "filesystem": fs,
            "tasks": args.tasks,
            "check": args.check,
            "agent_seconds": args.agent_seconds,
            "reps": args.reps,
            "timing": "ms per task: median, p10, p90, mean over the run's tasks",
            "results": results,
            "targets": checks,
        }
        if profile:
            out["profile"] = profile
        print(json.dumps(out, indent=2))
    else:
        print(f"folder: {tmp} ({fs}); git {git_version()}; Python {sys.version.split()[0]}")
        print()
        print(table(results, args.check, args.reps, args.agent_seconds))
        print()
        print("\n".join(verdict_lines(checks)))
        if profile:
            print()
            print(profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
