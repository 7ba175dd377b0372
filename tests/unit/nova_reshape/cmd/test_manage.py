"""main(): every refusal, and every failure below as one, to its line and exit status."""

from __future__ import annotations

import io
import signal

import pytest
import requests
import sqlalchemy as sa

from nova_reshape import exception
from nova_reshape.cmd import manage
from nova_reshape.cmd.refusal import ExitClass, Refusal
from nova_reshape.compute import migrate
from placement_wsgi.cmd import signals

MIGRATE = ["placement", "migrate_compute_inventory", "--host-file", "hosts/"]


def _main(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return manage.main(list(argv), out, err), out.getvalue(), err.getvalue()


@pytest.mark.parametrize(("raised", "code", "line"), [
    (Refusal(ExitClass.BAD_INPUT, "configuration: bad"), 2, "error: configuration: bad"),
    (Refusal(ExitClass.FAILED, "cannot read"), 1, "error: cannot read"),
    (requests.ConnectionError("refused"), 1, "error: ConnectionError: refused"),
    (exception.NovaException(message="no"), 1, "error: NovaException: no"),
    (OSError("disk"), 1, "error: OSError: disk"),
    (sa.exc.OperationalError("SELECT 1", {}, Exception("gone\nmore")), 1,
     "error: database: "),
    (KeyboardInterrupt(), 130,
     "error: interrupted by SIGINT; what was written is complete; running again is safe"),
    (signals.Interrupted(signal.SIGTERM), 143, "error: interrupted by SIGTERM; "),
])
def test_what_stops_the_command_is_one_line_and_its_exit_status(monkeypatch, raised, code,
                                                                  line):
    def migrate_compute_inventory(request, out, err, argv=()):
        raise raised

    monkeypatch.setattr(manage, "migrate_compute_inventory", migrate_compute_inventory)
    got, out, err = _main(*MIGRATE)
    assert (got, out) == (code, "")
    assert err.startswith(f"nova-reshape-manage: {line}") and err.count("\n") == 1, err


def test_the_migrate_command_gets_the_request_built_once(monkeypatch):
    seen = []
    monkeypatch.setattr(manage, "migrate_compute_inventory",
                        lambda request, out, err, argv: seen.append((request, argv)) or 0)
    assert _main("--config-file", "p.conf", *MIGRATE, "--dry-run")[0] == 0
    [(request, argv)] = seen
    assert request.placement.config_files == ("p.conf",) and request.dry_run
    assert argv == ["--config-file", "p.conf", *MIGRATE, "--dry-run"]  # for the journal


def test_a_bad_host_file_is_refused_as_bad_input(tmp_path):
    code, out, err = _main("placement", "migrate_compute_inventory", "--host-file",
                           str(tmp_path / "absent.yaml"), "--placement-url",
                           "http://127.0.0.1:9/placement")
    assert (code, out) == (2, "")
    assert err.startswith(f"nova-reshape-manage: error: {tmp_path / 'absent.yaml'}: ")


def test_a_reader_refuses_an_unusable_placement_choice(tmp_path):
    hosts = tmp_path / "h.yaml"
    hosts.write_text("version: 1\nhost: h\nnodes:\n- nodename: h\n"
                     "  uuid: 10000000-0000-4000-8000-000000000001\n"
                     "  hypervisor_type: QEMU\n")
    code, out, err = _main("placement", "migrate_compute_inventory", "--host-file",
                           str(hosts), "--header", "X: y")
    assert (code, out) == (2, "")
    assert err == "nova-reshape-manage: error: --header only applies to --placement-url\n"


def test_an_interrupted_run_counts_the_nodes_written():
    seen = []
    tally = manage.WrittenTally(seen.append)
    for status in ("migrated", "updated", "unchanged", "failed", "not-run"):
        tally(migrate.NodeResult("n", status))
    assert tally.written == 2 and len(seen) == 5
    interruption = tally.interruption(signals.Interrupted(signal.SIGTERM), "run.html")
    assert interruption.exit_code == 143
    assert interruption.message == (
        "interrupted by SIGTERM; 2 node(s) were written (listed in run.html), every other "
        "node is untouched; running again is safe and completes the rest")
