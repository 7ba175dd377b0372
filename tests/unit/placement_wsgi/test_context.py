"""The per-request context: identity, the app's services, policy checks."""

from __future__ import annotations

import pytest

from placement_wsgi import errors
from placement_wsgi.app import PlacementApp
from placement_wsgi.context import RequestContext
from tests.fixtures.config import make_conf

DATABASE = object()


def context(roles: list[str], **kwargs) -> RequestContext:
    app = PlacementApp(make_conf("sqlite://"), DATABASE)  # type: ignore[arg-type]
    return RequestContext(user_id="u1", project_id="p1", roles=roles, app=app, **kwargs)


def test_the_context_reaches_the_apps_conf_and_database():
    admin = context(["admin"])
    assert admin.database is DATABASE and admin.conf is admin.app.conf


def test_credentials_are_system_scoped_only_with_a_system_scope():
    assert context(["admin"]).policy_credentials()["system"] is False
    scoped = context(["admin"], system_scope="all").policy_credentials()
    assert scoped["system"] is True and scoped["system_scope"] == "all"
    assert scoped["roles"] == ["admin"] and scoped["project_id"] == "p1"


def test_can_raises_forbidden_naming_the_rule():
    context(["admin"]).can("placement:resource_providers:list")
    with pytest.raises(errors.Forbidden, match="Policy does not allow "
                       "placement:resource_providers:list to be performed."):
        context(["member"]).can("placement:resource_providers:list")
