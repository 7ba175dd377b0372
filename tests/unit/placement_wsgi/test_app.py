"""What every request of one app shares (placement_wsgi/app.py)."""

from __future__ import annotations

from placement_wsgi.app import PlacementApp
from placement_wsgi.policy.decisions import PolicyDecisions
from tests.fixtures.config import make_conf


def test_an_app_keeps_its_conf_and_database_and_builds_its_policy():
    conf, database = make_conf("sqlite://"), object()
    app = PlacementApp(conf, database)  # type: ignore[arg-type]
    assert app.conf is conf and app.database is database
    assert isinstance(app.policy, PolicyDecisions)
    assert app.enforcer.conf is conf
    other = PlacementApp(make_conf("sqlite://"), database)  # type: ignore[arg-type]
    assert other.enforcer is not app.enforcer
