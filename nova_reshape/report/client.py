"""SchedulerReportClient: the compute side's view of Placement (the client face).

The client speaks only Placement's public HTTP API, through any transport
(``request(method, url, json, microversion, headers)``, see
:mod:`nova_reshape.transport`): a running service via
:func:`~nova_reshape.transport.http_placement`, or the in-process
``open_direct``.

It owns its collaborators, built in its constructor and public so callers
and tests can look at them:

* :attr:`~SchedulerReportClient.session` (:class:`PlacementSession`): the
  one send path, request ids, retries;
* :attr:`~SchedulerReportClient.cache` (:class:`ProviderCache`): the cached
  provider trees and when each provider was last read;
* :attr:`~SchedulerReportClient.providers` (:class:`Providers`): provider
  reads, creation, deletion and the cache refresh;
* :attr:`~SchedulerReportClient.setters` (:class:`ProviderSetters`):
  per-provider inventory, traits and aggregates;
* :attr:`~SchedulerReportClient.allocations` (:class:`Allocations`):
  candidates, allocations, usages and the reshape.

The methods nova's resource tracker and this project call keep nova's names
and delegate; :meth:`SchedulerReportClient.update_from_provider_tree`, the
reconciliation of a driver-edited tree with Placement (provider by provider,
or atomically through ``POST /reshaper`` when allocations are given), is
written here because it drives all of them.

Conventions kept from nova, because callers rely on them: HTTP errors are
tested by status, never raised by the transport; every request names its
microversion or sends none (Placement 1.0); conflicts surface as the
exceptions in :mod:`nova_reshape.exception`.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from nova_reshape import exception
from nova_reshape.provider_tree import ProviderTree
from nova_reshape.report.allocations import Allocations, ProviderAllocInfo, ResourceRequest
from nova_reshape.report.cache import ProviderCache
from nova_reshape.report.providers import ProviderRecord, Providers, TraitInfo
from nova_reshape.report.session import PlacementSession
from nova_reshape.report.setters import ProviderSetters
from nova_reshape.transport.base import JsonBody, Placement, Response

LOG = logging.getLogger(__name__)

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


class SchedulerReportClient:
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
        self.cache = ProviderCache(association_refresh)
        self.session = PlacementSession(placement, retry_backoff=retry_backoff)
        self.providers = Providers(self.session, self.cache,
                                   sharing_providers_max_uuids_per_request)
        self.setters = ProviderSetters(self.session, self.cache, self.providers)
        self.allocations = Allocations(self.session, self.providers, self.cache)

    # -- nova's raw requests (url, data, version, context) --------------------------

    def get(self, url: str, version: str | None = None, context: object = None) -> Response:
        """See :meth:`PlacementSession.get`."""
        return self.session.get(url, version=version, context=context)

    def put(self, url: str, data: JsonBody, version: str | None = None,
            context: object = None) -> Response:
        """See :meth:`PlacementSession.put`."""
        return self.session.put(url, data, version=version, context=context)

    def post(self, url: str, data: JsonBody, version: str | None = None,
             context: object = None) -> Response:
        """See :meth:`PlacementSession.post`."""
        return self.session.post(url, data, version=version, context=context)

    def delete(self, url: str, version: str | None = None, context: object = None) -> Response:
        """See :meth:`PlacementSession.delete`."""
        return self.session.delete(url, version=version, context=context)

    # -- the provider cache ---------------------------------------------------------

    def clear_provider_cache(self, init: bool = False) -> None:
        """Forget every cached provider and refresh time."""
        self.cache.clear(init)

    def invalidate_resource_provider(self, name_or_uuid: str, cacheonly: bool = False) -> None:
        """Forget a provider's refresh time and (unless ``cacheonly``) the provider."""
        self.cache.invalidate(name_or_uuid, cacheonly)

    def get_provider_tree_and_ensure_root(self, context: object, rp_uuid: str,
                                          name: str | None = None,
                                          parent_provider_uuid: str | None = None
                                          ) -> ProviderTree:
        """A deep copy of the whole cache, after making sure ``rp_uuid`` is in it."""
        self.providers.ensure_resource_provider(context, rp_uuid, name=name,
                                                parent_provider_uuid=parent_provider_uuid)
        return self.cache.snapshot()

    # -- provider reads (see Providers) -----------------------------------------------

    def get_providers_in_tree(self, context: object, uuid: str) -> list[ProviderRecord]:
        """See :meth:`Providers.get_providers_in_tree`."""
        return self.providers.get_providers_in_tree(context, uuid)

    def get_provider_by_name(self, context: object, name: str) -> ProviderRecord:
        """See :meth:`Providers.get_provider_by_name`."""
        return self.providers.get_provider_by_name(context, name)

    def get_provider_traits(self, context: object, rp_uuid: str) -> TraitInfo:
        """See :meth:`Providers.get_provider_traits`."""
        return self.providers.get_provider_traits(context, rp_uuid)

    # -- per-provider setters (see ProviderSetters) -------------------------------------

    def set_inventory_for_provider(self, context: object, rp_uuid: str,
                                   inv_data: Mapping[str, Mapping[str, Any]]) -> None:
        """See :meth:`ProviderSetters.set_inventory_for_provider`."""
        self.setters.set_inventory_for_provider(context, rp_uuid, inv_data)

    def set_traits_for_provider(self, context: object, rp_uuid: str, traits: Iterable[str],
                                generation: int | None = None) -> None:
        """See :meth:`ProviderSetters.set_traits_for_provider`."""
        self.setters.set_traits_for_provider(context, rp_uuid, traits, generation)

    def set_aggregates_for_provider(self, context: object, rp_uuid: str,
                                    aggregates: Iterable[str], use_cache: bool = True,
                                    generation: int | None = None) -> None:
        """See :meth:`ProviderSetters.set_aggregates_for_provider`."""
        self.setters.set_aggregates_for_provider(context, rp_uuid, aggregates,
                                                 use_cache=use_cache, generation=generation)

    # -- allocations (see Allocations) ----------------------------------------------------

    def get_allocation_candidates(self, context: object, resource_request: ResourceRequest
                                  ) -> tuple[list[Any] | None, dict[str, Any] | None,
                                             str | None]:
        """See :meth:`Allocations.get_allocation_candidates`."""
        return self.allocations.get_allocation_candidates(context, resource_request)

    def get_allocations_for_resource_provider(self, context: object,
                                              rp_uuid: str) -> ProviderAllocInfo:
        """See :meth:`Allocations.get_allocations_for_resource_provider`."""
        return self.allocations.get_allocations_for_resource_provider(context, rp_uuid)

    def get_allocs_for_consumer(self, context: object, consumer: str) -> dict[str, Any]:
        """See :meth:`Allocations.get_allocs_for_consumer`."""
        return self.allocations.get_allocs_for_consumer(context, consumer)

    def get_allocations_for_consumer(self, context: object, consumer: str) -> dict[str, Any]:
        """See :meth:`Allocations.get_allocations_for_consumer`."""
        return self.allocations.get_allocations_for_consumer(context, consumer)

    def get_allocations_for_provider_tree(self, context: object,
                                          nodename: str) -> dict[str, dict[str, Any]]:
        """See :meth:`Allocations.get_allocations_for_provider_tree`."""
        return self.allocations.get_allocations_for_provider_tree(context, nodename)

    def claim_resources(self, context: object, consumer_uuid: str,
                        alloc_request: Mapping[str, Any], project_id: str, user_id: str,
                        allocation_request_version: str,
                        consumer_generation: int | None = None) -> bool | None:
        """See :meth:`Allocations.claim_resources`."""
        return self.allocations.claim_resources(
            context, consumer_uuid, alloc_request, project_id, user_id,
            allocation_request_version, consumer_generation=consumer_generation)

    def put_allocations(self, context: object, consumer_uuid: str,
                        payload: Mapping[str, Any]) -> bool:
        """See :meth:`Allocations.put_allocations`."""
        return self.allocations.put_allocations(context, consumer_uuid, payload)

    def remove_provider_tree_from_instance_allocation(self, context: object, consumer_uuid: str,
                                                      root_rp_uuid: str) -> bool:
        """See :meth:`Allocations.remove_provider_tree_from_instance_allocation`."""
        return self.allocations.remove_provider_tree_from_instance_allocation(
            context, consumer_uuid, root_rp_uuid)

    def delete_allocation_for_instance(self, context: object, uuid: str,
                                       consumer_type: str = "instance",
                                       force: bool = False) -> bool | None:
        """See :meth:`Allocations.delete_allocation_for_instance`."""
        return self.allocations.delete_allocation_for_instance(
            context, uuid, consumer_type=consumer_type, force=force)

    def move_allocations(self, context: object, source_consumer_uuid: str,
                         target_consumer_uuid: str) -> bool | None:
        """See :meth:`Allocations.move_allocations`."""
        return self.allocations.move_allocations(context, source_consumer_uuid,
                                                 target_consumer_uuid)

    def get_usages(self, context: object, project_id: str,
                   user_id: str | None = None) -> dict[str, int]:
        """See :meth:`Allocations.get_usages`."""
        return self.allocations.get_usages(context, project_id, user_id)

    def get_usages_counts_for_quota(self, context: object, project_id: str,
                                    user_id: str | None = None) -> dict[str, dict[str, int]]:
        """See :meth:`Allocations.get_usages_counts_for_quota`."""
        return self.allocations.get_usages_counts_for_quota(context, project_id, user_id)

    # -- the tree sync ------------------------------------------------------------------

    @contextlib.contextmanager
    def _catch_all(self, rp_uuid: str) -> Iterator[None]:
        """Clear ``rp_uuid``'s cached tree on failure; wrap sync failures."""
        try:
            yield
        except exception.ResourceProviderUpdateConflict:
            self.cache.clear_tree(rp_uuid)
            raise
        except _SYNC_FAILURES as error:
            self.cache.clear_tree(rp_uuid)
            raise exception.ResourceProviderSyncFailed() from error

    def update_from_provider_tree(self, context: object, new_tree: ProviderTree,
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
        old_tree = self.cache.tree
        old_uuids = old_tree.get_provider_uuids()
        new_uuids = new_tree.get_provider_uuids()
        to_add = set(new_uuids) - set(old_uuids)
        to_remove = set(old_uuids) - set(new_uuids)
        for rp_uuid in new_uuids:
            if rp_uuid in to_add:
                self._add_provider(context, new_tree, rp_uuid)
        if allocations is not None:
            self._reshape(context, old_tree, new_tree, allocations)
        for rp_uuid in reversed(old_uuids):
            if rp_uuid not in to_remove:
                continue
            with self._catch_all(rp_uuid):
                self.providers.delete_provider(rp_uuid, context=context)
        for rp_uuid in reversed(new_uuids):
            provider = new_tree.data(rp_uuid)
            with self._catch_all(rp_uuid):
                self.setters.set_inventory_for_provider(context, rp_uuid, provider.inventory)
                self.setters.set_aggregates_for_provider(context, rp_uuid, provider.aggregates)
                self.setters.set_traits_for_provider(context, rp_uuid, provider.traits)

    def _add_provider(self, context: object, new_tree: ProviderTree, rp_uuid: str) -> None:
        """Create (or read) a provider new to the cache, its generation carried to ``new_tree``."""
        provider = new_tree.data(rp_uuid)
        with self._catch_all(rp_uuid):
            self.providers.ensure_resource_provider(context, rp_uuid, name=provider.name,
                                                    parent_provider_uuid=provider.parent_uuid)
            # Carry the fresh generation over so the PUTs below match it.
            new_tree.update_inventory(rp_uuid, provider.inventory,
                                      generation=self.cache.tree.data(rp_uuid).generation)

    def _reshape(self, context: object, old_tree: ProviderTree, new_tree: ProviderTree,
                 allocations: Mapping[str, Any]) -> None:
        """The reshape, then each new provider's generation read back (it bumped them)."""
        try:
            self.allocations.set_up_and_do_reshape(context, old_tree, new_tree, allocations)
        except exception.PlacementReshapeConflict:
            self.cache.clear()
            raise
        for rp_uuid in new_tree.get_provider_uuids():
            with self._catch_all(rp_uuid):
                self.providers.refresh_and_get_inventory(context, rp_uuid)
