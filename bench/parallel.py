"""Parallel-jobs benchmark: how close `--jobs N` comes to the best a plan's shape allows.

It writes a Markdown plan of ``--tasks`` (default 64) tasks in ``--chains`` (default 8)
independent chains, each task depending on the one before it in its chain, so the plan's
width is the number of chains and its critical path the length of a chain (64 / 8 = 8
tasks); and ``--conflicting`` (default 2) tasks more, independent, that each change a line of
one shared file next to the others' (conflict-prone: run side by side, all but one would
conflict at integration), each declaring that file in its `paths`. The replay agent's
implementer sleeps ``--unit-seconds`` (default 2) in each task, then writes the task's own
file; the reviewer accepts at once; each task has one acceptance command, which sleeps
``--check-seconds`` (default 0) and tests the file. Then, for each job count (``--jobs``,
default 1,2,4,8), it runs the plan in-process in a fresh repository and state folder and
reports:

* makespan: the run's wall time, from start to its exit;
* bound: ``max(critical path, total work / jobs)``, each task's work its unit and its check
  (``unit + check``): the best any scheduler could do with these units and checks;
* makespan / bound (target: at most 1.15 at every job count);
* harness overhead per task: (makespan - bound) / tasks for one job; for several, the same
  over the tasks each job carried (``(makespan - bound) x jobs / tasks``), which is the
  harness's own time per task as each job sees it (target: not above the one-job figure);
* re-gates: candidates checked again in the merge queue on the tree they land as (the run
  branch and the candidates ahead of them), and the most at once; tasks held back (a
  conflict predicted), tasks requeued (a conflict or a check broken by another's landing: no
  failure), and attempts failed (target: 0);
* the run's CPU time per task (its threads and every process it ran), and that spread evenly
  over the machine's cores: with several jobs on few cores, the harness's own work competes
  for them, and this says how much of the time above the bound that alone explains;
* the speed-up of the most jobs over one.

Run it with::

    .venv/bin/python bench/parallel.py
    .venv/bin/python bench/parallel.py --jobs 1,4 --tasks 32 --unit-seconds 1
    .venv/bin/python bench/parallel.py --check-seconds 2 --json
    ./dev bench parallel
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from taskhand import config as runconfig
from taskhand.run import launch
from taskhand.state.events import Event

CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
TARGET_RATIO = 1.15
SHARED = "shared.txt"  # the file the conflict-prone tasks all change


def task_id(n: int) -> str:
    return f"T-{n:03d}"


def write_plan(folder: Path, args: argparse.Namespace) -> None:
    folder.mkdir(parents=True)
    (folder / "overview.md").write_text("# Chains\n\n## Goal\nWrite files in chains.\n")
    for n in range(1, args.tasks + args.conflicting + 1):
        before = n - args.chains  # the task before this one in its chain
        depends = f"depends: {task_id(before)}\n" if before >= 1 and n <= args.tasks else ""
        target = f"out/{n}.txt" if n <= args.tasks else SHARED
        (folder / f"{task_id(n)}-file.md").write_text(
            f"---\nid: {task_id(n)}\ntitle: File {n}\npaths: {target}\n{depends}---\n\n"
            f"## Description\nWrite {target}.\n\n## Acceptance criteria\n"
            f"- `$ sh -c 'sleep {args.check_seconds:g}; grep -q {n} {target}'` passes\n"
        )


def write_script(path: Path, args: argparse.Namespace) -> None:
    def change(n: int) -> dict[str, Any]:
        if n <= args.tasks:
            return {"write": f"out/{n}.txt", "text": f"{n}\n"}
        return {"edit": SHARED, "old": f"line {n}\n", "new": f"line {n} by {n}\n"}

    script = {
        task_id(n): [
            {
                "resolution": f"Wrote its line {n}.",
                "actions": [{"sleep": args.unit_seconds}, change(n)],
            }
        ]
        for n in range(1, args.tasks + args.conflicting + 1)
    }
    path.write_text(json.dumps({"tasks": script}))


def make_repo(folder: Path, args: argparse.Namespace) -> Path:
    folder.mkdir(parents=True)
    lines = range(args.tasks + 1, args.tasks + args.conflicting + 1)
    (folder / SHARED).write_text("".join(f"line {n}\n" for n in lines))
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost"}  # fmt: skip
    start = ["add", SHARED], ["commit", "-q", "--allow-empty", "-m", "start"]
    for argv in (["init", "-q", "-b", "main"], *start):
        subprocess.run(["git", "-C", str(folder), *argv], check=True, env=env)
    return folder


@contextmanager
def taskhand_home(folder: Path) -> Iterator[None]:
    before = os.environ.get("TASKHAND_HOME")
    os.environ["TASKHAND_HOME"] = str(folder)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TASKHAND_HOME", None)
        else:
            os.environ["TASKHAND_HOME"] = before


def run_once(root: Path, args: argparse.Namespace, jobs: int) -> dict[str, Any]:
    repo = make_repo(root / "repo", args)
    plan = root / "plan"  # outside the repository: its checkout stays clean
    write_plan(plan, args)
    script = root / "replay.json"
    write_script(script, args)
    events: list[Event] = []
    config = runconfig.RunConfig(
        agent="replay", script=str(script), jobs=jobs, sandbox=args.sandbox
    )
    with taskhand_home(root / "home"):
        began, cpu_before = time.perf_counter(), _cpu_seconds()
        summary = launch.start(plan, config, events.append, repo)
        makespan, cpu = time.perf_counter() - began, _cpu_seconds() - cpu_before
    if summary.status != "completed":
        raise SystemExit(f"jobs {jobs}: the run ended {summary.status}: {summary.message}")
    bound = bound_of(args, jobs)
    tasks = args.tasks + args.conflicting
    carried = tasks / min(jobs, width_of(args))
    failed = [e for e in events if e.kind == "attempt_failed"]
    gated = [e for e in events if e.kind == "gated"]
    return {
        "jobs": jobs,
        "makespan_s": round(makespan, 2),
        "bound_s": round(bound, 2),
        "ratio": round(makespan / bound, 3),
        "overhead_per_task_ms": round((makespan - bound) / carried * 1000, 1),
        # The CPU the run used (its own threads and every process it ran), and that spread
        # evenly over the machine's cores: how much of the time above the bound the machine
        # alone explains (the bound counts units and checks, which sleep, as taking no CPU).
        "cpu_per_task_ms": round(cpu / tasks * 1000, 1),
        "cpu_over_cores_s": round(cpu / CORES, 2),
        "replays": sum(e.kind == "replayed" for e in events),
        "regates": len(gated),  # checks run again on the tree a candidate lands as
        "most_gating_at_once": _most_at_once(events),
        "held": sum(e.kind == "task_held" for e in events),
        "requeued": sum(e.kind == "attempt_requeued" for e in events),
        "conflicts": len(failed),  # attempts failed: by a conflict or otherwise (target 0)
    }


def _cpu_seconds() -> float:
    """CPU seconds used so far by this process and the processes it waited for."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _most_at_once(events: list[Event]) -> int:
    """The most candidates whose checks ran at once in the merge queue."""
    now = most = 0
    for event in events:
        now += (event.kind == "gating") - (event.kind == "gated")
        most = max(most, now)
    return most


