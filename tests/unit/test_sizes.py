"""Size limits: no module over 500 lines, no function over 60 lines.

Long modules and functions are where several jobs hide; past these limits
one is split into named steps. Schema migrations (alembic scripts) are
exempt: each is one frozen, linear description of a schema change.
"""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = ("placement_wsgi", "nova_reshape", "tools")
EXEMPT = ("placement_wsgi/db/migrations/",)
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60


def oversized(path: pathlib.Path, name: str) -> list[str]:
    """``name`` (the module's path as reported) if too long, and each too-long function in it.

    A function's length runs from its ``def`` line to its last line, docstring
    included, decorators not.
    """
    source = path.read_text(encoding="utf-8")
    found = []
    lines = len(source.splitlines())
    if lines > MAX_MODULE_LINES:
        found.append(f"{name}: module of {lines} lines")
    for node in ast.walk(ast.parse(source, filename=str(path))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                found.append(f"{name}:{node.lineno} {node.name}() of {length} lines")
    return found


def oversized_in(root: pathlib.Path) -> list[str]:
    """Every module and function over the limits in the packages under ``root``."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            name = path.relative_to(root).as_posix()
            if not name.startswith(EXEMPT):
                found.extend(oversized(path, name))
    return found


def test_no_module_or_function_over_the_limits():
    found = oversized_in(ROOT)
    assert not found, "split into named steps:\n" + "\n".join(found)


def function(name: str, body_lines: int, indent: str = "") -> str:
    return (f"{indent}def {name}():\n"
            + "".join(f"{indent}    x = {i}\n" for i in range(body_lines)))


def test_self_test_names_long_functions_methods_and_modules(tmp_path):
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "fine.py").write_text(function("short", 59))
    (tmp_path / "tools" / "long.py").write_text(
        function("long", 60) + "class C:\n" + function("method", 61, "    "))
    (tmp_path / "nova_reshape" / "deep").mkdir(parents=True)
    (tmp_path / "nova_reshape" / "deep" / "big.py").write_text("x = 1\n" * 501)
    (tmp_path / "placement_wsgi" / "db" / "migrations").mkdir(parents=True)
    (tmp_path / "placement_wsgi" / "db" / "migrations" / "v1.py").write_text(
        function("upgrade", 200))
    assert oversized_in(tmp_path) == [
        "nova_reshape/deep/big.py: module of 501 lines",
        "tools/long.py:1 long() of 61 lines",
        "tools/long.py:63 method() of 62 lines",
    ]


def test_self_test_limits_are_inclusive(tmp_path):
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "edge.py").write_text(
        function("edge", 59) + "y = 0\n" * (500 - 60))
    assert oversized_in(tmp_path) == []
