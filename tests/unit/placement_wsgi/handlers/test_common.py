"""The handlers' shared helper: the request's context (handlers/common.py)."""

from __future__ import annotations

import webob

from placement_wsgi import environ_keys
from placement_wsgi.context import RequestContext
from placement_wsgi.handlers.common import context_of


def test_the_context_is_the_one_the_middleware_put_in_the_environ():
    context = RequestContext(user_id="u1")
    request = webob.Request.blank("/", environ={environ_keys.CONTEXT: context})
    assert context_of(request) is context
