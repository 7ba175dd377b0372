#!/usr/bin/env bash
# ./run_tests.sh [PYTEST ARGS...]
#
# Fresh machine to passing tests in one command: creates ./.venv if needed,
# installs this checkout with its test extra (pip install -e '.[test]'), then
# runs `python -m pytest -q -n 2 --dist loadfile tests` (two processes, each
# test file in one of them; NOVA_RESHAPE_TEST_PROCESSES=0 runs in this process
# alone, e.g. for pdb). SQLite always; PostgreSQL and MariaDB too
# when NOVA_RESHAPE_TEST_POSTGRESQL / NOVA_RESHAPE_TEST_MYSQL name a server
# (see README.md). Extra arguments go to pytest, e.g. ./run_tests.sh -k trait.
# Exit status is pytest's (5 = no tests collected, also a failure).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
tools/ensure_venv.sh test
exec .venv/bin/python -m pytest -q -n "${NOVA_RESHAPE_TEST_PROCESSES:-2}" --dist loadfile tests "$@"
