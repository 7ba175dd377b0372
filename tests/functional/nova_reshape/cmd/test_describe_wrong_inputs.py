"""nova-reshape-manage placement describe_hosts on a wrong nova database: one line, its
exit status, nothing created (neither the database nor the output directory); on
every enabled engine."""

from __future__ import annotations

import io
import pathlib

from nova_reshape.cmd import manage
from tests.fixtures.bad_databases import (  # noqa: F401 (fixture)
    BadDatabase,
    assert_one_error_line,
    bad_database,
)


def test_every_wrong_nova_database_is_one_line_and_creates_nothing(
        tmp_path: pathlib.Path, bad_database: BadDatabase) -> None:  # noqa: F811
    out, err = io.StringIO(), io.StringIO()
    output = tmp_path / "described"
    code = manage.main(["placement", "describe_hosts", "--nova-database", bad_database.url,
                        "--output", str(output)], out=out, err=err)
    if bad_database.placement_schema:
        # Not Placement's database: nova's tables are missing, which a read finds.
        assert code == manage.EXIT_FAILED
        assert_one_error_line(err.getvalue(), "nova-reshape-manage")
    else:
        assert code == (manage.EXIT_FAILED if bad_database.transient
                        else manage.EXIT_BAD_INPUT)
        line = assert_one_error_line(err.getvalue(), "nova-reshape-manage", bad_database)
        assert line.startswith("nova-reshape-manage: error: nova database ")
    assert out.getvalue() == ""
    assert not output.exists()
    assert bad_database.created() == ""


def test_a_nova_conf_of_random_bytes_is_one_line(tmp_path: pathlib.Path) -> None:
    nova_conf = tmp_path / "nova.conf"
    nova_conf.write_bytes(b"\x97\xff\x00\x01 random bytes \xfe")
    database = tmp_path / "nova.sqlite"
    database.touch()
    err = io.StringIO()
    code = manage.main(["placement", "describe_hosts", "--nova-database",
                        f"sqlite:///{database}", "--nova-config", str(nova_conf),
                        "--output", str(tmp_path / "out")], out=io.StringIO(), err=err)
    assert code == manage.EXIT_BAD_INPUT
    assert f"{nova_conf}: not a text file" in assert_one_error_line(
        err.getvalue(), "nova-reshape-manage")
