"""Startup benchmark: how long the plan commands take from a cold process.

Each command runs in a new interpreter the way the installed `taskhand` script starts it (the
entry point named in the tree's pyproject.toml), so a figure is interpreter start + imports +
the work. Byte code is cached as after an install (the warm-up run writes it, outside the tree).

* ``python -c pass`` and ``python -c 'import click'``, the units of the ratios (target:
  ``validate`` and ``show`` of the demo's plan within 2.1 times the bare click import);
* ``--help``; ``validate``, ``show`` and ``next`` of the demo's plan in a repository of its
  own that has not run it yet;
* ``show`` and ``next`` of the same plan after ``taskhand demo`` ran it, when they read the
  plan's statuses from the state database;
* ``validate`` of a 10,000-task plan in each dialect, written by bench/plans.py's generator.

Times are the best and the median of ``--runs`` (10) after one untimed run, in milliseconds,
with the best CPU time (user + system) beside them, and as a multiple of ``python -c pass``.
With ``--baseline DIR`` (another checkout, e.g. ``git worktree add /tmp/before <commit>``) the
same commands of that tree run in turn with this tree's, so both see the same machine load,
and the table shows the ratio now / baseline. ``--importtime`` adds, per command, where
``python -X importtime`` says the imports spend their time.

    .venv/bin/python bench/startup.py [--runs 10] [--baseline DIR] [--json] [--importtime]
    ./dev bench startup [ARGS]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import plans  # bench/plans.py: the generator of large plans

ROOT = Path(__file__).resolve().parents[1]
BIG = 10_000
BIG_SECONDS = 1.0  # the target: a 10,000-task plan validates from a cold process within it
PLAN_COMMANDS = ("--help", "validate", "show", "next")
BASE = "python -c pass"
CLICK = "python -c 'import click'"  # the least any click command costs: the target's unit
CLICK_TARGET = 2.1  # validate and show of the demo's plan within this many times CLICK
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@taskhand.invalid"]


@dataclass
class Tree:
    """A checkout whose `taskhand` is measured, and the environment its commands run in."""

    name: str
    root: Path
    env: dict[str, str]
    fresh: Path  # a repository holding the demo's project and plan, never run
    demo: Path  # the demo's repository, after the demo's run

    def taskhand(self, *args: str) -> list[str]:
        """The command line the installed script amounts to: import the entry point, call it."""
        scripts = tomllib.loads((self.root / "pyproject.toml").read_text())["project"]["scripts"]
        module, function = scripts["taskhand"].split(":")
        code = f"import sys; from {module} import {function}; sys.argv[0] = 'taskhand'; "
        return [sys.executable, "-c", code + f"sys.exit({function}())", *args]


def prepare(name: str, root: Path, folder: Path) -> Tree:
    """`root`'s environment with its own state home, a fresh copy of the demo's plan in a
    repository, and the demo built and run."""
    env = {**os.environ, "TASKHAND_HOME": str(folder / name / "home")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root / "src"), env.get("PYTHONPATH")]))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
    tree = Tree(name, root, env, folder / name / "fresh", folder / name / "demo" / "wordcount")
    assets = root / "src" / "taskhand" / "demo" / "wordcount"
    shutil.copytree(assets / "project", tree.fresh)
    shutil.copytree(assets / "plan", tree.fresh / "plan")
    for argv in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "plan"]):
        subprocess.run([*GIT, "-C", str(tree.fresh), *argv], check=True, capture_output=True)
    done = subprocess.run(
        tree.taskhand("demo", "--dir", str(tree.demo.parent)),
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"{name}: the demo failed (exit {done.returncode}):\n{done.stderr}")
    return tree


def commands(tree: Tree, folder: Path) -> dict[str, tuple[list[str], Path]]:
    """Each measured command of `tree`: its argv and the folder it runs in."""
    found = {
        BASE: ([sys.executable, "-c", "pass"], tree.fresh),
        CLICK: ([sys.executable, "-c", "import click"], tree.fresh),
        "--help": (tree.taskhand("--help"), tree.fresh),
        "validate": (tree.taskhand("validate", "plan"), tree.fresh),
        "show": (tree.taskhand("show", "plan"), tree.fresh),
        "next": (tree.taskhand("next", "plan"), tree.fresh),
        "show, after a run": (tree.taskhand("show", "plan"), tree.demo),
        "next, after a run": (tree.taskhand("next", "plan"), tree.demo),
    }
    for dialect in plans.DIALECTS:
        argv = tree.taskhand("validate", str(folder / f"big-{dialect}"))
        found[f"validate 10k {dialect}"] = (argv, folder)
    return found


def run_once(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run (CPU: the child's user + system time)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 3):  # 3: `next` found no eligible task (the demo ran it all)
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu


def heaviest_imports(argv: list[str], cwd: Path, env: dict[str, str], top: int) -> list[str]:
    """`python -X importtime` of one run: the import time per top-level package, heaviest
    first (each module's own time, summed over the package)."""
    done = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]], cwd=cwd, env=env, capture_output=True, text=True
    )
    per_package: dict[str, int] = {}
    modules = 0
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        own, _, name = line[len("import time:") :].split("|")
        package = name.strip().split(".")[0]
        per_package[package] = per_package.get(package, 0) + int(own)
        modules += 1
    total = sum(per_package.values())
    lines = [f"  {modules} modules imported in {total / 1e3:.1f} ms; heaviest packages:"]
    heaviest = sorted(per_package.items(), key=lambda item: -item[1])[:top]
    lines += [f"  {us / 1e3:>8.1f} ms {name}" for name, us in heaviest]
    return lines


