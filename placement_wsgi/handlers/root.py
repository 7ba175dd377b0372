"""GET /: the version document."""

from __future__ import annotations

import webob

from placement_wsgi import microversion, util


def home(request: webob.Request) -> webob.Response:
    """The one version document; needs no token and works at every version."""
    document = {"versions": [{
        "id": "v1.0",
        "min_version": str(microversion.MIN_VERSION),
        "max_version": str(microversion.MAX_VERSION),
        "status": "CURRENT",
        "links": [{"rel": "self", "href": ""}],
    }]}
    return util.json_response(request, document)
