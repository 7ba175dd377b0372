"""/resource_classes and /resource_classes/{name} (1.2+).

Every handler is gated at 1.2 first, then checks Accept or Content-Type,
then policy, as the API's check order says.
"""

from __future__ import annotations

import webob

from placement_wsgi import microversion, util
from placement_wsgi.handlers.common import context_of
from placement_wsgi.objects import resource_class as rc_obj
from placement_wsgi.policy.names import Rule
from placement_wsgi.schemas import resource_class as schema

_BODY_PREFIX = "JSON does not validate: "


def _representation(request: webob.Request, name: str) -> dict:
    return {"name": name,
            "links": [{"rel": "self", "href": util.link(request, f"/resource_classes/{name}")}]}


def _created_or_found(request: webob.Request, name: str, status: int) -> webob.Response:
    """Empty 201/204 with Location and, by design, no cache headers."""
    return util.empty_response(
        status, location=util.absolute_url(request, f"/resource_classes/{name}"))


@microversion.minimum(1, 2)
def list_resource_classes(request: webob.Request) -> webob.Response:
    util.check_accept_json(request)
    context = context_of(request)
    context.can(Rule.RESOURCE_CLASSES_LIST)
    classes = rc_obj.list_resource_classes(context.database)
    return util.json_response(
        request, {"resource_classes": [_representation(request, rc.name) for rc in classes]},
        last_modified=util.newest(rc.modified_at for rc in classes))


@microversion.minimum(1, 2)
def create_resource_class(request: webob.Request) -> webob.Response:
    util.require_json_content(request)
    context = context_of(request)
    context.can(Rule.RESOURCE_CLASSES_CREATE)
    data = util.json_body(request, schema.RESOURCE_CLASS_NAME)
    created = rc_obj.create_resource_class(context.database, data["name"])
    return _created_or_found(request, created.name, 201)


@microversion.minimum(1, 2)
def get_resource_class(request: webob.Request, name: str) -> webob.Response:
    util.check_accept_json(request)
    context = context_of(request)
    context.can(Rule.RESOURCE_CLASSES_SHOW)
    found = rc_obj.get_resource_class(context.database, name)
    return util.json_response(request, _representation(request, found.name),
                              last_modified=found.modified_at)


@microversion.minimum(1, 2)
def update_resource_class(request: webob.Request, name: str) -> webob.Response:
    """1.2-1.6: rename from a JSON body; 1.7+: create-or-verify the path name."""
    if microversion.version_of(request) >= (1, 7):
        return _ensure_resource_class(request, name)
    util.require_json_content(request)
    context = context_of(request)
    context.can(Rule.RESOURCE_CLASSES_UPDATE)
    data = util.json_body(request, schema.RESOURCE_CLASS_NAME)
    renamed = rc_obj.rename_resource_class(context.database, name, data["name"])
    return util.json_response(request, _representation(request, renamed.name),
                              cache_headers=False)


def _ensure_resource_class(request: webob.Request, name: str) -> webob.Response:
    """No body is read: the path name is validated as if it were a POST body."""
    context = context_of(request)
    context.can(Rule.RESOURCE_CLASSES_UPDATE)
    util.validate({"name": name}, schema.RESOURCE_CLASS_NAME, _BODY_PREFIX)
    _, created = rc_obj.ensure_resource_class(context.database, name)
    return _created_or_found(request, name, 201 if created else 204)


@microversion.minimum(1, 2)
def delete_resource_class(request: webob.Request, name: str) -> webob.Response:
    context = context_of(request)
    context.can(Rule.RESOURCE_CLASSES_DELETE)
    rc_obj.delete_resource_class(context.database, name)
    return util.empty_response(204)
