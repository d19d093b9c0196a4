# Shared set-up for scripts/serve and scripts/test: a virtual environment in .venv with the project's
# dependencies, re-installed only when pyproject.toml changes. Sourced, not run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="${PYTHON:-python3}"
export NO_MKDOCS_2_WARNING=1 DISABLE_MKDOCS_2_WARNING=true

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
  echo "error: need root (or sudo) to run: $*" >&2; exit 1; fi; }

apt_install() {
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}

"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 10))' || {
  echo "error: Python 3.10 or newer is required ($PY is $("$PY" -V 2>&1))" >&2; exit 1; }

if [ ! -x "$VENV/bin/python" ]; then
  if ! "$PY" -m venv "$VENV" 2>/dev/null; then
    # Debian and Ubuntu ship venv separately.
    rm -rf "$VENV"
    apt_install "python3-venv"
    "$PY" -m venv "$VENV"
  fi
fi

stamp="$VENV/.installed-$(sha256sum "$ROOT/pyproject.toml" | cut -c1-16)-${EXTRAS:-base}"
if [ ! -f "$stamp" ]; then
  "$VENV/bin/python" -m pip install -q --upgrade pip
  if [ -n "${EXTRAS:-}" ]; then
    "$VENV/bin/python" -m pip install -q -e "$ROOT[$EXTRAS]"
  else
    "$VENV/bin/python" -m pip install -q -e "$ROOT"
  fi
  touch "$stamp"
fi
cd "$ROOT"
