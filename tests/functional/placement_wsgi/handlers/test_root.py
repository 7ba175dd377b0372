"""GET /: the version document, without a token, at every microversion."""

from __future__ import annotations

import webob

from placement_wsgi import deploy, microversion
from tests.fixtures.config import make_conf


def test_the_version_document_needs_no_token(db_url):
    app = deploy.loadapp(make_conf(db_url, api={"auth_strategy": "keystone"}))
    try:
        for version in ("1.0", "latest"):
            request = webob.Request.blank("/", headers={
                "openstack-api-version": f"placement {version}"})
            response = request.get_response(app)
            assert response.status_int == 200, response.text
            (document,) = response.json["versions"]
            assert document == {"id": "v1.0", "min_version": str(microversion.MIN_VERSION),
                                "max_version": str(microversion.MAX_VERSION),
                                "status": "CURRENT", "links": [{"rel": "self", "href": ""}]}
    finally:
        app.placement_app.database.dispose()
