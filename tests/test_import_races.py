"""Threads that import gpu_advisor at the same time: a package whose ``__init__`` imports its own submodules races a
thread that imports one of those submodules directly, and CPython 3.11 / 3.12 raise ``_DeadlockError`` (or hand out
a partially initialised module) in one of them (gh-83065). With gpu_advisor.costing and gpu_advisor.memory eager (before gpu_advisor.util.lazy),
19 of 80 fresh processes of eight threads importing the entries below failed that way; lazy, 0 of 241."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"gpu_advisor": ROOT / "engine", "gpu_advisor.server": ROOT / "server"}
ENTRIES = ["from gpu_advisor import recommend", "from gpu_advisor import estimate_memory",
           "import gpu_advisor.memory.core", "import gpu_advisor.costing.timing", "from gpu_advisor import Workload",
           "import gpu_advisor.costing", "import gpu_advisor.memory", "from gpu_advisor.ask import answer_question",
           "import gpu_advisor.plan.planner", "import gpu_advisor.rules.engine", "import gpu_advisor.kb.catalog",
           "import gpu_advisor.answer.assemble"]
RACE = """
import random, sys, threading
entries = {entries!r}
rng = random.Random(int(sys.argv[1]))
picked = [rng.choice(entries) for _ in range(8)]
barrier, errors = threading.Barrier(len(picked)), []

def run(statement):
    barrier.wait()
    try:
        exec(statement, {{}})
    except BaseException as exc:
        errors.append(f"{{statement}}: {{type(exc).__name__}}: {{exc}}")

threads = [threading.Thread(target=run, args=(s,)) for s in picked]
for t in threads: t.start()
for t in threads: t.join()
print(errors)
sys.exit(1 if errors else 0)
"""


def _package_inits() -> list[tuple[str, Path]]:
    out = []
    for name, root in PACKAGES.items():
        for init in root.rglob("__init__.py"):
            parts = init.relative_to(root).parent.parts
            out.append((".".join([name, *parts]), init))
    return out


def _eager_submodule_imports(package: str, init: Path) -> list[str]:
    """Module-level imports (outside ``if TYPE_CHECKING:``) of the package's own submodules."""
    found = []
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level > 0 or module.startswith(package + "."):
                found.append(ast.unparse(node))
            elif module == package:
                found.append(ast.unparse(node))  # from the package itself: a submodule or an export
        elif isinstance(node, ast.Import):
            found += [ast.unparse(node) for alias in node.names if alias.name.startswith(package + ".")]
    return found


def test_no_package_init_imports_its_own_submodules() -> None:
    inits = _package_inits()
    assert {"gpu_advisor", "gpu_advisor.costing", "gpu_advisor.memory", "gpu_advisor.ask"} <= {p for p, _ in inits}
    eager = {package: found for package, init in inits if (found := _eager_submodule_imports(package, init))}
    assert not eager, f"export these lazily (PEP 562 __getattr__, as gpu_advisor.costing does): {eager}"


def test_the_check_sees_an_eager_init(tmp_path: Path) -> None:
    init = tmp_path / "__init__.py"
    init.write_text("from gpu_advisor.costing.models import Range\nfrom typing import Any\n", encoding="utf-8")
    assert _eager_submodule_imports("gpu_advisor.costing", init) == ["from gpu_advisor.costing.models import Range"]


def test_threads_importing_the_package_at_once() -> None:
    """Six fresh processes, eight threads each, importing the entries above at the same moment (seeded picks)."""
    script = RACE.format(entries=ENTRIES)
    for seed in range(6):
        done = subprocess.run([sys.executable, "-c", script, str(seed)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (seed, done.stdout[-1500:], done.stderr[-1500:])
