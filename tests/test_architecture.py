"""The package's arrows, read from its source: which folder may import which.

Every import counts, at the top of a module, inside a function (a lazy import is still an
arrow) or under `if TYPE_CHECKING:`. docs/architecture.md explains the layers.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "taskhand"

# Top to bottom: a folder or leaf module imports from its own layer or the layers below it,
# never from one above. Siblings in a layer may import each other, but not in a cycle.
# `__init__` is the package's own module (its version).
LAYERS: list[tuple[str, ...]] = [
    ("__main__", "cli", "board", "demo"),
    ("run", "views"),
    ("pipeline",),
    ("agents", "gates", "prompts", "delivery"),
    ("workspace", "state", "host"),
    ("config", "settings"),  # settings.py is being merged into config.py
    ("plan",),
    ("unit", "errors", "text", "__init__"),
]
BASE = {"unit", "errors", "text", "__init__"}  # import nothing of taskhand
PLAN_MAY_IMPORT = {"plan", "errors", "text"}
MAX_LEAF_MODULES = 8
MAX_LINES = 400


@dataclass(frozen=True)
class Arrow:
    """One import of one module of the package by another."""

    source: str  # dotted module names: taskhand.plan.model
    target: str
    file: str  # the importer's path, as the report shows it
    line: int
    typing_only: bool  # under `if TYPE_CHECKING:`: no import at run time

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.source} imports {self.target}"


def module_name(root: Path, path: Path) -> str:
    parts = [root.name, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path) -> dict[str, Path]:
    return {module_name(root, path): path for path in sorted(root.rglob("*.py"))}


def unit_of(module: str) -> str:
    """The folder or leaf module a module belongs to, as the layer table names it."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def arrows(root: Path, shown_from: Path | None = None) -> list[Arrow]:
    """Every import of the package's own modules by its modules, in file and line order."""
    known = modules(root)
    found = []
    for source, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        guarded = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and _is_type_checking(node.test)
            for statement in node.body
            for inner in ast.walk(statement)
        }
        file = str(path.relative_to(shown_from or root.parent))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for target in _targets(node, source, path.name == "__init__.py", known):
                    if target.split(".")[0] == root.name:
                        found.append(Arrow(source, target, file, node.lineno, id(node) in guarded))
    return sorted(found, key=lambda a: (a.file, a.line, a.target))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _targets(
    node: ast.Import | ast.ImportFrom, source: str, is_package: bool, known: dict[str, Path]
) -> list[str]:
    """The modules an import loads: `from a import b` is module a.b when there is one, else a."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = source.split(".") if is_package else source.split(".")[:-1]
        package = package[: len(package) - node.level + 1]
        base = ".".join([*package, base] if base else package)
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]


def layer_of(unit: str) -> int | None:
    """The unit's layer, 0 the top; None for a unit the table lacks (a test says so)."""
    return next((i for i, layer in enumerate(LAYERS) if unit in layer), None)


def find_cycle(edges: dict[str, dict[str, Arrow]]) -> list[Arrow]:
    """The arrows of one cycle of the graph, or [] when it has none."""
    done: set[str] = set()
    nodes: list[str] = []  # the path being explored
    path: list[Arrow] = []  # path[i] leads from nodes[i] to nodes[i + 1]

    def visit(node: str) -> list[Arrow]:
        nodes.append(node)
        for target, arrow in sorted(edges.get(node, {}).items()):
            if target in nodes:
                return [*path[nodes.index(target) :], arrow]
            if target not in done:
                path.append(arrow)
                if cycle := visit(target):
                    return cycle
                path.pop()
        nodes.pop()
        done.add(node)
        return []

    for node in sorted(edges):
        if node not in done and (cycle := visit(node)):
            return cycle
    return []


def module_cycle(found: list[Arrow]) -> list[Arrow]:
    """A cycle of imports between modules; typing-only imports cannot make one at run time."""
    edges: dict[str, dict[str, Arrow]] = {}
    for arrow in found:
        if not arrow.typing_only and arrow.source != arrow.target:
            edges.setdefault(arrow.source, {}).setdefault(arrow.target, arrow)
    return find_cycle(edges)


def unit_cycle(found: list[Arrow]) -> list[Arrow]:
    """A cycle between folders (and leaf modules), through imports of any kind."""
    edges: dict[str, dict[str, Arrow]] = {}
    for arrow in found:
        source, target = unit_of(arrow.source), unit_of(arrow.target)
        if source != target:
            edges.setdefault(source, {}).setdefault(target, arrow)
    return find_cycle(edges)


def upward(found: list[Arrow]) -> list[Arrow]:
    """Imports of a unit of a higher layer than the importer's."""
    bad = []
    for arrow in found:
        source, target = layer_of(unit_of(arrow.source)), layer_of(unit_of(arrow.target))
        if source is not None and target is not None and target < source:
            bad.append(arrow)
    return bad


def forbidden(found: list[Arrow]) -> list[Arrow]:
    """Imports the table alone does not forbid: plan/ beyond plan, errors and text; the base
    leaves importing anything of ours; anything but the entry point importing cli/."""
    bad = []
    for arrow in found:
        source, target = unit_of(arrow.source), unit_of(arrow.target)
        if source == target:
            continue
        if (
            (source == "plan" and target not in PLAN_MAY_IMPORT)
            or source in BASE
            or (target == "cli" and source != "__main__")
        ):
            bad.append(arrow)
    return bad


