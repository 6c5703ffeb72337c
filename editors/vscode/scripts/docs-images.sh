#!/usr/bin/env bash
# Regenerates the pictures in docs/ (docs/vscode-e2e.png: the hint and the hover on aiter's
# GEMM with its waits removed; docs/vscode-plan.png: the wait plan view) by running the editor
# checks with their screenshots pointed at docs/. The CI run (`.ci/run`, scripts/ci.sh) writes
# its screenshots into its own log folder and never touches the checkout; run this when the
# hover or the plan view changed, look at the pictures, and commit them.
#   bash editors/vscode/scripts/docs-images.sh       (needs what ci.sh needs, and ../shared)
set -euo pipefail
ext=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
repo=$(cd "$ext/../.." && pwd)
[ -d "$repo/../shared/corpus/asm" ] || { echo "docs-images: ../shared/corpus/asm is missing (the pictures show aiter's GEMM)"; exit 2; }
STINKYWAIT_SCREENSHOTS=$repo/docs bash "$ext/scripts/ci.sh"
git -C "$repo" status --short docs/
