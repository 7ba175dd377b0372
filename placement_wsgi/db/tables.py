"""SQLAlchemy Core tables of the Placement schema.

Table, column, constraint and index names follow the schema of an existing
Placement deployment at alembic revision ``a082b8bb98d0``, so that this service, the
offline tools and a reference Placement service can share one database.
Nothing may be renamed or added here without a migration of its own.
"""

from __future__ import annotations

import datetime

from sqlalchemy import (
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Unicode,
    UniqueConstraint,
    text,
)

metadata = MetaData()


def utcnow() -> datetime.datetime:
    """Naive UTC timestamp, the form the reference schema stores."""
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None, microsecond=0)


def _timestamps() -> list[Column]:
    return [
        Column("created_at", DateTime, nullable=True, default=utcnow),
        Column("updated_at", DateTime, nullable=True, onupdate=utcnow),
    ]


resource_classes = Table(
    "resource_classes", metadata,
    *_timestamps(),
    Column("id", Integer, primary_key=True, nullable=False, autoincrement=False),
    Column("name", String(255), nullable=False),
    UniqueConstraint("name", name="uniq_resource_classes0name"),
)

resource_providers = Table(
    "resource_providers", metadata,
    *_timestamps(),
    Column("id", Integer, primary_key=True, nullable=False),
    Column("uuid", String(36), nullable=False),
    Column("name", Unicode(200), nullable=True),
    Column("generation", Integer, nullable=True, default=0),
    Column("root_provider_id", Integer, ForeignKey("resource_providers.id"), nullable=True),
    Column("parent_provider_id", Integer, ForeignKey("resource_providers.id"), nullable=True),
    UniqueConstraint("uuid", name="uniq_resource_providers0uuid"),
    UniqueConstraint("name", name="uniq_resource_providers0name"),
    Index("resource_providers_root_provider_id_idx", "root_provider_id"),
    Index("resource_providers_parent_provider_id_idx", "parent_provider_id"),
)

inventories = Table(
    "inventories", metadata,
    *_timestamps(),
    Column("id", Integer, primary_key=True, nullable=False),
    Column("resource_provider_id", Integer, nullable=False),
    Column("resource_class_id", Integer, nullable=False),
    Column("total", Integer, nullable=False),
    Column("reserved", Integer, nullable=False),
    Column("min_unit", Integer, nullable=False),
    Column("max_unit", Integer, nullable=False),
    Column("step_size", Integer, nullable=False),
    Column("allocation_ratio", Float, nullable=False),
    UniqueConstraint("resource_provider_id", "resource_class_id",
                     name="uniq_inventories0resource_provider_resource_class"),
    Index("inventories_resource_class_id_idx", "resource_class_id"),
)

allocations = Table(
    "allocations", metadata,
    *_timestamps(),
    Column("id", Integer, primary_key=True, nullable=False),
    Column("resource_provider_id", Integer, nullable=False),
    Column("consumer_id", String(36), nullable=False),
    Column("resource_class_id", Integer, nullable=False),
    Column("used", Integer, nullable=False),
    Index("allocations_resource_provider_class_used_idx",
          "resource_provider_id", "resource_class_id", "used"),
    Index("allocations_resource_class_id_idx", "resource_class_id"),
    Index("allocations_consumer_id_idx", "consumer_id"),
)

placement_aggregates = Table(
    "placement_aggregates", metadata,
    *_timestamps(),
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("uuid", String(36), nullable=True),
    UniqueConstraint("uuid", name="uniq_placement_aggregates0uuid"),
)

resource_provider_aggregates = Table(
    "resource_provider_aggregates", metadata,
    *_timestamps(),
    Column("resource_provider_id", Integer, primary_key=True, nullable=False),
    Column("aggregate_id", Integer, primary_key=True, nullable=False),
    Index("resource_provider_aggregates_aggregate_id_idx", "aggregate_id"),
)

traits = Table(
    "traits", metadata,
    *_timestamps(),
    Column("id", Integer, primary_key=True, nullable=False, autoincrement=True),
    Column("name", Unicode(255), nullable=False),
    UniqueConstraint("name", name="uniq_traits0name"),
)

resource_provider_traits = Table(
    "resource_provider_traits", metadata,
    *_timestamps(),
    Column("trait_id", Integer, ForeignKey("traits.id"), primary_key=True, nullable=False),
    Column("resource_provider_id", Integer, ForeignKey("resource_providers.id"),
           primary_key=True, nullable=False),
    Index("resource_provider_traits_resource_provider_trait_idx",
          "resource_provider_id", "trait_id"),
)

projects = Table(
    "projects", metadata,
    *_timestamps(),
    Column("id", Integer, primary_key=True, nullable=False, autoincrement=True),
    Column("external_id", String(255), nullable=False),
    UniqueConstraint("external_id", name="uniq_projects0external_id"),
)

users = Table(
    "users", metadata,
    *_timestamps(),
    Column("id", Integer, primary_key=True, nullable=False, autoincrement=True),
    Column("external_id", String(255), nullable=False),
    UniqueConstraint("external_id", name="uniq_users0external_id"),
)

consumer_types = Table(
    "consumer_types", metadata,
    *_timestamps(),
    Column("id", Integer, primary_key=True, nullable=False, autoincrement=True),
    Column("name", Unicode(255), nullable=False),
    UniqueConstraint("name", name="uniq_consumer_types0name"),
)

consumers = Table(
    "consumers", metadata,
    *_timestamps(),
    Column("id", Integer, primary_key=True, nullable=False, autoincrement=True),
    Column("uuid", String(36), nullable=False),
    Column("project_id", Integer, nullable=False),
    Column("user_id", Integer, nullable=False),
    Column("generation", Integer, nullable=False, server_default=text("0"), default=0),
    Column("consumer_type_id", Integer, ForeignKey("consumer_types.id"), nullable=True),
    UniqueConstraint("uuid", name="uniq_consumers0uuid"),
    Index("consumers_project_id_uuid_idx", "project_id", "uuid"),
    Index("consumers_project_id_user_id_uuid_idx", "project_id", "user_id", "uuid"),
    Index("consumers_consumer_type_id_idx", "consumer_type_id"),
)

#: Tables in an order that respects foreign keys when emptying them.
ALL_TABLES_CHILD_FIRST = [
    allocations, consumers, consumer_types, projects, users,
    resource_provider_traits, resource_provider_aggregates, inventories,
    placement_aggregates, traits, resource_classes, resource_providers,
]
