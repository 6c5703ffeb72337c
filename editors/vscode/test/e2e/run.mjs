// Real-editor end-to-end test: code-server (VS Code 1.100 in the browser) + the built .vsix
// (which carries the language server), driven through headless Chromium with playwright-core.
// It starts from a clean profile with no settings at all: the extension must find a Python
// 3.11+ on PATH and run its bundled server by itself.
//
//   node test/e2e/run.mjs --code-server BIN --vsix FILE --python PY [--screenshot PNG]
//                         [--screenshot-plan PNG] [--chromium BIN] [--keep]
//
// Every check reads what the user would see (editor text, hover widget, status bar, the
// file written by Ctrl+S); expected wait counts come from `stinkywait plan --json` on the
// same fixture, never from constants. Prints one `PASS`/`FAIL` line per check and a final
// `e2e: N passed, M failed`; exit status 1 when anything failed.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const extRoot = path.resolve(here, '..', '..');

function parseArgs(argv) {
  const out = { keep: false, chromium: process.env.CHROMIUM || '/usr/bin/chromium', timeout: Number(process.env.E2E_TIMEOUT_MS || 60000) };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => argv[++i];
    if (a === '--code-server') out.codeServer = next();
    else if (a === '--vsix') out.vsix = next();
    else if (a === '--python') out.python = next();
    else if (a === '--screenshot') out.screenshot = next();
    else if (a === '--screenshot-plan') out.screenshotPlan = next();
    else if (a === '--chromium') out.chromium = next();
    else if (a === '--keep') out.keep = true;
    else if (a === '--only') out.only = new RegExp(next(), 'i');
    else if (a === '--latency-out') out.latencyOut = next();
    else throw new Error(`unknown argument ${a}`);
  }
  for (const k of ['codeServer', 'vsix', 'python']) {
    if (!out[k]) throw new Error(`missing --${k.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())}`);
  }
  return out;
}

const opts = parseArgs(process.argv.slice(2));
const results = [];
function record(name, ok, detail = '') {
  results.push({ name, ok });
  console.log(`${ok ? 'PASS' : 'FAIL'} ${name}${detail ? ` — ${detail}` : ''}`);
}
/** Run one check; with `--only RE` (a development run) the checks whose names do not match
 *  are skipped, except the set-up ones (`always`). */
