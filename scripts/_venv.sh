# Shared by scripts/demo and scripts/test: make (or reuse) a virtual environment with the project
# installed. Usage: . scripts/_venv.sh VENV_DIR EXTRAS
set -euo pipefail
_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_venv="$_root/$1"
_extras="${2:-}"
_python="${PYTHON:-python3}"
_stamp="$_venv/.hermes-pm-installed"
_want="$(cat "$_root/pyproject.toml" | sha256sum | cut -c1-16)-$_extras"
if [ ! -x "$_venv/bin/python" ]; then
    echo "creating $1 with $($_python --version)" >&2
    "$_python" -m venv "$_venv"
fi
if [ "$(cat "$_stamp" 2>/dev/null)" != "$_want" ]; then
    echo "installing hermes-pm${_extras:+[$_extras]} into $1" >&2
    _log="$_venv/install.log"
    if ! { "$_venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip &&
           "$_venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$_root${_extras:+[$_extras]}"; } \
           >"$_log" 2>&1; then
        echo "installing into $1 failed; pip said:" >&2
        tail -n 30 "$_log" >&2
        exit 1
    fi
    echo "$_want" > "$_stamp"
fi
VENV="$_venv"
ROOT="$_root"
