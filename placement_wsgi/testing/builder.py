"""Build providers, inventories, traits, aggregates and allocations through the API.

The data fixtures describe their data with these calls. Each call is the
request a client would make, so the data is valid on every engine and the
provider generations come out as upstream Placement's fixtures leave them:
creating a provider gives generation 0; each inventory added, each trait
set and each allocation written bumps it by one; aggregates are set with
the bare-list form (microversions before 1.19), which does not.
"""

from __future__ import annotations

import uuid as uuid_module
from collections.abc import Mapping
from typing import Any

import webob

from placement_wsgi.client import ClientBase

#: Microversions of the requests made (the oldest that does the job).
PROVIDERS_VERSION = "1.20"
AGGREGATES_VERSION = "1.1"
ALLOCATIONS_VERSION = "1.28"
LATEST = "latest"


class FixtureDataError(RuntimeError):
    """The API refused a request building fixture data."""


def _check(response: webob.Response, what: str) -> webob.Response:
    if response.status_code >= 300:
        raise FixtureDataError(f"{what}: {response.status_code} {response.text}")
    return response


class ProviderBuilder:
    """Requests that build a data set, made with ``client`` (admin + service)."""

    def __init__(self, client: ClientBase[webob.Response]) -> None:
        self.client = client

    def provider(self, name: str, *aggregates: str, parent: str | None = None,
                 uuid: str | None = None) -> str:
        """Create provider ``name`` (child of ``parent``) in ``aggregates``; its uuid."""
        uuid = uuid or str(uuid_module.uuid4())
        body = {"name": name, "uuid": uuid}
        if parent:
            body["parent_provider_uuid"] = parent
        _check(self.client.post("/resource_providers", body, microversion=PROVIDERS_VERSION),
               f"create provider {name}")
        if aggregates:
            self.aggregates(uuid, *aggregates)
        return uuid

    def aggregates(self, provider: str, *aggregates: str) -> None:
        """Set the provider's aggregates (its generation unchanged)."""
        _check(self.client.put(f"/resource_providers/{provider}/aggregates", list(aggregates),
                               microversion=AGGREGATES_VERSION),
               f"set aggregates of {provider}")

    def generation(self, provider: str) -> int:
        response = _check(self.client.get(f"/resource_providers/{provider}", microversion=LATEST),
                          f"show provider {provider}")
        return response.json["generation"]

    def resource_class(self, name: str) -> None:
        """Make sure a custom resource class exists."""
        _check(self.client.put(f"/resource_classes/{name}", microversion=LATEST),
               f"create resource class {name}")

    def inventory(self, provider: str, resource_class: str, total: int,
                  **fields: int | float) -> None:
        """Add one inventory; ``max_unit`` defaults to ``total``, as upstream's fixtures do."""
        if resource_class.startswith("CUSTOM_"):
            self.resource_class(resource_class)
        body: dict[str, Any] = {"resource_class": resource_class, "total": total,
                                "max_unit": total, **fields,
                                "resource_provider_generation": self.generation(provider)}
        _check(self.client.post(f"/resource_providers/{provider}/inventories", body,
                                microversion=LATEST),
               f"add {resource_class} inventory to {provider}")

    def traits(self, provider: str, *traits: str) -> None:
        """Set the provider's traits, creating the custom ones."""
        for trait in traits:
            if trait.startswith("CUSTOM_"):
                _check(self.client.put(f"/traits/{trait}", microversion=LATEST),
                       f"create trait {trait}")
        body = {"traits": list(traits),
                "resource_provider_generation": self.generation(provider)}
        _check(self.client.put(f"/resource_providers/{provider}/traits", body,
                               microversion=LATEST),
               f"set traits of {provider}")

    def allocate(self, provider: str, resources: Mapping[str, int], project: str, user: str,
                 consumer: str | None = None) -> str:
        """Allocate ``resources`` of ``provider`` to a new consumer; the consumer's uuid."""
        consumer = consumer or str(uuid_module.uuid4())
        body = {"allocations": {provider: {"resources": dict(resources)}},
                "project_id": project, "user_id": user, "consumer_generation": None}
        _check(self.client.put(f"/allocations/{consumer}", body,
                               microversion=ALLOCATIONS_VERSION),
               f"allocate {dict(resources)} of {provider}")
        return consumer
