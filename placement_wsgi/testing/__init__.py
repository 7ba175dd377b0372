"""Test Placement in-process: gabbi fixtures, throwaway databases, a pytest plugin.

Public modules (see docs/gabbi.md):

* :mod:`placement_wsgi.testing.gabbits`: ``setup_app`` (gabbi's
  ``intercept``), ``APIFixture`` and the fixtures upstream Placement's YAML
  names, ``load_tests`` and ``gabbi_cases``.
* :mod:`placement_wsgi.testing.databases`: throwaway, migrated databases on
  SQLite, PostgreSQL or MariaDB (``PLACEMENT_WSGI_TEST_DB_SERVER``).
* :mod:`placement_wsgi.testing.pytest_plugin`: registered with pytest as
  ``placement_wsgi``; ``--placement-gabbits DIR`` and the ``placement``
  fixture.
* ``placement-gabbi-run``: gabbi-run for this service, in-process.

Nothing here is imported by the service itself. gabbi (and pytest, for the
plugin) must be installed: ``pip install 'nova-reshape[testing]'``.
"""