def task_work(args: argparse.Namespace) -> float:
    """One task's work in seconds: its implementer unit, then its check."""
    return args.unit_seconds + args.check_seconds


def width_of(args: argparse.Namespace) -> int:
    return min(args.chains, args.tasks) + args.conflicting


def bound_of(args: argparse.Namespace, jobs: int) -> float:
    """max(critical path, total work / jobs): a chain's tasks (or the conflict-prone ones,
    which must run one after another) in a row, or all the work spread over the jobs."""
    length = max(-(-args.tasks // args.chains), args.conflicting)
    tasks = args.tasks + args.conflicting
    return max(length * task_work(args), tasks * task_work(args) / jobs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=64)
    parser.add_argument("--chains", type=int, default=8, help="the plan's width")
    parser.add_argument("--unit-seconds", type=float, default=2.0)
    parser.add_argument("--check-seconds", type=float, default=0.0, help="each check's sleep")
    parser.add_argument("--conflicting", type=int, default=2, help="conflict-prone tasks")
    parser.add_argument("--jobs", default="1,2,4,8", help="job counts, comma-separated")
    parser.add_argument("--sandbox", default="auto", help="auto, bwrap or none")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = []
    for jobs in [int(j) for j in args.jobs.split(",")]:
        with tempfile.TemporaryDirectory(prefix="taskhand-bench-parallel-") as tmp:
            rows.append(run_once(Path(tmp), args, jobs))
        if not args.json:
            print(_line(rows[-1]), flush=True)
    first = next((r for r in rows if r["jobs"] == 1), None)
    verdicts = {
        "ratio": all(r["ratio"] <= TARGET_RATIO for r in rows),
        "overhead": first is None
        or all(r["overhead_per_task_ms"] <= first["overhead_per_task_ms"] for r in rows),
        "conflicts": all(r["conflicts"] == 0 for r in rows),
    }
    if args.json:
        print(json.dumps({"rows": rows, "target_ratio": TARGET_RATIO, "met": verdicts}, indent=2))
        return 0
    length = -(-args.tasks // args.chains)
    print(
        f"plan: {args.tasks} tasks in {args.chains} chains of {length} and "
        f"{args.conflicting} conflict-prone; each task a {args.unit_seconds:g} s unit and a "
        f"{args.check_seconds:g} s check ({task_work(args):g} s); bound = max(critical path, "
        "total work / jobs)"
    )
    print(f"makespan / bound at most {TARGET_RATIO}: {'met' if verdicts['ratio'] else 'MISSED'}")
    print(f"overhead per task not above one job's: {'met' if verdicts['overhead'] else 'MISSED'}")
    print(f"no task failed by a conflict: {'met' if verdicts['conflicts'] else 'MISSED'}")
    most = max(rows, key=lambda r: r["jobs"])
    if first is not None and most is not first:
        speedup = first["makespan_s"] / most["makespan_s"]
        print(f"speed-up at {most['jobs']} jobs over 1: {speedup:.2f}x")
        above = most["makespan_s"] - most["bound_s"]
        print(
            f"at {most['jobs']} jobs: {above:.1f} s above the bound; the run's CPU time (the "
            f"harness and the processes it ran), spread evenly over {CORES} cores, is "
            f"{most['cpu_over_cores_s']:.1f} s"
        )
    return 0


def _line(row: dict[str, Any]) -> str:
    return (
        f"jobs {row['jobs']:>2}: makespan {row['makespan_s']:7.2f} s, "
        f"bound {row['bound_s']:7.2f} s, "
        f"ratio {row['ratio']:.3f}, overhead {row['overhead_per_task_ms']:7.1f} ms/task, "
        f"CPU {row['cpu_per_task_ms']:6.1f} ms/task ({row['cpu_over_cores_s']:.1f} s over "
        f"{CORES} cores), "
        f"{row['regates']} re-gates (at most {row['most_gating_at_once']} at once), "
        f"{row['held']} held, {row['requeued']} requeued, {row['conflicts']} attempts failed"
    )


if __name__ == "__main__":
    sys.exit(main())