def figures(walls: list[float], cpus: list[float]) -> dict[str, float]:
    return {
        "best_ms": min(walls) * 1e3,
        "median_ms": statistics.median(walls) * 1e3,
        "cpu_ms": min(cpus) * 1e3,
    }


def measure(runs: int, baseline: Path | None, importtime: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="taskhand-startup-") as tmp:
        folder = Path(tmp)
        shape = plans.generate(BIG)
        plans.write_markdown(shape, folder / "big-markdown")
        plans.write_tasktrack(shape, folder / "big-tasktrack")
        trees = [prepare("now", ROOT, folder)]
        if baseline is not None:
            trees.append(prepare("baseline", baseline.resolve(), folder))
        table = {tree.name: commands(tree, folder) for tree in trees}
        times: dict[tuple[str, str], tuple[list[float], list[float]]] = {}
        for tree in trees:  # warm the file cache and write the byte code
            for argv, cwd in table[tree.name].values():
                run_once(argv, cwd, tree.env)
        for _ in range(runs):  # the trees take turns, so both see the same machine load
            for name in table["now"]:
                for tree in trees:
                    argv, cwd = table[tree.name][name]
                    wall, cpu = run_once(argv, cwd, tree.env)
                    walls, cpus = times.setdefault((tree.name, name), ([], []))
                    walls.append(wall)
                    cpus.append(cpu)
        result: dict[str, Any] = {"runs": runs, "python": sys.version.split()[0]}
        for tree in trees:
            rows = {name: figures(*times[(tree.name, name)]) for name in table[tree.name]}
            if importtime and tree.name == "now":
                for name, (argv, cwd) in table["now"].items():
                    if name not in (BASE, CLICK):
                        rows[name]["imports"] = heaviest_imports(argv, cwd, tree.env, importtime)
            result[tree.name] = rows
    return result


def render(data: dict[str, Any]) -> str:
    rows, then = data["now"], data.get("baseline")
    base = rows[BASE]["best_ms"]
    click = rows[CLICK]["best_ms"]
    head = f"{'command':<24} {'best ms':>8} {'median ms':>9} {'cpu ms':>7} {'x python':>8}"
    head += f" {'x click':>7}"
    if then:
        head += f" {'baseline ms':>11} {'now/baseline':>12}"
    lines = [head, "-" * len(head)]
    for name, row in rows.items():
        line = f"{name:<24} {row['best_ms']:>8.1f} {row['median_ms']:>9.1f} {row['cpu_ms']:>7.1f} "
        line += f"{row['best_ms'] / base:>8.2f} {row['best_ms'] / click:>7.2f}"
        if then:
            earlier = then[name]["best_ms"]
            line += f" {earlier:>11.1f} {row['best_ms'] / earlier:>12.2f}"
        lines.append(line)
        lines += row.get("imports", [])
    lines += [
        "",
        f"best and median wall time, and best CPU time, of {data['runs']} cold processes each, "
        "after one warm-up" + ("; the trees ran in turn." if then else "."),
        verdict(data),
    ]
    return "\n".join(lines)


def verdict(data: dict[str, Any]) -> str:
    rows, then = data["now"], data.get("baseline")
    big = {d: rows[f"validate 10k {d}"]["best_ms"] / 1e3 for d in plans.DIALECTS}
    ok = all(seconds < BIG_SECONDS for seconds in big.values())
    shown = ", ".join(f"{d} {s:.3f} s" for d, s in big.items())
    line = f"10k-task validate under {BIG_SECONDS:.0f} s: {'holds' if ok else 'MISSED'} ({shown})"
    click = rows[CLICK]["best_ms"]
    ratios = {c: rows[c]["best_ms"] / click for c in ("validate", "show", "show, after a run")}
    fast = all(r <= CLICK_TARGET for r in ratios.values())
    shown = ", ".join(f"{c} {r:.2f}x" for c, r in ratios.items())
    line += f"\nvalidate and show (fresh, after a run) within {CLICK_TARGET}x of importing click: "
    line += f"{'holds' if fast else 'MISSED'} ({shown})"
    if then:
        worst = max(rows[c]["best_ms"] / then[c]["best_ms"] for c in PLAN_COMMANDS)
        half = "holds" if worst <= 0.5 else "MISSED"
        line += f"; --help, validate, show, next in at most half the baseline's time: {half}"
        line += f" (worst {worst:.2f})"
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--baseline", type=Path, help="another checkout to measure in turn")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--importtime",
        type=int,
        nargs="?",
        const=8,
        default=0,
        metavar="TOP",
        help="also print each command's TOP heaviest imported packages (default 8)",
    )
    args = parser.parse_args()
    data = measure(args.runs, args.baseline, args.importtime)
    print(json.dumps(data, indent=2) if args.json else render(data))


if __name__ == "__main__":
    main()
