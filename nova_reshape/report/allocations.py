"""Allocations for the report client: candidates, reads, claims, moves, usages, reshape.

:class:`Allocations` is given the session it sends through, the
:class:`~nova_reshape.report.providers.Providers` (provider trees read from
Placement, resource classes created before a reshape) and the provider
cache (read only, to walk a node's cached subtree). Consumer-generation
conflicts are told apart from provider-generation races by the ``consumer
generation conflict`` text of Placement's error detail: the former mean
someone else changed the consumer and surface as exceptions; the latter are
Placement-internal races and are retried (``@retries``).
"""

from __future__ import annotations

import copy
import logging
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple, Protocol

import requests

from nova_reshape import exception
from nova_reshape.provider_tree import ProviderTree
from nova_reshape.report.cache import ProviderCache
from nova_reshape.report.providers import Providers
from nova_reshape.report.session import (
    CONSUMER_GENERATION_VERSION,
    GET_USAGES_VERSION,
    RESHAPER_VERSION,
    SAME_SUBTREE_VERSION,
    PlacementSession,
    Retry,
    error_of,
    retries,
    safe_connect,
)
from nova_reshape.transport.base import Response

LOG = logging.getLogger(__name__)


class ProviderAllocInfo(NamedTuple):
    """``GET /resource_providers/{uuid}/allocations``: consumer -> its resources there."""

    allocations: dict[str, Any]


class HasQuerystring(Protocol):
    """A resource request object that renders its own query (nova's RequestSpec-like)."""

    def to_querystring(self) -> str: ...


#: What ``get_allocation_candidates`` accepts as the request.
ResourceRequest = HasQuerystring | str | Mapping[str, Any] | Iterable[tuple[str, Any]]

CONSUMER_CONFLICT = "consumer generation conflict"


def _version_tuple(version: str) -> tuple[int, int]:
    major, minor = version.split(".")
    return int(major), int(minor)


def _querystring(resource_request: ResourceRequest) -> str:
    """The query of a request: ``to_querystring()``, a string or key/value pairs."""
    if hasattr(resource_request, "to_querystring"):
        return resource_request.to_querystring()  # type: ignore[union-attr]
    if isinstance(resource_request, str):
        return resource_request
    return urllib.parse.urlencode(resource_request, doseq=True)


def _is_consumer_conflict(error: Mapping[str, Any]) -> bool:
    return (error.get("code") == "placement.concurrent_update"
            and CONSUMER_CONFLICT in error.get("detail", ""))


