"""The RULES.md claims a test can check, read off the code with :mod:`ast` (issue #58).

Each test names the rules file and the claim it holds to. The one-way imports between the
layers ("imports only X") are in ``tests/test_layout.py``.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "slmbench"
#: the packages whose rules files list every module (study/ and microtasks/ are being split
#: by issue #58's other half; they join this list when their rules files list theirs)
LISTED = ("models", "report", "cli", "agents", "core", "study", "microtasks")


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _sources(*parts: str) -> Iterator[Path]:
    for part in parts:
        yield from sorted((SRC / part).rglob("*.py"))


def _where(path: Path, node: ast.AST) -> str:
    shown = path.relative_to(SRC) if path.is_relative_to(SRC) else path.name
    return f"{shown}:{getattr(node, 'lineno', 0)}"


# -- every rules file lists every module of its package ------------------------------------

def _members(package: Path) -> list[str]:
    """The modules (``x.py``) and sub-packages (``x/``) directly in ``package``."""
    out = [p.name for p in sorted(package.glob("*.py")) if p.name != "__init__.py"]
    out += [f"{p.name}/" for p in sorted(package.iterdir())
            if p.is_dir() and (p / "__init__.py").is_file()]
    return out


def _listed(member: str, text: str) -> bool:
    """Whether ``text`` names ``member``: as a module (``x.py``), as a package (``x/``), so
    that a module that becomes a package of its sections stays listed, or by its bare name in
    code quotes (```x```, as study's and microtasks' rules draw their layers)."""
    stem = re.escape(member.removesuffix("/").removesuffix(".py"))
    return re.search(rf"(?<![\w.]){stem}(\.py|/)|`{stem}`", text) is not None


@pytest.mark.parametrize("package", LISTED)
def test_each_rules_file_lists_every_module_of_its_package(package: str) -> None:
    text = (SRC / package / "RULES.md").read_text(encoding="utf-8")
    missing = [m for m in _members(SRC / package) if not _listed(m, text)]
    assert not missing, f"{package}/RULES.md does not name {missing}"


# -- report/: "computes no statistic" -------------------------------------------------------

STAT_PACKAGES = ("scipy", "statsmodels", "statistics", "confseq", "pandas")
#: numpy's reductions and summaries: a statistic, where report/ only draws and prints
NUMPY_REDUCTIONS = {"mean", "average", "median", "std", "var", "sum", "percentile", "quantile",
                    "nanmean", "nanmedian", "nanstd", "nanvar", "nansum", "nanpercentile",
                    "nanquantile", "corrcoef", "cov", "histogram", "bincount", "cumsum"}


def _is_call(node: ast.AST, name: str) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == name)


def _statistics_in(path: Path) -> list[str]:
    found = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""])
            found += [f"{_where(path, node)} imports {n}" for n in names
                      if n.split(".")[0] in STAT_PACKAGES]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and isinstance(node.func.value, ast.Name) and node.func.value.id in ("np", "numpy")
              and node.func.attr in NUMPY_REDUCTIONS):
            found.append(f"{_where(path, node)} calls np.{node.func.attr}")
        elif (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)
              and _is_call(node.left, "sum")
              and any(_is_call(n, "len") for n in ast.walk(node.right))):
            found.append(f"{_where(path, node)} averages by hand: {ast.unparse(node)[:60]}")
    return found


def test_report_computes_no_statistic() -> None:
    """report/RULES.md: no statistics package, no numpy reduction (numpy only draws figures)
    and no mean written out; ``tests/test_layout.py`` checks that report/ calls no function of
    ``core.stats``. Every number is read from a record another layer made."""
    found = [f for p in _sources("report") for f in _statistics_in(p)]
    assert not found, found


def test_the_statistic_check_finds_what_it_looks_for(tmp_path: Path) -> None:
    page = tmp_path / "page.py"
    page.write_text("import numpy as np\nfrom scipy import stats\nm = np.mean(x)\n"
                    "a = sum(v for v in x) / max(len(x), 1)\n", encoding="utf-8")
    found = [line.split(" ", 1)[1] for line in _statistics_in(page)]
    assert found == ["imports scipy", "calls np.mean",
                     "averages by hand: sum((v for v in x)) / max(len(x), 1)"]


# -- intervals are printed only through Estimate.formatted ----------------------------------

def _hand_formatted_intervals(tree: ast.Module) -> Iterator[ast.JoinedStr]:
    """f-strings that print ``[{a}, {b}]``: an interval written out by hand."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.JoinedStr):
            continue
        parts = node.values
        for i in range(len(parts) - 4):
            before, low, comma, high, after = parts[i:i + 5]
            if (isinstance(before, ast.Constant) and str(before.value).endswith("[")
                    and isinstance(low, ast.FormattedValue) and isinstance(comma, ast.Constant)
                    and str(comma.value).strip() in (",", ";", "-", "–", "to")
                    and isinstance(high, ast.FormattedValue) and isinstance(after, ast.Constant)
                    and str(after.value).startswith("]")):
                yield node
                break


