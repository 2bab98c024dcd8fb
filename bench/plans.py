"""Plan-loading benchmark: how long taskhand takes to read, check and schedule a large plan.

What it measures, for plans of 1,000 / 10,000 / 50,000 tasks in both dialects (TaskTrack
and Markdown), each generated into a temporary folder beforehand (generation is not timed):

* load + validate: ``taskhand.run.preflight.validate(folder)``, i.e. reading every file and
  running every validation rule;
* frontier: ``taskhand.plan.schedule.eligible(plan)`` (for the Markdown dialect, whose files hold
  no status, with a run-state map that marks the same tasks done as the TaskTrack plan);
* critical path: ``taskhand.plan.schedule.shape(plan)``;
* total, the cost per task in microseconds, and that cost divided by the per-task cost of
  the 1,000-task plan of the same dialect (near 1.0 means time grows linearly);
* memory: peak RSS (``resource.getrusage(RUSAGE_SELF).ru_maxrss``) minus the RSS just before
  the first load, over the timed runs; and the tracemalloc peak of one extra, untimed run.

Each (dialect, size) runs in a fresh subprocess so memory figures do not mix. Times are the
fastest of 3 runs (``--runs``), with the plan files already in the OS file cache (they are
read once, untimed, before the first run). The generated plans must validate without
errors, and the frontier, critical-path length and width are checked against values the
generator computed independently; any mismatch stops the benchmark.

Run it with::

    .venv/bin/python bench/plans.py                  # all sizes, readable table
    .venv/bin/python bench/plans.py --sizes 1000,10000
    .venv/bin/python bench/plans.py --json           # machine-readable output
    ./dev bench [ARGS]                               # the same, after setting up the venv
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import pstats
import random
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DIALECTS = ("tasktrack", "markdown")
DEFAULT_SIZES = (1_000, 10_000, 50_000)
TARGET_TASKS = 10_000
TARGET_SECONDS = 1.0
CODE = "BIG"
STAMP = "2026-12-01T09:00:00Z"
SEED = 20261201
DEP_WINDOW = 12  # a task depends only on tasks among the 12 before it in its phase

_VERBS = ("Add", "Parse", "Validate", "Render", "Refactor", "Document", "Test", "Cache")
_NOUNS = ("config loader", "report writer", "query planner", "index builder", "CLI option")


# --- generation -------------------------------------------------------------------------


@dataclass
class Shape:
    """A generated plan graph, shared by both dialects, and what scheduling must find."""

    size: int
    phases: list[list[int]]  # task numbers (1-based, consecutive) per phase
    deps: list[list[int]]  # deps[n] = task numbers task n depends on (index 0 unused)
    done: int  # tasks 1..done are DONE, the rest OPEN
    current_phase: int  # 1-based number of the phase being worked on
    frontier: list[int] = field(default_factory=list)
    critical_path: int = 0
    width: int = 0


def phase_count(size: int) -> int:
    """20 phases for small plans, up to 100 for large ones."""
    return min(100, max(20, size // 200))


def generate(size: int, seed: int = SEED) -> Shape:
    """A realistic plan graph: phases of uneven size, 0-2 same-phase deps per task, no
    redundant (transitively implied) dependencies, early phases done."""
    rng = random.Random(seed + size)
    count = phase_count(size)
    weights = [rng.uniform(0.7, 1.3) for _ in range(count)]
    sizes = [max(3, int(size * w / sum(weights))) for w in weights]
    sizes[-1] += size - sum(sizes)
    deps: list[list[int]] = [[] for _ in range(size + 1)]
    phases: list[list[int]] = []
    critical = width = 0
    number = 0
    for members in sizes:
        first = number + 1
        ancestors: list[int] = []  # bit k set: position k is an ancestor (same phase)
        levels: list[int] = []
        for k in range(members):
            number += 1
            window = list(range(max(0, k - DEP_WINDOW), k))
            wanted = rng.choices((0, 1, 2), weights=(30, 45, 25))[0]
            chosen: list[int] = []
            for candidate in rng.sample(window, min(len(window), 4)):
                if len(chosen) == wanted:
                    break
                bit = 1 << candidate
                if all(
                    not ancestors[c] & bit and not ancestors[candidate] & (1 << c) for c in chosen
                ):
                    chosen.append(candidate)
            chosen.sort()
            mask = 0
            for c in chosen:
                mask |= ancestors[c] | (1 << c)
            ancestors.append(mask)
            levels.append(1 + max((levels[c] for c in chosen), default=0))
            deps[number] = [first + c for c in chosen]
        phases.append(list(range(first, number + 1)))
        critical += max(levels)
        width = max(width, *Counter(levels).values())
    current = max(2, int(count * 0.3))  # phases before it are done
    in_current = phases[current - 1]
    done = in_current[0] - 1 + len(in_current) // 2
    frontier = [
        n for n in in_current if n > done and all(d <= done for d in deps[n])
    ]  # deps lie earlier in the phase, so the done ones are exactly those <= done
    return Shape(size, phases, deps, done, current, frontier, critical, width)


def _title(n: int) -> str:
    return f"{_VERBS[n % len(_VERBS)]} {_NOUNS[n % len(_NOUNS)]} {n}"


def _description(n: int, phase: int) -> tuple[str, str, str]:
    return (
        f"Implement step {n} of phase {phase} in src/big/module_{phase}.py.",
        "Keep the public API unchanged and document any new option in the README.",
        "Add tests for the new behaviour and for one error case.",
    )


def _criteria(n: int) -> tuple[str, ...]:
    return (
        f"{_title(n).lower()} handles empty input",
        "errors name the file and line",
        f"`$ python -m pytest -q tests/test_{n}.py` passes",
    )


def _write(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


def write_tasktrack(shape: Shape, folder: Path) -> None:
    folder.mkdir(parents=True)
    overview = [
        f"# {CODE} - Benchmark plan\n\n**Objective**: Exercise taskhand on "
        f"{shape.size} tasks.\n\n**Created**: {STAMP}\n\n**Resources**: none\n"
    ]
    for p, members in enumerate(shape.phases, start=1):
        overview.append(f"\n## {p}: Phase {p} of the benchmark\n\n")
        for n in members:
            status = "DONE" if n <= shape.done else "OPEN"
            overview.append(f"* [{status}] {CODE}-{n}: {_title(n)}\n")
            deps = ", ".join(f"{CODE}-{d}" for d in shape.deps[n]) or "none"
            description = "\n".join(_description(n, p))
            criteria = "\n".join(f"- {c}" for c in _criteria(n))
            outcome = "\n**Resolution**: Done and reviewed.\n" if status == "DONE" else ""
            _write(
                folder / f"{CODE}-{n}.md",
                f"# {CODE}-{n}: {_title(n)}\n\n**Status**: {status}\n\n**Updated**: {STAMP}\n\n"
                f"**Dependencies**: {deps}\n\n**Description**: {description}\n\n"
                f"**Acceptance**:\n\n{criteria}\n{outcome}",
            )
    _write(folder / f"{CODE}-TaskTrack.md", "".join(overview))
    _write(folder / "TaskTrack-v1.md", "# TaskTrack specification (benchmark stand-in)\n")


def markdown_id(n: int, size: int) -> str:
    return f"T-{n:0{max(3, len(str(size)))}d}"


def write_markdown(shape: Shape, folder: Path) -> None:
    folder.mkdir(parents=True)
    _write(
        folder / "overview.md", f"# Benchmark plan\n\nExercise taskhand on {shape.size} tasks.\n"
    )
    for p, members in enumerate(shape.phases, start=1):
        for n in members:
            task_id = markdown_id(n, shape.size)
            slug = _title(n).lower().replace(" ", "-")
            deps = ", ".join(markdown_id(d, shape.size) for d in shape.deps[n])
            head = f"id: {task_id}\ntitle: {_title(n)}\nphase: {p}\n"
            head += f"depends: {deps}\n" if deps else ""
            description = "\n".join(_description(n, p))
            criteria = "".join(f"- {c}\n" for c in _criteria(n))
            _write(
                folder / f"{task_id}-{slug}.md",
                f"---\n{head}---\n\n## Description\n{description}\n\n"
                f"## Acceptance criteria\n{criteria}",
            )


def task_id(dialect: str, n: int, size: int) -> str:
    return f"{CODE}-{n}" if dialect == "tasktrack" else markdown_id(n, size)


# --- measurement (runs in a fresh subprocess per dialect and size) ----------------------


def _current_rss_kib() -> int:
    """Resident set size now, in KiB (from /proc where there is one)."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    except OSError:
        return _peak_rss_kib()


