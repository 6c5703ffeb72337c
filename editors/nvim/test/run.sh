#!/usr/bin/env bash
# Headless Neovim e2e: the documented config + the real server on copies of the fixtures.
#   editors/nvim/test/run.sh [PYTHON]      (default: <repo>/.venv/bin/python)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
python=${1:-$repo/.venv/bin/python}
command -v nvim >/dev/null || { echo "nvim: not installed"; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/stinkywait-nvim-XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$repo/editors/vscode/test/fixtures/gemm_loop.s" "$repo/editors/vscode/test/fixtures/double_buffer.stir" "$work/"
cd "$work"
STINKYWAIT_PYTHON=$python STINKYWAIT_WORK=$work \
  timeout 180 nvim --headless -u NONE -i NONE -n -c "luafile $here/e2e.lua"