def test_intervals_are_printed_only_through_estimate_formatted() -> None:
    """report/, cli/, agents/, models/ and microtasks/ RULES.md: no ``[low, high]`` written by
    hand; ``core.stats`` (where ``Estimate.formatted`` lives) is the one place that does."""
    found = [f"{_where(p, n)}: {ast.unparse(n)[:80]}"
             for p in _sources("report", "cli", "agents", "models", "microtasks", "study")
             for n in _hand_formatted_intervals(_tree(p))]
    assert not found, found


def test_the_interval_check_finds_a_hand_formatted_interval() -> None:
    tree = ast.parse('a = f"{e.estimate:.3f} [{e.low:.3f}, {e.high:.3f}]"\n'
                     'b = f"{e.formatted()} ({n} items)"\n')
    assert [n.lineno for n in _hand_formatted_intervals(tree)] == [1]


# -- models/: every backend extends base.Backend; one fault table --------------------------

def _class_bases(path: Path) -> dict[str, list[str]]:
    return {node.name: [ast.unparse(b).rpartition(".")[2] for b in node.bases]
            for node in ast.walk(_tree(path)) if isinstance(node, ast.ClassDef)}


def test_every_backend_extends_base_backend() -> None:
    """models/RULES.md: each class ``BACKENDS`` names extends ``base.Backend`` (read from the
    source, so a backend whose optional dependency is not installed is checked too)."""
    from slmbench.models.spec import BACKENDS

    bases: dict[str, list[str]] = {}
    for path in _sources("models"):
        bases.update(_class_bases(path))

    def extends_backend(name: str) -> bool:
        return name == "Backend" or any(extends_backend(b) for b in bases.get(name, ()))

    assert BACKENDS
    wrong = [f"{name} ({target})" for name, target in BACKENDS.items()
             if not extends_backend(target.rpartition(":")[2])]
    assert not wrong, f"backends that do not extend base.Backend: {wrong}"


def test_scripted_is_a_backend_at_run_time() -> None:
    from slmbench.models.base import Backend
    from slmbench.models.scripted import ScriptedModel

    assert issubclass(ScriptedModel, Backend)


def test_only_the_fault_table_decides_what_is_transient() -> None:
    """models/RULES.md "one fault table": no module of models/ but ``faults.py`` builds a
    ``BackendError(transient=True)``; the backends raise what ``faults`` returns."""
    found = []
    for path in _sources("models"):
        if path.name == "faults.py":
            continue
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Call) and any(
                    k.arg == "transient" and isinstance(k.value, ast.Constant)
                    and k.value.value is True for k in node.keywords):
                found.append(f"{_where(path, node)}: {ast.unparse(node.func)}(transient=True)")
    assert not found, found


def test_generate_is_written_once() -> None:
    """models/RULES.md: ``generate`` is defined by ``ModelBase`` alone (the ``Model``
    protocol declares it); every backend and wrapper writes ``answer`` or ``_generate``, each
    taking one ``Request``."""
    found = []
    for path in _sources("models", "agents", "microtasks", "study", "cli", "report"):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if (isinstance(item, ast.FunctionDef) and item.name == "generate"
                            and node.name not in ("Model", "ModelBase")):
                        found.append(f"{_where(path, item)}: {node.name}.generate")
    assert not found, found
    from slmbench.models.base import ModelBase

    for module, name in (("slmbench.agents.runner.cache", "CachingModel"),
                         ("slmbench.agents.runner.retry", "RetryingModel"),
                         ("slmbench.models.ray", "RayModel"),
                         ("slmbench.models.scripted", "ScriptedModel")):
        assert issubclass(getattr(importlib.import_module(module), name), ModelBase), name


# -- cli/: a command parses, calls the library and prints -----------------------------------

def test_no_cli_module_defines_a_record_or_computes_a_statistic() -> None:
    """cli/RULES.md: no record is defined in cli/ (a pydantic model is a record another layer
    would read), and no statistics package, numpy reduction or mean is written there;
    ``tests/test_layout.py`` checks that no CLI module writes a file."""
    found = [f for p in _sources("cli") for f in _statistics_in(p)]
    for path in _sources("cli"):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ClassDef) and any(
                    ast.unparse(b).endswith("BaseModel") for b in node.bases):
                found.append(f"{_where(path, node)}: record {node.name}")
    assert not found, found
