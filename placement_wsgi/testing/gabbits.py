"""Gabbi against an in-process Placement: the intercept, the fixtures, the loaders.

What a project with gabbi YAML needs (docs/gabbi.md shows it in use)::

    from placement_wsgi.testing import gabbits

    def load_tests(loader, tests, pattern):           # unittest, stestr
        return gabbits.load_tests(HERE / "gabbits", loader)

    pytest_collect_file = gabbits.collect_gabbits(HERE / "gabbits")   # conftest.py

or, with gabbi's own driver, ``intercept=gabbits.setup_app`` and
``fixture_module=gabbits``. The fixtures have upstream Placement's names,
environment variables and data; each YAML file gets a fresh database.
"""

from __future__ import annotations

import pathlib
from collections.abc import Callable, Iterable
from typing import Any

from placement_wsgi.testing.datasets import (
    AllocationFixture,
    GranularFixture,
    NonSharedStorageFixture,
    NUMAAggregateFixture,
    SharedStorageFixture,
)
from placement_wsgi.testing.fixtures import (
    APIFixture,
    CORSFixture,
    LegacyRBACPolicyFixture,
    OpenPolicyFixture,
    SecureRBACPolicyFixture,
    setup_app,
)
from placement_wsgi.testing.loader import GabbiCase, gabbi_cases, load_tests
from placement_wsgi.testing.network_datasets import (
    DeepNUMANetworkFixture,
    NeutronQoSMultiSegmentFixture,
    NUMANetworkFixture,
)

__all__ = [
    "APIFixture", "AllocationFixture", "CORSFixture", "DeepNUMANetworkFixture", "GabbiCase",
    "GranularFixture", "LegacyRBACPolicyFixture", "NUMAAggregateFixture", "NUMANetworkFixture",
    "NeutronQoSMultiSegmentFixture", "NonSharedStorageFixture", "OpenPolicyFixture",
    "SecureRBACPolicyFixture", "SharedStorageFixture", "collect_gabbits", "gabbi_cases",
    "load_tests", "setup_app",
]


def collect_gabbits(directory: str | pathlib.Path, *, database_server: str | None = None,
                    fixture_modules: Iterable[Any] = ()) -> Callable[..., Any]:
    """A ``pytest_collect_file`` hook for a conftest: ``directory``'s YAML files as tests.

    Each file is a pytest collector, each test an item named by its
    ``name``; the file's fixtures start before its first test and stop
    after its last.
    """
    from placement_wsgi.testing.pytest_plugin import yaml_collector

    return yaml_collector([pathlib.Path(directory)], database_server, fixture_modules)
