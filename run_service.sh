#!/usr/bin/env bash
# ./run_service.sh [placement-api OPTIONS...]
#
# Fresh machine to a running Placement service in one command: creates
# ./.venv if needed and installs this checkout, creates or upgrades the
# schema of a local SQLite file (./placement.sqlite), then serves the API
# with the development server on http://127.0.0.1:8778/ with auth_strategy
# noauth2 (send "X-Auth-Token: admin"). Ctrl-C stops it; the data stays in
# the file. Override with the usual variables, e.g.
#   OS_PLACEMENT_DATABASE__CONNECTION=postgresql+psycopg://u:p@127.0.0.1/placement ./run_service.sh
# (install the driver first: .venv/bin/pip install -e '.[postgresql]'), and
# pass placement-api options, e.g. ./run_service.sh --port 8780.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
tools/ensure_venv.sh
export OS_PLACEMENT_DATABASE__CONNECTION=${OS_PLACEMENT_DATABASE__CONNECTION:-sqlite:///$PWD/placement.sqlite}
export OS_PLACEMENT_API__AUTH_STRATEGY=${OS_PLACEMENT_API__AUTH_STRATEGY:-noauth2}
.venv/bin/placement-manage db sync
exec .venv/bin/placement-api "$@"
