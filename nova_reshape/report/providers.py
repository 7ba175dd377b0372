"""Provider records for the report client: reads, creation, deletion, and the cache refresh.

:class:`Providers` reads providers and their inventory, traits and
aggregates from Placement, creates and deletes providers, creates the
custom resource classes and traits others write, and brings cached
providers up to date when the :class:`~nova_reshape.report.cache.ProviderCache`
says they are stale (:meth:`Providers.ensure_resource_provider`). It sends
through a :class:`~nova_reshape.report.session.PlacementSession` and writes
what it reads into the cache it is given.
"""

from __future__ import annotations

import logging
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from nova_reshape import exception
from nova_reshape.report.cache import ProviderCache
from nova_reshape.report.session import (
    AGGREGATE_GENERATION_VERSION,
    NESTED_PROVIDER_API_VERSION,
    POST_RPS_RETURNS_PAYLOAD_API_VERSION,
    PlacementSession,
    safe_connect,
)
from placement_wsgi.constants import SHARING_TRAIT

LOG = logging.getLogger(__name__)

#: Prefix of resource classes the client may create.
CUSTOM_PREFIX = "CUSTOM_"

#: A provider record as Placement returns it (``uuid``, ``name``, ``generation``...).
ProviderRecord = dict[str, Any]


class AggInfo(NamedTuple):
    """A provider's aggregates and the generation they were read at."""

    aggregates: set[str]
    generation: int


class TraitInfo(NamedTuple):
    """A provider's traits and the generation they were read at."""

    traits: set[str]
    generation: int


def query(params: Mapping[str, str]) -> str:
    """A query string keeping ``:`` and ``,`` readable (``member_of=in:a,b``)."""
    return urllib.parse.urlencode(params, safe=":,")


