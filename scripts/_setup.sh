# Shared set-up for scripts/serve and scripts/test: a virtual environment in .venv with the locked
# dependencies (requirements/base.txt, or requirements/test.txt when EXTRAS=test, hashes checked) and the
# project itself, re-installed only when pyproject.toml or the lock file changes. Sourced, not run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="${PYTHON:-python3}"

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
  echo "error: need root (or sudo) to run: $*" >&2; exit 1; fi; }

apt_install() {
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}

"$PY" -c 'import sys; sys.exit(not (3, 11, 5) <= sys.version_info < (3, 14))' || {
  echo "error: Python 3.11.5 to 3.13 is required ($PY is $("$PY" -V 2>&1)); set PYTHON=python3.x" >&2; exit 1; }

if [ ! -x "$VENV/bin/python" ]; then
  if ! "$PY" -m venv "$VENV" 2>/dev/null; then
    # Debian and Ubuntu ship venv separately.
    rm -rf "$VENV"
    apt_install "python3-venv"
    "$PY" -m venv "$VENV"
  fi
fi

LOCK="$ROOT/requirements/${EXTRAS:-base}.txt"
stamp="$VENV/.installed-$(cat "$ROOT/pyproject.toml" "$LOCK" | sha256sum | cut -c1-16)-${EXTRAS:-base}"
if [ ! -f "$stamp" ]; then
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q --require-hashes -r "$LOCK"
  "$VENV/bin/python" -m pip install -q --no-deps -e "$ROOT"
  touch "$stamp"
fi
cd "$ROOT"
