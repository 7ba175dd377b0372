"""noauth2 and the context builder in front of the app (placement_wsgi/auth.py).

gabbits/auth.yaml covers them over HTTP through the whole app; here each
middleware is seen alone, with what it hands on.
"""

from __future__ import annotations

import webob
import webob.dec

from placement_wsgi import environ_keys
from placement_wsgi.auth import ContextBuilder, NoAuth

PLACEMENT_APP = object()


@webob.dec.wsgify
def echo(request: webob.Request) -> webob.Response:
    """Answers with the identity headers and the context it was given."""
    context = request.environ.get(environ_keys.CONTEXT)
    return webob.Response(json={
        "user": request.headers.get("X-User-Id"), "roles": request.headers.get("X-Roles"),
        "tenant": request.headers.get("X-Tenant-Id"),
        "context_user": getattr(context, "user_id", None),
        "same_app": getattr(context, "app", None) is PLACEMENT_APP})


def call(app, path: str, **headers: str) -> webob.Response:
    return webob.Request.blank(path, headers=headers).get_response(app)


def test_noauth_takes_user_and_project_from_the_token():
    assert call(NoAuth(echo), "/traits", **{"X-Auth-Token": "alice:p1"}).json == {
        "user": "alice", "roles": "", "tenant": "p1", "context_user": None, "same_app": False}
    admin = call(NoAuth(echo), "/traits", **{"X-Auth-Token": "admin"}).json
    assert (admin["roles"], admin["tenant"]) == ("admin", "admin")
    given = call(NoAuth(echo), "/traits", **{"X-Auth-Token": "bob", "X-Roles": "reader",
                                             "OpenStack-System-Scope": "all"}).json
    assert (given["roles"], given["tenant"]) == ("reader", None)


def test_noauth_refuses_a_missing_token_except_at_the_root():
    refused = call(NoAuth(echo), "/traits")
    assert refused.status_int == 401 and refused.json["title"] == "Unauthorized"
    assert call(NoAuth(echo), "/").status_int == 200


def test_the_context_carries_the_user_and_the_app():
    builder = ContextBuilder(echo, PLACEMENT_APP)
    seen = call(builder, "/traits", **{"X-User-Id": "alice", "X-Roles": "admin"}).json
    assert seen["context_user"] == "alice" and seen["same_app"]
    assert call(builder, "/traits").status_int == 401
    assert call(builder, "/").json["same_app"]