class Providers:
    """Reads and writes provider records, keeping ``cache`` in step.

    ``sharing_providers_max_uuids_per_request``: aggregates per
    sharing-provider query (nova's default 200).
    """

    def __init__(self, session: PlacementSession, cache: ProviderCache,
                 sharing_providers_max_uuids_per_request: int = 200) -> None:
        self.session = session
        self.cache = cache
        self.sharing_providers_max_uuids_per_request = sharing_providers_max_uuids_per_request

    # -- reads ------------------------------------------------------------------

    @safe_connect
    def get_providers_in_tree(self, context: object, uuid: str) -> list[ProviderRecord]:
        """Every provider in the tree containing ``uuid`` ([] if unknown)."""
        response = self.session.get(f"/resource_providers?in_tree={uuid}",
                                    version=NESTED_PROVIDER_API_VERSION, context=context)
        if response.status_code == 200:
            return response.json()["resource_providers"]
        message = (f"Failed to retrieve resource provider tree from placement API for UUID "
                   f"{uuid}. Got {response.status_code}: {response.text}.")
        LOG.error(message)
        raise exception.ResourceProviderRetrievalFailed(message=message)

    @safe_connect
    def get_resource_provider(self, context: object, uuid: str) -> ProviderRecord | None:
        """The provider record, or None when Placement does not know it."""
        response = self.session.get(f"/resource_providers/{uuid}",
                                    version=NESTED_PROVIDER_API_VERSION, context=context)
        if response.status_code == 200:
            return response.json()
        if response.status_code == 404:
            return None
        LOG.error("Failed to retrieve resource provider record from placement API for "
                  "UUID %s. Got %s: %s.", uuid, response.status_code, response.text)
        raise exception.ResourceProviderRetrievalFailed(uuid=uuid)

    def get_provider_by_name(self, context: object, name: str) -> ProviderRecord:
        """The one provider called ``name``; ResourceProviderNotFound otherwise."""
        response = self.session.get(f"/resource_providers?{query({'name': name})}",
                                    context=context)
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
    def get_inventory(self, context: object, rp_uuid: str) -> dict[str, Any] | None:
        """``GET .../inventories`` body (inventories and generation); None if it failed."""
        response = self.session.get(f"/resource_providers/{rp_uuid}/inventories",
                                    context=context)
        if not response:
            return None
        return response.json()

    def refresh_and_get_inventory(self, context: object, rp_uuid: str) -> dict[str, Any] | None:
        """Read inventory and generation into the cache; None if the GET failed."""
        current = self.get_inventory(context, rp_uuid)
        if current is None:
            return None
        self.cache.tree.update_inventory(
            rp_uuid, current["inventories"], generation=current["resource_provider_generation"])
        return current

    def get_provider_aggregates(self, context: object, rp_uuid: str) -> AggInfo:
        """The provider's aggregates (1.19, with its generation)."""
        response = self.session.get(f"/resource_providers/{rp_uuid}/aggregates",
                                    version=AGGREGATE_GENERATION_VERSION, context=context)
        if response.status_code == 200:
            data = response.json()
            return AggInfo(set(data["aggregates"]), data["resource_provider_generation"])
        LOG.error("Failed to retrieve aggregates of provider %s: %s %s", rp_uuid,
                  response.status_code, response.text)
        raise exception.ResourceProviderAggregateRetrievalFailed(uuid=rp_uuid)

    def get_provider_traits(self, context: object, rp_uuid: str) -> TraitInfo:
        """The provider's traits (1.6, with its generation)."""
        response = self.session.get(f"/resource_providers/{rp_uuid}/traits", version="1.6",
                                    context=context)
        if response.status_code == 200:
            data = response.json()
            return TraitInfo(set(data["traits"]), data["resource_provider_generation"])
        LOG.error("Failed to retrieve traits of provider %s: %s %s", rp_uuid,
                  response.status_code, response.text)
        raise exception.ResourceProviderTraitRetrievalFailed(uuid=rp_uuid)

    def get_sharing_providers(self, context: object,
                              agg_uuids: Iterable[str]) -> list[ProviderRecord]:
        """Providers sharing via any of ``agg_uuids`` (queried in chunks)."""
        aggregates = sorted(agg_uuids)
        result: list[ProviderRecord] = []
        chunk = max(1, self.sharing_providers_max_uuids_per_request)
        for start in range(0, len(aggregates), chunk):
            members = ",".join(aggregates[start:start + chunk])
            sharing = query({"member_of": f"in:{members}", "required": SHARING_TRAIT})
            response = self.session.get(f"/resource_providers?{sharing}", version="1.18",
                                        context=context)
            if response.status_code != 200:
                message = (f"Failed to retrieve sharing resource providers associated with "
                           f"the following aggregates from placement API: {members}. Got "
                           f"{response.status_code}: {response.text}.")
                LOG.error(message)
                raise exception.ResourceProviderRetrievalFailed(message=message)
            result.extend(response.json()["resource_providers"])
        return result

    # -- the cache refresh --------------------------------------------------------

    def refresh_associations(self, context: object, rp_uuid: str, force: bool = False,
                             refresh_sharing: bool = True) -> None:
        """Re-read inventory, aggregates and traits of a cached provider if stale."""
        if not force and not self.cache.stale(rp_uuid):
            return
        tree = self.cache.tree
        self.refresh_and_get_inventory(context, rp_uuid)
        aggregates = self.get_provider_aggregates(context, rp_uuid)
        tree.update_aggregates(rp_uuid, aggregates.aggregates,
                               generation=aggregates.generation)
        traits = self.get_provider_traits(context, rp_uuid)
        tree.update_traits(rp_uuid, traits.traits, generation=traits.generation)
        if refresh_sharing:
            for provider in self.get_sharing_providers(context, aggregates.aggregates):
                if not tree.exists(provider["uuid"]):
                    # Sharing providers are always cached as roots of their own.
                    tree.new_root(provider["name"], provider["uuid"],
                                  generation=provider["generation"])
                self.refresh_associations(context, provider["uuid"], force=force,
                                          refresh_sharing=False)
        self.cache.mark_refreshed(rp_uuid)

    def ensure_resource_provider(self, context: object, uuid: str, name: str | None = None,
                                 parent_provider_uuid: str | None = None) -> str:
        """Make sure ``uuid``'s tree is cached (creating the provider if needed)."""
        if self.cache.tree.exists(uuid) and not self.cache.stale(uuid):
            to_refresh = [u for u in self.cache.tree.get_provider_uuids(uuid)
                          if self.cache.stale(u)]
        else:
            tree = self.get_providers_in_tree(context, uuid)
            created = None
            if not tree:
                created = self.create_resource_provider(
                    context, uuid, name or uuid, parent_provider_uuid=parent_provider_uuid)
                if created is None:
                    raise exception.ResourceProviderCreationFailed(name=name or uuid)
                # New: no traits or aggregates to read, inventory comes next.
                self.cache.mark_refreshed(uuid)
            self.cache.tree.populate_from_iterable(tree or [created])
            to_refresh = [provider["uuid"] for provider in tree]
        for refresh_uuid in to_refresh:
            self.refresh_associations(context, refresh_uuid, force=True)
        return uuid

    # -- creation and deletion ----------------------------------------------------

    @safe_connect
    def create_resource_provider(self, context: object, uuid: str, name: str,
                                 parent_provider_uuid: str | None = None
                                 ) -> ProviderRecord | None:
        """Create a provider and return its record."""
        payload: dict[str, Any] = {"uuid": uuid, "name": name}
        if parent_provider_uuid is not None:
            payload["parent_provider_uuid"] = parent_provider_uuid
        response = self.session.post("/resource_providers", payload,
                                     version=POST_RPS_RETURNS_PAYLOAD_API_VERSION,
                                     context=context)
        if response:
            LOG.info("Created resource provider record via placement API for resource "
                     "provider with UUID %s and name %s.", uuid, name)
            return response.json()
        if (response.status_code == 409
                and "Conflicting resource provider name:" not in response.text):
            # Someone else created the same uuid meanwhile: use theirs.
            LOG.info("Another thread already created a resource provider with the UUID %s. "
                     "Grabbing that record from the placement API.", uuid)
            return self.get_resource_provider(context, uuid)
        LOG.error("Failed to create resource provider record in placement API for UUID %s. "
                  "Got %s: %s.", uuid, response.status_code, response.text)
        raise exception.ResourceProviderCreationFailed(name=name)

    def delete_provider(self, rp_uuid: str, context: object = None) -> None:
        """DELETE the provider; gone (or already gone) providers leave the cache."""
        response = self.session.delete(f"/resource_providers/{rp_uuid}", context=context)
        if response or response.status_code == 404:
            if response:
                LOG.info("Deleted resource provider %s", rp_uuid)
            self.cache.invalidate(rp_uuid)
            return
        LOG.error("Failed to delete resource provider with UUID %s from the placement API. "
                  "Got %s: %s.", rp_uuid, response.status_code, response.text)
        if response.status_code == 409:
            raise exception.ResourceProviderInUse()
        raise exception.ResourceProviderDeletionFailed(uuid=rp_uuid)

    # -- resource classes and traits ------------------------------------------------

    def ensure_resource_classes(self, context: object, names: Iterable[str]) -> None:
        """Create the custom resource classes among ``names`` (standard ones exist)."""
        for name in sorted(n for n in set(names) if n.startswith(CUSTOM_PREFIX)):
            response = self.session.put(f"/resource_classes/{name}", None, version="1.7",
                                        context=context)
            if response.status_code not in (201, 204):
                LOG.error("Failed to ensure resource class record with placement API for "
                          "resource class %s. Got %s: %s.", name, response.status_code,
                          response.text)
                raise exception.InvalidResourceClass(resource_class=name)

    def ensure_traits(self, context: object, traits: Iterable[str]) -> None:
        """Create the traits Placement does not know yet."""
        wanted = sorted(set(traits))
        if not wanted:
            return
        response = self.session.get("/traits?name=in:" + ",".join(wanted), version="1.6",
                                    context=context)
        if response.status_code != 200:
            raise exception.TraitRetrievalFailed(error=response.text)
        for trait in sorted(set(wanted) - set(response.json()["traits"])):
            created = self.session.put(f"/traits/{trait}", None, version="1.6",
                                       context=context)
            if not created:
                raise exception.TraitCreationFailed(name=trait, error=created.text)
