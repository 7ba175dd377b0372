"""Orphaned allocations: held on a compute provider by a consumer nova no longer accounts there.

The rules are those of nova's ``nova-manage placement audit`` (nova 34),
applied to every provider (or the one asked for):

* a provider's compute node is its tree's root; what nova accounts there
  is the node's live instances and in-progress migrations
  (:class:`~.nova_side.NovaHolders`);
* an allocation is looked at when it holds at least one of
  :data:`AUDITED_CLASSES` (allocations of custom classes only are
  ignored); it is orphaned when its consumer is not accounted on the root;
* a root that is no compute node (a sharing storage provider, a provider
  nova never had) accounts nobody: each such allocation there is orphaned;
* a finding is one (provider, consumer) pair, so a consumer orphaned on a
  root and on its child counts twice, as in nova.

:func:`find_orphans` decides from the reads (no I/O). :func:`delete_orphans`
removes them the way nova does, finding by finding in provider order, so
the rows (generations included) come out as nova leaves them: a consumer
with allocations on other providers too is rewritten without this one
(``GET`` then ``PUT /allocations/{consumer}`` at 1.28), else its
allocations are deleted (``DELETE /allocations/{consumer}``). After a
provider where a deletion failed it stops, as nova does. In-process on the
database the same writes go a batch of findings per transaction, each node
journaled (:mod:`.journaled_writes`).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import os_resource_classes as orc

from nova_reshape.consistency.journaled_writes import JournaledWrites, Touch
from nova_reshape.consistency.nova_side import NovaHolders
from nova_reshape.consistency.placement_reads import ProviderAllocations
from nova_reshape.transport.base import Placement
from placement_wsgi import errors
from placement_wsgi.objects.allocation import ConsumerAllocations
from placement_wsgi.objects.request_writes import RequestWrites

#: The classes that make an allocation nova's (any one of them is enough).
AUDITED_CLASSES = frozenset({
    orc.VCPU, orc.MEMORY_MB, orc.DISK_GB, orc.VGPU, orc.NET_BW_EGR_KILOBIT_PER_SEC,
    orc.NET_BW_IGR_KILOBIT_PER_SEC, orc.PCPU, orc.MEM_ENCRYPTION_CONTEXT})

#: The microversion of nova's consumer reads and rewrites.
CONSUMER_VERSION = "1.28"
#: Findings per transaction in-process.
BATCH = 200


class Finding(NamedTuple):
    """One orphaned allocation: ``consumer`` holds ``resources`` on ``provider``,
    whose root ``root`` is no compute node accounting it (``root_is_node``: whether
    the root is a compute node at all)."""

    provider: str
    root: str
    consumer: str
    resources: Mapping[str, int]
    root_is_node: bool


class AuditStatus(enum.IntEnum):
    """How an audit ended: its value is nova's exit status for it."""

    CLEAN = 0
    DELETE_FAILED = 1
    FOUND = 3
    DELETED = 4


@dataclass
class AuditOutcome:
    """What an audit found and, with ``--delete``, did."""

    findings: list[Finding]
    delete: bool = False
    deleted: list[Finding] = field(default_factory=list)
    #: Findings whose deletion Placement refused (with the reason), and the
    #: provider after which the run stopped.
    failed: list[tuple[Finding, str]] = field(default_factory=list)
    stopped_at: str | None = None

    @property
    def status(self) -> AuditStatus:
        if self.failed:
            return AuditStatus.DELETE_FAILED
        if not self.findings:
            return AuditStatus.CLEAN
        return AuditStatus.DELETED if self.delete else AuditStatus.FOUND


def is_audited(resources: Iterable[str]) -> bool:
    """Whether an allocation of ``resources`` (class names) is nova's to audit."""
    return any(name in AUDITED_CLASSES for name in resources)


def find_orphans(reads: Iterable[ProviderAllocations], nova: NovaHolders) -> list[Finding]:
    """The orphaned allocations among ``reads`` (in their order, consumers sorted)."""
    findings = []
    for read in reads:
        root = read.provider.root
        if not nova.audits(root):
            continue
        held = nova.holders(root)
        findings += [Finding(read.provider.uuid, root, consumer, resources,
                             nova.is_compute_node(root))
                     for consumer, resources in sorted(read.consumers.items())
                     if is_audited(resources) and consumer not in held]
    return findings


