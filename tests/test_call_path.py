"""A Part B study's call path: followed from its entry down, it returns to a module it already
left at most :data:`MAX_RETURNS` times (issue #58; ``docs/architecture.md`` draws the path).

The calls are read with :mod:`ast`, not run. From ``study/run.py:run_part_b``, each call is
resolved through the imports to the module that defines it: a name bound by ``from slmbench.x
import f`` (through every package that re-exports it), ``module.f`` of an imported module, a
function of the same module, ``Class.method`` and ``self.method``; calling a class is calling
its ``__init__``. A call through a value (``store.get(...)``, ``loader(spec)``) is not
resolved: what is followed is what the imports say. Calls are followed depth-first, in the
order they are evaluated (a call inside another's arguments first; a lambda's body where it is
written), each function once.

A *return* is a call into a module the walk had entered before and has left since, counted
strictly, as issue #58 counted: a call into ``slmbench.core`` counts too, and so does a second
call into the module the walk has just come back from. Leniently (``strict=False``) neither
counts: ``core`` is the bottom every path ends in (a module there calls nothing above it), and
``tau_sweep(cells)`` then ``by_prompt(cells)`` is one visit, not two.

``python tests/test_call_path.py [SRC]`` prints the path, module by module, and every return,
and both counts. Strictly, the walk returned 23 times before issue #58's changes and 18 before
the matrix judged its cells in one call (``eligibility.judge``) and a cell got its every
statistic from one (``stats.cell_test``), 9 of them ``eligibility`` calling ``core.stats`` one
function after another; now 5 (leniently: 3, now 0).
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "slmbench"
ENTRY = ("slmbench.study.run", "run_part_b")
MAX_RETURNS = 5
LEAF_LAYER = "core"  # leniently, calls into it are not counted as returns

Function = tuple[str, str]  # (module, qualified name: "f" or "Class.method")
Bound = tuple[str, str | Function]  # ("module", name) or ("name", (module, name))


@dataclass
class _Module:
    """What the walk needs of one module: its functions and classes, and its imports."""

    name: str
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)
    classes: dict[str, list[ast.expr]] = field(default_factory=dict)  # class -> its bases
    bound: dict[str, Bound] = field(default_factory=dict)  # a name an import binds


def _read(root: Path, path: Path) -> _Module:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    name = ".".join(parts[:-1] if is_package else parts)
    mod = _Module(name)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if is_package else name.rpartition(".")[0]
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            mod.functions[node.name] = node
        elif isinstance(node, ast.ClassDef):
            mod.classes[node.name] = node.bases
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    mod.functions[f"{node.name}.{item.name}"] = item
    top = root.name
    for node in ast.walk(tree):  # an import inside a function binds a name too
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == top:
                    mod.bound[a.asname or a.name] = ("module", a.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            if source.split(".")[0] == top:
                for a in node.names:
                    mod.bound[a.asname or a.name] = ("name", (source, a.name))
    return mod


class CallPath:
    """The walk over the package at ``root``: :meth:`follow` an entry, then read
    :attr:`path` (each module entered, and each one come back to) and :attr:`returns`."""

    def __init__(self, root: Path, *, strict: bool = False) -> None:
        mods = (_read(root, p) for p in sorted(root.rglob("*.py")))
        self.modules = {m.name: m for m in mods}
        self.leaf = f"{root.name}.{LEAF_LAYER}"
        self.strict = strict  # count every return, into core and the one just left too
        self.path: list[str] = []
        self.returns: list[str] = []
        self._entered: set[str] = set()
        self._done: set[Function] = set()

    def _defined(self, module: str, name: str, seen: frozenset[tuple[str, str]] = frozenset()
                 ) -> Bound | None:
        """``name`` in ``module`` followed to what defines it: a module, or a function or class
        of the package (through every re-export); None when it is neither."""
        if f"{module}.{name}" in self.modules:
            return "module", f"{module}.{name}"
        mod = self.modules.get(module)
        if mod is None or (module, name) in seen:
            return None
        if name in mod.functions or name in mod.classes:
            return "name", (module, name)
        bound = mod.bound.get(name)
        if bound is None or bound[0] == "module":
            return bound
        source, original = bound[1]
        return self._defined(source, original, seen | {(module, name)})

    def _class(self, module: str, node: ast.expr) -> Function | None:
        """The class of the package a base-class expression names."""
        found = self._defined(module, node.id) if isinstance(node, ast.Name) else None
        if found is None or found[0] != "name":
            return None
        where, name = found[1]
        return (where, name) if name in self.modules[where].classes else None

    def _method(self, cls: Function, name: str) -> Function | None:
        """``cls.name`` where it is defined: the class, else a base class of the package."""
        where, cname = cls
        if f"{cname}.{name}" in self.modules[where].functions:
            return where, f"{cname}.{name}"
        for base in self.modules[where].classes.get(cname, []):
            found = self._class(where, base)
            if found is not None and found != cls and (got := self._method(found, name)):
                return got
        return None

    def _callee(self, module: str, cls: str | None, func: ast.expr) -> Function | None:
        """The function of the package a call's ``func`` names, or None."""
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id in ("self", "cls") and cls:
                return self._method((module, cls), func.attr)
            owner = self._defined(module, func.value.id)
            if owner is None:
                return None
            if owner[0] == "module":
                found = self._defined(str(owner[1]), func.attr)
            else:
                where, name = owner[1]
                is_class = name in self.modules[where].classes
                return self._method((where, name), func.attr) if is_class else None
        elif isinstance(func, ast.Name):
            found = self._defined(module, func.id)
        else:
            return None
        if found is None or found[0] != "name":
            return None
        where, name = found[1]
        if name in self.modules[where].classes:
            return self._method((where, name), "__init__")
        return (where, name) if name in self.modules[where].functions else None

    def follow(self, fn: Function) -> None:
        """Walk ``fn``'s calls depth-first, in the order they are evaluated; each function
        once."""
        if not self.path:
            self.path.append(fn[0])
            self._entered.add(fn[0])
        if fn in self._done:
            return
        self._done.add(fn)
        module, qualified = fn
        cls = qualified.split(".")[0] if "." in qualified else None
        calls = sorted((n for n in ast.walk(self.modules[module].functions[qualified])
                        if isinstance(n, ast.Call)),
                       key=lambda n: (n.end_lineno or 0, n.end_col_offset or 0))
        for call in calls:
            callee = self._callee(module, cls, call.func)
            if callee is None or callee in self._done:
                continue
            into = callee[0]
            if into == module:
                self.follow(callee)
                continue
            just_back = self.path[-2:] == [into, module]
            leaf = into == self.leaf or into.startswith(f"{self.leaf}.")
            if into in self._entered and (self.strict or not (just_back or leaf)):
                self.returns.append(f"{module}:{qualified} -> {into}:{callee[1]}")
            self._entered.add(into)
            self.path.append(into)
            self.follow(callee)
            self.path.append(module)


