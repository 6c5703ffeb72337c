#!/usr/bin/env bash
# The whole editor check (called by .ci/run):
#   VS Code client: npm ci, tsc typecheck, esbuild bundle, unit tests, grammar tests, `npm run package` (.vsix);
#   real editor:    code-server (cached) + the .vsix + headless Chromium via playwright-core,
#                   its screenshots go to this run's log folder (never into the checkout:
#                   `bash editors/vscode/scripts/docs-images.sh` regenerates docs/*.png);
#   Neovim:         headless test of editors/nvim against the real server.
# Prints one line per step and finally `editor checks: N passed, M failed, K skipped`; exits 1
# when a step failed. A tier is skipped (with the reason) only when its prerequisite is missing
# from the machine: no node/npm, no chromium, no nvim.
#
# Every run logs into a folder of its own, $STINKYWAIT_CACHE/ci-logs/<UTC time>-<random>
# (printed first; the newest 20 are kept), so concurrent runs never share a log.
#
# Environment: STINKYWAIT_PYTHON (default <repo>/.venv/bin/python),
#              STINKYWAIT_CACHE (default ~/.cache/stinkywait; code-server is installed there),
#              CHROMIUM (default: chromium on PATH, else /usr/bin/chromium),
#              STINKYWAIT_SCREENSHOTS (a folder: where the e2e's screenshots go instead of
#              the run's log folder; docs-images.sh points it at docs/).
set -uo pipefail

