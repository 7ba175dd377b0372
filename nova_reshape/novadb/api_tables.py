"""nova's API database tables, the one declaration in the repo.

Flavors, host aggregates and the cell and host mappings live in the API
database (``nova_api``), not in a cell. As for the cell (:mod:`.tables`):
explicit definitions, names, types and constraints as in nova's
``nova/db/api/models.py``; the reader
selects :func:`~.tables.read_columns`, the test fixture
(tests/fixtures/nova_api_db.py) creates every column. These tables have no
soft-delete column: a deleted row is gone.
"""

from __future__ import annotations

import sqlalchemy as sa

from nova_reshape.novadb.tables import UNREAD, timestamps

metadata = sa.MetaData()

flavors = sa.Table(
    "flavors", metadata, *timestamps(soft_delete=False),
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(255), nullable=False, unique=True),
    sa.Column("memory_mb", sa.Integer, nullable=False),
    sa.Column("vcpus", sa.Integer, nullable=False),
    sa.Column("root_gb", sa.Integer),
    sa.Column("ephemeral_gb", sa.Integer),
    sa.Column("flavorid", sa.String(255), nullable=False, unique=True),
    sa.Column("swap", sa.Integer, nullable=False, default=0),
    sa.Column("rxtx_factor", sa.Float, default=1, info=UNREAD),
    sa.Column("vcpu_weight", sa.Integer, info=UNREAD),
    sa.Column("disabled", sa.Boolean, default=False, info=UNREAD),
    sa.Column("is_public", sa.Boolean, default=True),
    sa.Column("description", sa.Text, info=UNREAD),
)

flavor_extra_specs = sa.Table(
    "flavor_extra_specs", metadata, *timestamps(soft_delete=False),
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("key", sa.String(255), nullable=False),
    sa.Column("value", sa.String(255)),
    sa.Column("flavor_id", sa.Integer, sa.ForeignKey("flavors.id"), nullable=False),
    sa.UniqueConstraint("flavor_id", "key"),
)

aggregates = sa.Table(
    "aggregates", metadata, *timestamps(soft_delete=False),
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36)),
    sa.Column("name", sa.String(255), unique=True),
)

aggregate_hosts = sa.Table(
    "aggregate_hosts", metadata, *timestamps(soft_delete=False),
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("host", sa.String(255)),
    sa.Column("aggregate_id", sa.Integer, sa.ForeignKey("aggregates.id"), nullable=False),
    sa.UniqueConstraint("host", "aggregate_id"),
)

aggregate_metadata = sa.Table(
    "aggregate_metadata", metadata, *timestamps(soft_delete=False),
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("aggregate_id", sa.Integer, sa.ForeignKey("aggregates.id"), nullable=False),
    sa.Column("key", sa.String(255), nullable=False),
    sa.Column("value", sa.String(255), nullable=False),
    sa.UniqueConstraint("aggregate_id", "key"),
)

# Where each cell's database is (a URL, or a template nova fills from its
# [database] connection) and which compute service host is in which cell
# (``nova-manage cell_v2 discover_hosts`` writes host_mappings).
cell_mappings = sa.Table(
    "cell_mappings", metadata, *timestamps(soft_delete=False),
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36), nullable=False, unique=True),
    sa.Column("name", sa.String(255)),
    sa.Column("transport_url", sa.Text, nullable=False),
    sa.Column("database_connection", sa.Text, nullable=False),
    # Since Stein; not read, so older API databases can be read too.
    sa.Column("disabled", sa.Boolean, default=False, info=UNREAD),
)

host_mappings = sa.Table(
    "host_mappings", metadata, *timestamps(soft_delete=False),
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("cell_id", sa.Integer, sa.ForeignKey("cell_mappings.id"), nullable=False),
    sa.Column("host", sa.String(255), nullable=False, unique=True),
)

# Which cell holds each instance (``cell_id`` NULL until the instance is scheduled).
instance_mappings = sa.Table(
    "instance_mappings", metadata, *timestamps(soft_delete=False),
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("instance_uuid", sa.String(36), nullable=False, unique=True),
    sa.Column("cell_id", sa.Integer, sa.ForeignKey("cell_mappings.id")),
    sa.Column("project_id", sa.String(255), nullable=False),
    sa.Column("user_id", sa.String(255), info=UNREAD),
    sa.Column("queued_for_delete", sa.Boolean, default=False, info=UNREAD),
)
