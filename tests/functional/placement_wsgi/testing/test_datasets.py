"""The data sets of upstream's gabbi fixtures, built through the API."""

from __future__ import annotations

import os

import pytest

from placement_wsgi.testing import fixtures
from placement_wsgi.testing.builder import FixtureDataError
from placement_wsgi.testing.client import WSGIClient
from placement_wsgi.testing.datasets import DataFixture


class BrokenFixture(DataFixture):
    def make_data(self) -> None:
        self.set_environ("BROKEN_MADE", "yes")
        self.build.inventory("00000000-0000-0000-0000-000000000000", "VCPU", 1)


def test_a_fixture_failing_midway_cleans_up() -> None:
    with pytest.raises(FixtureDataError, match="show provider"):
        BrokenFixture().start_fixture()
    assert "BROKEN_MADE" not in os.environ
    with pytest.raises(RuntimeError):
        WSGIClient(fixtures.setup_app()).get("/resource_providers")
