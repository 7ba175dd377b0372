"""Why the migration does not write a node: its failure classes and findings.

Every check before a write (the pre-flight's, the scheduling check's, the
consistency check's) reports what it found as a :class:`Finding`, whose
``code`` is a key of :data:`FAILURE_CLASSES`: what the class means and how
to fix it. docs/migrate-compute-inventory.md explains each class.
"""

from __future__ import annotations

import dataclasses
from typing import Any

#: code -> (what it means, how to fix it).
FAILURE_CLASSES: dict[str, tuple[str, str]] = {
    "node_not_found": (
        "no provider in Placement has the node's uuid or name",
        "check nodename and uuid in the host file; remove decommissioned nodes from it"),
    "node_mismatch": (
        "the node's uuid and name designate different providers, or not a root provider",
        "make nodename and uuid match the compute node (its root provider's name and uuid)"),
    "device_missing": (
        "a consumer uses a device, cell or provider the host description does not list",
        "add the device to the host file if it is still there; otherwise move or delete the "
        "consumer on the old release"),
    "migration_in_progress": (
        "an allocation that would move is held by a migration in progress",
        "confirm or revert the resize, or finish the migration, on the old release"),
    "unplaceable_allocation": (
        "the compute node holds allocations of a moving class that no device can take",
        "say in the host file which devices (mdevs, numa, pci, accelerators) the consumer "
        "uses, or delete the allocations of a consumer that no longer exists"),
    "amount_mismatch": (
        "what a consumer holds differs from the devices the host description gives it",
        "make the consumer's device list match its allocation, or heal the allocation on "
        "the old release"),
    "unknown_consumer": (
        "the host description names a consumer with no allocation on this node",
        "remove the consumer from the host file, or heal its allocations on the old release"),
    "sharing_provider": (
        "a sharing provider is in the node's tree or shares a class this migration moves",
        "move the shared inventory out of the compute node's tree or drop "
        "MISC_SHARES_VIA_AGGREGATE"),
    "foreign_provider": (
        "a provider the migration would adopt is owned by another service",
        "remove or rename the other service's provider, or drop the device from the host file"),
    "name_taken": (
        "a provider outside the node's tree already has a name the migration needs",
        "rename or delete that provider, or set device_name/name in the host file"),
    "capacity_exceeded": (
        "a provider would hold more than its capacity after the move",
        "correct the capacity in the host file, or move consumers off the device first"),
    "description_mismatch": (
        "the host description's capacity disagrees with Placement's inventory",
        "correct the capacity in the host file (Placement holds what the node reported)"),
    "ambiguous_class": (
        "two kinds of device would take the same resource class off the compute node",
        "give the PCI devices and accelerators distinct resource classes"),
    "pci_config": (
        "the PCI device list is one nova refuses",
        "list either a PF or its VFs, and give all VFs of one PF the same class and traits"),
    "accelerator_conflict": (
        "an accelerator matches several existing Cyborg providers, or Cyborg's uuid for "
        "it belongs to another provider",
        "give the accelerator the name of its Cyborg provider in the host file, or delete "
        "the stale provider"),
    "nova_conf": (
        "the host file and the target release's nova.conf disagree, or nova.conf lacks "
        "what the migrated tree needs",
        "change the nova.conf key the message names (or the host file) so both say the same"),
    "pcpu_shortage": (
        "the pinned guests would hold more PCPU than the dedicated CPU set provides",
        "add CPUs to cpu_dedicated_set (host file or nova.conf [compute]), or move pinned "
        "guests off the host on the old release"),
    "source_conflict": (
        "the sources of an in-memory description (nova's database, the collected file, "
        "nova.conf, Cyborg's database) disagree, or one lacks what the node needs",
        "correct the source the message names (run host collect again, set nova.conf, or "
        "fix the guest on the old release), or describe the host in a host file"),
    "orphaned_allocation": (
        "an allocation in the node's tree whose consumer nova accounts neither as an "
        "instance of the node nor as a migration in progress there (nova's placement "
        "audit): the reshape would move it into the new tree",
        "delete it before the migration, with this run's --nova-config and --config-file"),
    "missing_allocation": (
        "an instance of the node holds no allocation in Placement (nova's placement "
        "heal_allocations would write one, or cannot): the reshape would leave it out",
        "heal it before the migration, with this run's --nova-config and --config-file, "
        "or correct the instance on the old release where no command can"),
    "reshape_failed": (
        "the simulated reshape failed",
        "see the message and correct the host file"),
    "scheduling_lost": (
        "a flavor that had a valid host has none once the plan is applied (nova 34's "
        "scheduler, the computes running again)",
        "give the hosts what the flavor needs (e.g. [compute] cpu_dedicated_set for pinned "
        "flavors), or go on knowingly with --accept-scheduling-loss FLAVOR"),
}


@dataclasses.dataclass(frozen=True)
class Finding:
    """One reason not to write: ``code`` is a key of :data:`FAILURE_CLASSES`;
    ``command``: the command line that fixes this one, where there is one."""

    code: str
    node: str
    message: str
    consumer: str | None = None
    provider: str | None = None
    command: str | None = None

    @property
    def fix(self) -> str:
        text = FAILURE_CLASSES[self.code][1]
        return f"{text}: {self.command}" if self.command else text

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "node": self.node, "consumer": self.consumer,
                "provider": self.provider, "message": self.message, "fix": self.fix,
                "command": self.command}

    def __str__(self) -> str:
        about = ", ".join(part for part in (
            f"consumer {self.consumer}" if self.consumer else "",
            f"provider {self.provider}" if self.provider else "") if part)
        # A command ends the line bare, so that it can be copied as it is.
        return (f"{self.node}: [{self.code}] {self.message}"
                f"{f' ({about})' if about else ''}. Fix: {self.fix}"
                f"{'' if self.command else '.'}")