class Allocations:
    """Candidates, allocations, usages and the reshape, over ``session``."""

    def __init__(self, session: PlacementSession, providers: Providers,
                 cache: ProviderCache) -> None:
        self.session = session
        self.providers = providers
        self.cache = cache

    # -- candidates -----------------------------------------------------------

    @safe_connect
    def get_allocation_candidates(self, context: object, resource_request: ResourceRequest
                                  ) -> tuple[list[Any] | None, dict[str, Any] | None,
                                             str | None]:
        """``(allocation_requests, provider_summaries, version)`` or three Nones.

        ``resource_request`` is anything with ``to_querystring()``, a query
        string, or key/value pairs.
        """
        version = SAME_SUBTREE_VERSION
        query = _querystring(resource_request)
        response = self.session.get(f"/allocation_candidates?{query}", version=version,
                                    context=context)
        if response.status_code == 200:
            data = response.json()
            return data["allocation_requests"], data["provider_summaries"], version
        LOG.error("Failed to retrieve allocation candidates from placement API for filters: "
                  "%s\nGot %s: %s.", query, response.status_code, response.text)
        return None, None, None

    # -- reads ----------------------------------------------------------------

    def get_allocations_for_resource_provider(self, context: object,
                                              rp_uuid: str) -> ProviderAllocInfo:
        """``ProviderAllocInfo(allocations={consumer: {"resources": ...}})``."""
        response = self.session.get(f"/resource_providers/{rp_uuid}/allocations", context=context)
        if not response:
            raise exception.ResourceProviderAllocationRetrievalFailed(
                rp_uuid=rp_uuid, error=response.text)
        return ProviderAllocInfo(allocations=response.json()["allocations"])

    def get_allocs_for_consumer(self, context: object, consumer: str) -> dict[str, Any]:
        """The consumer's 1.28 body (``{"allocations": {}}`` if unknown)."""
        response = self.session.get(f"/allocations/{consumer}", version=CONSUMER_GENERATION_VERSION,
                                    context=context)
        if not response:
            raise exception.ConsumerAllocationRetrievalFailed(
                consumer_uuid=consumer, error=response.text)
        return response.json()

    @safe_connect
    def get_allocations_for_consumer(self, context: object, consumer: str) -> dict[str, Any]:
        """Legacy: only the inner ``allocations`` dict, ``{}`` on failure."""
        response = self.session.get(f"/allocations/{consumer}", context=context)
        if not response:
            return {}
        return response.json()["allocations"]

    # -- writes ---------------------------------------------------------------

    def _put_allocations(self, context: object, consumer_uuid: str, payload: Mapping[str, Any],
                         version: str = CONSUMER_GENERATION_VERSION) -> Response:
        response = self.session.put(f"/allocations/{consumer_uuid}", payload, version=version,
                                    context=context)
        if response.status_code != 204:
            LOG.warning("Failed to save allocation for %s. Got HTTP %s: %s", consumer_uuid,
                        response.status_code, response.text)
        return response

    @safe_connect
    @retries
    def claim_resources(self, context: object, consumer_uuid: str,
                        alloc_request: Mapping[str, Any], project_id: str, user_id: str,
                        allocation_request_version: str,
                        consumer_generation: int | None = None) -> bool:
        """Claim ``alloc_request`` (a candidate) for the consumer.

        When the consumer already holds allocations (a move), its current
        allocations are kept and the destination's providers it does not
        hold yet are added ("doubled up"). True on 204.
        """
        request = copy.deepcopy(dict(alloc_request))
        url = f"/allocations/{consumer_uuid}"
        payload = request
        current = self.session.get(url, version=CONSUMER_GENERATION_VERSION, context=context)
        if current.status_code == 200:
            body = current.json()
            held = body["allocations"]
            if held:
                if "consumer_generation" in request:
                    consumer_generation = request["consumer_generation"]
                else:
                    consumer_generation = body.get("consumer_generation")
                payload = _doubled_up(held, request)
        payload["project_id"] = project_id
        payload["user_id"] = user_id
        if _version_tuple(allocation_request_version) >= _version_tuple(
                CONSUMER_GENERATION_VERSION):
            payload["consumer_generation"] = consumer_generation
        response = self._put_allocations(context, consumer_uuid, payload,
                                         version=allocation_request_version)
        if response.status_code != 204:
            error = error_of(response)
            if _is_consumer_conflict(error):
                raise exception.AllocationUpdateFailed(
                    consumer_uuid=consumer_uuid,
                    error=f"the consumer {consumer_uuid} changed after the report client "
                          "read its state during the claim (another process, or an earlier "
                          "attempt whose answer was lost); claiming again re-reads it")
            if error.get("code") == "placement.concurrent_update":
                raise Retry("claim_resources",
                            "another process changed the resource providers involved in our "
                            f"attempt to put allocations for consumer {consumer_uuid}")
        return response.status_code == 204

    @retries
    def put_allocations(self, context: object, consumer_uuid: str,
                        payload: Mapping[str, Any]) -> bool:
        """PUT a complete 1.28 payload (allocations, project, user, generation)."""
        try:
            response = self._put_allocations(context, consumer_uuid, payload)
        except requests.exceptions.RequestException as error:
            raise exception.PlacementAPIConnectFailure() from error
        if response.status_code != 204:
            error = error_of(response)
            if _is_consumer_conflict(error):
                raise exception.AllocationUpdateFailed(
                    consumer_uuid=consumer_uuid, error=error.get("detail"))
            if error.get("code") == "placement.concurrent_update":
                raise Retry("put_allocations",
                            "another process changed the resource providers involved in our "
                            f"attempt to put allocations for consumer {consumer_uuid}")
        return response.status_code == 204

    def remove_provider_tree_from_instance_allocation(self, context: object, consumer_uuid: str,
                                                      root_rp_uuid: str) -> bool:
        """Drop the consumer's allocations on ``root_rp_uuid``'s tree, keep the rest."""
        response = self.session.get(f"/allocations/{consumer_uuid}",
                                    version=CONSUMER_GENERATION_VERSION, context=context)
        if response.status_code != 200:
            LOG.error("Failed to read allocations of %s: %s %s", consumer_uuid,
                      response.status_code, response.text)
            return False
        current = response.json()
        if not current["allocations"]:
            LOG.error("Expected to find allocations for consumer %s to remove the tree of "
                      "%s from, but found none.", consumer_uuid, root_rp_uuid)
            return False
        tree = {provider["uuid"]
                for provider in self.providers.get_providers_in_tree(context, root_rp_uuid) or []}
        dropped = [rp for rp in list(current["allocations"]) if rp in tree]
        if not dropped:
            LOG.warning("Consumer %s has no allocations on the tree of %s; nothing to do.",
                        consumer_uuid, root_rp_uuid)
            return True
        for rp_uuid in dropped:
            del current["allocations"][rp_uuid]
        return self._put_allocations(context, consumer_uuid, current).status_code == 204

    @safe_connect
    def delete_allocation_for_instance(self, context: object, uuid: str,
                                       consumer_type: str = "instance",
                                       force: bool = False) -> bool:
        """Remove every allocation of the consumer.

        ``force``: a plain DELETE (404 gives False). Otherwise the consumer
        generation read first guards a PUT of empty allocations, so a
        concurrent change fails with AllocationDeleteFailed.
        """
        url = f"/allocations/{uuid}"
        if force:
            response = self.session.delete(url, context=context)
            if response:
                LOG.info("Deleted allocations for %s %s", consumer_type, uuid)
                return True
            if response.status_code != 404:
                raise exception.AllocationDeleteFailed(consumer_uuid=uuid, error=response.text)
            return False
        response = self.session.get(url, version=CONSUMER_GENERATION_VERSION, context=context)
        if not response:
            raise exception.AllocationDeleteFailed(consumer_uuid=uuid, error=response.text)
        body = response.json()
        if body["allocations"] == {}:
            LOG.debug("Cannot delete allocation for %s consumer in placement as consumer "
                      "does not exist", uuid)
            return False
        body["allocations"] = {}
        response = self.session.put(url, body, version=CONSUMER_GENERATION_VERSION, context=context)
        if response.status_code == 204:
            LOG.info("Deleted allocations for %s %s", consumer_type, uuid)
            return True
        raise exception.AllocationDeleteFailed(consumer_uuid=uuid, error=response.text)

    @safe_connect
    @retries
    def move_allocations(self, context: object, source_consumer_uuid: str,
                         target_consumer_uuid: str) -> bool:
        """Move all of the source's allocations to the target in one POST /allocations."""
        source = self.get_allocs_for_consumer(context, source_consumer_uuid)
        target = self.get_allocs_for_consumer(context, target_consumer_uuid)
        if not source["allocations"]:
            LOG.debug("Consumer %s has no allocations to move", source_consumer_uuid)
            return True
        if target.get("allocations"):
            LOG.warning("Overwriting current allocation %s on consumer %s", target,
                        target_consumer_uuid)
        body = {
            source_consumer_uuid: {
                "allocations": {},
                "project_id": source["project_id"],
                "user_id": source["user_id"],
                "consumer_generation": source["consumer_generation"]},
            target_consumer_uuid: {
                "allocations": source["allocations"],
                "project_id": source["project_id"],
                "user_id": source["user_id"],
                "consumer_generation": target.get("consumer_generation")},
        }
        response = self.session.post("/allocations", body, version=CONSUMER_GENERATION_VERSION,
                                     context=context)
        if response.status_code != 204:
            error = error_of(response)
            if _is_consumer_conflict(error):
                raise exception.AllocationMoveFailed(
                    source_consumer=source_consumer_uuid,
                    target_consumer=target_consumer_uuid, error=response.text)
            if error.get("code") == "placement.concurrent_update":
                raise Retry("move_allocations",
                            "another process changed the resource providers involved in our "
                            f"attempt to post allocations for consumer {target_consumer_uuid}")
            LOG.warning("Unable to post allocations for consumer %s (%s): %s",
                        target_consumer_uuid, response.status_code, response.text)
        return response.status_code == 204

    # -- a node's allocations and the reshape ------------------------------------

    def get_allocations_for_provider_tree(self, context: object,
                                          nodename: str) -> dict[str, dict[str, Any]]:
        """``{consumer: GET /allocations/<consumer> body}`` for ``nodename``'s subtree.

        Reads the cache only (ValueError if ``nodename`` is not cached). Walks
        the node's own subtree, not the sharing providers, so a consumer that
        uses only sharing providers is not found. Each consumer's body covers
        all of its allocations, including ones on other providers.
        """
        consumers: set[str] = set()
        for rp_uuid in self.cache.tree.get_provider_uuids(nodename):
            consumers.update(self.get_allocations_for_resource_provider(
                context, rp_uuid).allocations)
        return {consumer: self.get_allocs_for_consumer(context, consumer)
                for consumer in sorted(consumers)}

    def reshape(self, context: object, inventories: Mapping[str, Any],
                allocations: Mapping[str, Any]) -> Response:
        """POST /reshaper; PlacementReshapeConflict or ReshapeFailed on failure."""
        self.providers.ensure_resource_classes(context, {
            name for entry in inventories.values() for name in entry["inventories"]})
        payload = {"inventories": inventories, "allocations": allocations}
        response = self.session.post("/reshaper", payload, version=RESHAPER_VERSION,
                                     context=context)
        if not response:
            if (response.status_code == 409
                    and error_of(response).get("code") == "placement.concurrent_update"):
                raise exception.PlacementReshapeConflict(error=response.text)
            raise exception.ReshapeFailed(error=response.text)
        return response

    def set_up_and_do_reshape(self, context: object, old_tree: ProviderTree,
                              new_tree: ProviderTree,
                              allocations: Mapping[str, Any]) -> Response:
        """:meth:`reshape` to ``new_tree``: every provider's full inventory, emptied
        inventory for the providers of ``old_tree`` about to go, ``allocations``
        verbatim; any other failure than Placement's answer is ReshapeFailed."""
        LOG.info("Performing resource provider inventory and allocation data migration.")
        new_uuids = new_tree.get_provider_uuids()
        inventories: dict[str, dict[str, Any]] = {}
        for rp_uuid in new_uuids:
            data = new_tree.data(rp_uuid)
            inventories[rp_uuid] = {"inventories": data.inventory,
                                    "resource_provider_generation": data.generation}
        # Providers about to be deleted are emptied in the same transaction,
        # so nothing can be scheduled onto them in between.
        for rp_uuid in old_tree.get_provider_uuids():
            if rp_uuid not in inventories:
                inventories[rp_uuid] = {
                    "inventories": {},
                    "resource_provider_generation": old_tree.data(rp_uuid).generation}
        try:
            return self.reshape(context, inventories, allocations)
        except (exception.ReshapeFailed, exception.PlacementReshapeConflict):
            raise
        except Exception as error:
            LOG.exception("Reshape failed")
            raise exception.ReshapeFailed(error=error) from error

    # -- usages ---------------------------------------------------------------

    def get_usages(self, context: object, project_id: str,
                   user_id: str | None = None) -> dict[str, int]:
        """``GET /usages`` (1.9): resource class -> amount used."""
        params = {"project_id": project_id}
        if user_id:
            params["user_id"] = user_id
        response = self.session.get(f"/usages?{urllib.parse.urlencode(params)}",
                                    version=GET_USAGES_VERSION, context=context)
        if not response:
            LOG.error("Failed to retrieve usages for project %s and user %s: %s %s",
                      project_id, user_id, response.status_code, response.text)
            raise exception.UsagesRetrievalFailed(project_id=project_id, user_id=user_id)
        return response.json()["usages"]

    def get_usages_counts_for_quota(self, context: object, project_id: str,
                                    user_id: str | None = None) -> dict[str, dict[str, int]]:
        """Cores (VCPU + PCPU) and RAM used by the project and, if given, the user."""

        def counts(usages: Mapping[str, int]) -> dict[str, int]:
            return {"cores": usages.get("VCPU", 0) + usages.get("PCPU", 0),
                    "ram": usages.get("MEMORY_MB", 0)}

        result = {"project": counts(self.get_usages(context, project_id))}
        if user_id:
            result["user"] = counts(self.get_usages(context, project_id, user_id))
        return result


def _doubled_up(held: Mapping[str, Any], request: Mapping[str, Any]) -> dict[str, Any]:
    """The request with the consumer's current allocations kept ("doubled up").

    Current allocations come first; destination providers the consumer does
    not hold yet are added. Other keys of the request (``mappings``) stay.
    """
    merged = {rp: {"resources": dict(entry["resources"])} for rp, entry in held.items()}
    for rp, entry in request["allocations"].items():
        if rp not in merged:
            merged[rp] = entry
    payload = {key: value for key, value in request.items() if key != "consumer_generation"}
    payload["allocations"] = merged
    return payload