def report(found: list[Arrow]) -> str:
    return "\n".join(str(arrow) for arrow in found)


ARROWS = arrows(PACKAGE, shown_from=PACKAGE.parents[1])


def test_the_walk_sees_the_package() -> None:
    # An empty walk would pass every rule below.
    assert len(modules(PACKAGE)) > 40
    assert any(a.target == "taskhand.plan.model" for a in ARROWS)


def test_every_folder_and_leaf_module_has_a_layer() -> None:
    placed = {unit for layer in LAYERS for unit in layer}
    units = {unit_of(name) for name in modules(PACKAGE)}
    missing = sorted(units - placed)
    assert not missing, f"add {missing} to LAYERS in tests/test_architecture.py and the doc"


def test_no_import_cycle_between_modules() -> None:
    cycle = module_cycle(ARROWS)
    if cycle:
        pytest.fail("import cycle:\n" + report(cycle))


def test_no_cycle_between_folders() -> None:
    cycle = unit_cycle(ARROWS)
    if cycle:
        pytest.fail("folders import each other:\n" + report(cycle))


def test_arrows_point_down_the_layers() -> None:
    found = upward(ARROWS)
    if found:
        pytest.fail("imports of a higher layer:\n" + report(found))


def test_plan_and_the_base_leaves_stand_alone_and_nothing_imports_the_cli() -> None:
    found = forbidden(ARROWS)
    if found:
        pytest.fail("forbidden imports:\n" + report(found))


def test_the_top_level_holds_folders_and_a_few_leaf_modules() -> None:
    leaves = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(leaves) <= MAX_LEAF_MODULES, f"{len(leaves)} leaf modules: {leaves}"


def test_no_module_is_over_400_lines() -> None:
    long = {
        str(path.relative_to(PACKAGE.parents[1])): lines
        for path in modules(PACKAGE).values()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"split these into modules of one concept each: {long}"


# The rules on a package made up for them, so that each can be seen to fail.


@pytest.fixture
def fake(tmp_path: Path) -> Path:
    """A package `taskhand` of a few modules; each test adds the import it needs."""
    root = tmp_path / "taskhand"
    for name in ("__init__.py", "unit.py", "plan/__init__.py", "plan/model.py", "run/loop.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text('"""A module."""\n')
    return root


def write(root: Path, name: str, text: str) -> None:
    (root / name).write_text(text)


def test_a_lazy_import_of_a_higher_layer_is_named_by_file_and_line(fake: Path) -> None:
    write(fake, "plan/model.py", "def f():\n    from taskhand.run import loop\n")
    [arrow] = upward(arrows(fake))
    assert str(arrow) == "taskhand/plan/model.py:2: taskhand.plan.model imports taskhand.run.loop"
    assert forbidden(arrows(fake)) == [arrow]


def test_only_the_entry_point_imports_the_cli_and_the_base_imports_nothing(fake: Path) -> None:
    (fake / "cli").mkdir()
    write(fake, "cli/main.py", "from taskhand.run import loop\n")
    write(fake, "__main__.py", "from taskhand.cli.main import main\n")
    write(fake, "run/loop.py", "import taskhand.cli.main\n")
    write(fake, "unit.py", "from taskhand import plan\n")
    assert [str(a) for a in forbidden(arrows(fake))] == [
        "taskhand/run/loop.py:1: taskhand.run.loop imports taskhand.cli.main",
        "taskhand/unit.py:1: taskhand.unit imports taskhand.plan",
    ]


def test_a_relative_import_resolves_to_the_module(fake: Path) -> None:
    write(fake, "plan/__init__.py", "from . import model\nfrom ..unit import X\n")
    assert [a.target for a in arrows(fake)] == ["taskhand.plan.model", "taskhand.unit"]


def test_a_cycle_is_named_arrow_by_arrow(fake: Path) -> None:
    write(fake, "plan/__init__.py", "import taskhand.plan.model\n")
    write(fake, "plan/model.py", "x = 1\n\n\ndef f():\n    from taskhand.plan import Y\n")
    assert [str(a) for a in module_cycle(arrows(fake))] == [
        "taskhand/plan/__init__.py:1: taskhand.plan imports taskhand.plan.model",
        "taskhand/plan/model.py:5: taskhand.plan.model imports taskhand.plan",
    ]


def test_a_typing_only_import_makes_no_module_cycle_but_still_points(fake: Path) -> None:
    write(fake, "plan/__init__.py", "from taskhand.plan import model\n")
    guarded = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from taskhand import plan\n"
    write(fake, "plan/model.py", guarded)
    write(fake, "unit.py", guarded.replace("taskhand import plan", "taskhand.run import loop"))
    assert module_cycle(arrows(fake)) == []
    assert [str(a) for a in upward(arrows(fake))] == [
        "taskhand/unit.py:3: taskhand.unit imports taskhand.run.loop"
    ]


def test_folders_that_import_each_other_form_a_cycle(fake: Path) -> None:
    (fake / "state").mkdir()
    write(fake, "state/store.py", "from taskhand.workspace import git\n")
    (fake / "workspace").mkdir()
    write(fake, "workspace/git.py", "def f():\n    from taskhand.state import store\n")
    assert [(a.source, a.line) for a in unit_cycle(arrows(fake))] == [
        ("taskhand.state.store", 1),
        ("taskhand.workspace.git", 2),
    ]
