"""Initial schema: every table but consumer_types.

Revision ID: b4ed3a175331 (the same id as the reference service's initial
revision, so both recognise a database the other created).
"""

import sqlalchemy as sa
from alembic import op

revision = "b4ed3a175331"
down_revision = None
branch_labels = None
depends_on = None


def _timestamps():
    return [sa.Column("created_at", sa.DateTime(), nullable=True),
            sa.Column("updated_at", sa.DateTime(), nullable=True)]


def _id(autoincrement=None):
    if autoincrement is None:
        return sa.Column("id", sa.Integer(), nullable=False)
    return sa.Column("id", sa.Integer(), autoincrement=autoincrement, nullable=False)


def upgrade() -> None:
    op.create_table(
        "resource_classes", *_timestamps(), _id(autoincrement=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name", name="uniq_resource_classes0name"))
    op.create_table(
        "resource_providers", *_timestamps(), _id(),
        sa.Column("uuid", sa.String(36), nullable=False),
        sa.Column("name", sa.Unicode(200), nullable=True),
        sa.Column("generation", sa.Integer(), nullable=True),
        sa.Column("root_provider_id", sa.Integer(), nullable=True),
        sa.Column("parent_provider_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["parent_provider_id"], ["resource_providers.id"]),
        sa.ForeignKeyConstraint(["root_provider_id"], ["resource_providers.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name", name="uniq_resource_providers0name"),
        sa.UniqueConstraint("uuid", name="uniq_resource_providers0uuid"))
    for name, columns in [
        ("resource_providers_name_idx", ["name"]),
        ("resource_providers_parent_provider_id_idx", ["parent_provider_id"]),
        ("resource_providers_root_provider_id_idx", ["root_provider_id"]),
        ("resource_providers_uuid_idx", ["uuid"]),
    ]:
        op.create_index(name, "resource_providers", columns)

    op.create_table(
        "inventories", *_timestamps(), _id(),
        *[sa.Column(name, sa.Integer(), nullable=False) for name in (
            "resource_provider_id", "resource_class_id", "total", "reserved",
            "min_unit", "max_unit", "step_size")],
        sa.Column("allocation_ratio", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("resource_provider_id", "resource_class_id",
                            name="uniq_inventories0resource_provider_resource_class"))
    op.create_index("inventories_resource_class_id_idx", "inventories", ["resource_class_id"])
    op.create_index("inventories_resource_provider_id_idx", "inventories",
                    ["resource_provider_id"])
    op.create_index("inventories_resource_provider_resource_class_idx", "inventories",
                    ["resource_provider_id", "resource_class_id"])

    op.create_table(
        "allocations", *_timestamps(), _id(),
        sa.Column("resource_provider_id", sa.Integer(), nullable=False),
        sa.Column("consumer_id", sa.String(36), nullable=False),
        sa.Column("resource_class_id", sa.Integer(), nullable=False),
        sa.Column("used", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id"))
    op.create_index("allocations_resource_provider_class_used_idx", "allocations",
                    ["resource_provider_id", "resource_class_id", "used"])
    op.create_index("allocations_resource_class_id_idx", "allocations", ["resource_class_id"])
    op.create_index("allocations_consumer_id_idx", "allocations", ["consumer_id"])

    op.create_table(
        "placement_aggregates", *_timestamps(), _id(autoincrement=True),
        sa.Column("uuid", sa.String(36), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("uuid", name="uniq_placement_aggregates0uuid"))
    op.create_index("ix_placement_aggregates_uuid", "placement_aggregates", ["uuid"])

    op.create_table(
        "resource_provider_aggregates", *_timestamps(),
        sa.Column("resource_provider_id", sa.Integer(), nullable=False),
        sa.Column("aggregate_id", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("resource_provider_id", "aggregate_id"))
    op.create_index("resource_provider_aggregates_aggregate_id_idx",
                    "resource_provider_aggregates", ["aggregate_id"])

    op.create_table(
        "traits", *_timestamps(), _id(autoincrement=True),
        sa.Column("name", sa.Unicode(255), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name", name="uniq_traits0name"))
    op.create_table(
        "resource_provider_traits", *_timestamps(),
        sa.Column("trait_id", sa.Integer(), nullable=False),
        sa.Column("resource_provider_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["resource_provider_id"], ["resource_providers.id"]),
        sa.ForeignKeyConstraint(["trait_id"], ["traits.id"]),
        sa.PrimaryKeyConstraint("trait_id", "resource_provider_id"))
    op.create_index("resource_provider_traits_resource_provider_trait_idx",
                    "resource_provider_traits", ["resource_provider_id", "trait_id"])

    for table in ("projects", "users"):
        op.create_table(
            table, *_timestamps(), _id(autoincrement=True),
            sa.Column("external_id", sa.String(255), nullable=False),
            sa.PrimaryKeyConstraint("id"),
            sa.UniqueConstraint("external_id", name=f"uniq_{table}0external_id"))

    op.create_table(
        "consumers", *_timestamps(), _id(autoincrement=True),
        sa.Column("uuid", sa.String(36), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("generation", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("uuid", name="uniq_consumers0uuid"))
    op.create_index("consumers_project_id_user_id_uuid_idx", "consumers",
                    ["project_id", "user_id", "uuid"])
    op.create_index("consumers_project_id_uuid_idx", "consumers", ["project_id", "uuid"])
