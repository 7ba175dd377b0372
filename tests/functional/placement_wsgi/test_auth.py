"""A request without a token: a 401 in the API's error format (docs/failure-behaviour.md),
with noauth2 and with keystonemiddleware alike."""

from __future__ import annotations

import pytest
import webob
from keystonemiddleware import auth_token

from placement_wsgi import deploy
from tests.fixtures.config import make_conf

KEYSTONE = "http://keystone.example/v3"


def _keystone_conf(db_url: str):
    conf = make_conf(db_url, api={"auth_strategy": "keystone"})
    for group, options in auth_token.list_opts():
        conf.register_opts(options, group=group)
    # Where a client gets a token; set, auth_token answers without asking Keystone.
    conf.set_override("www_authenticate_uri", KEYSTONE, "keystone_authtoken")
    return conf


@pytest.mark.parametrize("strategy", ["noauth2", "keystone"])
@pytest.mark.parametrize(("version", "code"), [("1.22", None), ("1.23", "placement.undefined_code"),
                                               ("9.99", None)])
def test_no_token_is_a_401_in_the_error_format(db_url, strategy, version, code):
    conf = _keystone_conf(db_url) if strategy == "keystone" else make_conf(db_url)
    app = deploy.loadapp(conf)
    try:
        response = webob.Request.blank("/traits", headers={
            "OpenStack-API-Version": f"placement {version}"}).get_response(app)
    finally:
        app.placement_app.database.dispose()
    assert response.status_int == 401
    assert response.content_type == "application/json"
    (error,) = response.json["errors"]
    assert (error["status"], error["title"]) == (401, "Unauthorized")
    assert error["detail"].endswith("The request needs a valid X-Auth-Token.")
    assert error["request_id"] == response.headers["x-openstack-request-id"]
    assert error.get("code") == code
    if strategy == "keystone":
        assert response.headers["WWW-Authenticate"] == f'Keystone uri="{KEYSTONE}"'