def _peak_rss_kib() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // 1024 if sys.platform == "darwin" else peak  # bytes on macOS, KiB elsewhere


def measure(dialect: str, folder: Path, manifest: Path, runs: int, profile: bool) -> dict[str, Any]:
    """Time load+validate, frontier and critical path; check the results; report memory."""
    try:
        from taskhand.plan import schedule
    except ImportError:  # run without the package installed: use the source tree
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
        from taskhand.plan import schedule
    from taskhand.plan.model import Status
    from taskhand.run.preflight import validate

    expect = json.loads(manifest.read_text())
    size = expect["size"]
    statuses = None
    if dialect == "markdown":  # run state, kept outside the plan files in this dialect
        statuses = {task_id(dialect, n, size): Status.DONE for n in range(1, expect["done"] + 1)}
    for entry in os.scandir(folder):  # warm the file cache, untimed
        with open(entry.path, "rb") as handle:
            handle.read()
    gc.collect()
    rss_before = _current_rss_kib()
    best: dict[str, float] | None = None
    frontier: list[str] = []
    path: list[str] = []
    width = 0
    problems: Counter[str] = Counter()
    for _ in range(runs):
        t0 = time.perf_counter()
        report = validate(folder)
        t1 = time.perf_counter()
        plan = report.plan
        if plan is None or report.errors:
            shown = "\n".join(p.render() for p in report.errors[:10])
            raise SystemExit(
                f"{dialect} {size}: the generated plan has {len(report.errors)} errors:\n{shown}"
            )
        frontier = schedule.eligible(plan, statuses)
        t2 = time.perf_counter()
        found = schedule.shape(plan)
        t3 = time.perf_counter()
        path, width = found.critical_path, found.width
        problems = Counter(p.rule or p.message for p in report.warnings)
        times = {"load_validate": t1 - t0, "frontier": t2 - t1, "critical_path": t3 - t2}
        times["total"] = t3 - t0
        if best is None or times["total"] < best["total"]:
            best = times
        del report, plan, found
        gc.collect()
    assert best is not None
    peak_rss = _peak_rss_kib() - rss_before

    errors = []
    want = [task_id(dialect, n, size) for n in expect["frontier"]]
    if frontier != want:
        errors.append(f"frontier has {len(frontier)} tasks {frontier[:5]}..., expected {want[:5]}")
    if len(path) != expect["critical_path"]:
        errors.append(f"critical path has {len(path)} tasks, expected {expect['critical_path']}")
    if width != expect["width"]:
        errors.append(f"width is {width}, expected {expect['width']}")
    if errors:
        raise SystemExit(f"{dialect} {size}: wrong schedule: " + "; ".join(errors))

    tracemalloc.start()
    report = validate(folder)
    if report.plan is not None:
        schedule.eligible(report.plan, statuses)
        schedule.shape(report.plan)
    traced_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    del report

    hot = ""
    if profile:
        profiler = cProfile.Profile()
        profiler.enable()
        report = validate(folder)
        if report.plan is not None:
            schedule.eligible(report.plan, statuses)
            schedule.shape(report.plan)
        profiler.disable()
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(12)
        hot = text.getvalue()

    return {
        "dialect": dialect,
        "tasks": size,
        "phases": expect["phases"],
        "seconds": best,
        "us_per_task": best["total"] / size * 1e6,
        "peak_rss_mib": peak_rss / 1024,
        "tracemalloc_peak_mib": traced_peak / 2**20,
        "frontier": len(frontier),
        "critical_path": len(path),
        "width": width,
        "warnings": dict(problems),
        "profile": hot,
    }


