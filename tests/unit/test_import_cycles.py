"""No import cycles: the module graph of each package, read with ``ast``, is acyclic.

The graph (:mod:`tests.unit.module_graph`) counts every import, including
those under ``if TYPE_CHECKING:`` and inside functions: a cycle hidden from
the interpreter still ties the modules together for a reader.
"""

from __future__ import annotations

from tests.unit.module_graph import import_graph, module_files, resolve


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph[node]):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
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

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_relative_imports_resolve_against_the_package():
    assert resolve("x", 1, "pkg.sub.mod", False) == "pkg.sub.x"
    assert resolve("", 2, "pkg.sub", True) == "pkg"


def test_placement_wsgi_has_no_import_cycle():
    assert cycles(import_graph(module_files("placement_wsgi"))) == []


def test_nova_reshape_has_no_import_cycle():
    assert cycles(import_graph(module_files("nova_reshape"))) == []
