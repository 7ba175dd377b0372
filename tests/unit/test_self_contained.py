"""The repository explains itself: no tracked text points at documents it does not ship.

A clone has only what is tracked here, so a docstring, comment or doc that
sends the reader to an outside spec file, a section number of one, or a
sibling "shared" directory leaves a newcomer stranded. What a
maintainer needs belongs in ``docs/``. Tools that take the benchmark kit
as an argument say ``--bench-dir``, never a path to it.
"""

from __future__ import annotations

import pathlib
import re
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

#: References to documents outside the repository. (Written with character
#: classes and escapes so that this file does not match itself.)
FORBIDDEN = re.compile(
    r"shared[/]spec|nova-side[.]md|placement-api[-][a-z]*[.]md|design[.]md"
    r"|[Cc]ontract [0-9]|\xa7|[.][.]/shared"
)

#: Pieces to build sample lines from without writing them literally here.
DOT, DASH, SECTION = ".", "-", "\N{SECTION SIGN}"

#: Tracked files a reader reads as prose or configuration.
TEXT_SUFFIXES = {".py", ".md", ".yaml", ".yml", ".cfg", ".toml", ".sh", ".ini", ".txt"}


def _tracked_text_files() -> list[str]:
    """Tracked files with a text suffix, or skip when this is not a git checkout."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True,
                                capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [name for name in listed.split("\0")
            if name and pathlib.PurePosixPath(name).suffix in TEXT_SUFFIXES]


def find_references(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line of ``text`` naming an outside document."""
    return [(number, line) for number, line in enumerate(text.splitlines(), 1)
            if FORBIDDEN.search(line)]


@pytest.mark.parametrize("line", [
    f"see nova-side{DOT}md for details",
    f"(placement-api{DASH}providers{DOT}md)",
    f"design{DOT}md, the second one",
    f"the rule of contract {4}",
    f"as spec {SECTION}4 says",
    f"providers {SECTION}2",
    f"{DOT}{DOT}/shared/bench/compare.sh",
    f"see shared{'/'}spec",
])
def test_pattern_catches_outside_references(line: str) -> None:
    assert find_references(line) == [(1, line)]


@pytest.mark.parametrize("line", [
    "see docs/architecture.md",
    "tools/bench_candidates_limit.py --bench-dir BENCH",
    "request_spec and the spec's groups",
])
def test_pattern_leaves_own_references(line: str) -> None:
    assert find_references(line) == []


def test_no_tracked_file_points_outside_the_repository() -> None:
    hits = []
    for name in _tracked_text_files():
        path = ROOT / name
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        hits.extend(f"{name}:{number}: {line.strip()}"
                    for number, line in find_references(text))
    assert hits == [], "references to documents outside the repository:\n" + "\n".join(hits)
