"""SchedulerReportClient: the compute side's view of Placement.

The client speaks only Placement's public HTTP API, through any object with
``get/put/post/delete(url, json=None, microversion=None, headers=None)``
(see :mod:`nova_reshape.transport`): a running service via
:func:`http_placement`, or the in-process ``PlacementDirect``.

It keeps a local cache of provider trees (a :class:`ProviderTree` plus the
time each provider's inventory, traits and aggregates were last read) and
reconciles a driver-edited copy of that tree with Placement in
:meth:`SchedulerReportClient.update_from_provider_tree`, either provider by
provider or, when allocations are given, atomically through
``POST /reshaper``.

Conventions kept from nova, because callers rely on them: HTTP errors are
tested by status, never raised by the transport; every request names its
microversion or sends none (Placement 1.0); conflicts surface as the
exceptions in :mod:`nova_reshape.exception`.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import logging
import time
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import requests

from nova_reshape import exception
from nova_reshape.provider_tree import ProviderTree
from nova_reshape.report_allocations import AllocationMethods, ProviderAllocInfo
from nova_reshape.report_base import (
    AGGREGATE_GENERATION_VERSION,
    ALLOW_RESERVED_EQUAL_TOTAL_INVENTORY_VERSION,
    CONSUMER_GENERATION_VERSION,
    GET_USAGES_VERSION,
    NESTED_PROVIDER_API_VERSION,
    POST_RPS_RETURNS_PAYLOAD_API_VERSION,
    RESHAPER_VERSION,
    SAME_SUBTREE_VERSION,
    ReportClientBase,
    Retry,
    error_of,
    retries,
    safe_connect,
)
from nova_reshape.report_setters import ProviderSetterMethods
from nova_reshape.transport import Placement, http_placement
from placement_wsgi.constants import SHARING_TRAIT

__all__ = [
    "AGGREGATE_GENERATION_VERSION", "ALLOW_RESERVED_EQUAL_TOTAL_INVENTORY_VERSION",
    "CONSUMER_GENERATION_VERSION", "GET_USAGES_VERSION", "NESTED_PROVIDER_API_VERSION",
    "POST_RPS_RETURNS_PAYLOAD_API_VERSION", "RESHAPER_VERSION", "SAME_SUBTREE_VERSION",
    "AggInfo", "Placement", "ProviderAllocInfo", "Retry", "SchedulerReportClient", "TraitInfo",
    "http_placement", "retries", "safe_connect",
]

LOG = logging.getLogger(__name__)

AggInfo = collections.namedtuple("AggInfo", ["aggregates", "generation"])
TraitInfo = collections.namedtuple("TraitInfo", ["traits", "generation"])

#: Prefix of resource classes the client may create.
CUSTOM_PREFIX = "CUSTOM_"

# Failures during update_from_provider_tree that mean "this tree's cache is
# no longer trustworthy; give up this pass".
_SYNC_FAILURES = (
    exception.InvalidResourceClass,
    exception.ResourceProviderAggregateRetrievalFailed,
    exception.ResourceProviderDeletionFailed,
    exception.ResourceProviderInUse,
    exception.ResourceProviderRetrievalFailed,
    exception.ResourceProviderTraitRetrievalFailed,
    exception.ResourceProviderUpdateFailed,
    exception.TraitCreationFailed,
    exception.TraitRetrievalFailed,
)


class SchedulerReportClient(ProviderSetterMethods, AllocationMethods, ReportClientBase):
    """Client for Placement with a local provider-tree cache.

    ``placement``: the transport (see module docstring).
    ``association_refresh``: seconds after which a cached provider's
    inventory, traits and aggregates are read again (nova's
    ``[compute] resource_provider_association_refresh``, default 300; 0 means
    never again once read). ``sharing_providers_max_uuids_per_request``:
    aggregates per sharing-provider query (nova's default 200).
    ``retry_backoff``: the ``@retries`` sleep factor (nova sleeps up to
    ``2k`` s before attempt ``k``); tests pass 0.
    """

    def __init__(self, placement: Placement, association_refresh: int = 300,
                 sharing_providers_max_uuids_per_request: int = 200,
                 retry_backoff: float = 2.0) -> None:
        super().__init__(placement, retry_backoff=retry_backoff)
        if association_refresh < 0:
            raise ValueError("association_refresh must be >= 0")
        self.association_refresh = association_refresh
        self.sharing_providers_max_uuids_per_request = sharing_providers_max_uuids_per_request
        self._provider_tree = ProviderTree()
        self._association_refresh_time: dict[str, float] = {}

    # -- cache management -----------------------------------------------------

    def clear_provider_cache(self, init: bool = False) -> None:
        """Forget every cached provider and refresh time."""
        if not init:
            LOG.info("Clearing the report client's provider cache.")
        self._provider_tree = ProviderTree()
        self._association_refresh_time = {}

    def _clear_provider_cache_for_tree(self, rp_uuid: str) -> None:
        """Forget the whole tree containing ``rp_uuid`` (no-op if not cached)."""
        if not self._provider_tree.exists(rp_uuid):
            return
        uuids = self._provider_tree.get_provider_uuids_in_tree(rp_uuid)
        LOG.info("Clearing the cached provider tree rooted at %s", uuids[0])
        for uuid in uuids:
            self._association_refresh_time.pop(uuid, None)
        self._provider_tree.remove(uuids[0])

    def invalidate_resource_provider(self, name_or_uuid: str, cacheonly: bool = False) -> None:
        """Forget a provider's refresh time and (unless ``cacheonly``) the provider."""
        if not cacheonly:
            with contextlib.suppress(ValueError):
                self._provider_tree.remove(name_or_uuid)
        self._association_refresh_time.pop(name_or_uuid, None)

    def _associations_stale(self, uuid: str) -> bool:
        refreshed = self._association_refresh_time.get(uuid)
        if refreshed is None:
            return True
        if self.association_refresh == 0:
            return False
        return time.time() - refreshed > self.association_refresh

    # -- provider reads -------------------------------------------------------

    @safe_connect
    def get_providers_in_tree(self, context: Any, uuid: str) -> list[dict[str, Any]]:
        """Every provider in the tree containing ``uuid`` ([] if unknown)."""
        response = self.get(f"/resource_providers?in_tree={uuid}",
                            version=NESTED_PROVIDER_API_VERSION, context=context)
        if response.status_code == 200:
            return response.json()["resource_providers"]
        message = (f"Failed to retrieve resource provider tree from placement API for UUID "
                   f"{uuid}. Got {response.status_code}: {response.text}.")
        LOG.error(message)
        raise exception.ResourceProviderRetrievalFailed(message=message)

    @safe_connect
    def _get_resource_provider(self, context: Any, uuid: str) -> dict[str, Any] | None:
        """The provider record, or None when Placement does not know it."""
        response = self.get(f"/resource_providers/{uuid}",
                            version=NESTED_PROVIDER_API_VERSION, context=context)
        if response.status_code == 200:
            return response.json()
        if response.status_code == 404:
            return None
        LOG.error("Failed to retrieve resource provider record from placement API for "
                  "UUID %s. Got %s: %s.", uuid, response.status_code, response.text)
        raise exception.ResourceProviderRetrievalFailed(uuid=uuid)

    def get_provider_by_name(self, context: Any, name: str) -> dict[str, Any]:
        """The one provider called ``name``; ResourceProviderNotFound otherwise."""
        response = self.get(f"/resource_providers?{_query({'name': name})}", context=context)
        if response.status_code == 200:
            records = response.json()["resource_providers"]
            if len(records) == 1:
                return records[0]
            if len(records) > 1:
                LOG.error("Found multiple resource provider records for resource provider "
                          "name %s", name)
        else:
            LOG.warning("Failed to retrieve resource provider %s: %s %s", name,
                        response.status_code, response.text)
        raise exception.ResourceProviderNotFound(name_or_uuid=name)

    @safe_connect
    def _get_inventory(self, context: Any, rp_uuid: str) -> dict[str, Any] | None:
        response = self.get(f"/resource_providers/{rp_uuid}/inventories", context=context)
        if not response:
            return None
        return response.json()

    def _refresh_and_get_inventory(self, context: Any, rp_uuid: str) -> dict[str, Any] | None:
        """Read inventory and generation into the cache; None if the GET failed."""
        current = self._get_inventory(context, rp_uuid)
        if current is None:
            return None
        self._provider_tree.update_inventory(
            rp_uuid, current["inventories"], generation=current["resource_provider_generation"])
        return current

    def _get_provider_aggregates(self, context: Any, rp_uuid: str) -> AggInfo:
        response = self.get(f"/resource_providers/{rp_uuid}/aggregates",
                            version=AGGREGATE_GENERATION_VERSION, context=context)
        if response.status_code == 200:
            data = response.json()
            return AggInfo(set(data["aggregates"]), data["resource_provider_generation"])
        LOG.error("Failed to retrieve aggregates of provider %s: %s %s", rp_uuid,
                  response.status_code, response.text)
        raise exception.ResourceProviderAggregateRetrievalFailed(uuid=rp_uuid)

    def get_provider_traits(self, context: Any, rp_uuid: str) -> TraitInfo:
        response = self.get(f"/resource_providers/{rp_uuid}/traits", version="1.6",
                            context=context)
        if response.status_code == 200:
            data = response.json()
            return TraitInfo(set(data["traits"]), data["resource_provider_generation"])
        LOG.error("Failed to retrieve traits of provider %s: %s %s", rp_uuid,
                  response.status_code, response.text)
        raise exception.ResourceProviderTraitRetrievalFailed(uuid=rp_uuid)

    def _get_sharing_providers(self, context: Any,
                               agg_uuids: Iterable[str]) -> list[dict[str, Any]]:
        """Providers sharing via any of ``agg_uuids`` (queried in chunks)."""
        aggregates = sorted(agg_uuids)
        result: list[dict[str, Any]] = []
        chunk = max(1, self.sharing_providers_max_uuids_per_request)
        for start in range(0, len(aggregates), chunk):
            members = ",".join(aggregates[start:start + chunk])
            query = _query({"member_of": f"in:{members}", "required": SHARING_TRAIT})
            response = self.get(f"/resource_providers?{query}", version="1.18",
                                context=context)
            if response.status_code != 200:
                message = (f"Failed to retrieve sharing resource providers associated with "
                           f"the following aggregates from placement API: {members}. Got "
                           f"{response.status_code}: {response.text}.")
                LOG.error(message)
                raise exception.ResourceProviderRetrievalFailed(message=message)
            result.extend(response.json()["resource_providers"])
        return result

    def _refresh_associations(self, context: Any, rp_uuid: str, force: bool = False,
                              refresh_sharing: bool = True) -> None:
        """Re-read inventory, aggregates and traits of a cached provider if stale."""
        if not force and not self._associations_stale(rp_uuid):
            return
        self._refresh_and_get_inventory(context, rp_uuid)
        aggregates = self._get_provider_aggregates(context, rp_uuid)
        self._provider_tree.update_aggregates(
            rp_uuid, aggregates.aggregates, generation=aggregates.generation)
        traits = self.get_provider_traits(context, rp_uuid)
        self._provider_tree.update_traits(rp_uuid, traits.traits, generation=traits.generation)
        if refresh_sharing:
            for provider in self._get_sharing_providers(context, aggregates.aggregates):
                if not self._provider_tree.exists(provider["uuid"]):
                    # Sharing providers are always cached as roots of their own.
                    self._provider_tree.new_root(provider["name"], provider["uuid"],
                                                 generation=provider["generation"])
                self._refresh_associations(context, provider["uuid"], force=force,
                                           refresh_sharing=False)
        self._association_refresh_time[rp_uuid] = time.time()

    # -- provider creation and deletion ---------------------------------------

    @safe_connect
    def _create_resource_provider(self, context: Any, uuid: str, name: str,
                                  parent_provider_uuid: str | None = None
                                  ) -> dict[str, Any] | None:
        """Create a provider and return its record."""
        payload: dict[str, Any] = {"uuid": uuid, "name": name}
        if parent_provider_uuid is not None:
            payload["parent_provider_uuid"] = parent_provider_uuid
        response = self.post("/resource_providers", payload,
                             version=POST_RPS_RETURNS_PAYLOAD_API_VERSION, context=context)
        if response:
            LOG.info("Created resource provider record via placement API for resource "
                     "provider with UUID %s and name %s.", uuid, name)
            return response.json()
        if (response.status_code == 409
                and "Conflicting resource provider name:" not in response.text):
            # Someone else created the same uuid meanwhile: use theirs.
            LOG.info("Another thread already created a resource provider with the UUID %s. "
                     "Grabbing that record from the placement API.", uuid)
            return self._get_resource_provider(context, uuid)
        LOG.error("Failed to create resource provider record in placement API for UUID %s. "
                  "Got %s: %s.", uuid, response.status_code, response.text)
        raise exception.ResourceProviderCreationFailed(name=name)

    def _ensure_resource_provider(self, context: Any, uuid: str, name: str | None = None,
                                  parent_provider_uuid: str | None = None) -> str:
        """Make sure ``uuid``'s tree is cached (creating the provider if needed)."""
        if self._provider_tree.exists(uuid) and not self._associations_stale(uuid):
            to_refresh = [u for u in self._provider_tree.get_provider_uuids(uuid)
                          if self._associations_stale(u)]
        else:
            tree = self.get_providers_in_tree(context, uuid)
            created = None
            if not tree:
                created = self._create_resource_provider(
                    context, uuid, name or uuid, parent_provider_uuid=parent_provider_uuid)
                if created is None:
                    raise exception.ResourceProviderCreationFailed(name=name or uuid)
                # New: no traits or aggregates to read, inventory comes next.
                self._association_refresh_time[uuid] = time.time()
            self._provider_tree.populate_from_iterable(tree or [created])
            to_refresh = [provider["uuid"] for provider in tree]
        for refresh_uuid in to_refresh:
            self._refresh_associations(context, refresh_uuid, force=True)
        return uuid

    def get_provider_tree_and_ensure_root(self, context: Any, rp_uuid: str,
                                          name: str | None = None,
                                          parent_provider_uuid: str | None = None
                                          ) -> ProviderTree:
        """A deep copy of the whole cache, after making sure ``rp_uuid`` is in it."""
        self._ensure_resource_provider(context, rp_uuid, name=name,
                                       parent_provider_uuid=parent_provider_uuid)
        return copy.deepcopy(self._provider_tree)

    def _delete_provider(self, rp_uuid: str, context: Any = None) -> None:
        """DELETE the provider; gone (or already gone) providers leave the cache."""
        response = self.delete(f"/resource_providers/{rp_uuid}", context=context)
        if response or response.status_code == 404:
            if response:
                LOG.info("Deleted resource provider %s", rp_uuid)
            self.invalidate_resource_provider(rp_uuid)
            return
        LOG.error("Failed to delete resource provider with UUID %s from the placement API. "
                  "Got %s: %s.", rp_uuid, response.status_code, response.text)
        if response.status_code == 409:
            raise exception.ResourceProviderInUse()
        raise exception.ResourceProviderDeletionFailed(uuid=rp_uuid)

    # -- resource classes and traits --------------------------------------------

    def _ensure_resource_classes(self, context: Any, names: Iterable[str]) -> None:
        """Create the custom resource classes among ``names`` (standard ones exist)."""
        for name in sorted(n for n in set(names) if n.startswith(CUSTOM_PREFIX)):
            response = self.put(f"/resource_classes/{name}", None, version="1.7",
                                context=context)
            if response.status_code not in (201, 204):
                LOG.error("Failed to ensure resource class record with placement API for "
                          "resource class %s. Got %s: %s.", name, response.status_code,
                          response.text)
                raise exception.InvalidResourceClass(resource_class=name)

    def _ensure_traits(self, context: Any, traits: Iterable[str]) -> None:
        """Create the traits Placement does not know yet."""
        wanted = sorted(set(traits))
        if not wanted:
            return
        response = self.get("/traits?name=in:" + ",".join(wanted), version="1.6",
                            context=context)
        if response.status_code != 200:
            raise exception.TraitRetrievalFailed(error=response.text)
        for trait in sorted(set(wanted) - set(response.json()["traits"])):
            created = self.put(f"/traits/{trait}", None, version="1.6", context=context)
            if not created:
                raise exception.TraitCreationFailed(name=trait, error=created.text)

    # -- reshape and tree sync -------------------------------------------------

    def get_allocations_for_provider_tree(self, context: Any,
                                          nodename: str) -> dict[str, dict[str, Any]]:
        """``{consumer: GET /allocations/<consumer> body}`` for ``nodename``'s subtree.

        Reads the cache only (ValueError if ``nodename`` is not cached). Walks
        the node's own subtree, not the sharing providers, so a consumer that
        uses only sharing providers is not found. Each consumer's body covers
        all of its allocations, including ones on other providers.
        """
        consumers: set[str] = set()
        for rp_uuid in self._provider_tree.get_provider_uuids(nodename):
            consumers.update(self.get_allocations_for_resource_provider(
                context, rp_uuid).allocations)
        return {consumer: self.get_allocs_for_consumer(context, consumer)
                for consumer in sorted(consumers)}

    def _reshape(self, context: Any, inventories: Mapping[str, Any],
                 allocations: Mapping[str, Any]) -> requests.Response:
        """POST /reshaper; PlacementReshapeConflict or ReshapeFailed on failure."""
        self._ensure_resource_classes(context, {
            name for entry in inventories.values() for name in entry["inventories"]})
        payload = {"inventories": inventories, "allocations": allocations}
        response = self.post("/reshaper", payload, version=RESHAPER_VERSION, context=context)
        if not response:
            if (response.status_code == 409
                    and error_of(response).get("code") == "placement.concurrent_update"):
                raise exception.PlacementReshapeConflict(error=response.text)
            raise exception.ReshapeFailed(error=response.text)
        return response

    def _set_up_and_do_reshape(self, context: Any, old_tree: ProviderTree,
                               new_tree: ProviderTree,
                               allocations: Mapping[str, Any]) -> requests.Response:
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
            return self._reshape(context, inventories, allocations)
        except (exception.ReshapeFailed, exception.PlacementReshapeConflict):
            raise
        except Exception as error:
            LOG.exception("Reshape failed")
            raise exception.ReshapeFailed(error=error) from error

    def _refresh_after_reshape(self, context: Any, new_tree: ProviderTree,
                               new_uuids: list[str]) -> None:
        """The reshape bumped generations: read each provider's back before the PUTs."""
        for rp_uuid in new_uuids:
            with self._catch_all(rp_uuid):
                self._refresh_and_get_inventory(context, rp_uuid)

    @contextlib.contextmanager
    def _catch_all(self, rp_uuid: str) -> Iterator[None]:
        """Clear ``rp_uuid``'s cached tree on failure; wrap sync failures."""
        try:
            yield
        except exception.ResourceProviderUpdateConflict:
            self._clear_provider_cache_for_tree(rp_uuid)
            raise
        except _SYNC_FAILURES as error:
            self._clear_provider_cache_for_tree(rp_uuid)
            raise exception.ResourceProviderSyncFailed() from error

    def update_from_provider_tree(self, context: Any, new_tree: ProviderTree,
                                  allocations: Mapping[str, Any] | None = None) -> None:
        """Make Placement match ``new_tree``.

        Creates new providers top-down; with ``allocations`` (even ``{}``)
        sends one ``POST /reshaper`` carrying every provider's full inventory
        (and emptied inventory for providers about to go) plus
        ``allocations`` verbatim; deletes vanished providers bottom-up; then
        sets inventory, aggregates and traits where they differ from the
        cache. Best effort, not atomic: on a conflict the affected cache is
        cleared and the exception raised for the caller to re-drive from a
        fresh tree.
        """
        old_tree = self._provider_tree
        old_uuids = old_tree.get_provider_uuids()
        new_uuids = new_tree.get_provider_uuids()
        to_add = set(new_uuids) - set(old_uuids)
        to_remove = set(old_uuids) - set(new_uuids)

        for rp_uuid in new_uuids:
            if rp_uuid not in to_add:
                continue
            provider = new_tree.data(rp_uuid)
            with self._catch_all(rp_uuid):
                self._ensure_resource_provider(context, rp_uuid, name=provider.name,
                                               parent_provider_uuid=provider.parent_uuid)
                # Carry the fresh generation over so the PUTs below match it.
                new_tree.update_inventory(
                    rp_uuid, provider.inventory,
                    generation=self._provider_tree.data(rp_uuid).generation)

        if allocations is not None:
            try:
                self._set_up_and_do_reshape(context, old_tree, new_tree, allocations)
            except exception.PlacementReshapeConflict:
                self.clear_provider_cache()
                raise
            self._refresh_after_reshape(context, new_tree, new_uuids)

        for rp_uuid in reversed(old_uuids):
            if rp_uuid not in to_remove:
                continue
            with self._catch_all(rp_uuid):
                self._delete_provider(rp_uuid, context=context)

        for rp_uuid in reversed(new_uuids):
            provider = new_tree.data(rp_uuid)
            with self._catch_all(rp_uuid):
                self.set_inventory_for_provider(context, rp_uuid, provider.inventory)
                self.set_aggregates_for_provider(context, rp_uuid, provider.aggregates)
                self.set_traits_for_provider(context, rp_uuid, provider.traits)


def _query(params: Mapping[str, str]) -> str:
    return urllib.parse.urlencode(params, safe=":,")
