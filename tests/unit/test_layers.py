"""The package's layers: the import-linter contract of pyproject.toml holds, and no module
imports another that imports it back, imports inside functions included."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "nbvslr"


@pytest.fixture(scope="module")
def graph():
    # grimp reads the files (never imports them) and records every import, including those
    # inside functions and under ``if TYPE_CHECKING``
    return grimp.build_graph("nbvslr", cache_dir=None)


def _cycles(graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(
                        child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_cycle_finder_finds_a_cycle():
    class Graph:
        edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
        modules = set(edges)

        def find_modules_directly_imported_by(self, module):
            return self.edges[module]

    assert _cycles(Graph()) == [["a", "b", "c"]]


def test_no_import_cycle(graph):
    cycles = _cycles(graph)
    lines = []
    for component in cycles:
        members = set(component)
        lines.append(" <-> ".join(component) + ":")
        for a in component:
            for b in sorted(graph.find_modules_directly_imported_by(a) & members):
                where = sorted({d["line_number"] for d in graph.get_import_details(
                    importer=a, imported=b)})
                lines.append(f"    {a} -> {b} (line {', '.join(map(str, where))})")
    assert not cycles, "import cycles:\n" + "\n".join(lines)


def _package_imports(path: Path, module: str) -> list[tuple[int, str]]:
    """``from <an enclosing package of module> import ...`` statements of one file."""
    parts = module.split(".")
    ancestors = {".".join(parts[:k]) for k in range(2, len(parts))}  # not nbvslr, not itself
    hits = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in ancestors:
            hits.append((node.lineno, node.module))
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            hits.append((node.lineno, "." * node.level + (node.module or "")))
    return hits


def test_no_module_imports_its_own_package():
    """A module of a sub-package names what it imports by its module (``from
    nbvslr.data.csvsource import ...``), never through the package's ``__init__``, which
    imports its modules in turn."""
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        module = ".".join(parts)
        for line, imported in _package_imports(path, module):
            bad.append(f"{path.relative_to(ROOT)}:{line}: from {imported} import ...")
    assert not bad, "imports through a module's own package:\n" + "\n".join(bad)


def _lint_imports() -> list[str]:
    script = Path(sys.executable).with_name("lint-imports")
    if script.is_file():
        return [str(script), "--no-cache"]
    return [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command;"
            " sys.exit(lint_imports_command())", "--no-cache"]


def test_layer_contract_holds():
    """pyproject.toml's ``[tool.importlinter]`` contract: every layer imports only the
    layers below it (imports inside functions count)."""
    proc = subprocess.run(_lint_imports(), cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout, proc.stdout
