"""Upstream-style YAML using each public fixture, on every enabled engine.

The files in gabbits/ next to this module name only fixtures of
placement_wsgi.testing.gabbits and their environment variables (one file
per fixture); tests are named ``<engine>/<file>/<test name>``.
"""

from __future__ import annotations

import pathlib

import pytest

from placement_wsgi.testing.gabbits import GabbiCase
from placement_wsgi.testing.pytest_plugin import report_case
from tests.fixtures.gabbi import engine_cases

GABBITS = pathlib.Path(__file__).resolve().parent / "gabbits"


@pytest.mark.parametrize("case", engine_cases(GABBITS))
def test_gabbi(case: GabbiCase) -> None:
    report_case(case.run())
