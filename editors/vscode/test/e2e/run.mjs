// Real-editor end-to-end test: code-server (VS Code 1.100 in the browser) + the built .vsix +
// the stinkywait language server, driven through headless Chromium with playwright-core.
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
async function check(name, fn) {
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
  'stinkywait.server.pythonPath': opts.python,
  'stinkywait.trace.server': 'messages',
};
fs.writeFileSync(settingsFile, JSON.stringify(userSettings, null, 2));

let server;
let browser;
const serverLog = [];
try {
  await check('code-server installs the .vsix', async () => {
    const r = spawnSync(opts.codeServer, ['--user-data-dir', dataDir, '--extensions-dir', extDir, '--install-extension', opts.vsix], { encoding: 'utf8' });
    assert(r.status === 0, `exit ${r.status}: ${r.stderr || r.stdout}`);
    const installed = fs.readdirSync(extDir).filter((d) => d.startsWith('stinkywait.stinkywait-'));
    assert(installed.length === 1, `extension folder not found in ${extDir}: ${fs.readdirSync(extDir).join(', ')}`);
    return installed[0];
  });

  const url = await new Promise((resolve, reject) => {
    server = spawn(opts.codeServer, [
      '--auth', 'none', '--bind-addr', '127.0.0.1:0', '--disable-telemetry', '--disable-update-check',
      '--disable-workspace-trust', '--disable-getting-started-override', '--ignore-last-opened',
      '--user-data-dir', dataDir, '--extensions-dir', extDir, ws,
    ], { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PASSWORD: undefined } });
    const timer = setTimeout(() => reject(new Error(`code-server did not report its port:\n${serverLog.join('')}`)), 60000);
    const onData = (buf) => {
      const s = buf.toString();
      serverLog.push(s);
      const m = /HTTP server listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(s);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    server.stdout.on('data', onData);
    server.stderr.on('data', onData);
    server.on('exit', (code) => reject(new Error(`code-server exited with ${code}:\n${serverLog.join('')}`)));
  });
  console.log(`code-server at ${url} (pid ${server.pid}), work dir ${work}`);

  browser = await chromium.launch({
    executablePath: opts.chromium,
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
  const context = await browser.newContext({ viewport: { width: 1500, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url });
  const page = await context.newPage();
  page.on('pageerror', (e) => console.log(`[page error] ${e.message}`));
  await page.goto(`${url}/?folder=${encodeURIComponent(ws)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: opts.timeout });
  await page.waitForSelector('.statusbar', { timeout: opts.timeout });
  await sleep(1500);

  const editorText = () => page.locator('.editor-group-container.active .monaco-editor .view-lines').first().innerText();
  const statusText = () => page.locator('.statusbar').innerText();
  /** Inlay hints are rendered as injected-text spans; the fixtures have no waits of their own. */
  const hintSpans = async () => (await page.locator('.editor-group-container.active .monaco-editor .view-lines span[class*="dyn-rule"]').allInnerTexts())
    .map((t) => t.replace(/\s+/g, ' ').trim())
    .filter((t) => t.startsWith('s_wait_'));

  async function runCommand(title) {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill(`>${title}`);
    await page.locator('.quick-input-list .monaco-list-row').first().waitFor({ state: 'visible' });
    await sleep(300);
    await page.keyboard.press('Enter');
  }

  async function openFile(name) {
    await page.keyboard.press('Control+P');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill(name);
    await page.locator('.quick-input-list .monaco-list-row').first().waitFor({ state: 'visible' });
    await sleep(300);
    await page.keyboard.press('Enter');
    await page.locator(`.tab[aria-label^="${name}"]`).first().waitFor({ state: 'visible', timeout: opts.timeout });
    await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
  }

  async function gotoLine(line, column = 1) {
    await page.keyboard.press('Control+G');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill(`:${line}:${column}`);
    await sleep(200);
    await page.keyboard.press('Enter');
    await sleep(200);
  }

  /** Edit the user settings the way a user does: settings.json in the editor, then save. */
  async function setUserSettings(values) {
    await runCommand('Preferences: Open User Settings (JSON)');
    await page.locator('.tab[aria-label^="settings.json"]').first().waitFor({ state: 'visible', timeout: 20000 });
    await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
    // paste, so auto-closing brackets and auto-indent leave the text alone
    await page.evaluate((t) => navigator.clipboard.writeText(t), JSON.stringify(values, null, 2));
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Control+V');
    await save();
    const saved = JSON.parse(fs.readFileSync(settingsFile, 'utf8'));
    assert(JSON.stringify(saved) === JSON.stringify(values), 'settings.json was not saved as pasted');
  }

  async function save() {
    await page.keyboard.press('Control+S');
    await sleep(800);
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
  await check('hover on a consumer shows the FIFO state of its counters', async () => {
    await page.keyboard.press('Control+B'); // hide the side bar: more room for hints and hover
    await gotoLine(hoverLine, hoverWaits[0].column ?? 1);
    await sleep(300);
    await page.keyboard.press('Control+K');
    await page.keyboard.press('Control+I');
    const hover = page.locator('.monaco-hover:not(.hidden)').first();
    const text = await poll(async () => {
      if (!(await hover.isVisible())) {
        await page.keyboard.press('Control+K');
        await page.keyboard.press('Control+I');
        return false;
      }
      // The diagnostics part of the hover renders first; wait for the server's part too.
      const t = await hover.innerText();
      return /s_wait_/.test(t) && /in flight before this instruction/i.test(t) ? t : false;
    }, { what: 'a hover with the planned waits and the FIFO section ("In flight before this instruction")', timeout: 30000 });
    // The FIFO section lists, per counter and predecessor, the ops in flight: `L<line> <mnemonic>`.
    for (const w of hoverWaits) {
      for (const d of w.deps ?? []) {
        const entry = new RegExp(`L${d.line}\\s+${d.mnemonic}\\b`);
        assert(entry.test(text), `FIFO state does not list producer L${d.line} ${d.mnemonic} of ${w.instruction}:\n${text}`);
      }
    }
    if (opts.screenshot) {
      // Focus the hover and scroll it to its end, so the picture shows the FIFO section.
      await page.keyboard.press('Control+K');
      await page.keyboard.press('Control+I');
      await sleep(200);
      await page.keyboard.press('End');
      await sleep(400);
      fs.mkdirSync(path.dirname(opts.screenshot), { recursive: true });
      await page.screenshot({ path: opts.screenshot });
    }
    const fifo = text.slice(text.search(/in flight before this instruction/i)).split('\n').filter(Boolean);
    return fifo.slice(0, 4).join(' | ');
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
    await sleep(1500);
    const status = await statusText();
    assert(status.includes('Plain Text') && !status.includes('AMDGPU Assembly'), `x86 assembly was not left as Plain Text: ${status}`);
    assert((await hintSpans()).length === 0, 'hints in a non-AMDGPU file');
  });
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
    await page.keyboard.press('Control+.');
    const widget = page.locator('.action-widget');
    await widget.waitFor({ state: 'visible', timeout: 20000 });
    // Pick the fix by keyboard (the widget's pointer block swallows synthetic clicks).
    const rows = widget.locator('.monaco-list-row.action');
    await rows.first().waitFor({ state: 'visible', timeout: 20000 });
    const titles = (await rows.allInnerTexts()).map((t) => t.trim());
    const index = titles.findIndex((t) => t.includes(target.instruction));
    assert(index >= 0, `no quick fix mentioning "${target.instruction}" among ${JSON.stringify(titles)}`);
    const title = titles[index];
    for (let i = 0; i < index; i++) await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await widget.waitFor({ state: 'hidden', timeout: 10000 });
    await sleep(300);
    await save();
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
    await runCommand('stinkywait: Insert All Waits in File');
    await sleep(1000);
    await save();
    const text = fs.readFileSync(asmFile, 'utf8');
    const left = cliPlan(asmFile);
    assert(left.length === 0, `after insert-all the CLI still plans ${left.length} waits: ${left.map((w) => `${w.line}:${w.instruction}`).join(', ')}`);
    const lines = waitLines(text);
    assert(lines.length >= asmPlan.length, `only ${lines.length} wait lines for ${asmPlan.length} planned waits`);
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
    if (opts.screenshotPlan) {
      await sleep(500);
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

  await check('changing a stinkywait setting re-plans with it (enableLoopCarriedTokenDeps)', async () => {
    const expected = cliPlan(stirFile, ['--loop-carried-token-deps']);
    assert(expected.length !== stirPlan.length, 'fixture does not react to the setting; the check would prove nothing');
    await setUserSettings({ ...userSettings, 'stinkywait.enableLoopCarriedTokenDeps': true });
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
} catch (err) {
  record('e2e run', false, err instanceof Error ? err.stack ?? err.message : String(err));
} finally {
  if (browser) await browser.close().catch(() => undefined);
  if (server && server.exitCode === null) {
    try {
      process.kill(-server.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
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
