#!/usr/bin/env bash
# ./run_demo.sh [tools/demo.py OPTIONS...]
#
# Fresh machine to the main job in one command: creates ./.venv if needed and
# installs this checkout, then runs the offline fast-forward-upgrade reshape
# end to end on a fresh SQLite file (tools/demo.py): generate a pre-upgrade
# deployment in the old flat shape, show the dry run, migrate every compute
# node with `nova-reshape-manage placement migrate_compute_inventory` through
# PlacementDirect (no service running) writing its HTML report (--report; the
# path is printed: open it in a browser), draw the trees after (a pinned
# guest's VCPU now PCPU, the disabled compute still disabled), and re-run to
# show that nothing changes the second time. Options: --hosts N,
# --instances N, --keep DIR (keep the database, host files and report.html),
# --report FILE (where the report goes).
#
# ./run_demo.sh --from-nova-db runs the rehearsal from databases alone
# (tools/demo_from_nova.py): a nova cell database and a collected mdev file,
# describe_hosts, then migrate_compute_inventory --nova-database: dry run
# (which source gave which fact), migrate, re-run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
tools/ensure_venv.sh
exec .venv/bin/python tools/demo.py "$@"
