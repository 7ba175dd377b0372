"""The columns of nova's cell database that the offline tools read.

Explicit definitions instead of reflection: a read never depends on what
else a release added, and a missing table or column fails with the
database's own "no such table/column" error, which the reader turns into
one line. Only the columns read are declared; the real tables have many
more. Names are those of nova's ``nova/db/main/models.py``; ``deleted`` is
nova's soft-delete marker (0 = live, the row id once deleted).
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

compute_nodes = sa.Table(
    "compute_nodes", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36)),
    sa.Column("host", sa.String(255)),
    sa.Column("hypervisor_hostname", sa.String(255)),
    sa.Column("hypervisor_type", sa.Text),
    sa.Column("hypervisor_version", sa.Integer),
    sa.Column("vcpus", sa.Integer),
    sa.Column("memory_mb", sa.Integer),
    sa.Column("local_gb", sa.Integer),
    sa.Column("vcpus_used", sa.Integer),
    sa.Column("memory_mb_used", sa.Integer),
    sa.Column("local_gb_used", sa.Integer),
    sa.Column("free_ram_mb", sa.Integer),
    sa.Column("free_disk_gb", sa.Integer),
    sa.Column("disk_available_least", sa.Integer),
    sa.Column("running_vms", sa.Integer),
    sa.Column("cpu_allocation_ratio", sa.Float),
    sa.Column("ram_allocation_ratio", sa.Float),
    sa.Column("disk_allocation_ratio", sa.Float),
    sa.Column("numa_topology", sa.Text),
    # What nova's scheduler reads into its HostState besides the figures above.
    sa.Column("host_ip", sa.String(39)),
    sa.Column("cpu_info", sa.Text),
    sa.Column("supported_instances", sa.Text),
    sa.Column("metrics", sa.Text),
    sa.Column("pci_stats", sa.Text),
    sa.Column("stats", sa.Text),
    sa.Column("deleted", sa.Integer),
)

services = sa.Table(
    "services", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("host", sa.String(255)),
    sa.Column("binary", sa.String(255)),
    sa.Column("disabled", sa.Boolean),
    sa.Column("disabled_reason", sa.String(255)),
    sa.Column("forced_down", sa.Boolean),
    sa.Column("version", sa.Integer),
    # The heartbeat nova's servicegroup DB driver judges "up" by.
    sa.Column("last_seen_up", sa.DateTime),
    sa.Column("created_at", sa.DateTime),
    sa.Column("deleted", sa.Integer),
)

instances = sa.Table(
    "instances", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36)),
    sa.Column("host", sa.String(255)),
    sa.Column("node", sa.String(255)),
    sa.Column("vm_state", sa.String(255)),
    sa.Column("task_state", sa.String(255)),
    sa.Column("vcpus", sa.Integer),
    sa.Column("memory_mb", sa.Integer),
    sa.Column("root_gb", sa.Integer),
    sa.Column("ephemeral_gb", sa.Integer),
    sa.Column("project_id", sa.String(255)),
    sa.Column("deleted", sa.Integer),
)

instance_extra = sa.Table(
    "instance_extra", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("instance_uuid", sa.String(36)),
    sa.Column("numa_topology", sa.Text),
    sa.Column("pci_requests", sa.Text),
    sa.Column("flavor", sa.Text),
    sa.Column("deleted", sa.Integer),
)

pci_devices = sa.Table(
    "pci_devices", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36)),
    sa.Column("compute_node_id", sa.Integer),
    sa.Column("address", sa.String(12)),
    sa.Column("vendor_id", sa.String(4)),
    sa.Column("product_id", sa.String(4)),
    sa.Column("dev_type", sa.String(8)),
    sa.Column("status", sa.String(36)),
    sa.Column("label", sa.String(255)),
    sa.Column("request_id", sa.String(36)),
    sa.Column("extra_info", sa.Text),
    sa.Column("instance_uuid", sa.String(36)),
    sa.Column("numa_node", sa.Integer),
    sa.Column("parent_addr", sa.String(12)),
    sa.Column("deleted", sa.Integer),
)

migrations = sa.Table(
    "migrations", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36)),
    sa.Column("instance_uuid", sa.String(36)),
    sa.Column("source_compute", sa.String(255)),
    sa.Column("source_node", sa.String(255)),
    sa.Column("dest_compute", sa.String(255)),
    sa.Column("dest_node", sa.String(255)),
    sa.Column("status", sa.String(255)),
    # An Enum in nova; read as text so no type is created or checked.
    sa.Column("migration_type", sa.String(255)),
    sa.Column("deleted", sa.Integer),
)

#: Every table the reader needs, for the "missing table" check.
TABLES = (compute_nodes, services, instances, instance_extra, pci_devices, migrations)

#: Migration statuses nova treats as over (its "in progress" query excludes them).
FINISHED_MIGRATION_STATUSES = ("confirmed", "reverted", "error", "failed", "completed",
                               "cancelled", "done")
