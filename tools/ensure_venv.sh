#!/usr/bin/env bash
# tools/ensure_venv.sh [EXTRAS]
#
# Make sure ./.venv exists and holds this checkout installed in editable mode
# with the given extras ("test", "postgresql,mysql", or nothing). Used by
# run_service.sh and run_tests.sh. The install runs only when the venv is new
# or setup.cfg / pyproject.toml / the extras changed since the last install
# (a stamp file in .venv records that), so repeated runs cost nothing and need
# no network. Python: $PYTHON, else python3.11, else python3 (>= 3.11).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

extras=${1:-}
venv=.venv

pick_python() {
    if [ -n "${PYTHON:-}" ]; then echo "$PYTHON"; return; fi
    if command -v python3.11 >/dev/null 2>&1; then echo python3.11; return; fi
    echo python3
}

if [ ! -x "$venv/bin/python" ]; then
    python=$(pick_python)
    if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
        echo "ensure_venv: $python is missing or older than 3.11; set PYTHON=/path/to/python3.11" >&2
        exit 1
    fi
    echo "ensure_venv: creating $venv with $python" >&2
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --upgrade pip >&2 || true
fi

digest=$(cat setup.cfg pyproject.toml | "$venv/bin/python" -c \
    'import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest()[:16])')
stamp="$venv/.installed-${extras:-base}-$digest"
if [ ! -e "$stamp" ]; then
    target=.
    [ -n "$extras" ] && target=".[$extras]"
    echo "ensure_venv: pip install -e '$target'" >&2
    "$venv/bin/python" -m pip install -q -e "$target" >&2
    rm -f "$venv/.installed-${extras:-base}-"*
    touch "$stamp"
fi
