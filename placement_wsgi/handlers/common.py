"""Small helpers every handler uses."""

from __future__ import annotations

import webob

from placement_wsgi import environ_keys
from placement_wsgi.context import RequestContext


def context_of(request: webob.Request) -> RequestContext:
    """The request's context (identity, database, conf, policy)."""
    return request.environ[environ_keys.CONTEXT]
