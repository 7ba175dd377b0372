"""GET /allocation_candidates (1.10+): parse, search, respond.

The engine lives in placement_wsgi/candidates; this module only applies the
the API's check order (MV gate, Accept, policy, query schema, query semantics)
and renders the body.
"""

from __future__ import annotations

import webob

from placement_wsgi import microversion, util
from placement_wsgi.candidates import engine
from placement_wsgi.candidates.request import parse_query
from placement_wsgi.handlers.common import context_of
from placement_wsgi.policy.names import Rule
from placement_wsgi.schemas import allocation_candidate as schema


@microversion.minimum(1, 10)
def list_allocation_candidates(request: webob.Request) -> webob.Response:
    """Allocation requests that would satisfy the query, plus provider summaries."""
    util.check_accept_json(request)
    context = context_of(request)
    context.can(Rule.ALLOCATION_CANDIDATES_LIST)
    version = microversion.version_of(request)
    util.validate_query(request, schema.query_schema(version))
    candidate_request = parse_query(list(request.GET.items()), version)
    body = engine.find_candidates(
        context.database, candidate_request, engine.Settings.from_conf(context.conf))
    response = webob.Response(status=200)
    response.body = body.encode("utf-8")  # the engine writes JSON text itself
    response.content_type = "application/json"
    response.charset = None
    util.add_cache_headers(request, response)
    return response
