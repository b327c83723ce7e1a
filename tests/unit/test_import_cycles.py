"""No import circle inside a package: its modules' imports of one another form a DAG.

Every import counts, also one under ``if TYPE_CHECKING:`` and one inside a function: a
circle hidden that way is still two modules that cannot be understood one without the other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"

PACKAGES_WITHOUT_CIRCLES = ["ferrymq.engine", "ferrymq.protocol", "ferrymq.bench", "ferrymq.client", "ferrymq.pcf"]
"""The packages kept free of import circles (add a package here once its circles are gone)."""


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(module: str, tree: ast.AST, is_package: bool) -> set[str]:
    """The absolute names ``module``'s imports name (``from x import y``: both x and x.y)."""
    base = module if is_package else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parent = base.rsplit(".", node.level - 1)[0] if node.level > 1 else base
                source = f"{parent}.{node.module}" if node.module else parent
            else:
                source = node.module or ""
            out.add(source)
            out.update(f"{source}.{alias.name}" for alias in node.names)
    return out


def import_graph(package: str) -> dict[str, set[str]]:
    """Each module of ``package`` (and its subpackages) -> the modules of it that it imports."""
    root = SRC.joinpath(*package.split("."))
    paths = {module_name(p): p for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        names = imported(name, ast.parse(path.read_text(), str(path)), path.name == "__init__.py")
        # A package's __init__ re-exports its modules; the modules importing one another is what counts.
        graph[name] = {n for n in names if n in paths and n != name and n != package}
    return graph


def find_circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of ``graph`` as the modules along it (first repeated at the end), or None."""
    done: set[str] = set()
    for start in sorted(graph):
        path: list[str] = []
        on_path: set[str] = set()
        stack = [(start, iter(sorted(graph[start])))]
        if start in done:
            continue
        path.append(start)
        on_path.add(start)
        while stack:
            node, edges = stack[-1]
            nxt = next(edges, None)
            if nxt is None:
                stack.pop()
                path.pop()
                on_path.discard(node)
                done.add(node)
            elif nxt in on_path:
                return [*path[path.index(nxt):], nxt]
            elif nxt not in done:
                stack.append((nxt, iter(sorted(graph[nxt]))))
                path.append(nxt)
                on_path.add(nxt)
    return None


@pytest.mark.parametrize("package", PACKAGES_WITHOUT_CIRCLES)
def test_package_has_no_import_circle(package: str) -> None:
    circle = find_circle(import_graph(package))
    assert circle is None, "import circle: " + " -> ".join(circle or [])


def test_a_circle_is_found() -> None:
    """The walk finds a circle when there is one (the test above cannot pass vacuously)."""
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_circle({"a": {"b"}, "b": set()}) is None


def test_the_graph_sees_type_checking_imports() -> None:
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ferrymq.protocol.codec import Reader\n")
    assert "ferrymq.protocol.codec" in imported("ferrymq.protocol.seqframes", tree, False)
