"""Placement's providers and the allocations on each, as the consistency commands read them.

Over HTTP there is no other way than nova's: the provider listing, then one
``GET /resource_providers/{uuid}/allocations`` per provider. In-process on
the database (:func:`nova_reshape.transport.direct.on_database`) the
allocations come from PlacementDirect's bulk reader instead
(``read_provider_allocations``: two set-based statements per 2,000
providers), which is what a cloud of 10,000 compute nodes needs. Both give the same
:class:`ProviderAllocations`, in the order of the provider listing (by
provider id), which is the order nova's audit visits providers in.

Reading fails with :class:`PlacementReadError` (one line).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from nova_reshape.transport.base import Placement
from nova_reshape.transport.direct import on_database

#: The listing's microversion: the first with root and parent provider uuids.
LISTING_VERSION = "1.14"

#: ``progress(done, total)`` over providers read.
ReadProgress = Callable[[int, int], None]


class PlacementReadError(Exception):
    """Placement could not be read; the message is one line saying which read and why."""


def error_line(response: Any, what: str) -> str:
    """``what`` failed: the status and the API's error detail, on one line."""
    try:
        detail = response.json()["errors"][0].get("detail", "")
    except (ValueError, KeyError, IndexError, TypeError):
        detail = response.text[:200]
    return f"{what}: HTTP {response.status_code}: {' '.join(str(detail).split())}"


class Provider(NamedTuple):
    """A provider as the listing shows it (what the commands need of it)."""

    uuid: str
    name: str
    root: str


class ProviderAllocations(NamedTuple):
    """The allocations on one provider: consumer uuid -> {resource class: amount}."""

    provider: Provider
    consumers: Mapping[str, Mapping[str, int]]


def list_providers(placement: Placement, uuid: str | None = None) -> list[Provider]:
    """Every provider (or the one ``uuid`` names: an empty list when none does, or when
    ``uuid`` is no uuid at all, as Placement answers), in id order."""
    url = "/resource_providers" + (f"?uuid={uuid}" if uuid is not None else "")
    response = placement.request("GET", url, microversion=LISTING_VERSION)
    if uuid is not None and response.status_code == 400:
        return []
    if not response:
        raise PlacementReadError(error_line(response, "listing resource providers"))
    return [Provider(item["uuid"], item["name"], item["root_provider_uuid"])
            for item in response.json()["resource_providers"]]


def provider_allocations(placement: Placement, providers: Sequence[Provider],
                         progress: ReadProgress | None = None,
                         ) -> Iterator[ProviderAllocations]:
    """The allocations on each of ``providers``, in their order (see the module)."""
    done = 0
    reads = (_bulk(placement, providers) if on_database(placement) is not None
             else _per_provider(placement, providers))
    for read in reads:
        done += 1
        if progress:
            progress(done, len(providers))
        yield read


def _per_provider(placement: Placement, providers: Iterable[Provider],
                  ) -> Iterator[ProviderAllocations]:
    for provider in providers:
        response = placement.request("GET", f"/resource_providers/{provider.uuid}/allocations")
        if not response:
            raise PlacementReadError(
                error_line(response, f"allocations of resource provider {provider.uuid}"))
        yield ProviderAllocations(provider, {
            consumer: dict(entry["resources"])
            for consumer, entry in response.json()["allocations"].items()})


def _bulk(placement: Placement, providers: Sequence[Provider],
          ) -> Iterator[ProviderAllocations]:
    """The bulk reader's allocations per provider (two statements per 2,000)."""
    direct = on_database(placement)
    assert direct is not None
    reads = direct.read_provider_allocations([provider.uuid for provider in providers])
    for provider, (_, consumers) in zip(providers, reads, strict=True):
        yield ProviderAllocations(provider, consumers)
