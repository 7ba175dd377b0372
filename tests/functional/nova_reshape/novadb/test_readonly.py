"""Another service's database opened for reading only (novadb/readonly.py)."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from nova_reshape.novadb.readonly import (
    BadDatabaseURL,
    DatabaseReadError,
    display_url,
    read_only,
    short_error,
)


def test_the_transaction_refuses_writes(nova_db_url):
    with pytest.raises(DatabaseReadError, match=r"(?i)nova database: .*read.?only"):
        with read_only(nova_db_url, "nova database") as connection:
            connection.execute(sa.text("UPDATE services SET disabled = disabled"))


def test_the_transaction_is_rolled_back_and_sees_one_snapshot(nova_db_url):
    with read_only(nova_db_url, "nova database") as connection:
        first = connection.execute(sa.text("SELECT COUNT(*) FROM services")).scalar_one()
        second = connection.execute(sa.text("SELECT COUNT(*) FROM services")).scalar_one()
        assert first == second == 5
        assert connection.in_transaction()


def test_display_url_hides_the_password():
    assert display_url("postgresql+psycopg://nova:secret@db/nova") == \
        "postgresql+psycopg://nova:***@db/nova"
    # A URL that does not parse is shown as written, its password still masked.
    assert display_url("not a url") == "not a url"
    assert display_url("postgresql://nova:secret@db:noport/nova") == \
        "postgresql://nova:***@db:noport/nova"


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_a_sqlite_url_must_name_a_file(url):
    with pytest.raises(BadDatabaseURL, match="^cyborg database: a SQLite URL must name a file$"):
        with read_only(url, "cyborg database"):
            pass


def test_short_error_is_the_first_line_of_the_driver_error():
    wrapped = sa.exc.OperationalError("SELECT 1", {}, Exception("no such table: x\nmore"))
    assert short_error(wrapped) == "no such table: x"
    assert short_error(ValueError()) == "ValueError"
