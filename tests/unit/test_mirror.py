"""Tests mirror the packages: every module has a test file at its mirrored path.

A module ``placement_wsgi/a/b.py`` or ``nova_reshape/a/b.py`` (not an
``__init__.py``) is mirrored by ``tests/unit/<package>/a/test_b.py`` or
``tests/functional/<package>/a/test_b.py``; a request handler
``placement_wsgi/handlers/X.py`` may instead be mirrored by a gabbi file in
``gabbits/`` named after it (``X`` or its resource name, ``_`` as ``-``).
A module that has none must be in :data:`ALLOWED` with the reason; an
entry ending in ``/`` covers a whole directory. The allow-list must stay
short and true: an entry that names nothing, or a module that has gained
its mirrored test, fails too.
"""

from __future__ import annotations

import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = ("placement_wsgi", "nova_reshape")
TEST_KINDS = ("unit", "functional")
GABBI_MIRRORED = pathlib.PurePosixPath("placement_wsgi/handlers")

#: Modules (or directories, ending in ``/``) without a mirrored test file, each with why.
ALLOWED: dict[str, str] = {
    # -- no behaviour of their own -----------------------------------------------------
    "placement_wsgi/db/migrations/": "alembic scripts; tests/functional/placement_wsgi/db/"
                                     "test_migration.py runs them on every engine",
    "placement_wsgi/constants.py": "constants only",
    "placement_wsgi/environ_keys.py": "WSGI environ key names only",
    "placement_wsgi/policy/names.py": "policy rule names only",
}


def modules(root: pathlib.Path) -> list[pathlib.PurePosixPath]:
    """Every module of the packages under ``root``, relative to it (no ``__init__.py``)."""
    return sorted(pathlib.PurePosixPath(path.relative_to(root).as_posix())
                  for package in PACKAGES for path in (root / package).rglob("*.py")
                  if path.name != "__init__.py")


def mirrored(root: pathlib.Path, module: pathlib.PurePosixPath) -> bool:
    """Whether ``module`` has a test file (or, for a handler, a gabbi file) at its mirror."""
    name = f"test_{module.stem}.py"
    if any((root / "tests" / kind / module.parent / name).is_file() for kind in TEST_KINDS):
        return True
    if module.parent != GABBI_MIRRORED:
        return False
    prefixes = (module.stem, module.stem.replace("_", "-"))
    return any(path.name.startswith(prefixes) for path in (root / "gabbits").glob("*.yaml"))


def allowed(module: pathlib.PurePosixPath, allow: dict[str, str]) -> str | None:
    """The allow-list entry covering ``module``, if any."""
    text = str(module)
    return next((entry for entry in allow
                 if text == entry or (entry.endswith("/") and text.startswith(entry))), None)


def unmirrored(root: pathlib.Path, allow: dict[str, str]) -> list[str]:
    """The modules with neither a mirrored test file nor an allow-list entry."""
    return [str(module) for module in modules(root)
            if not mirrored(root, module) and allowed(module, allow) is None]


def stale(root: pathlib.Path, allow: dict[str, str]) -> list[str]:
    """Allow-list entries that cover no module, or only modules that are mirrored now."""
    covered: dict[str, list[bool]] = {entry: [] for entry in allow}
    for module in modules(root):
        entry = allowed(module, allow)
        if entry is not None:
            covered[entry].append(mirrored(root, module))
    return [entry for entry, states in covered.items() if not states or all(states)]


def check_mirrored(root: pathlib.Path, allow: dict[str, str]) -> None:
    """Fail naming every module under ``root`` without a mirror or an entry in ``allow``."""
    missing = unmirrored(root, allow)
    assert not missing, ("modules without tests/{unit,functional}/<same dirs>/test_<name>.py "
                         "(add one, or an ALLOWED entry with the reason):\n"
                         + "\n".join(missing))


def test_every_module_has_a_mirrored_test_file():
    check_mirrored(ROOT, ALLOWED)


def test_allow_list_names_only_unmirrored_modules():
    assert not stale(ROOT, ALLOWED), "ALLOWED entries to remove: " + ", ".join(
        stale(ROOT, ALLOWED))


def test_allow_list_stays_short():
    assert len(ALLOWED) <= 10
    assert all(reason.strip() for reason in ALLOWED.values())


@pytest.fixture
def tree(tmp_path: pathlib.Path) -> pathlib.Path:
    """A synthetic checkout: one mirrored module per rule, nothing unmirrored yet."""
    for path in ("placement_wsgi/__init__.py", "placement_wsgi/util.py",
                 "placement_wsgi/handlers/__init__.py", "placement_wsgi/handlers/widget_box.py",
                 "nova_reshape/deep/er/thing.py", "tests/unit/placement_wsgi/test_util.py",
                 "tests/functional/nova_reshape/deep/er/test_thing.py",
                 "gabbits/widget-box-errors.yaml"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")
    return tmp_path


def test_mirrors_are_found_in_unit_functional_and_gabbits(tree):
    assert unmirrored(tree, {}) == []


def test_an_unmirrored_module_fails_by_name(tree):
    (tree / "nova_reshape/deep/lonely.py").write_text("")
    (tree / "tests/unit/nova_reshape/lonely").mkdir(parents=True)  # wrong directory
    (tree / "tests/unit/nova_reshape/test_lonely.py").write_text("")
    assert unmirrored(tree, {}) == ["nova_reshape/deep/lonely.py"]
    with pytest.raises(AssertionError, match="nova_reshape/deep/lonely.py"):
        check_mirrored(tree, {})
    check_mirrored(tree, {"nova_reshape/deep/lonely.py": "why"})


def test_gabbi_files_mirror_handlers_only(tree):
    (tree / "placement_wsgi/widget.py").write_text("")
    (tree / "gabbits/widget.yaml").write_text("")
    assert unmirrored(tree, {}) == ["placement_wsgi/widget.py"]


def test_allow_list_entries_cover_modules_and_directories(tree):
    (tree / "nova_reshape/deep/lonely.py").write_text("")
    (tree / "nova_reshape/gone/one.py").parent.mkdir()
    (tree / "nova_reshape/gone/one.py").write_text("")
    allow = {"nova_reshape/deep/lonely.py": "why", "nova_reshape/gone/": "why",
             "nova_reshape/deep/er/thing.py": "mirrored meanwhile", "nova_reshape/nothing/": "x"}
    assert unmirrored(tree, allow) == []
    assert stale(tree, allow) == ["nova_reshape/deep/er/thing.py", "nova_reshape/nothing/"]