# --- driver -----------------------------------------------------------------------------


def run_child(
    dialect: str, folder: Path, manifest: Path, runs: int, profile: bool
) -> dict[str, Any]:
    argv = [sys.executable, __file__, "--child", dialect, str(folder), str(manifest)]
    argv += ["--runs", str(runs)] + (["--profile"] if profile else [])
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(
            f"benchmark of {dialect} with {folder.name} failed (exit {done.returncode})"
        )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def table(results: list[dict[str, Any]], runs: int) -> str:
    head = (
        f"{'dialect':<10} {'tasks':>7} {'phases':>6} {'load+valid s':>12} {'frontier ms':>11} "
        f"{'crit.path ms':>12} {'total s':>8} {'us/task':>8} {'ratio':>6} "
        f"{'RSS MiB':>8} {'traced MiB':>10} {'frontier':>8} {'path':>6} {'warn':>5}"
    )
    lines = [head, "-" * len(head)]
    for r in results:
        s = r["seconds"]
        lines.append(
            f"{r['dialect']:<10} {r['tasks']:>7,} {r['phases']:>6} {s['load_validate']:>12.3f} "
            f"{s['frontier'] * 1e3:>11.2f} {s['critical_path'] * 1e3:>12.2f} {s['total']:>8.3f} "
            f"{r['us_per_task']:>8.1f} {r['ratio']:>6.2f} {r['peak_rss_mib']:>8.1f} "
            f"{r['tracemalloc_peak_mib']:>10.1f} {r['frontier']:>8} {r['critical_path']:>6} "
            f"{sum(r['warnings'].values()):>5}"
        )
    base = results[0]["ratio_base"] if results else 0
    lines += [
        "",
        f"times: fastest of {runs} runs per plan, plan files already in the OS file cache "
        "(read once, untimed, before the first run); generation is not timed.",
        f"ratio: microseconds per task divided by the {base:,}-task figure of the same "
        "dialect (1.0 = linear growth).",
        "RSS MiB: peak RSS (getrusage RUSAGE_SELF ru_maxrss) minus the RSS just before the "
        "first load, in a fresh process per row.",
        "traced MiB: tracemalloc peak of one extra, untimed run of the same three steps.",
        "frontier: eligible tasks; path: tasks on the critical path (both checked against the "
        "generator); warn: validation warnings (errors stop the benchmark).",
        "markdown frontier: eligible(plan, statuses) with a run-state map marking the same "
        "tasks done as in the TaskTrack plan.",
    ]
    return "\n".join(lines)


