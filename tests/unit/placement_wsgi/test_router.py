"""The route table: dispatch, path parameters, 404 and 405 with Allow."""

from __future__ import annotations

import pytest
import webob

from placement_wsgi import errors, router


def test_every_route_maps_to_itself() -> None:
    mapper = router.Router().mapper
    for path in router.ROUTE_DECLARATIONS:
        concrete = path.format(uuid="u", name="n", resource_class="VCPU", consumer_uuid="c")
        assert mapper.match(concrete)["path_template"] == path


def test_dispatch_passes_path_parameters(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = {}

    def handler(request: webob.Request, **params: str) -> webob.Response:
        seen.update(params)
        return webob.Response(status=299)

    monkeypatch.setitem(router.ROUTE_DECLARATIONS, "/resource_providers/{uuid}/inventories/"
                        "{resource_class}", {"GET": handler})
    response = webob.Request.blank("/resource_providers/abc/inventories/VCPU").get_response(
        router.Router())
    assert response.status_int == 299
    assert seen == {"uuid": "abc", "resource_class": "VCPU"}


def test_unknown_path_is_404() -> None:
    with pytest.raises(errors.NotFound):
        router.Router()(webob.Request.blank("/nowhere"))
    with pytest.raises(errors.NotFound):  # a parameter never spans a slash
        router.Router()(webob.Request.blank("/resource_classes/a/b"))


def test_unknown_method_is_405_listing_the_allowed_ones() -> None:
    with pytest.raises(errors.MethodNotAllowed) as caught:
        router.Router()(webob.Request.blank("/resource_classes/CUSTOM_X", method="PATCH"))
    assert caught.value.headers == {"Allow": "GET, PUT, DELETE"}