def call_path(root: Path = SRC, entry: Function = ENTRY, *, strict: bool = False) -> CallPath:
    walk = CallPath(root, strict=strict)
    walk.follow(entry)
    return walk


def test_a_part_b_study_returns_to_a_module_it_left_at_most_five_times() -> None:
    walk = call_path(strict=True)
    assert len(walk.path) > 10, "the walk lost the entry: nothing followed"
    assert len(walk.returns) <= MAX_RETURNS, "\n".join(walk.returns)
    assert len(call_path().returns) <= len(walk.returns)  # the lenient count is the smaller


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "pkg"


def test_the_walk_counts_a_return_and_not_a_second_look(tmp_path: Path) -> None:
    """``a`` calls ``b``, then ``c`` (which calls ``b``: a return), then ``b`` again (a
    return: ``c`` came between) and at once once more (no return); ``c`` calls ``core`` twice
    apart and ``b`` twice in a row (no return either); through a re-export, a module
    attribute, a class and ``Class.method``."""
    root = _package(tmp_path, {
        "__init__.py": "",
        "core/__init__.py": "from pkg.core.util import helper\n",
        "core/util.py": "def helper():\n    pass\n\n\ndef other():\n    pass\n",
        "b.py": "class B:\n    def __init__(self):\n        pass\n\n"
                "    def run(self):\n        pass\n\n\ndef one():\n    pass\n\n\n"
                "def two():\n    pass\n\n\ndef three():\n    pass\n",
        "c.py": "from pkg import b\nfrom pkg.core import helper, util\n\n\n"
                "def go():\n    helper()\n    b.two()\n    b.three()\n    util.other()\n",
        "a.py": "from pkg.b import B, one\nfrom pkg.c import go\n\n\n"
                "def start():\n    one()\n    go()\n    B()\n    B.run()\n",
    })
    walk = call_path(root, ("pkg.a", "start"))
    assert walk.returns == ["pkg.c:go -> pkg.b:two", "pkg.a:start -> pkg.b:B.__init__"]
    assert len(call_path(root, ("pkg.a", "start"), strict=True).returns) == 5
    assert walk.path == ["pkg.a", "pkg.b", "pkg.a", "pkg.c", "pkg.core.util", "pkg.c", "pkg.b",
                         "pkg.c", "pkg.b", "pkg.c", "pkg.core.util", "pkg.c", "pkg.a", "pkg.b",
                         "pkg.a", "pkg.b", "pkg.a"]


if __name__ == "__main__":  # the path, module by module (docs/architecture.md draws it)
    root = Path(sys.argv[1]) / "slmbench" if len(sys.argv) > 1 else SRC
    walk = call_path(root, strict=True)
    print(" -> ".join(m.removeprefix("slmbench.") for m in walk.path))
    print(f"{len(walk.returns)} returns, counting every call into a module left (core's too, "
          "and one just left):", *walk.returns, sep="\n  ")
    lenient = call_path(root).returns
    print(f"{len(lenient)} leniently (core a leaf, one just left not counted):", *lenient,
          sep="\n  ")
