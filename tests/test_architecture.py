"""The package's shape: imports point down the layers and no module imports itself back through others."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "dralloc"

# A package may import itself and the packages listed after it; the edges (cli, server, store) may import
# any core package; the core never imports an edge. The simulator sits on the controllers and the scheduler
# framework; the framework knows neither. The trace replay sits on the simulator.
CORE_ORDER = ["trace", "simulator", "controllers", "scheduler", "allocator", "resources", "validation", "cel",
              "api"]
EDGES = {"cli", "server", "store"}
ALLOWED: dict[str, set[str]] = {pkg: set(CORE_ORDER[i:]) for i, pkg in enumerate(CORE_ORDER)}
ALLOWED["validation"] = {"validation", "cel", "api", "resources"}
ALLOWED["resources"] = {"resources", "api"}
ALLOWED["cel"] = {"cel", "api"}
ALLOWED["store"] = {"store", "api", "validation", "errors"}
ALLOWED["server"] = {"server", "store", *CORE_ORDER}
ALLOWED["cli"] = {"cli", "server", "store", *CORE_ORDER}
SHARED = {"errors", "__init__", "__main__"}  # dralloc/errors.py and the top-level modules
# The one upward reference allowed: dralloc.scheduler still answers for the names the simulator had there
# (``from dralloc.scheduler import Scheduler``), resolved lazily.
COMPATIBILITY = {("dralloc.scheduler", "dralloc.simulator.result"), ("dralloc.scheduler", "dralloc.simulator.simulator")}


def _module_name(path: Path) -> str:
    parts = list(path.with_suffix("").parts)
    parts = parts[len(parts) - 1 - parts[::-1].index("dralloc"):]  # from the last "dralloc" directory on
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, *, type_checking: bool = True) -> set[str]:
    """Every dralloc module the file imports, at any depth: function-level imports count, and so do imports
    under ``if TYPE_CHECKING:`` unless ``type_checking`` is False (an annotation that needs a module above, or
    one that closes a circle, is the same tangle as a run-time import)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if not type_checking:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                node.body = []
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("dralloc"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.startswith("dralloc"):
                found.add(mod)
                found.update(f"{mod}.{a.name}" for a in node.names)
    return found


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in SRC.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        runtime = _imports(path, type_checking=False)
        annotations = _imports(path) - runtime
        graph[name] = {m for m in runtime | annotations if m in modules and m != name}
    return graph


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


@pytest.mark.slow
def test_imports_point_down_the_layers() -> None:
    wrong = []
    for module, targets in _graph().items():
        pkg = _package(module)
        if pkg in SHARED:
            continue
        for target in targets:
            tpkg = _package(target)
            if tpkg in SHARED or tpkg in ALLOWED.get(pkg, set()) or (module, target) in COMPATIBILITY:
                continue
            wrong.append(f"{module} imports {target}")
    assert not wrong, "\n".join(sorted(wrong))


@pytest.mark.slow
def test_the_core_never_imports_an_edge() -> None:
    for module, targets in _graph().items():
        if _package(module) in EDGES or _package(module) in SHARED:
            continue
        assert not [t for t in targets if _package(t) in EDGES], module


def test_type_checking_imports_count(tmp_path: Path) -> None:
    """The graph sees imports made only for the type checker (so a circle through annotations is found)."""
    package = tmp_path / "dralloc" / "api"
    package.mkdir(parents=True)
    probe = package / "probe.py"
    probe.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from dralloc.api.meta import ObjectMeta\n",
                     encoding="utf-8")
    assert "dralloc.api.meta" in _imports(probe)
    assert "dralloc.api.meta" not in _imports(probe, type_checking=False)


@pytest.mark.slow
def test_no_import_cycles() -> None:
    graph = _graph()
    # A cycle through function-level or TYPE_CHECKING imports is still a tangle, so those count too. A module
    # importing its own package's __init__ is not an edge.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if v.startswith(w + "."):  # a module importing its own package's __init__
                continue
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
                cycles.append(sorted(component))

    import sys

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert not cycles, "\n".join(" <-> ".join(c) for c in cycles)


# Module-level containers the core fills while it runs would be state shared by every caller in the process.
# A pure function's memo is an ``functools.lru_cache`` (bounded, keyed by value); a cache of anything else
# belongs to the object whose life matches its data. Allowed, each with its reason:
MODULE_STATE_ALLOWED = {
    # the CEL function library: filled once, at import, by the @member/@function decorators; never after
    ("dralloc.cel.library.registry", "GLOBALS"), ("dralloc.cel.library.registry", "MEMBERS"),
    ("dralloc.cel.library.registry", "RESULT_TYPES"),
    # a bounded memo of pure key checks by value (what an lru_cache would hold), kept as a set per check so
    # that all the keys of a map are looked up with one subset comparison (every ResourceSlice write)
    ("dralloc.validation.resource.lists", "_GOOD_KEYS"),
}
_CONTAINER_CALLS = {"dict", "list", "set", "defaultdict", "OrderedDict", "Counter", "deque", "WeakKeyDictionary",
                    "WeakValueDictionary", "WeakSet"}
_MUTATORS = {"clear", "append", "extend", "insert", "update", "setdefault", "pop", "popitem", "add", "discard",
             "remove", "appendleft", "popleft"}


def _module_containers(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        if value is None:
            continue
        container = isinstance(value, (ast.Dict, ast.List, ast.Set)) or (
            isinstance(value, ast.Call) and (getattr(value.func, "id", None) or getattr(value.func, "attr", None))
            in _CONTAINER_CALLS)
        if container:
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _mutated_in_functions(tree: ast.Module, names: set[str]) -> set[str]:
    found: set[str] = set()
    for func in ast.walk(tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(func):
            if isinstance(node, ast.Global):
                found.update(n for n in node.names)
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
                if isinstance(node.value, ast.Name) and node.value.id in names:
                    found.add(node.value.id)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                target = node.func.value
                if isinstance(target, ast.Name) and target.id in names and node.func.attr in _MUTATORS:
                    found.add(target.id)
    return found


def module_state(path: Path) -> set[str]:
    """The module-level names of ``path`` that a function changes: containers it fills or empties, and any
    name a ``global`` statement rebinds."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return _mutated_in_functions(tree, _module_containers(tree))


def test_module_state_is_found(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("_CACHE: dict[str, int] = {}\nSEEN = set()\nTABLE = {'a': 1}\n"
                     "def f(k):\n    _CACHE[k] = 1\n    SEEN.add(k)\n    return TABLE[k]\n", encoding="utf-8")
    assert module_state(probe) == {"_CACHE", "SEEN"}


def test_the_core_keeps_no_module_state() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        module = _module_name(path)
        if _package(module) in EDGES:
            continue
        found += [f"{module}.{name}" for name in sorted(module_state(path))
                  if (module, name) not in MODULE_STATE_ALLOWED]
    assert not found, "module-level state in the core: " + ", ".join(found)
