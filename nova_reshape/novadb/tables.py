"""nova's cell database tables, the one declaration in the repo.

Explicit definitions instead of reflection: a read never depends on what
else a release added, and a missing table or column fails with the
database's own "no such table/column" error, which the reader turns into
one line. Names, types and constraints are those of nova's
``nova/db/main/models.py``; ``deleted`` is nova's soft-delete marker (0 =
live, the row id once deleted).

Two users, one schema: the reader selects only the columns
:func:`read_columns` returns (those a supported release has and the reader
uses); ``tools/make_nova_cell.py`` creates every declared table, with the
columns marked :data:`UNREAD` too, to build a nova-shaped test cell. The
reader never writes.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

metadata = sa.MetaData()

#: ``Column.info`` of a column nova has but the reader never selects (some
#: exist only in newer releases): declared so the test cell is nova-shaped.
UNREAD: dict[str, Any] = {"read": False}


def timestamps(soft_delete: bool = True, read: tuple[str, ...] = ()) -> list[sa.Column]:
    """The created/updated columns every OpenStack table has, plus nova's soft-delete pair.

    ``deleted`` is always read (every cell query filters on it); the others
    only when named in ``read``.
    """
    names = ["created_at", "updated_at"] + (["deleted_at"] if soft_delete else [])
    columns = [sa.Column(name, sa.DateTime, info={} if name in read else UNREAD)
               for name in names]
    if soft_delete:
        columns.append(sa.Column("deleted", sa.Integer, default=0))
    return columns


def read_columns(table: sa.Table) -> list[sa.ColumnElement[Any]]:
    """The columns of ``table`` the reader selects, in declaration order.

    An ``Enum`` column is read as text: no enum type is checked, so a value
    a newer nova adds is passed on, not refused.
    """
    return [sa.type_coerce(column, sa.String).label(column.name)
            if isinstance(column.type, sa.Enum) else column
            for column in table.c if column.info.get("read", True)]


services = sa.Table(
    "services", metadata, *timestamps(read=("created_at",)),
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36), info=UNREAD),
    sa.Column("host", sa.String(255)),
    sa.Column("binary", sa.String(255)),
    sa.Column("topic", sa.String(255), info=UNREAD),
    sa.Column("report_count", sa.Integer, nullable=False, default=0, info=UNREAD),
    sa.Column("disabled", sa.Boolean, default=False),
    sa.Column("disabled_reason", sa.String(255)),
    # The heartbeat nova's servicegroup DB driver judges "up" by.
    sa.Column("last_seen_up", sa.DateTime),
    sa.Column("forced_down", sa.Boolean, default=False),
    sa.Column("version", sa.Integer, default=0),
)

compute_nodes = sa.Table(
    "compute_nodes", metadata, *timestamps(),
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("service_id", sa.Integer, info=UNREAD),
    sa.Column("host", sa.String(255)),
    sa.Column("uuid", sa.String(36)),
    sa.Column("vcpus", sa.Integer, nullable=False),
    sa.Column("memory_mb", sa.Integer, nullable=False),
    sa.Column("local_gb", sa.Integer, nullable=False),
    sa.Column("vcpus_used", sa.Integer, nullable=False),
    sa.Column("memory_mb_used", sa.Integer, nullable=False),
    sa.Column("local_gb_used", sa.Integer, nullable=False),
    sa.Column("hypervisor_type", sa.Text, nullable=False),
    sa.Column("hypervisor_version", sa.Integer, nullable=False),
    sa.Column("hypervisor_hostname", sa.String(255)),
    sa.Column("free_ram_mb", sa.Integer),
    sa.Column("free_disk_gb", sa.Integer),
    sa.Column("current_workload", sa.Integer, info=UNREAD),
    sa.Column("running_vms", sa.Integer),
    # What nova's scheduler reads into its HostState besides the figures.
    sa.Column("cpu_info", sa.Text, nullable=False),
    sa.Column("disk_available_least", sa.Integer),
    sa.Column("host_ip", sa.String(39)),
    sa.Column("supported_instances", sa.Text),
    sa.Column("metrics", sa.Text),
    sa.Column("pci_stats", sa.Text),
    sa.Column("extra_resources", sa.Text, info=UNREAD),
    sa.Column("stats", sa.Text),
    sa.Column("numa_topology", sa.Text),
    sa.Column("ram_allocation_ratio", sa.Float),
    sa.Column("cpu_allocation_ratio", sa.Float),
    sa.Column("disk_allocation_ratio", sa.Float),
    sa.Column("mapped", sa.Integer, default=0, info=UNREAD),
)

instances = sa.Table(
    "instances", metadata, *timestamps(read=("created_at",)),
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("uuid", sa.String(36), nullable=False, unique=True),
    sa.Column("user_id", sa.String(255)),
    sa.Column("project_id", sa.String(255)),
    sa.Column("hostname", sa.String(255), info=UNREAD),
    sa.Column("vm_state", sa.String(255)),
    sa.Column("task_state", sa.String(255)),
    sa.Column("power_state", sa.Integer, info=UNREAD),
    sa.Column("memory_mb", sa.Integer),
    sa.Column("vcpus", sa.Integer),
    sa.Column("root_gb", sa.Integer),
    sa.Column("ephemeral_gb", sa.Integer),
    sa.Column("host", sa.String(255)),
    sa.Column("node", sa.String(255)),
    sa.Column("image_ref", sa.String(255)),
    sa.Column("compute_id", sa.BigInteger, info=UNREAD),
    sa.Column("instance_type_id", sa.Integer, info=UNREAD),
    sa.Column("launched_on", sa.Text, info=UNREAD),
    sa.Column("display_name", sa.String(255), info=UNREAD),
    sa.Column("cleaned", sa.Integer, default=0, info=UNREAD),
    sa.Column("hidden", sa.Boolean, default=False, info=UNREAD),
)

instance_extra = sa.Table(
    "instance_extra", metadata, *timestamps(),
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("instance_uuid", sa.String(36), sa.ForeignKey("instances.uuid"),
              nullable=False),
    sa.Column("device_metadata", sa.Text, info=UNREAD),
    sa.Column("numa_topology", sa.Text),
    sa.Column("pci_requests", sa.Text),
    sa.Column("flavor", sa.Text),
    sa.Column("vcpu_model", sa.Text, info=UNREAD),
    sa.Column("migration_context", sa.Text, info=UNREAD),
    sa.Column("keypairs", sa.Text, info=UNREAD),
    sa.Column("trusted_certs", sa.Text, info=UNREAD),
    sa.Column("resources", sa.Text, info=UNREAD),
)

pci_devices = sa.Table(
    "pci_devices", metadata, *timestamps(),
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36)),
    sa.Column("compute_node_id", sa.Integer, sa.ForeignKey("compute_nodes.id"),
              nullable=False),
    sa.Column("address", sa.String(12), nullable=False),
    sa.Column("vendor_id", sa.String(4), nullable=False),
    sa.Column("product_id", sa.String(4), nullable=False),
    sa.Column("dev_type", sa.String(8), nullable=False),
    sa.Column("dev_id", sa.String(255), info=UNREAD),
    sa.Column("label", sa.String(255), nullable=False),
    sa.Column("status", sa.String(36), nullable=False),
    sa.Column("request_id", sa.String(36)),
    sa.Column("extra_info", sa.Text),
    sa.Column("instance_uuid", sa.String(36)),
    sa.Column("numa_node", sa.Integer),
    sa.Column("parent_addr", sa.String(12)),
)

migrations = sa.Table(
    "migrations", metadata, *timestamps(),
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("source_compute", sa.String(255)),
    sa.Column("dest_compute", sa.String(255)),
    sa.Column("source_node", sa.String(255)),
    sa.Column("dest_node", sa.String(255)),
    sa.Column("dest_compute_id", sa.BigInteger, info=UNREAD),
    sa.Column("dest_host", sa.String(255), info=UNREAD),
    sa.Column("old_instance_type_id", sa.Integer, info=UNREAD),
    sa.Column("new_instance_type_id", sa.Integer, info=UNREAD),
    sa.Column("instance_uuid", sa.String(36), sa.ForeignKey("instances.uuid")),
    sa.Column("uuid", sa.String(36)),
    sa.Column("status", sa.String(255)),
    sa.Column("migration_type", sa.Enum("migration", "resize", "live-migration",
                                        "evacuation", name="migration_type")),
    sa.Column("hidden", sa.Boolean, default=False, info=UNREAD),
    sa.Column("cross_cell_move", sa.Boolean, default=False, info=UNREAD),
    sa.Column("user_id", sa.String(255), info=UNREAD),
    sa.Column("project_id", sa.String(255), info=UNREAD),
)

# An instance's disks; heal_allocations reads the root one (boot_index 0) to tell a
# volume-backed instance (no DISK_GB for its root disk) from an image-backed one.
block_device_mapping = sa.Table(
    "block_device_mapping", metadata, *timestamps(),
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("instance_uuid", sa.String(36), sa.ForeignKey("instances.uuid"), index=True),
    sa.Column("source_type", sa.String(255), info=UNREAD),
    sa.Column("destination_type", sa.String(255)),
    sa.Column("boot_index", sa.Integer),
    sa.Column("volume_id", sa.String(255), info=UNREAD),
)

#: Every table the reader needs, for the "missing table" check.
TABLES = (compute_nodes, services, instances, instance_extra, pci_devices, migrations)

#: Migration statuses nova treats as over (its "in progress" query excludes them).
FINISHED_MIGRATION_STATUSES = ("confirmed", "reverted", "error", "failed", "completed",
                               "cancelled", "done")
