"""The module graph of a package, read with ``ast`` (shared by the import-order tests).

Every ``import``/``from ... import`` counts, including those under
``if TYPE_CHECKING:`` and inside functions: a dependency hidden from the
interpreter still ties the modules together for a reader. ``from package
import name`` is an edge to ``package.name`` when that is a module, else to
``package``.
"""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def module_files(package: str) -> dict[str, pathlib.Path]:
    """Dotted module name -> file, for every module of ``package``."""
    found = {}
    for path in (ROOT / package).rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def resolve(module: str, level: int, current: str, is_package: bool) -> str:
    """The absolute name of ``from <level dots><module> import ...`` in ``current``."""
    if not level:
        return module
    base = current.split(".") if is_package else current.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def import_graph(modules: dict[str, pathlib.Path]) -> dict[str, set[str]]:
    """module -> the modules of ``modules`` it imports."""
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = resolve(node.module or "", node.level, name, is_package)
                for alias in node.names:
                    child = f"{base}.{alias.name}"
                    targets.append(child if child in modules else base)
            for target in targets:
                if target in modules and target != name:
                    graph[name].add(target)
    return graph