ext=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
repo=$(cd "$ext/../.." && pwd)
python=${STINKYWAIT_PYTHON:-$repo/.venv/bin/python}
cache=${STINKYWAIT_CACHE:-$HOME/.cache/stinkywait}
install_code_server=${CODE_SERVER_INSTALLER:-$repo/../shared/tools/install-code-server.sh}
code_server=$cache/code-server/node_modules/.bin/code-server
mkdir -p "$cache/ci-logs"
logs=$(mktemp -d "$cache/ci-logs/$(date -u +%Y%m%dT%H%M%SZ)-XXXXXX")
# keep the newest 20 runs' logs (a run that is still going is among them)
ls -1d "$cache/ci-logs"/*/ 2>/dev/null | sort | head -n -20 | xargs -r rm -rf
shots=${STINKYWAIT_SCREENSHOTS:-$logs}
screenshot=$shots/vscode-e2e.png
screenshot_plan=$shots/vscode-plan.png
echo "logs of this run: $logs"

passed=0
failed=0
skipped=0
failures=()
t0=$SECONDS

# step NAME CMD...: run CMD with its output in $logs/<slug>.log (shown in full on failure).
step() {
  local name=$1
  shift
  local slug log start rc
  slug=$(echo "$name" | tr -c 'A-Za-z0-9\n' '-' | tr -s '-')
  log="$logs/$slug.log"
  start=$SECONDS
  "$@" >"$log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then
    passed=$((passed + 1))
    printf 'PASS %-44s %4ss\n' "$name" $((SECONDS - start))
  else
    failed=$((failed + 1))
    failures+=("$name")
    printf 'FAIL %-44s %4ss (exit %s, log %s)\n' "$name" $((SECONDS - start)) "$rc" "$log"
    sed 's/^/    | /' "$log" | tail -n 80
  fi
  return $rc
}

# blocked NAME WHY: a tier that cannot run because an earlier step failed counts as failed.
blocked() {
  failed=$((failed + 1))
  failures+=("$1")
  printf 'FAIL %-44s %s\n' "$1" "$2"
}

skip() {
  skipped=$((skipped + 1))
  printf 'SKIP %-44s %s\n' "$1" "$2"
}

finish() {
  echo
  [ ${#failures[@]} -gt 0 ] && printf 'failed: %s\n' "${failures[@]}"
  echo "editor checks: $passed passed, $failed failed, $skipped skipped ($((SECONDS - t0))s)"
  [ "$failed" -eq 0 ]
  exit $?
}

# ---- the server the editors talk to ------------------------------------------------------
server_ready() {
  [ -x "$python" ] || { echo "no interpreter at $python: run 'make venv' in $repo (or set STINKYWAIT_PYTHON)"; return 1; }
  # from outside the checkout, like an editor would start it
  (cd / && "$python" -m stinkywait_lsp --version) || {
    echo "'$python -m stinkywait_lsp' does not start; refresh the install: $python -m pip install -e $repo"
    return 1
  }
}
step "language server starts (python -m stinkywait_lsp)" server_ready
server_ok=$?

# ---- VS Code client: build, grammar tests, package ---------------------------------------
npm_deps() {
  cd "$ext" || return 1
  local stamp=node_modules/.stinkywait-lock.sha256 want
  want=$(sha256sum package-lock.json | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    echo "node_modules matches package-lock.json ($want); npm ci not needed"
    return 0
  fi
  npm ci --no-audit --no-fund --prefer-offline && echo "$want" >"$stamp"
}
vsix_ok() {
  cd "$ext" || return 1
  rm -f stinkywait.vsix
  npm run package || return 1
  [ -s stinkywait.vsix ] || { echo "no stinkywait.vsix"; return 1; }
  # the manifest must list what the extension needs at run time
  npx --no-install vsce ls --no-dependencies >"$logs/vsix-files.txt" || return 1
  for f in dist/extension.js syntaxes/amdgpu-asm.tmLanguage.json syntaxes/stir.tmLanguage.json \
    language-configuration/amdgpu-asm.json language-configuration/stir.json LICENSE package.json \
    bundled/stinkywait_server.py bundled/libs/pygls/__init__.py bundled/libs/lsprotocol/types.py \
    bundled/libs/lark/__init__.py bundled/tool/stinkywait_lsp/__main__.py bundled/tool/stinkywait_core/syntax/stir_grammar.lark; do
    grep -qx "$f" "$logs/vsix-files.txt" || { echo "missing from the .vsix: $f"; return 1; }
  done
  if grep -E '^(src|node_modules|test)/|__pycache__|\.pyc$' "$logs/vsix-files.txt"; then
    echo "the .vsix ships sources, tests or byte code (see above)"
    return 1
  fi
}

vsix_built=1
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  skip "VS Code client (npm, tsc, esbuild, vsce)" "node/npm not installed"
  skip "code-server e2e" "node/npm not installed"
else
  echo "node $(node --version), npm $(npm --version)"
  if step "npm ci" npm_deps; then
    step "tsc typecheck" bash -c "cd '$ext' && npx --no-install tsc -p . --noEmit"
    step "esbuild bundle" bash -c "cd '$ext' && node scripts/esbuild.mjs"
    step "unit tests (detection)" bash -c "cd '$ext' && node scripts/unit-tests.mjs"
    step "grammar tests (scopes + snapshots)" bash -c "cd '$ext' && node scripts/grammar-tests.mjs"
    step "npm run package (.vsix)" vsix_ok && vsix_built=0
  fi

  # ---- real editor: code-server + Chromium ------------------------------------------------
  chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || echo /usr/bin/chromium)}
  if [ ! -x "$chromium" ]; then
    skip "code-server e2e" "no chromium (apt-get install chromium, or set CHROMIUM)"
  elif [ $vsix_built -ne 0 ]; then
    blocked "code-server e2e" "no .vsix was built (see above)"
  else
    install_cs() {
      if [ -x "$code_server" ] && "$code_server" --version 2>/dev/null | grep -q '^4\.100\.3'; then
        echo "cached: $("$code_server" --version | head -1)"
        return 0
      fi
      [ -f "$install_code_server" ] || { echo "installer not found: $install_code_server (set CODE_SERVER_INSTALLER)"; return 1; }
      bash "$install_code_server" "$cache/code-server"
    }
    if step "code-server 4.100.3 in $cache" install_cs; then
      if [ $server_ok -ne 0 ]; then
        blocked "code-server e2e" "the language server does not start (see above)"
      else
        mkdir -p "$(dirname "$screenshot")"
        e2e() {
          cd "$ext" && timeout 900 node test/e2e/run.mjs --code-server "$code_server" --vsix "$ext/stinkywait.vsix" \
            --python "$python" --chromium "$chromium" --screenshot "$screenshot" --screenshot-plan "$screenshot_plan"
        }
        step "code-server + Chromium e2e" e2e
        grep -E '^(PASS|FAIL) ' "$logs/code-server-Chromium-e2e.log" | sed 's/^/    /' | cut -c1-180
      fi
    fi
  fi
fi

# ---- Neovim --------------------------------------------------------------------------------
if ! command -v nvim >/dev/null; then
  skip "Neovim headless e2e" "nvim not installed (apt-get install neovim)"
elif [ $server_ok -ne 0 ]; then
  blocked "Neovim headless e2e" "the language server does not start (see above)"
else
  step "Neovim headless e2e ($(nvim --version | head -1))" "$repo/editors/nvim/test/run.sh" "$python"
  grep -E '^(PASS|FAIL) ' "$logs"/Neovim-headless-e2e*.log | sed 's/^/    /' | cut -c1-180
fi

finish