async function check(name, fn, { always = false } = {}) {
  if (opts.only && !always && !opts.only.test(name)) return true;
  try {
    const detail = await fn();
    record(name, true, typeof detail === 'string' ? detail : '');
    return true;
  } catch (err) {
    record(name, false, err instanceof Error ? err.message : String(err));
    return false;
  }
}
function assert(cond, message) {
  if (!cond) throw new Error(message);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function poll(fn, { timeout = opts.timeout, interval = 250, what = 'condition' } = {}) {
  const end = Date.now() + timeout;
  let last;
  while (Date.now() < end) {
    try {
      last = await fn();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    await sleep(interval);
  }
  throw new Error(`timed out after ${timeout} ms waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
}

/** Planned waits of `file` according to the CLI (same engine the server uses). */
function cliPlan(file, extra = []) {
  const r = spawnSync(opts.python, ['-m', 'stinkywait_core.cli.main', 'plan', file, '--json', ...extra], { encoding: 'utf8' });
  if (r.status !== 0 && !r.stdout) throw new Error(`stinkywait plan ${file} failed: ${r.stderr}`);
  const plan = JSON.parse(r.stdout);
  return plan.functions.flatMap((f) => f.waits);
}

/** `stinkywait check --format json` of `file`: errors and warnings a user sees for it. */
function cliSeverities(file) {
  const r = spawnSync(opts.python, ['-m', 'stinkywait_core.cli.main', 'check', file, '--format', 'json'], { encoding: 'utf8' });
  const entry = JSON.parse(r.stdout).files[0];
  const all = [...entry.diagnostics, ...entry.findings];
  return { errors: all.filter((d) => d.severity === 'error').length, warnings: all.filter((d) => d.severity === 'warning').length };
}

/** The producer that sets a wait's count: smallest countFrom, then the earliest line. */
function bindingDep(w) {
  return [...(w.deps ?? [])].sort((a, b) => a.countFrom - b.countFrom || a.line - b.line || String(a.pred ?? '').localeCompare(String(b.pred ?? '')))[0];
}

/** "line mnemonic" of every op a hover names: `L12 m`, `L427–434 m ×8`, `L435–438, 440 m`. */
function listedOps(text) {
  const out = new Set();
  for (const m of text.matchAll(/L([\d–, ]+) ([\w.]+)/g)) {
    for (const part of m[1].split(',')) {
      const [lo, hi] = part.trim().split('–').map(Number);
      for (let l = lo; l <= (hi || lo); l++) out.add(`${l} ${m[2]}`);
    }
  }
  return out;
}

const WAIT_LINE = /^\s*s_wait_[a-z_]+\b/;
const waitLines = (text) => text.split('\n').filter((l) => WAIT_LINE.test(l));

// ---------------------------------------------------------------------------------------
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'stinkywait-e2e-'));
const dataDir = path.join(work, 'data');
const extDir = path.join(work, 'extensions');
const ws = path.join(work, 'workspace');
fs.mkdirSync(path.join(dataDir, 'User'), { recursive: true });
fs.mkdirSync(ws, { recursive: true });
for (const f of ['gemm_loop.s', 'double_buffer.stir', 'llc_order.s', 'not_amdgpu.s']) {
  fs.copyFileSync(path.join(extRoot, 'test', 'fixtures', f), path.join(ws, f));
}
// the demo kernel: its target directive is on line 10, so its language is found by content
const repoRoot = path.resolve(extRoot, '..', '..');
fs.copyFileSync(path.join(repoRoot, 'examples', 'gemm_loop.s'), path.join(ws, 'demo_loop.s'));
const demoPlan = cliPlan(path.join(ws, 'demo_loop.s'));
// aiter's real GEMM with its rebuildable waits removed (skipped when ../shared is absent)
const corpusGemm = path.join(repoRoot, '..', 'shared', 'corpus', 'asm', 'aiter_gfx1250_mxscale_gemm1_final_isa.s');
const strippedFile = path.join(ws, 'gemm1_stripped.s');
const haveGemm = fs.existsSync(corpusGemm);
if (haveGemm) {
  const stripped = fs.readFileSync(corpusGemm, 'utf8').split('\n')
    .filter((l) => !/^\s*s_wait_(dscnt|loadcnt|tensorcnt|asynccnt)\b/.test(l)).join('\n');
  fs.writeFileSync(strippedFile, stripped);
}
// aiter's hand-written gfx942 kernel: its first target directive is on line 1362
const corpusGfx942 = path.join(repoRoot, '..', 'shared', 'corpus', 'asm', 'aiter_gfx942_flatmm_uk_f16f8_128x256x128.s');
const haveGfx942 = fs.existsSync(corpusGfx942);
// with its hand-written waits replaced by `s_nop 0` (line numbers kept): as written it needs no
// further wait (every LDS pair proven), and the hover checks need waits to hover
if (haveGfx942) {
  fs.writeFileSync(path.join(ws, 'flatmm_gfx942.s'),
    fs.readFileSync(corpusGfx942, 'utf8').replace(/^(\s*)s_waitcnt\b.*$/gm, '$1s_nop 0'));
}
const asmFile = path.join(ws, 'gemm_loop.s');
const stirFile = path.join(ws, 'double_buffer.stir');
const asmOriginal = fs.readFileSync(asmFile, 'utf8');
const asmPlan = cliPlan(asmFile);
const stirPlan = cliPlan(stirFile);
const llcPlan = cliPlan(path.join(ws, 'llc_order.s'));
console.log(`fixtures: gemm_loop.s plans ${asmPlan.length} waits, double_buffer.stir plans ${stirPlan.length}`);

const settingsFile = path.join(dataDir, 'User', 'settings.json');
const userSettings = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'security.workspace.trust.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'extensions.ignoreRecommendations': true,
  'update.mode': 'none',
  'editor.minimap.enabled': false,
  'editor.hover.delay': 200,
  'editor.hover.above': false,
  'editor.gotoLocation.multipleDefinitions': 'goto',
  'editor.fontSize': 14,
  'window.commandCenter': false,
  'workbench.colorTheme': 'Default Dark Modern',
  'chat.commandCenter.enabled': false,
  'stinkywait.trace.server': 'messages',
};
// no settings.json: the first phase is a clean profile

/** The extension's log (the "stinkywait" output channel) as written to disk. */
function extensionLog(userDataDir = dataDir) {
  const found = [];
  const walk = (dir) => {
    for (const e of fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }) : []) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/stinkywait\.log$/.test(e.name)) found.push(p);
    }
  };
  walk(path.join(userDataDir, 'logs'));
  return found.map((f) => fs.readFileSync(f, 'utf8')).join('\n');
}

let server;
let browser;
let page;
const serverLog = [];

/** Start code-server on `folder` with its own user data; `trust`: workspace trust as a user
 *  has it (else `--disable-workspace-trust`). Resolves to the process and its URL. */
function startCodeServer(userDataDir, folder, { trust }) {
  return new Promise((resolve, reject) => {
    const child = spawn(opts.codeServer, [
      '--auth', 'none', '--bind-addr', '127.0.0.1:0', '--disable-telemetry', '--disable-update-check',
      ...(trust ? [] : ['--disable-workspace-trust']), '--disable-getting-started-override', '--ignore-last-opened',
      '--user-data-dir', userDataDir, '--extensions-dir', extDir, folder,
    ], { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PASSWORD: undefined } });
    const timer = setTimeout(() => reject(new Error(`code-server did not report its port:\n${serverLog.join('')}`)), 60000);
    const onData = (buf) => {
      const s = buf.toString();
      serverLog.push(s);
      const m = /HTTP server listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(s);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1] });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => reject(new Error(`code-server exited with ${code}:\n${serverLog.join('')}`)));
  });
}

function stopCodeServer(child) {
  if (child && child.exitCode === null) {
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
}
try {
  await check('code-server installs the .vsix', async () => {
    const r = spawnSync(opts.codeServer, ['--user-data-dir', dataDir, '--extensions-dir', extDir, '--install-extension', opts.vsix], { encoding: 'utf8' });
    assert(r.status === 0, `exit ${r.status}: ${r.stderr || r.stdout}`);
    const installed = fs.readdirSync(extDir).filter((d) => d.startsWith('stinkywait.stinkywait-'));
    assert(installed.length === 1, `extension folder not found in ${extDir}: ${fs.readdirSync(extDir).join(', ')}`);
    return installed[0];
  }, { always: true });

  const started = await startCodeServer(dataDir, ws, { trust: false });
  server = started.child;
  const url = started.url;
  console.log(`code-server at ${url} (pid ${server.pid}), work dir ${work}`);

  browser = await chromium.launch({
    executablePath: opts.chromium,
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
  const context = await browser.newContext({ viewport: { width: 1500, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url });
  page = await context.newPage();
  page.on('pageerror', (e) => console.log(`[page error] ${e.message}`));
  await page.goto(`${url}/?folder=${encodeURIComponent(ws)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: opts.timeout });
  await page.waitForSelector('.statusbar', { timeout: opts.timeout });
  // the workbench has restored its parts: the explorer lists the folder and the status bar
  // carries the problems item
  await poll(async () => (await page.locator('.sidebar').getByText('demo_loop.s', { exact: true }).first().isVisible())
    && (await page.locator('[id="status.problems"]').first().isVisible()),
  { what: 'the explorer to list demo_loop.s and the status bar its problems item', timeout: opts.timeout });

  const editorText = () => page.locator('.editor-group-container.active .monaco-editor .view-lines').first().innerText();
  const statusText = () => page.locator('.statusbar').innerText();
  /** Inlay hints are rendered as injected-text spans; the fixtures have no waits of their own. */
  const hintSpans = async () => (await page.locator('.editor-group-container.active .monaco-editor .view-lines span[class*="dyn-rule"]').allInnerTexts())
    .map((t) => t.replace(/\s+/g, ' ').trim())
    .filter((t) => t.startsWith('s_wait_'));

  /** Each rendered hint's whole label (its parts are adjacent injected-text spans). */
  const hintLabels = () => page.evaluate(() => {
    const root = document.querySelector('.editor-group-container.active .monaco-editor .view-lines');
    const out = [];
    for (const line of root ? root.querySelectorAll('.view-line') : []) {
      let current = null;
      let prev = null;
      for (const span of line.querySelectorAll('span[class*="dyn-rule"]')) {
        const text = (span.textContent || '').replace(/\u00a0/g, ' ');
        if (current !== null && span.previousElementSibling === prev) current += text;
        else {
          if (current !== null) out.push(current);
          current = text;
        }
        prev = span;
      }
      if (current !== null) out.push(current);
    }
    return out.flatMap((t) => t.replace(/\s+/g, ' ').trim().split(/(?=s_wait_)/)).map((t) => t.trim()).filter((t) => t.startsWith('s_wait_'));
  });
  /** Errors and warnings in the status bar's problems item. */
  const problemCounts = async () => {
    const item = page.locator('[id="status.problems"]').first();
    const label = `${(await item.getAttribute('aria-label').catch(() => '')) ?? ''} ${await item.innerText().catch(() => '')}`;
    const errors = /(\d+)\s*Errors?/i.exec(label) ?? /Errors?:\s*(\d+)/i.exec(label);
    const warnings = /(\d+)\s*Warnings?/i.exec(label) ?? /Warnings?:\s*(\d+)/i.exec(label);
    if (/No Problems/i.test(label)) return { errors: 0, warnings: 0, label };
    if (!errors && !warnings) {
      const nums = (label.match(/\d+/g) ?? []).map(Number);
      return { errors: nums[0] ?? 0, warnings: nums[1] ?? 0, label };
    }
    return { errors: errors ? Number(errors[1]) : 0, warnings: warnings ? Number(warnings[1]) : 0, label };
  };
  /** The problems item once it counts what `stinkywait check` finds in `files` (the kernels
   *  open so far): every one of their diagnostics has been published. */
  const problemCountsOf = async (files) => {
    const want = files.map(cliSeverities).reduce((a, b) => ({ errors: a.errors + b.errors, warnings: a.warnings + b.warnings }), { errors: 0, warnings: 0 });
    let seen = '';
    return poll(async () => {
      const c = await problemCounts();
      seen = c.label.trim();
      return c.errors === want.errors && c.warnings === want.warnings ? c : false;
    }, { what: `${want.errors} errors and ${want.warnings} warnings of ${files.map((f) => path.basename(f)).join(', ')} in the problems item`, timeout: 30000 })
      .catch((err) => { throw new Error(`${err.message}; it reads "${seen}"`); });
  };

  /** The quick input's selected row, once it is visible and its text satisfies `ok`. */
  const focusedRowIs = async (ok) => {
    const row = page.locator('.quick-input-widget .quick-input-list .monaco-list-row.focused').first();
    return (await row.isVisible()) && ok(await row.innerText());
  };
  const quickInputGone = async () => !(await page.locator('.quick-input-widget').first().isVisible());

  async function setLanguage(name) {
    await runCommand('Change Language Mode');
    const input = page.locator('.quick-input-widget input');
    // the command's picker replaced the command palette: its input no longer holds ">..."
    await poll(async () => (await input.isVisible()) && !(await input.inputValue()).startsWith('>')
      && (await page.locator('.quick-input-list .monaco-list-row').first().isVisible()),
    { what: 'the language picker of "Change Language Mode"', timeout: 20000 });
    await input.fill(name);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().waitFor({ state: 'visible' });
    await poll(() => focusedRowIs((t) => t.includes(name)), { what: `"${name}" selected in the language picker`, timeout: 20000 });
    await page.keyboard.press('Enter');
    await poll(async () => (await quickInputGone()) && (await statusText()).includes(name),
      { what: `the language picker to close and "${name}" in the status bar`, timeout: 20000 });
  }

  async function runCommand(title) {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill(`>${title}`);
    await page.locator('.quick-input-list .monaco-list-row').first().waitFor({ state: 'visible' });
    await poll(() => focusedRowIs((t) => t.toLowerCase().includes(title.toLowerCase())),
      { what: `"${title}" selected in the command palette`, timeout: 20000 });
    await page.keyboard.press('Enter');
  }

  async function openFile(name) {
    // as a user does: a double click in the explorer when it shows (a walkthrough page, in a
    // fresh profile, may hold the keyboard), else Quick Open
    const item = page.locator('.sidebar').getByText(name, { exact: true }).first();
    if (await item.isVisible().catch(() => false)) {
      await item.dblclick();
      await page.locator(`.tab[aria-label^="${name}"]`).first().waitFor({ state: 'visible', timeout: opts.timeout });
      await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
      return;
    }
    await page.keyboard.press('Control+P');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill(name);
    // the list first shows recently opened editors (a walkthrough, in a fresh profile): wait
    // for the file itself to be the first match
    await poll(async () => {
      const first = page.locator('.quick-input-list .monaco-list-row').first();
      return (await first.isVisible()) && (await first.innerText()).includes(name) && await focusedRowIs((t) => t.includes(name));
    }, { what: `"${name}" as the selected first match in Quick Open`, timeout: 20000 });
    await page.keyboard.press('Enter');
    await page.locator(`.tab[aria-label^="${name}"]`).first().waitFor({ state: 'visible', timeout: opts.timeout });
    await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
  }

  async function gotoLine(line, column = 1) {
    await page.keyboard.press('Control+G');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill(`:${line}:${column}`);
    // the picker has parsed the input: its one row offers that line
    await poll(() => focusedRowIs((t) => new RegExp(`\\b${line}\\b`).test(t)), { what: `"Go to line ${line}" in the picker`, timeout: 20000 });
    await page.keyboard.press('Enter');
    await poll(async () => (await quickInputGone()) && new RegExp(`\\bLn ${line},`).test(await statusText()),
      { what: `the cursor on line ${line} (status bar "Ln ${line}, ...")`, timeout: 20000 });
  }

  /** Edit the user settings the way a user does: settings.json in the editor, then save. */
  async function setUserSettings(values) {
    await runCommand('Preferences: Open User Settings (JSON)');
    await page.locator('.tab[aria-label^="settings.json"]').first().waitFor({ state: 'visible', timeout: 20000 });
    await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
    // paste, so auto-closing brackets and auto-indent leave the text alone
    const text = JSON.stringify(values, null, 2);
    const onDisk = fs.existsSync(settingsFile) ? fs.readFileSync(settingsFile, 'utf8') : '';
    await page.evaluate((t) => navigator.clipboard.writeText(t), text);
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Control+V');
    // the paste (it reads the clipboard asynchronously) has landed before Ctrl+S: the tab is
    // dirty, or the web workbench's auto save (files.autoSave is afterDelay there) wrote it
    const savedAsPasted = () => fs.existsSync(settingsFile) && fs.readFileSync(settingsFile, 'utf8') === text;
    if (onDisk !== text) await poll(async () => (await activeTabDirty()) || savedAsPasted(), { what: 'the pasted settings in the settings.json editor (its tab dirty or the file saved)', timeout: 15000 });
    await save(settingsFile, (saved) => {
      try {
        return JSON.stringify(JSON.parse(saved)) === JSON.stringify(values);
      } catch {
        return false;
      }
    }, 'the settings as pasted');
  }

  /** The hover at line:column (Ctrl+K Ctrl+I, as often as it takes), once `ready(text)`. */
  async function hoverText(line, column, ready, what) {
    await gotoLine(line, column);
    const hover = page.locator('.monaco-hover:not(.hidden)').first();
    return poll(async () => {
      if (!(await hover.isVisible())) {
        await page.keyboard.press('Control+K');
        await page.keyboard.press('Control+I');
        return false;
      }
      const t = await hover.innerText();
      return ready(t) ? t : false;
    }, { what, timeout: 30000 });
  }

  /** The file name of the active editor as the web workbench last stored it (IndexedDB,
   *  workspace storage, `memento/workbench.parts.editor`): what a reload restores. */
  const storedActiveEditor = () => page.evaluate(async () => {
    const request = (r) => new Promise((resolve, reject) => { r.onsuccess = () => resolve(r.result); r.onerror = () => reject(r.error); });
    for (const { name } of await indexedDB.databases()) {
      if (!name || !name.startsWith('vscode-web-state-db-') || name.startsWith('vscode-web-state-db-global')) continue;
      const db = await request(indexedDB.open(name));
      try {
        if (!db.objectStoreNames.contains('ItemTable')) continue;
        const raw = await request(db.transaction('ItemTable', 'readonly').objectStore('ItemTable').get('memento/workbench.parts.editor'));
        if (typeof raw !== 'string') continue;
        // the active group's most recently used editor
        const groups = [];
        const walk = (x) => {
          if (!x || typeof x !== 'object') return;
          if (Array.isArray(x.editors) && Array.isArray(x.mru)) groups.push(x);
          for (const v of Object.values(x)) walk(v);
        };
        const state = JSON.parse(raw);
        walk(state);
        const part = state['editorpart.state'] ?? {};
        const group = groups.find((g) => g.id === part.activeGroup) ?? groups[0];
        const editor = group && group.editors[group.mru[0]];
        if (!editor) continue;
        let value = {};
        try {
          value = JSON.parse(editor.value);
        } catch {
          // not a file editor
        }
        const resource = value.resourceJSON ?? value.resource ?? {};
        const file = String(resource.path ?? resource.fsPath ?? '').split('/').pop();
        if (file) return file;
      } finally {
        db.close();
      }
    }
    return undefined;
  });

  /** The open hover's visible box and the height of everything rendered in it (px), and
   *  the height of one of its text lines. */
  const hoverFit = () => page.evaluate(() => {
    const hover = document.querySelector('.monaco-hover:not(.hidden)');
    const box = hover && hover.querySelector('.monaco-scrollable-element');
    const content = hover && hover.querySelector('.monaco-hover-content');
    if (!box || !content) return null;
    const p = [...content.querySelectorAll('.markdown-hover p')].pop();
    const style = p ? getComputedStyle(p) : null;
    const line = style ? parseFloat(style.lineHeight) || 1.4 * parseFloat(style.fontSize) : 19;
    // the box shrinks to its content, up to VS Code's limit (max-height: 250 px by default)
    const limit = parseFloat(getComputedStyle(content).maxHeight) || parseFloat(getComputedStyle(hover).maxHeight) || box.clientHeight;
    return { box: box.clientHeight, limit: Math.round(limit), content: content.scrollHeight, line: Math.round(line) };
  });

  /** Hover the consumer of `waits` (one line's planned waits): the summary of each wait and
   *  the link to the wait plan, with no FIFO state, must fit VS Code's default hover box
   *  without scrolling and leave a line of room (measured on the rendered content, not on
   *  the clipped box). Returns the hover's text and its size. */
  async function fittingHover(line, waits) {
    const text = await hoverText(line, waits[0].column ?? 1,
      (t) => waits.every((w) => t.includes(w.instruction)) && /in the wait plan/.test(t),
      `a hover at line ${line} with ${waits.map((w) => w.instruction).join(', ')} and the link to the wait plan`);
    for (const w of waits) {
      const b = bindingDep(w);
      assert(text.includes(`${w.instruction} — `), `no rule after ${w.instruction}:\n${text}`);
      if (b) assert(text.includes(`set by L${b.line} ${b.mnemonic} (countFrom ${b.countFrom}`) && text.includes('on the path from'), `no producer or path for ${w.instruction}:\n${text}`);
    }
    if (waits.some((w) => (w.deps ?? []).length)) assert(/\bneeds /.test(text), `the hover does not say what the instruction needs:\n${text}`);
    assert(!/In flight before this instruction/i.test(text), `the FIFO state is in the hover:\n${text}`);
    const fit = await poll(hoverFit, { what: 'the hover\'s size', timeout: 5000 });
    assert(fit.content <= fit.box, `the hover's content is ${fit.content} px in a ${fit.box} px box: it scrolls (line ${line}):\n${text}`);
    assert(fit.limit - fit.content >= fit.line, `the hover at line ${line} is ${fit.content} px of at most ${fit.limit}: less than one ${fit.line} px line of room:\n${text}`);
    return { text, fit };
  }

  /** Click the open hover's link to the wait plan; the plan view's section for `line`. */
  async function openHoverDetail(line) {
    await page.locator('.monaco-hover:not(.hidden) a', { hasText: 'in the wait plan' }).first().click();
    return poll(async () => {
      for (const frame of page.frames()) {
        const t = await frame.locator('#focus').first().innerText({ timeout: 500 }).catch(() => '');
        const focused = await frame.locator('tr.focused').count().catch(() => 0);
        if (t && new RegExp(`Line L${line}\\b`).test(t) && focused > 0) return t;
      }
      return false;
    }, { what: `the wait plan at line ${line} (its section and marked rows)`, timeout: 30000 });
  }

  async function closePlanView() {
    const tab = page.locator('.tab[aria-label^="Wait plan"]').first();
    await tab.click();
    await page.keyboard.press('Control+W');
    await tab.waitFor({ state: 'detached', timeout: 10000 });
    await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
  }

  /** Some settings ask for a window reload: the test reloads the page itself when it wants. */
  async function dismissReloadPrompt() {
    const dialog = page.locator('.monaco-dialog-box', { hasText: 'requires a reload' });
    if (await dialog.waitFor({ state: 'visible', timeout: 4000 }).then(() => true, () => false)) {
      await dialog.locator('.monaco-button', { hasText: 'Cancel' }).first().click();
      await dialog.waitFor({ state: 'hidden', timeout: 10000 });
    }
  }

  /** Is the active editor's tab marked modified (VS Code's `dirty` class)? */
  async function activeTabDirty() {
    const cls = await page.locator('.editor-group-container.active .tab.active').first().getAttribute('class');
    return /\bdirty\b/.test(cls ?? '');
  }

  /** Ctrl+S, then wait until `file` on disk satisfies `ok` (what the save must have written).
   *  The tab's dirty mark cannot tell: VS Code drops it while a save is still under way, and
   *  the web workbench auto-saves after a second (files.autoSave defaults to afterDelay). */
  async function save(file, ok, what) {
    await page.keyboard.press('Control+S');
    await poll(() => fs.existsSync(file) && ok(fs.readFileSync(file, 'utf8')), { what: `the save of ${path.basename(file)}: ${what}`, timeout: 20000 });
  }

  /** Open the quick-fix widget (Ctrl+.) at the cursor, apply the first fix whose title
   *  `pick` accepts (by keyboard: the widget's pointer block swallows synthetic clicks) and
   *  wait for the widget to close; returns that title.  `describe` names the fix wanted. */
  async function applyQuickFix(pick, describe) {
    await page.keyboard.press('Control+.');
    const widget = page.locator('.action-widget');
    await widget.waitFor({ state: 'visible', timeout: 20000 });
    const rows = widget.locator('.monaco-list-row.action');
    await rows.first().waitFor({ state: 'visible', timeout: 20000 });
    const titles = (await rows.allInnerTexts()).map((t) => t.trim());
    const index = titles.findIndex(pick);
    assert(index >= 0, `no ${describe} among ${JSON.stringify(titles)}`);
    for (let i = 0; i < index; i++) await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await widget.waitFor({ state: 'hidden', timeout: 10000 });
    return titles[index];
  }

  // --- a clean profile: no settings, the bundled server, a kernel found by content ------
  await check('clean profile: no settings at all', async () => {
    assert(!fs.existsSync(settingsFile), `${settingsFile} exists`);
    return 'no settings.json';
  });
  await openFile('demo_loop.s');
  await check('zero config: the bundled server runs on a Python 3.11+ it found, and hints appear', async () => {
    await poll(async () => (await statusText()).includes('AMDGPU Assembly'), { what: 'language mode "AMDGPU Assembly" (found by content)', timeout: 30000 });
    // the kernel is longer than the window: the hints on screen, each one a planned wait
    const expected = new Set(demoPlan.map((w) => {
      const b = bindingDep(w);
      return b ? `${w.instruction} ← ${b.mnemonic} L${b.line} (countFrom ${b.countFrom})` : w.instruction;
    }));
    const labels = await poll(async () => {
      const h = await hintLabels();
      return h.length > 0 && h.every((l) => expected.has(l) || [...expected].some((e) => l.startsWith(e))) ? h : false;
    }, { what: `hints of demo_loop.s among ${JSON.stringify([...expected])}` });
    const log = await poll(async () => {
      const l = extensionLog();
      return /server: the bundled server on Python 3\.(1[1-9]|[2-9]\d)/.test(l) ? l : false;
    }, { what: 'the launch line in the extension log', timeout: 20000 });
    const line = /server: the bundled server on Python [^\n]*/.exec(log)[0];
    assert(/from (PATH|the Python extension)\)/.test(line), `not found by the extension: ${line}`);
    assert(line.includes(`${path.sep}bundled${path.sep}stinkywait_server.py`) && line.includes(extDir), `not the bundled server: ${line}`);
    return `${labels.length} hints; ${line.slice(line.indexOf('server:'), line.indexOf(':', line.indexOf('server:') + 8))}`;
  });
  const statusWant = (n) => new RegExp(`stinkywait: ${n} waits? · gfx1250`);
  await check('the status item shows the wait count and the target for a content-detected kernel', async () => {
    const text = await poll(async () => {
      const t = await statusText();
      return statusWant(demoPlan.length).test(t) ? t : false;
    }, { what: `"stinkywait: ${demoPlan.length} waits · gfx1250"`, timeout: 30000 });
    return statusWant(demoPlan.length).exec(text)[0];
  });

  // --- the same profile with the UI settings that keep the pictures stable ---------------
  await setUserSettings(userSettings);
  await dismissReloadPrompt();
  await openFile('demo_loop.s');
  await check('a fresh window with a content-detected kernel shows the status item at once', async () => {
    // the web workbench stores its open editors when idle (every 5 s at most): reload once
    // its stored state names the kernel as the active editor, so the reload restores it
    await poll(async () => (await storedActiveEditor()) === 'demo_loop.s',
      { what: 'the workbench to store demo_loop.s as its active editor', timeout: 30000 });
    await page.reload();
    await page.waitForSelector('.monaco-workbench', { timeout: opts.timeout });
    await page.waitForSelector('.statusbar', { timeout: opts.timeout });
    // no tab switch, no click: the restored editor is the kernel
    let seen = '';
    const text = await poll(async () => {
      const t = await statusText();
      seen = t;
      return statusWant(demoPlan.length).test(t) ? t : false;
    }, { what: 'the status item after reloading the window', timeout: 60000 }).catch((err) => {
      throw new Error(`${err.message}; the status bar reads: ${seen.replace(/\s+/g, ' ').slice(0, 300)}`);
    });
    const active = await page.locator('.tab.active').first().getAttribute('aria-label');
    assert(active && active.startsWith('demo_loop.s'), `active tab is ${active}`);
    return statusWant(demoPlan.length).exec(text)[0];
  });
  await check('"Change Language Mode" to AMDGPU Assembly shows the status item, back to Plain Text hides it', async () => {
    await openFile('not_amdgpu.s');
    // the editor is active with its language settled: Plain Text and no stinkywait item (the
    // one of demo_loop.s goes when the extension sees the editor change)
    await poll(async () => {
      const t = await statusText();
      return t.includes('Plain Text') && !/stinkywait/.test(t);
    }, { what: 'Plain Text and no stinkywait status item for not_amdgpu.s', timeout: 20000 });
    await setLanguage('AMDGPU Assembly');
    const shown = await poll(async () => {
      const m = /stinkywait: \d+ waits? · \S+/.exec(await statusText());
      return m ? m[0] : false;
    }, { what: 'the status item after switching to AMDGPU Assembly', timeout: 30000 });
    await setLanguage('Plain Text');
    await poll(async () => !/stinkywait/.test(await statusText()), { what: 'the status item to go with Plain Text', timeout: 15000 });
    return shown;
  });

  if (haveGemm) {
    const gemmPlan = cliPlan(strippedFile);
    // the wait to show: a DS wait set by one producer, needed on two paths
    const candidates = gemmPlan.filter((w) => {
      const b = bindingDep(w);
      const preds = new Set((w.deps ?? []).map((d) => d.pred));
      return b && w.counter === 'ds' && preds.size > 1 && w.count === b.countFrom - 1 && w.count > 0;
    });
    const shown = candidates.sort((a, b) => (b.deps.length - a.deps.length) || (a.line - b.line))[0];
    await check('stripped GEMM: errors only for proven missing waits, unproven ones are warnings', async () => {
      const before = await problemCountsOf([path.join(ws, 'demo_loop.s')]);
      await openFile('gemm1_stripped.s');
      const want = cliSeverities(strippedFile);
      const unproven = gemmPlan.filter((w) => /^fallback/i.test(w.reason ?? '')).length;
      assert(unproven > 0, 'the stripped GEMM must need fallback drains for this check to mean anything');
      assert(want.errors === gemmPlan.length - unproven && want.warnings >= unproven,
        `CLI: ${JSON.stringify(want)} for ${gemmPlan.length} waits, ${unproven} unproven`);
      const got = await poll(async () => {
        const c = await problemCounts();
        return c.errors - before.errors === want.errors && c.warnings - before.warnings === want.warnings ? c : false;
      }, { what: `+${want.errors} errors and +${want.warnings} warnings in the problems item (before: ${JSON.stringify(before)})`, timeout: 60000 });
      return `${want.errors} errors (proven), ${want.warnings} warnings (disjointness not proved) of ${gemmPlan.length} missing waits; status ${got.label.trim()}`;
    });
    await check('a hint names the wait and the producer that sets its count', async () => {
      assert(shown, 'no DS wait with one binding producer on two paths in the stripped GEMM');
      const b = bindingDep(shown);
      const label = `${shown.instruction} ← ${b.mnemonic} L${b.line} (countFrom ${b.countFrom})`;
      await gotoLine(shown.line, shown.column ?? 1);
      const labels = await poll(async () => {
        const h = await hintLabels();
        return h.includes(label) ? h : false;
      }, { what: `the hint "${label}"`, timeout: 30000 });
      return label;
    });
    // several waits of the real kernel: the one above, the one with the most producers, an
    // unproven one and one of a line with two waits
    const gemmByLine = new Map();
    for (const w of gemmPlan) gemmByLine.set(w.line, [...(gemmByLine.get(w.line) ?? []), w]);
    const lineOf = (w) => w && gemmByLine.get(w.line);
    const sample = [...new Set([
      lineOf(shown),
      lineOf([...gemmPlan].sort((a, b) => (b.deps?.length ?? 0) - (a.deps?.length ?? 0))[0]),
      lineOf(gemmPlan.find((w) => /^fallback/i.test(w.reason ?? ''))),
      [...gemmByLine.values()].find((ws) => ws.length > 1),
    ].filter(Boolean))];
    await check("hovers on the real GEMM fit VS Code's hover box: summary and needs first, the FIFO state in the wait plan", async () => {
      await page.keyboard.press('Control+B').catch(() => undefined);
      const sizes = [];
      for (const waits of sample) {
        const { text, fit } = await fittingHover(waits[0].line, waits);
        assert(!/kernel_mxscale_gemm1_\d|\.LBB\d+_\d+_\d+|L_start/.test(text), `internal block names in the hover:\n${text}`);
        assert(!/RAW: raw/.test(text), 'rule repeated');
        sizes.push(`L${waits[0].line} ${fit.content}/${fit.limit}`);
        await page.keyboard.press('Escape');
      }
      // the picture: the hint and the hover of the wait set by one producer on two paths
      await fittingHover(shown.line, lineOf(shown));
      if (opts.screenshot) {
        fs.mkdirSync(path.dirname(opts.screenshot), { recursive: true });
        await page.screenshot({ path: opts.screenshot });
      }
      // its link: the whole explanation, the ops the wait drains and those it leaves
      const focus = await openHoverDetail(shown.line);
      for (const want of ['In flight before this instruction', 'drained by', 'still in flight after it']) {
        assert(focus.includes(want), `the wait plan at line ${shown.line} lacks "${want}":\n${focus}`);
      }
      const listed = listedOps(focus);
      for (const d of shown.deps) assert(listed.has(`${d.line} ${d.mnemonic}`), `L${d.line} ${d.mnemonic} not in the wait plan's FIFO state`);
      await closePlanView();
      return `content/limit px: ${sizes.join(', ')}`;
    });
    await page.keyboard.press('Escape');

    await check('edit -> new hints, end to end in the browser (figures, no assertion on time)', async () => {
      // the edit: the producer that sets the count of the hovered wait becomes `s_nop 0` (one
      // paste over the line), then Ctrl+Z; each time, from the key press to the moment the
      // hints on screen are the new text's (all of them as `stinkywait plan` labels them)
      const b = bindingDep(shown);
      const original = fs.readFileSync(strippedFile, 'utf8');
      const lines = original.split('\n');
      const indent = /^\s*/.exec(lines[b.line - 1])[0];
      const edited = path.join(work, 'latency-edited.s');
      fs.writeFileSync(edited, [...lines.slice(0, b.line - 1), `${indent}s_nop 0`, ...lines.slice(b.line)].join('\n'));
      const label = (w) => {
        const d = bindingDep(w);
        return d ? `${w.instruction} ← ${d.mnemonic} L${d.line} (countFrom ${d.countFrom})` : w.instruction;
      };
      const labelsBefore = gemmPlan.map(label);
      const labelsAfter = cliPlan(edited).map(label);
      assert(JSON.stringify([...labelsBefore].sort()) !== JSON.stringify([...labelsAfter].sort()), 'the edit does not change the plan');
      await gotoLine(b.line, 1);
      await page.keyboard.press('Home');
      await page.keyboard.press('Shift+End');
      await page.evaluate((t) => navigator.clipboard.writeText(t), `${indent}s_nop 0`.replace(/^\s+/, ''));
      const samples = [];
      const traceBefore = extensionLog().length;
      for (let i = 0; i < 16; i++) {
        const undo = i % 2 === 1;
        const want = undo ? labelsBefore : labelsAfter;
        await page.evaluate((want) => {
          const root = () => document.querySelector('.editor-group-container.active .monaco-editor .view-lines');
          const shownLabels = () => {
            const out = [];
            for (const line of root()?.querySelectorAll('.view-line') ?? []) {
              const text = [...line.querySelectorAll('span[class*="dyn-rule"]')].map((s) => (s.textContent || '').replace(/\u00a0/g, ' ')).join('');
              out.push(...text.replace(/\s+/g, ' ').trim().split(/(?=s_wait_)/).map((t) => t.trim()).filter((t) => t.startsWith('s_wait_')));
            }
            return out;
          };
          const wanted = new Set(want);
          const before = JSON.stringify(shownLabels().sort());
          const watch = { t0: 0, t1: 0 };
          window.__hintWatch = watch;
          window.addEventListener('keydown', () => { if (!watch.t0) watch.t0 = performance.now(); }, { capture: true, once: true });
          const observer = new MutationObserver(() => {
            if (!watch.t0 || watch.t1) return;
            const now = shownLabels();
            if (now.length && JSON.stringify([...now].sort()) !== before && now.every((l) => wanted.has(l))) {
              watch.t1 = performance.now();
              observer.disconnect();
            }
          });
          observer.observe(root(), { subtree: true, childList: true, characterData: true });
        }, want);
        await page.keyboard.press(undo ? 'Control+Z' : 'Control+V');
        const ms = await poll(() => page.evaluate(() => (window.__hintWatch.t1 ? window.__hintWatch.t1 - window.__hintWatch.t0 : 0)),
          { what: `the hints of the ${undo ? 'undone' : 'edited'} text`, timeout: 30000 });
        samples.push(ms);
        // the next edit starts from a quiet editor: the review and the status request done
        await poll(async () => /stinkywait: \d+ waits?/.test(await statusText()), { what: 'the status item', timeout: 30000 });
      }
      const trace = extensionLog().slice(traceBefore);
      const rtt = [...trace.matchAll(/Received response 'textDocument\/inlayHint - \(\d+\)' in (\d+)ms/g)].map((m) => Number(m[1]));
      const med = (xs) => { const v = [...xs].sort((x, y) => x - y); return v.length ? v[v.length >> 1] : NaN; };
      // VS Code waits, before it asks, for the average of the editor's last six hint requests:
      // the first edits after opening the kernel and the later ones are reported apart
      const first = samples.slice(0, 8);
      const later = samples.slice(8);
      const figures = { samples: samples.map((x) => Math.round(x)), median: Math.round(med(samples)), min: Math.round(Math.min(...samples)), max: Math.round(Math.max(...samples)),
        firstEightMedian: Math.round(med(first)), laterEightMedian: Math.round(med(later)),
        inlayHintRequestMedian: med(rtt), inlayHintRequests: rtt.length, load: os.loadavg().map((x) => x.toFixed(1)).join(' ') };
      console.log(`edit -> hints: ${JSON.stringify(figures)}`);
      if (opts.latencyOut) fs.writeFileSync(opts.latencyOut, JSON.stringify(figures, null, 2));
      // an even number of edits: the buffer is the stripped text again
      await save(strippedFile, (t) => t === original, 'the stripped text after the last undo');
      return `median ${figures.median} ms (${figures.min}-${figures.max}; edits 1-8 ${figures.firstEightMedian}, 9-16 ${figures.laterEightMedian}), inlayHint request median ${figures.inlayHintRequestMedian} ms over ${rtt.length}; load ${figures.load}`;
    });

    const fallback = gemmPlan.find((w) => /^fallback/i.test(w.reason ?? ''));
    await check('"Separate with st.token" on an unproven wait tags the LDS ops and the wait goes', async () => {
      assert(fallback, 'no unproven wait in the stripped GEMM');
      const original = fs.readFileSync(strippedFile, 'utf8');
      await gotoLine(fallback.line, fallback.column ?? 1);
      await applyQuickFix((t) => t.startsWith('Separate with st.token (LDS ops at lines '), 'st.token fix');
      // the edit is resolved by the server (one re-analysis per pair): wait for it to land
      await poll(async () => (await page.locator('.editor-group-container.active .view-lines').innerText()).includes('st.token:'),
        { what: 'st.token comments in the buffer', timeout: 60000 });
      await save(strippedFile, (t) => t.includes('st.token:'), 'the st.token comments');
      const after = fs.readFileSync(strippedFile, 'utf8');
      const tagged = after.split('\n').filter((l, i) => l !== original.split('\n')[i]);
      assert(tagged.length >= 2 && tagged.every((l) => /\/\/ st\.token:\d/.test(l)), `changed lines: ${JSON.stringify(tagged)}`);
      assert(after.split('\n').length === original.split('\n').length, 'lines were added or removed');
      const still = cliPlan(strippedFile).filter((w) => w.line === fallback.line && w.counter === fallback.counter && /^fallback/i.test(w.reason ?? ''));
      assert(still.length === 0, `still planned: ${JSON.stringify(still.map((w) => w.instruction))}`);
      // back to the stripped text for the checks that follow
      await page.keyboard.press('Control+Z');
      await poll(async () => !(await page.locator('.editor-group-container.active .view-lines').innerText()).includes('st.token:'),
        { what: 'the undo', timeout: 10000 }).catch(() => {});
      await save(strippedFile, (t) => !t.includes('st.token:'), 'the text without st.token comments').catch(() => {});
      fs.writeFileSync(strippedFile, original);
      return `${fallback.instruction} before line ${fallback.line}: ${tagged.length} ops tagged`;
    });
  }

  // --- the assembly kernel -------------------------------------------------------------
  await openFile('gemm_loop.s');

  await check('.s with .amdgcn_target on line 1 is detected as AMDGPU Assembly', async () => {
    await poll(async () => (await statusText()).includes('AMDGPU Assembly'), { what: 'language mode "AMDGPU Assembly" in the status bar', timeout: 20000 });
  });

  await check('the bundled grammar colours mnemonics by class', async () => {
    // Monaco renders each token as a span with an `mtkN` colour class.
    const tokenClass = async (text) => {
      const spans = page.locator('.editor-group-container.active .monaco-editor .view-line span span', { hasText: text });
      const n = await spans.count();
      for (let i = 0; i < n; i++) {
        const span = spans.nth(i);
        if ((await span.innerText()).trim() === text) return (await span.getAttribute('class')) ?? '';
      }
      throw new Error(`no token "${text}" on screen`);
    };
    // TextMate tokenization runs in the background: poll until the lines are split into tokens.
    const [ds, barrier, valu] = await poll(async () => Promise.all(['ds_load_b128', 's_barrier_wait', 'v_add_f32_e32'].map(tokenClass)),
      { what: 'tokenized mnemonics', timeout: 20000 });
    const classes = new Set([ds, barrier, valu]);
    assert(classes.size === 3, `DS, barrier and VALU mnemonics share colours: ${JSON.stringify({ ds, barrier, valu })}`);
    return JSON.stringify({ ds, barrier, valu });
  });

  await check('status bar shows the running server and the planned wait count', async () => {
    const want = new RegExp(`stinkywait: ${asmPlan.length} waits?\\b`);
    const text = await poll(async () => {
      const t = await statusText();
      return want.test(t) ? t : false;
    }, { what: `"stinkywait: ${asmPlan.length} waits" in the status bar` });
    return want.exec(text)[0];
  });

  let hintLines = [];
  await check('inlay hints with s_wait_ labels appear in the editor', async () => {
    // The fixture has no waits, so any `s_wait_` text on screen is an inlay hint.
    hintLines = await poll(async () => {
      const hints = await hintSpans();
      return hints.length === asmPlan.length ? hints : false;
    }, { what: `${asmPlan.length} inlay hint spans starting with s_wait_` });
    const text = await editorText();
    assert(!asmOriginal.includes('s_wait_'), 'fixture must not contain waits');
    assert(text.includes('s_wait_'), 'hint text not in the rendered lines');
    return `${hintLines.length} hint(s), e.g. "${hintLines[0]}"`;
  });

  await check('each planned wait has its own hint, labelled with the wait instruction', async () => {
    const left = [...hintLines];
    const missing = [];
    for (const w of asmPlan) {
      const i = left.findIndex((h) => h === w.instruction || h.startsWith(`${w.instruction} `));
      if (i < 0) missing.push(w.instruction);
      else left.splice(i, 1);
    }
    assert(missing.length === 0, `no hint for ${missing.join(', ')} (hints: ${JSON.stringify(hintLines)})`);
  });

  // The wait with the most producers makes the best hover: pick the one on the line of the
  // loop consumer that needs a VMEM and a DS wait.
  const byLine = new Map();
  for (const w of asmPlan) byLine.set(w.line, [...(byLine.get(w.line) ?? []), w]);
  const [hoverLine, hoverWaits] = [...byLine.entries()].sort((a, b) => b[1].length - a[1].length)[0];
  await check('hover on a consumer: the summary and what it needs fit the box; its link opens the wait plan there, with the FIFO state', async () => {
    await page.keyboard.press('Control+B'); // hide the side bar: more room for hints and hover
    const { text, fit } = await fittingHover(hoverLine, hoverWaits);
    // the link opens the wait plan at this line: every producer of every counter's queue
    const focus = await openHoverDetail(hoverLine);
    assert(/In flight before this instruction/.test(focus), `no FIFO state in the wait plan:\n${focus}`);
    const listed = listedOps(focus);
    for (const w of hoverWaits) {
      for (const d of w.deps ?? []) {
        assert(listed.has(`${d.line} ${d.mnemonic}`), `the wait plan at line ${hoverLine} does not list producer L${d.line} ${d.mnemonic} of ${w.instruction}:\n${focus}`);
      }
    }
    await closePlanView();
    return `${fit.content}/${fit.limit} px; ${text.split('\n').filter(Boolean).slice(0, 2).join(' | ').slice(0, 120)}`;
  });
  await page.keyboard.press('Escape');

  await check('a .s with .text first and the target on line 2 is detected by content', async () => {
    await openFile('llc_order.s');
    await poll(async () => (await statusText()).includes('AMDGPU Assembly'), { what: 'language mode "AMDGPU Assembly"', timeout: 20000 });
    await poll(async () => (await hintSpans()).length === llcPlan.length, { what: `${llcPlan.length} hints in llc_order.s`, timeout: 30000 });
    return `${llcPlan.length} hints`;
  });

  await check('a .s without an AMDGPU target is left alone', async () => {
    await openFile('not_amdgpu.s');
    const status = await poll(async () => {
      const t = await statusText();
      return t.includes('Plain Text') && !t.includes('AMDGPU Assembly') && (await hintSpans()).length === 0 ? t : false;
    }, { what: 'not_amdgpu.s shown as Plain Text without hints', timeout: 20000 });
    assert(status.includes('Plain Text') && !status.includes('AMDGPU Assembly'), `x86 assembly was not left as Plain Text: ${status}`);
    assert((await hintSpans()).length === 0, 'hints in a non-AMDGPU file');
  });
  if (haveGfx942) {
    await check('the gfx942 kernel (target directive on line 1362) is AMDGPU Assembly and the status names gfx942', async () => {
      await openFile('flatmm_gfx942.s');
      await poll(async () => (await statusText()).includes('AMDGPU Assembly'), { what: 'language mode "AMDGPU Assembly" for the gfx942 kernel', timeout: 20000 });
      const want = cliPlan(path.join(ws, 'flatmm_gfx942.s')).length;
      const text = await poll(async () => {
        const t = await statusText();
        return new RegExp(`stinkywait: ${want} waits? · gfx942\\b`).test(t) ? t : false;
      }, { what: `"stinkywait: ${want} waits · gfx942" in the status bar`, timeout: 60000 });
      return /stinkywait: \d+ waits? · \S+/.exec(text)[0];
    });
    await check("hovers on the gfx942 kernel fit VS Code's hover box", async () => {
      const plan = cliPlan(path.join(ws, 'flatmm_gfx942.s'));
      const byLine942 = new Map();
      for (const w of plan) byLine942.set(w.line, [...(byLine942.get(w.line) ?? []), w]);
      const lines = [...byLine942.values()];
      // the first waits, the one with the most producers and the last
      const pick = [...new Set([lines[0], lines[1], [...lines].sort((a, b) => b.reduce((n, w) => n + (w.deps?.length ?? 0), 0) - a.reduce((n, w) => n + (w.deps?.length ?? 0), 0))[0], lines[lines.length - 1]].filter(Boolean))];
      assert(pick.length > 0, 'the gfx942 kernel plans no wait');
      const sizes = [];
      for (const waits of pick) {
        const { fit } = await fittingHover(waits[0].line, waits);
        sizes.push(`L${waits[0].line} ${fit.content}/${fit.limit}`);
        await page.keyboard.press('Escape');
      }
      return `content/limit px: ${sizes.join(', ')}`;
    });
  }
  await openFile('gemm_loop.s');

  await check('go to definition (F12) on a consumer jumps to a producer it waits for', async () => {
    const producers = hoverWaits.flatMap((w) => (w.deps ?? []).map((d) => d.line));
    await gotoLine(hoverLine, hoverWaits[0].column ?? 1);
    await page.keyboard.press('F12');
    const line = await poll(async () => {
      const m = /Ln (\d+), Col \d+/.exec(await statusText());
      return m && Number(m[1]) !== hoverLine ? Number(m[1]) : false;
    }, { what: 'the cursor to leave the consumer line', timeout: 20000 });
    assert(producers.includes(line), `jumped to line ${line}, producers are ${producers.join(', ')}`);
    return `line ${hoverLine} → line ${line}`;
  });

  const target = asmPlan[0];
  await check('quick fix (Ctrl+.) inserts the wait into the buffer', async () => {
    await gotoLine(target.line, target.column ?? 1);
    const before = fs.readFileSync(asmFile, 'utf8').split('\n');
    const targetText = before[target.line - 1];
    const title = await applyQuickFix((t) => t.includes(target.instruction),
      `quick fix mentioning "${target.instruction}"`);
    assert(!title.includes('`'), `quick-fix title shows markdown backticks: ${title}`);
    // the edit landed: the tab is dirty, or auto save (afterDelay in the web) already wrote it
    await poll(async () => (await activeTabDirty()) || fs.readFileSync(asmFile, 'utf8').split('\n').length > before.length,
      { what: `the edit of "${title}" in the buffer (its tab dirty or the file longer)`, timeout: 20000 });
    await save(asmFile, (t) => t.split('\n').length > before.length, 'the inserted wait');
    const after = fs.readFileSync(asmFile, 'utf8').split('\n');
    const added = after.length - before.length;
    assert(added >= 1, `no line inserted by "${title}"`);
    const at = after.indexOf(targetText);
    assert(at >= 1, 'the consumer line moved or changed');
    const inserted = after.slice(at - added, at);
    assert(inserted.every((l) => WAIT_LINE.test(l)), `inserted lines are not waits: ${JSON.stringify(inserted)}`);
    assert(inserted.some((l) => l.trim().startsWith(target.instruction.split(/\s+/)[0])), `expected ${target.instruction} right above line ${target.line}, got ${JSON.stringify(inserted)}`);
    return `"${title}" → ${inserted.map((l) => l.trim()).join('; ')}`;
  });

  await check('the fixed wait disappears from the hints and the count drops', async () => {
    const remaining = cliPlan(asmFile).length;
    assert(remaining < asmPlan.length, `CLI still plans ${remaining} waits`);
    await poll(async () => new RegExp(`stinkywait: ${remaining} waits?\\b`).test(await statusText()), { what: `"stinkywait: ${remaining} wait(s)" in the status bar`, timeout: 30000 });
    const shown = await poll(async () => {
      const n = (await hintSpans()).length;
      return n === remaining ? String(n) : false;
    }, { what: `${remaining} inlay hints`, timeout: 30000 });
    return `${shown} hints left`;
  });

  await check('"stinkywait: Insert All Waits in File" inserts every remaining wait', async () => {
    const logBefore = extensionLog().length;
    await runCommand('stinkywait: Insert All Waits in File');
    // the command logs once workspace.applyEdit has resolved (the buffer holds every wait)
    const applied = await poll(async () => /insert all waits: (applied|rejected) [^\n]*/.exec(extensionLog().slice(logBefore))?.[0],
      { what: '"insert all waits: applied" in the extension log', timeout: 30000 });
    assert(applied.includes('applied'), applied);
    // waits of two counters may share a line (s_wait_loadcnt_dscnt): as many as the CLI writes
    const cliInserted = spawnSync(opts.python, ['-m', 'stinkywait_core.cli.main', 'insert', path.join(extRoot, 'test', 'fixtures', 'gemm_loop.s')], { encoding: 'utf8' }).stdout;
    await save(asmFile, (t) => waitLines(t).length >= waitLines(cliInserted).length, `${waitLines(cliInserted).length} wait lines, as many as stinkywait insert writes`);
    const text = fs.readFileSync(asmFile, 'utf8');
    const left = cliPlan(asmFile);
    assert(left.length === 0, `after insert-all the CLI still plans ${left.length} waits: ${left.map((w) => `${w.line}:${w.instruction}`).join(', ')}`);
    const lines = waitLines(text);
    assert(lines.length === waitLines(cliInserted).length, `${lines.length} wait lines, stinkywait insert writes ${waitLines(cliInserted).length}`);
    await poll(async () => /stinkywait: 0 waits\b/.test(await statusText()), { what: '"stinkywait: 0 waits"', timeout: 30000 });
    return `${lines.length} wait lines in the file`;
  });

  await check('"stinkywait: Show Wait Plan of File" opens the explanation view', async () => {
    await openFile('double_buffer.stir');
    await runCommand('stinkywait: Show Wait Plan of File');
    await page.locator('.tab[aria-label^="Wait plan: double_buffer.stir"]').first().waitFor({ state: 'visible', timeout: 30000 });
    const summary = await poll(async () => {
      for (const frame of page.frames()) {
        const s = await frame.locator('#summary').first().innerText({ timeout: 500 }).catch(() => '');
        if (s) return s;
      }
      return false;
    }, { what: 'the plan webview summary', timeout: 30000 });
    assert(summary.includes(`${stirPlan.length} planned wait`), `summary "${summary}" does not report ${stirPlan.length} waits`);
    assert(/target gfx1250/.test(summary), `no target in "${summary}"`);
    assert(!/bounded|countFromInstance|representEmptyPaths|replaceWaits/.test(summary), `internal flags in "${summary}"`);
    // the explanation reads as text, however narrow the panel: at least half the table wide
    const widths = await poll(async () => {
      for (const frame of page.frames()) {
        const w = await frame.evaluate(() => {
          const why = document.querySelector('td.why');
          const table = document.querySelector('table');
          return why && table ? { why: why.getBoundingClientRect().width, table: table.getBoundingClientRect().width } : null;
        }).catch(() => null);
        if (w) return w;
      }
      return false;
    }, { what: 'the plan table', timeout: 20000 });
    assert(widths.why >= widths.table / 2, `the Why column is ${widths.why}px of a ${widths.table}px table`);
    if (opts.screenshotPlan) {
      // the table is laid out (above); let the browser paint it before the picture
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      await page.screenshot({ path: opts.screenshotPlan });
    }
    return summary.trim();
  });

  await check('STIR: hints appear in a .stir kernel', async () => {
    await page.locator('.tab[aria-label^="double_buffer.stir"]').first().click();
    const hints = await poll(async () => {
      const h = await hintSpans();
      return h.length === stirPlan.length ? h : false;
    }, { what: `${stirPlan.length} STIR inlay hints` });
    assert((await statusText()).includes('STIR'), 'language mode STIR not shown');
    return `${hints.length} hint(s)`;
  });

  await check('changing a stinkywait setting re-plans with it (enableLoopCarriedTokenDeps off)', async () => {
    const expected = cliPlan(stirFile, ['--no-loop-carried-token-deps']);
    assert(expected.length !== stirPlan.length, 'fixture does not react to the setting; the check would prove nothing');
    await setUserSettings({ ...userSettings, 'stinkywait.enableLoopCarriedTokenDeps': false });
    await page.locator('.tab[aria-label^="double_buffer.stir"]').first().click();
    await poll(async () => (await hintSpans()).length === expected.length, { what: `${expected.length} hints after the setting change`, timeout: 30000 });
    await poll(async () => new RegExp(`stinkywait: ${expected.length} waits?\\b`).test(await statusText()), { what: `"stinkywait: ${expected.length} waits"`, timeout: 30000 });
    return `${stirPlan.length} → ${expected.length} waits`;
  });

  await check('"stinkywait: Restart Language Server" brings the server back', async () => {
    await runCommand('stinkywait: Restart Language Server');
    await poll(async () => /stinkywait: (starting|stopped)/.test(await statusText()) || undefined, { what: 'the status bar to show the restart', timeout: 10000 }).catch(() => undefined);
    const text = await poll(async () => {
      const m = /stinkywait: \d+ waits?/.exec(await statusText());
      return m ? m[0] : false;
    }, { what: 'the wait count after the restart', timeout: 30000 });
    assert((await hintSpans()).length > 0, 'no hints after the restart');
    return text;
  });

  await check('a server that cannot start gives an error with the fix', async () => {
    const bad = path.join(work, 'no-such-venv', 'bin', 'python');
    await setUserSettings({ ...userSettings, 'stinkywait.server.pythonPath': bad });
    const toast = page.locator('.notification-toast', { hasText: 'stinkywait' }).first();
    await toast.waitFor({ state: 'visible', timeout: 30000 });
    const message = (await toast.innerText()).replace(/\s+/g, ' ');
    assert(message.includes(bad) && /Fix:.*stinkywait\.server\.pythonPath/.test(message), `message without the path and the fix: ${message}`);
    assert(/Open Settings/.test(message), `no "Open Settings" button: ${message}`);
    await poll(async () => /stinkywait: failed/.test(await statusText()), { what: '"stinkywait: failed" in the status bar', timeout: 10000 });
    return message.slice(0, 140);
  });

  await check('an interpreter older than 3.11 gets one message with the fix', async () => {
    const old = path.join(work, 'python3.9');
    fs.writeFileSync(old, '#!/bin/sh\necho 3.9.18\n', { mode: 0o755 });
    await setUserSettings({ ...userSettings, 'stinkywait.server.pythonPath': old });
    const toast = page.locator('.notification-toast', { hasText: 'Python 3.9.18' }).first();
    await toast.waitFor({ state: 'visible', timeout: 30000 });
    const message = (await toast.innerText()).replace(/\s+/g, ' ');
    assert(/needs Python 3\.11 or newer/.test(message) && /Fix:/.test(message), `no reason or fix: ${message}`);
    return message.slice(0, 160);
  });

  await check('the extension log: one line per record, one time stamp, no routine pygls chatter', async () => {
    const lines = extensionLog().split('\n').filter(Boolean);
    assert(lines.length > 5, `only ${lines.length} log lines`);
    const double = lines.filter((l) => /\] \d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} /.test(l) || /\[(Info|Warn|Error|Trace|LSP)\s*- /.test(l));
    const blank = lines.filter((l) => /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \[\w+\]\s*$/.test(l));
    const cancel = lines.filter((l) => l.includes('Cancel notification'));
    assert(!double.length && !blank.length && !cancel.length,
      `double stamps: ${double.slice(0, 2).join(' / ')}; blank: ${blank.length}; cancel notices: ${cancel.length}`);
    return `${lines.length} lines`;
  });

  // --- workspace trust: a folder opened as a user's code-server opens it (trust on) ---------
  // The folder's own settings name an interpreter of its own; in Restricted Mode the server
  // must not run it (and the hints must still appear); once trusted, it runs.
  stopCodeServer(server);
  await page.context().close();
  const trustData = path.join(work, 'data-trust');
  const untrusted = path.join(work, 'untrusted');
  const ran = path.join(work, 'planted-python-ran');
  const planted = path.join(untrusted, 'venv', 'bin', 'python');
  fs.mkdirSync(path.join(trustData, 'User'), { recursive: true });
  fs.mkdirSync(path.join(untrusted, '.vscode'), { recursive: true });
  fs.mkdirSync(path.dirname(planted), { recursive: true });
  fs.writeFileSync(planted, `#!/bin/sh\ntouch '${ran}'\nexec '${opts.python}' "$@"\n`, { mode: 0o755 });
  fs.writeFileSync(path.join(untrusted, '.vscode', 'settings.json'), JSON.stringify({ 'stinkywait.server.pythonPath': planted }, null, 2));
  fs.copyFileSync(path.join(extRoot, 'test', 'fixtures', 'gemm_loop.s'), path.join(untrusted, 'gemm_loop.s'));
  const trustPlan = cliPlan(path.join(untrusted, 'gemm_loop.s'));
  const { 'security.workspace.trust.enabled': _trustOff, ...trustSettings } = userSettings;
  fs.writeFileSync(path.join(trustData, 'User', 'settings.json'), JSON.stringify(trustSettings, null, 2));
  const second = await startCodeServer(trustData, untrusted, { trust: true });
  server = second.child;
  const trustContext = await browser.newContext({ viewport: { width: 1500, height: 900 } });
  page = await trustContext.newPage();
  page.on('pageerror', (e) => console.log(`[page error] ${e.message}`));
  await page.goto(`${second.url}/?folder=${encodeURIComponent(untrusted)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: opts.timeout });

  // A timeout here once went unexplained (the hints did not appear in 60 s, a re-run passed):
  // say what was on screen and what the extension logged, so the next one can be diagnosed.
  const pollHints = async (want, when, userDataDir) => {
    let seen = -1;
    try {
      await poll(async () => (seen = (await hintSpans()).length) === want, { what: `${want} hints ${when}`, timeout: opts.timeout });
    } catch (err) {
      const tab = await page.locator('.tab.active').first().innerText().catch(() => '?');
      const status = await statusText().catch(() => '?');
      const tail = extensionLog(userDataDir).split('\n').filter(Boolean).slice(-25).join('\n');
      throw new Error(`${err.message}; ${seen} hints shown, active tab ${JSON.stringify(tab)}, status ${JSON.stringify(status)}; extension log tail:\n${tail}`);
    }
  };
  const launchLine = () => {
    const all = extensionLog(trustData).match(/server: the bundled server on Python [^\n]*/g) ?? [];
    return all[all.length - 1];
  };
  await check('an untrusted folder: the trust prompt, then Restricted Mode', async () => {
    const dialog = page.locator('.monaco-dialog-box', { hasText: /trust the authors/i });
    await dialog.waitFor({ state: 'visible', timeout: opts.timeout });
    const question = (await dialog.innerText()).split('\n')[0];
    await dialog.locator('.monaco-button', { hasText: /No, I don.t trust/i }).first().click();
    await dialog.waitFor({ state: 'hidden', timeout: 10000 });
    await poll(async () => /Restricted Mode/.test(await statusText()), { what: '"Restricted Mode" in the status bar', timeout: 20000 });
    return question;
  }, { always: true });
  await check("Restricted Mode: the hints appear and the folder's stinkywait.server.pythonPath is not run", async () => {
    await openFile('gemm_loop.s');
    await pollHints(trustPlan.length, 'in Restricted Mode', trustData);
    const line = await poll(launchLine, { what: 'the launch line in the extension log', timeout: 20000 });
    assert(/from (PATH|the Python extension)\)/.test(line) && !line.includes(planted), `the server did not ignore the folder's interpreter: ${line}`);
    assert(!fs.existsSync(ran), `the folder's interpreter ${planted} was run in Restricted Mode`);
    assert(/Restricted Mode: .*stinkywait\.server\.pythonPath.* user settings only/.test(extensionLog(trustData)), 'the log does not say where the server settings come from in Restricted Mode');
    return `${trustPlan.length} hints; ${line.slice(line.indexOf('server:'), line.indexOf(':', line.indexOf('server:') + 8))}`;
  });
  await check("trusting the folder: its stinkywait.server.pythonPath applies (the server restarts on it)", async () => {
    await runCommand('Workspaces: Manage Workspace Trust');
    const trustButton = page.locator('.workspace-trust-editor .monaco-button', { hasText: /^Trust( Folder)?$/ }).first();
    await trustButton.waitFor({ state: 'visible', timeout: 20000 });
    await trustButton.click();
    await poll(async () => !/Restricted Mode/.test(await statusText()), { what: '"Restricted Mode" to go', timeout: 20000 });
    const line = await poll(async () => {
      const l = launchLine();
      return l && l.includes(planted) ? l : false;
    }, { what: `a launch on the folder's interpreter ${planted}`, timeout: opts.timeout });
    assert(fs.existsSync(ran), 'the folder\'s interpreter did not run');
    await openFile('gemm_loop.s');
    await pollHints(trustPlan.length, 'after trusting', trustData);
    return line.slice(line.indexOf('server:'), 160);
  });
} catch (err) {
  record('e2e run', false, err instanceof Error ? err.stack ?? err.message : String(err));
  if (page) {
    const shot = path.join(work, 'failure.png');
    await page.screenshot({ path: shot }).then(() => console.log(`screenshot of the failure: ${shot}`)).catch(() => undefined);
  }
} finally {
  if (browser) await browser.close().catch(() => undefined);
  stopCodeServer(server);
  const failed = results.filter((r) => !r.ok).length;
  if (failed > 0) {
    const logs = path.join(dataDir, 'logs');
    console.log(`code-server output:\n${serverLog.join('').split('\n').slice(-40).join('\n')}`);
    if (fs.existsSync(logs)) console.log(`extension host logs under ${logs}`);
  }
  if (!opts.keep && failed === 0) {
    fs.rmSync(work, { recursive: true, force: true });
  }
  console.log(`e2e: ${results.length - failed} passed, ${failed} failed`);
  process.exitCode = failed > 0 ? 1 : 0;
}
