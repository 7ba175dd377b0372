"""Run every gabbi YAML file under gabbits/ on every enabled engine.

Through the public harness (placement_wsgi.testing) with this project's
own fixtures (tests/fixtures/gabbi.py) beside the public ones: each file
is one suite with a fresh database; each test in it is one pytest test,
named ``<engine>/<file>/<test name>``. Tests of one file run in order;
selecting one test (``-k``) runs the tests before it first, as gabbi does.
"""

from __future__ import annotations

import pathlib

import pytest

from placement_wsgi.testing.gabbits import GabbiCase
from placement_wsgi.testing.pytest_plugin import report_case
from tests.fixtures.gabbi import engine_cases

GABBITS = pathlib.Path(__file__).resolve().parents[3] / "gabbits"


@pytest.mark.parametrize("case", engine_cases(GABBITS, with_project_fixtures=True))
def test_gabbi(case: GabbiCase) -> None:
    report_case(case.run())
