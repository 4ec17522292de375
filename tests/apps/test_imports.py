"""The package's import graph: no cycles, and each layer imports only the layers below it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import simrl
import simrl.envs

PACKAGE = Path(simrl.__file__).parent
TASKS = Path(simrl.envs.__file__).parent  # the checkout's envs/ (a wheel's simrl/envs)


def _module(path: Path, root: Path, prefix: tuple[str, ...]) -> str:
    parts = (*prefix, *path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """simrl module (its tasks as simrl.envs.*) -> the simrl modules it imports, at any depth of
    its code (lazy imports in functions count: they are dependencies too), but not under
    `if TYPE_CHECKING:`."""
    files = {_module(p, PACKAGE.parent, ()): p for p in PACKAGE.rglob("*.py")}
    files |= {_module(p, TASKS, ("simrl", "envs")): p for p in TASKS.rglob("*.py")}
    graph = {}
    for name, path in files.items():
        tree = ast.parse(path.read_text())
        skip = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING"
                for n in ast.walk(node)}
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps = set()
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                deps |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                deps |= {base, *(f"{base}.{a.name}" for a in node.names)}
        graph[name] = {d for d in deps if d in files and d != name}
    return graph


def test_graph_sees_the_imports():
    graph = import_graph()
    assert "simrl.env" in graph["simrl.rl.vecenv"]  # a module-level import
    assert "simrl.rl.learnbench" in graph["simrl.bench.cli"]  # one inside a function
    assert "simrl.env" in graph["simrl.envs.locomotion.cfg"]  # the tasks are in the graph
    assert "simrl.envs" in graph["simrl.registry"]


def test_the_library_finds_its_tasks_only_by_the_registry_table():
    """The tasks import the library, never the reverse: only simrl.registry reads simrl.envs,
    and only its name table (the task modules load by name, from strings)."""
    graph = import_graph()
    wrong = {m: sorted(d for d in deps if d.startswith("simrl.envs"))
             for m, deps in graph.items() if not m.startswith("simrl.envs") and m != "simrl.registry"}
    assert not any(wrong.values()), wrong
    assert graph["simrl.registry"] & {d for d in graph if d.startswith("simrl.envs")} == {"simrl.envs"}
    assert graph["simrl.envs"] == set(), "the task table is plain strings (imports no code)"


def test_no_import_cycles_below_the_package_facade():
    """`simrl/__init__.py` re-exports the apps (a facade over every layer); no module imports it
    back, and no two modules import each other through any chain."""
    graph = import_graph()
    importers = sorted(m for m, deps in graph.items() if "simrl" in deps)
    assert importers == [], f"these import the package facade (use simrl.paths, simrl.<module>): {importers}"
    state: dict[str, int] = {}

    def visit(m: str, chain: list[str]) -> None:
        state[m] = 1
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                pytest.fail("import cycle: " + " -> ".join(chain[chain.index(d):] + [d]))
            if d not in state:
                visit(d, [*chain, d])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])


@pytest.mark.parametrize("layer, above", [
    ("simrl.sim", ("simrl.env", "simrl.rl", "simrl.registry", "simrl.api", "simrl.scene")),
    ("simrl.terrain", ("simrl.env", "simrl.rl", "simrl.registry", "simrl.api")),
    ("simrl.scene", ("simrl.env", "simrl.rl", "simrl.registry", "simrl.api")),
    ("simrl.managers", ("simrl.mdp", "simrl.env", "simrl.rl", "simrl.registry", "simrl.api", "simrl.config")),
    ("simrl.mdp", ("simrl.env", "simrl.rl", "simrl.registry", "simrl.api", "simrl.config")),
    ("simrl.env", ("simrl.rl", "simrl.registry", "simrl.api", "simrl.config")),
    ("simrl.envs", ("simrl.rl", "simrl.registry", "simrl.api", "simrl.config", "simrl.bench", "simrl.cli")),
])
def test_lower_layers_import_nothing_above_them(layer, above):
    graph = import_graph()
    wrong = {m: sorted(d for d in deps if d.startswith(above)) for m, deps in graph.items()
             if m == layer or m.startswith(layer + ".")}
    assert not any(wrong.values()), wrong


def test_deploy_imports_nothing_of_simrl_but_itself():
    graph = import_graph()
    wrong = {m: sorted(d for d in deps if not d.startswith("simrl.deploy"))
             for m, deps in graph.items() if m.startswith("simrl.deploy")}
    assert not any(wrong.values()), wrong
