"""The layout itself: one-way imports between the package's layers, and a test tree pytest can
collect on a clean clone.

The package is layered ``core → models → {agents, microtasks} → report → study → cli`` (see
``docs/architecture.md``). These tests read every module's imports with :mod:`ast`, including
imports inside functions and under ``TYPE_CHECKING``, so a lazy import cannot hide an edge.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "slmbench"

#: layer of each top-level part; an import may only point to the same or a lower layer
LAYERS = {"core": 0, "models": 1, "agents": 2, "microtasks": 2, "report": 3, "study": 4,
          "cli": 5, "": 6}
HALVES = ("agents", "microtasks")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["slmbench", *parts])


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in SRC.rglob("*.py")}


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Every slmbench module ``name`` imports, resolved to a module of the tree."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            # `from pkg import sub` imports the submodule `pkg.sub` when there is one
            targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in known else module
                       for a in node.names]
        else:
            continue
        out.update(t for t in targets if t == "slmbench" or t.startswith("slmbench."))
    out.discard(name)
    return out


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    return {name: _imports(name, path, set(mods)) for name, path in mods.items()}


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next((c for c in children if c in graph), None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        comp.append(member)
                        if member == node:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_the_module_graph_has_no_cycle() -> None:
    assert _cycles(_graph()) == []


def test_the_subpackages_of_each_half_have_no_cycle() -> None:
    # agents.tools -> agents.tasks -> agents.tools would be a cycle between folders even when
    # no two modules import each other; the records module at the bottom of each half prevents it.
    folders: dict[str, set[str]] = {}
    for source, targets in _graph().items():
        a = ".".join(source.split(".")[:3])
        folders.setdefault(a, set()).update(".".join(t.split(".")[:3]) for t in targets)
    for k, v in folders.items():
        v.discard(k)
    assert _cycles(folders) == []


def test_imports_flow_one_way_and_the_halves_never_meet() -> None:
    wrong = []
    for source, targets in _graph().items():
        for target in targets:
            s, t = _part(source), _part(target)
            if s in HALVES and t in HALVES and s != t:
                wrong.append(f"{source} -> {target} (the two halves never import each other)")
            elif LAYERS.get(s, 6) < LAYERS.get(t, 6):
                wrong.append(f"{source} -> {target} (a lower layer imports a higher one)")
    assert wrong == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("init", sorted(SRC.rglob("__init__.py")), ids=lambda p: str(
    p.relative_to(SRC).parent) or "slmbench")
def test_every_package_names_its_public_surface(init: Path) -> None:
    tree = ast.parse(init.read_text(encoding="utf-8"))
    names = [t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
             if isinstance(t, ast.Name)]
    assert "__all__" in names, f"{init.relative_to(SRC)} has no __all__"


def test_no_test_imports_library_code_from_the_cli() -> None:
    # The CLI parses, calls and prints; anything a test needs lives in the library.
    offenders = []
    for path in Path(__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("slmbench.cli"):
                names = {a.name for a in node.names}
                if names - {"main", "app"}:
                    offenders.append(f"{path.name}: from {node.module} import {sorted(names)}")
    assert offenders == []


def test_test_module_names_are_unique() -> None:
    # Two tests/**/test_x.py files make collection fail with "import file mismatch" on a
    # clean clone, though each runs fine alone (a helper's tests/microtasks/test_store.py
    # once clashed with tests/test_store.py that way).
    names = Counter(p.name for p in Path(__file__).parent.rglob("*.py")
                    if p.name not in {"conftest.py", "__init__.py"})
    assert [n for n, k in names.items() if k > 1] == []


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def test_only_core_sqlite_imports_sqlite3() -> None:
    # every SQL statement lives in a store (agents/store.py, microtasks/store.py) over the one
    # connection core/sqlite.py opens; nothing else reaches into a store file
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(_tree(path)):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if "sqlite3" in names and path != SRC / "core" / "sqlite.py":
                offenders.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert offenders == []


def test_only_agents_exclusion_decides_which_trials_no_rate_counts() -> None:
    # agents/RULES.md: a rate that filtered on NOT_THE_MODELS itself would count an overflow
    # of a window we set too small as the model's failure
    offenders = [f"{path.relative_to(SRC)}:{node.lineno}"
                 for path in sorted(SRC.rglob("*.py"))
                 if path not in (SRC / "agents" / "records.py", SRC / "agents" / "exclusion.py")
                 for node in ast.walk(_tree(path))
                 if (isinstance(node, ast.Name) and node.id == "NOT_THE_MODELS")
                 or (isinstance(node, ast.alias) and node.name == "NOT_THE_MODELS")]
    assert offenders == []


def test_study_imports_at_module_level_and_never_uses_any() -> None:
    # study/ only composes the layers below it: every import it needs is at the top of its
    # module (no cycle forces one into a function), and every value has its real type
    offenders = []
    for path in sorted((SRC / "study").glob("*.py")):
        tree = _tree(path)
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                offenders += [f"{path.name}:{n.lineno}: import inside {fn.name}()"
                              for n in ast.walk(fn) if isinstance(n, ast.Import | ast.ImportFrom)]
        offenders += [f"{path.name}:{n.lineno}: Any" for n in ast.walk(tree)
                      if (isinstance(n, ast.Name) and n.id == "Any")
                      or (isinstance(n, ast.Attribute) and n.attr == "Any")
                      or (isinstance(n, ast.alias) and n.name == "Any")]
    assert sorted(set(offenders)) == []


def _stats_functions() -> set[str]:
    """The functions the package :mod:`slmbench.core.stats` defines, in any of its modules
    (its records are classes, not these)."""
    return {n.name for path in sorted((SRC / "core" / "stats").glob("*.py"))
            for n in ast.parse(path.read_text(encoding="utf-8")).body
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def _statistic_calls(source: str, functions: set[str]) -> list[str]:
    """Each call in ``source`` of one of ``functions`` of ``slmbench.core.stats``: by a name
    imported from it, or as an attribute of the module imported under any name."""
    tree = ast.parse(source)
    modules: set[str] = set()  # local names of the module
    names: dict[str, str] = {}  # local name -> the stats function it is
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "slmbench.core.stats"):
            names.update({a.asname or a.name: a.name for a in node.names if a.name in functions})
        elif isinstance(node, ast.ImportFrom) and node.module == "slmbench.core":
            modules.update(a.asname or a.name for a in node.names if a.name == "stats")
        elif isinstance(node, ast.Import):
            modules.update(a.asname for a in node.names
                           if a.name == "slmbench.core.stats" and a.asname)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id in names:
            found.append(f"line {node.lineno}: {names[f.id]}")
        elif (isinstance(f, ast.Attribute) and f.attr in functions
              and isinstance(f.value, ast.Name) and f.value.id in modules):
            found.append(f"line {node.lineno}: {f.attr}")
    return found


def test_report_calls_no_statistic() -> None:
    # report/RULES.md: every number report shows is read from a record another layer made
    functions = _stats_functions()
    calls = {str(p.relative_to(SRC)): found for p in sorted((SRC / "report").rglob("*.py"))
             if (found := _statistic_calls(p.read_text(encoding="utf-8"), functions))}
    assert calls == {}


def test_the_statistic_finder_finds_a_call() -> None:
    source = ("from slmbench.core import stats as s\nfrom slmbench.core.stats import wilson as w,"
              " Estimate\nw(1, 2)\ns.task_level_rate([])\nEstimate(estimate=0.5)\n")
    assert _statistic_calls(source, _stats_functions()) == ["line 3: wilson",
                                                            "line 4: task_level_rate"]


MAX_LINES = 400
#: modules over MAX_LINES lines, each with the reason it may be; issue #36: a module that long
#: holds one concern only (records, protocol, I/O, statistics or rendering)
LONG_MODULES = {
    "agents/loop/parse.py": "single-purpose: the action parser, one grammar and its readings",
    "agents/tasks/families/bind_capability_extra.py": "one concern: the binders of one suite "
        "file (suites/capability-extra.yaml), 31 small independent functions, one a family; "
        "split from bind_capability.py by suite file, as the package splits binders",
}


def test_no_module_is_over_400_lines_unless_listed_with_a_reason() -> None:
    lines = {str(p.relative_to(SRC)): len(p.read_text(encoding="utf-8").splitlines())
             for p in SRC.rglob("*.py")}
    long = {name for name, n in lines.items() if n > MAX_LINES}
    assert sorted(long - set(LONG_MODULES)) == [], "split it by concern, or list it with why"
    assert sorted(set(LONG_MODULES) - long) == [], "short again: drop it from LONG_MODULES"


# --- micro-tasks are handed down as objects (#36) ---------------------------------------------

REGISTRY = "slmbench.microtasks.tasks"
BUILT_IN_TASKS = {"approval", "memory", "tools", "ranking"}
#: where a task's facts are asked of the MicroTask handed in, never looked up or keyed by name
BELOW_THE_EDGE = ("microtasks", "report")


def _registry_aliases(tree: ast.AST) -> tuple[set[str], set[str]]:
    """The names a module binds to the registry module, and to its ``get``/``resolve``."""
    modules, functions = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.asname for a in node.names if a.name == REGISTRY and a.asname}
        elif isinstance(node, ast.ImportFrom) and node.module == "slmbench.microtasks":
            modules |= {a.asname or a.name for a in node.names if a.name == "tasks"}
        elif isinstance(node, ast.ImportFrom) and node.module == REGISTRY:
            functions |= {a.asname or a.name for a in node.names if a.name in {"get", "resolve"}}
    return modules, functions


def _registry_lookups(source: str, where: str) -> list[str]:
    """Each call of the registry's ``get`` or ``resolve`` in ``source``, however imported."""
    tree = ast.parse(source)
    modules, functions = _registry_aliases(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if (isinstance(f, ast.Attribute) and f.attr in {"get", "resolve"}
                and isinstance(f.value, ast.Name) and f.value.id in modules) or (
                isinstance(f, ast.Name) and f.id in functions):
            found.append(f"{where}:{node.lineno}: {ast.unparse(f)}(...)")
    return found


def _below_the_edge() -> list[Path]:
    registry = SRC / "microtasks" / "tasks" / "__init__.py"  # the registry itself
    return [p for part in BELOW_THE_EDGE for p in sorted((SRC / part).rglob("*.py"))
            if p != registry]


def test_nothing_below_the_edge_looks_a_micro_task_up_in_the_registry() -> None:
    # The CLI and the study look a task up once, by the name a user gave; Part B and the
    # report are handed the MicroTask (records keep its name).
    assert [hit for p in _below_the_edge() for hit in _registry_lookups(
        p.read_text(encoding="utf-8"), str(p.relative_to(SRC)))] == []


def test_the_lookup_check_sees_every_way_of_importing_the_registry() -> None:
    code = ("from slmbench.microtasks import tasks as registry\n"
            "import slmbench.microtasks.tasks as reg\n"
            "from slmbench.microtasks.tasks import get, resolve as pick\n"
            "registry.get('x')\nreg.resolve(['x'])\nget('x')\npick(None)\nstore.get('x')\n")
    assert [hit.split(": ", 1)[0] for hit in _registry_lookups(code, "m")] == [
        "m:4", "m:5", "m:6", "m:7"]


def _task_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and node.value in BUILT_IN_TASKS:
        return True
    return isinstance(node, ast.Tuple | ast.List | ast.Set) and any(
        isinstance(e, ast.Constant) and e.value in BUILT_IN_TASKS for e in node.elts)


def _shape(node: ast.AST) -> bool:
    """A task's ``shape`` (binary, choice, ranking): "ranking" there is a shape, not a name."""
    return (isinstance(node, ast.Attribute) and node.attr == "shape") or (
        isinstance(node, ast.Name) and node.id == "shape")


def _name_keys(source: str, where: str) -> list[str]:
    """Each comparison with, index by, or ``.get`` of a built-in task's name in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            hit = any(_task_literal(s) for s in sides) and not any(_shape(s) for s in sides)
        elif isinstance(node, ast.Subscript):  # by_task["tools"], not Literal["ranking", ...]
            hit = _task_literal(node.slice) and ast.unparse(node.value) != "Literal"
        elif isinstance(node, ast.Call):
            hit = (isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                   and bool(node.args) and _task_literal(node.args[0]))
        else:
            continue
        if hit:
            found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
    return sorted(found)


def test_no_code_below_the_edge_keys_on_a_built_in_tasks_name() -> None:
    # What differs per task is a field of its MicroTask (graded, restrict, widen, history...),
    # set in its own module; `task == "ranking"` or `registry.get("memory")` would hide a
    # task's fact outside its declaration. (The task modules themselves declare their name.)
    task_modules = set((SRC / "microtasks" / "tasks").glob("*.py"))
    assert [hit for p in _below_the_edge() if p not in task_modules
            for hit in _name_keys(p.read_text(encoding="utf-8"), str(p.relative_to(SRC)))] == []


def test_the_name_check_sees_the_three_forms() -> None:
    code = ('if task == "ranking": pass\nif "memory" in tasks: pass\nx = registry.get("tools")\n'
            'y = by_task["approval"]\nif spec.shape == "ranking": pass\n'
            'Shape = Literal["binary", "ranking"]\nif name in ("approval", "x"): pass\n')
    assert [hit.split(": ", 1)[0] for hit in _name_keys(code, "m")] == [
        "m:1", "m:2", "m:3", "m:4", "m:7"]


# --- the CLI only parses, calls and prints (#36) -------------------------------------------------

CLI_MAX_LINES = 120
WRITES = {"write_text", "write_bytes", "mkdir", "dump", "unlink"}


def _file_writes(source: str) -> list[str]:
    """Each call in ``source`` that writes a file: ``open`` for writing or appending, or a
    method in :data:`WRITES` (``Path.write_text``, ``json.dump``, ...)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in WRITES:
            found.append(f"line {node.lineno}: {f.attr}")
        elif isinstance(f, ast.Name) and f.id == "open":
            modes = [a.value for a in node.args[1:2] if isinstance(a, ast.Constant)]
            modes += [k.value.value for k in node.keywords
                      if k.arg == "mode" and isinstance(k.value, ast.Constant)]
            if any(isinstance(m, str) and set(m) & set("wax") for m in modes):
                found.append(f"line {node.lineno}: open")
    return found


def test_every_cli_command_module_is_short_and_writes_no_file() -> None:
    modules = sorted((SRC / "cli").glob("*.py"))
    long = {p.name: n for p in modules
            if (n := len(p.read_text(encoding="utf-8").splitlines())) >= CLI_MAX_LINES}
    writes = {p.name: w for p in modules if (w := _file_writes(p.read_text(encoding="utf-8")))}
    assert (long, writes) == ({}, {})


def test_the_write_finder_finds_writes() -> None:
    source = ("p.write_text('x')\nopen(p, 'a')\nopen(p)\njson.dump(x, f)\n"
              "open(p, mode='w')\np.read_text()\n")
    assert _file_writes(source) == ["line 1: write_text", "line 2: open", "line 4: dump",
                                    "line 5: open"]