def verdict(results: list[dict[str, Any]]) -> tuple[str, dict[str, bool | None]]:
    holds: dict[str, bool | None] = {}
    parts = []
    for dialect in DIALECTS:
        row = next(
            (r for r in results if r["dialect"] == dialect and r["tasks"] == TARGET_TASKS), None
        )
        if row is None:
            holds[dialect] = None
            parts.append(f"{dialect}: not measured")
        else:
            ok = row["seconds"]["total"] < TARGET_SECONDS
            holds[dialect] = ok
            parts.append(
                f"{dialect} {'HOLDS' if ok else 'MISSED'} ({row['seconds']['total']:.3f} s)"
            )
    measured = [v for v in holds.values() if v is not None]
    overall = "holds" if measured and all(measured) else "does NOT hold"
    if not measured:
        overall = "was not measured (add 10000 to --sizes)"
    line = f"Target '10,000 tasks under 1 second' {overall}: " + ", ".join(parts)
    return line, holds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        default=",".join(str(s) for s in DEFAULT_SIZES),
        help="comma-separated plan sizes in tasks (default: 1000,10000,50000)",
    )
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per plan (best counts)")
    parser.add_argument(
        "--profile", action="store_true", help="print the hottest functions per plan (cProfile)"
    )
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        dialect, folder, manifest = args.child
        result = measure(dialect, Path(folder), Path(manifest), max(1, args.runs), args.profile)
        print(json.dumps(result))
        return 0
    try:
        sizes = sorted({int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()})
    except ValueError:
        parser.error(f"--sizes must be whole numbers separated by commas, not {args.sizes!r}")
    if not sizes or min(sizes) < 10:
        parser.error("--sizes needs plan sizes of at least 10 tasks")
    runs = max(1, args.runs)

    def note(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="taskhand-bench-") as tmp:
        for size in sizes:
            started = time.perf_counter()
            shape = generate(size)
            root = Path(tmp) / str(size)
            folders = {"tasktrack": root / "tasktrack", "markdown": root / "markdown"}
            write_tasktrack(shape, folders["tasktrack"])
            write_markdown(shape, folders["markdown"])
            manifest = root / "expected.json"
            manifest.write_text(
                json.dumps(
                    {
                        "size": size,
                        "phases": len(shape.phases),
                        "done": shape.done,
                        "frontier": shape.frontier,
                        "critical_path": shape.critical_path,
                        "width": shape.width,
                    }
                )
            )
            note(f"generated {size:,}-task plans in {time.perf_counter() - started:.1f} s")
            for dialect in DIALECTS:
                result = run_child(dialect, folders[dialect], manifest, runs, args.profile)
                note(
                    f"  {dialect:<9} {size:>7,} tasks: {result['seconds']['total']:.3f} s, "
                    f"{result['us_per_task']:.1f} us/task"
                )
                if result["profile"]:
                    note(result["profile"])
                results.append(result)
    for r in results:
        base = next(b for b in results if b["dialect"] == r["dialect"])
        r["ratio_base"] = base["tasks"]
        r["ratio"] = r["us_per_task"] / base["us_per_task"]
    line, holds = verdict(results)
    if args.json:
        for r in results:
            r.pop("profile", None)
        out = {
            "runs": runs,
            "timing": f"fastest of {runs} runs, file cache warm",
            "memory": {
                "peak_rss_mib": "ru_maxrss after the timed runs minus RSS before the first load",
                "tracemalloc_peak_mib": "tracemalloc peak of one extra untimed run",
            },
            "results": results,
            "target": {
                "tasks": TARGET_TASKS,
                "seconds": TARGET_SECONDS,
                "holds": holds,
                "summary": line,
            },
        }
        print(json.dumps(out, indent=2))
    else:
        print(table(results, runs))
        print()
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
