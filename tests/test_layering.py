"""The house's plan, read from the code's own imports (README, "Layout").

- the engine (``engine/`` = ``gpu_advisor``) imports neither adapter (``gpu_advisor.cli``, ``gpu_advisor.server``);
- the adapters do not import each other, except the CLI's ``serve`` command, which starts the server;
- no import circle among the modules of the engine or of an adapter.

Every import counts, at module level or inside a function; only ``if TYPE_CHECKING:`` blocks do not (they never run).
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOTS = {"engine": "gpu_advisor", "server": "gpu_advisor.server", "cli": "gpu_advisor.cli"}
ADAPTERS = ("gpu_advisor.cli", "gpu_advisor.server")
ALLOWED = {("gpu_advisor.cli.commands", "gpu_advisor.server.app")}  # `gpu-advisor serve`


def _modules() -> dict[str, Path]:
    mods = {}
    for folder, package in ROOTS.items():
        for path in sorted((REPO / folder).rglob("*.py")):
            rel = path.relative_to(REPO / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            mods[".".join([package, *parts])] = path
    return mods


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []

    def walk(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for other in child.orelse:
                    walk(other)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append(child)
            walk(child)

    walk(tree)
    return found


def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    graph: dict[str, set[str]] = {name: set() for name in mods}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                # `from pkg import submodule` is an arrow to the submodule, not to pkg/__init__
                subs = [f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in mods]
                targets = subs if len(subs) == len(node.names) else [module, *subs]
            for target in targets:
                while target and target not in mods:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def _adapter(name: str) -> str | None:
    return next((a for a in ADAPTERS if name == a or name.startswith(a + ".")), None)


def test_the_engine_imports_no_adapter() -> None:
    bad = sorted(f"{m} -> {t}" for m, ts in import_graph().items() if _adapter(m) is None
                 for t in ts if _adapter(t) is not None)
    assert not bad, "the engine imports an adapter:\n" + "\n".join(bad)


def test_adapters_do_not_import_each_other() -> None:
    bad = sorted(f"{m} -> {t}" for m, ts in import_graph().items() for t in ts
                 if _adapter(m) and _adapter(t) and _adapter(m) != _adapter(t) and (m, t) not in ALLOWED)
    assert not bad, "one adapter imports the other:\n" + "\n".join(bad)


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circles() -> None:
    found = circles(import_graph())
    assert not found, "import circles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_checker_sees_a_circle() -> None:
    """The checks above can fail: a two-module circle and an engine->adapter arrow are reported."""
    assert circles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    graph = import_graph()
    assert "gpu_advisor.advisor" in graph and "gpu_advisor.answer.assemble" in graph["gpu_advisor.advisor"]
    assert ("gpu_advisor.server.app" in graph["gpu_advisor.cli.commands"]), "the serve command's arrow is seen"


def test_every_package_ships() -> None:
    """Each folder of the engine and the adapters is a package listed in pyproject.toml (else `pip install .` drops it)."""
    import tomllib

    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    packages = {name for name, path in _modules().items() if path.name == "__init__.py"}
    assert packages <= listed, sorted(packages - listed)