def delete_orphans(placement: Placement, findings: Sequence[Finding],
                   done: Callable[[Finding, str | None], None] | None = None,
                   writes: JournaledWrites | None = None, batch: int = BATCH) -> AuditOutcome:
    """Delete ``findings`` (in order) as nova does (see the module); ``done(finding,
    error)`` is called after each. Stops after the first provider with a failure.

    ``writes`` (in-process on the database): the same writes, ``batch`` findings
    per transaction, each node journaled (:mod:`.journaled_writes`); a batch
    Placement refuses is rolled back and done again one finding per transaction,
    so exactly what nova's one-by-one run writes is written.
    """
    outcome = AuditOutcome(findings=list(findings), delete=True)
    if writes is None:
        _one_by_one(lambda finding: remove_from_consumer(placement, finding), findings,
                    outcome, done)
        return outcome
    for start in range(0, len(findings), batch):
        chunk = findings[start:start + batch]
        try:
            writes.write([Touch(f.provider, f.consumer) for f in chunk],
                         lambda requests, chunk=chunk: remove_all_in(requests, chunk))
        except errors.PlacementError:
            _one_by_one(lambda finding: _write_one(writes, finding), chunk, outcome, done)
            if outcome.stopped_at is not None:
                return outcome
            continue
        for finding in chunk:
            outcome.deleted.append(finding)
            if done:
                done(finding, None)
    return outcome


def _one_by_one(remove: Callable[[Finding], str | None], findings: Sequence[Finding],
                outcome: AuditOutcome,
                done: Callable[[Finding, str | None], None] | None) -> None:
    """Each finding removed on its own, stopping after the provider of a failure."""
    for finding in findings:
        if outcome.stopped_at is not None and finding.provider != outcome.stopped_at:
            break
        error = remove(finding)
        if error is None:
            outcome.deleted.append(finding)
        else:
            outcome.failed.append((finding, error))
            outcome.stopped_at = finding.provider
        if done:
            done(finding, error)


def _write_one(writes: JournaledWrites, finding: Finding) -> str | None:
    try:
        writes.write([Touch(finding.provider, finding.consumer)],
                     lambda requests: remove_in(requests, finding))
    except errors.PlacementError as error:
        return f"HTTP {error.status}: {' '.join(str(error).split())}"
    return None


def remove_in(requests: RequestWrites, finding: Finding) -> None:
    """:func:`remove_from_consumer`'s writes in a transaction of ``requests``."""
    remove_all_in(requests, [finding])


def remove_all_in(requests: RequestWrites, findings: Sequence[Finding]) -> None:
    """:func:`remove_from_consumer`'s writes of each finding, in order, in a transaction
    of ``requests``: the consumers read once (and again after each rewrite), so each
    finding sees what nova's ``GET`` would; the deletions made together at the end
    (they bump no generation and only free capacity, which a rewrite without a
    provider never needs)."""
    bodies = requests.consumers([finding.consumer for finding in findings])
    deleted = []
    for finding in findings:
        body = bodies.get(finding.consumer, {"allocations": {}})
        if len(body["allocations"]) > 1:
            held = {uuid: dict(entry["resources"]) for uuid, entry in body["allocations"].items()
                    if uuid != finding.provider}
            requests.put_allocations([ConsumerAllocations(
                finding.consumer, body["project_id"] or "", body["user_id"] or "", held,
                consumer_generation=body["consumer_generation"])])
            bodies.update(requests.consumers([finding.consumer]))
        else:  # already gone counts as deleted, as in nova
            bodies.pop(finding.consumer, None)
            deleted.append(finding.consumer)
    requests.delete_all_allocations(deleted)


def remove_from_consumer(placement: Placement, finding: Finding) -> str | None:
    """Remove the consumer's allocation on the finding's provider; None when done,
    else why Placement refused."""
    url = f"/allocations/{finding.consumer}"
    current = placement.request("GET", url, microversion=CONSUMER_VERSION)
    if not current:
        return f"reading its allocations: HTTP {current.status_code}"
    body = current.json()
    if len(body["allocations"]) > 1:
        # Spread over several providers (nested, sharing, or a stale host):
        # keep the others, with the consumer's generation and owner as read.
        body["allocations"].pop(finding.provider, None)
        written = placement.request("PUT", url, json=body, microversion=CONSUMER_VERSION)
        return None if written.status_code == 204 else _refusal(written)
    deleted = placement.request("DELETE", url)
    # Already gone (404) is what nova counts as deleted too.
    return None if deleted.status_code in (204, 404) else _refusal(deleted)


def _refusal(response: object) -> str:
    status = getattr(response, "status_code", "?")
    try:
        detail = response.json()["errors"][0]["detail"]  # type: ignore[attr-defined]
    except (ValueError, KeyError, IndexError, TypeError):
        detail = getattr(response, "text", "")[:200]
    return f"HTTP {status}: {' '.join(str(detail).split())}"
