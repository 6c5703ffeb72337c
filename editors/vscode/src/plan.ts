// "Show Wait Plan": runs `stinkywait plan --json` on the current buffer (same interpreter as
// the server) and explains every planned wait in a webview; line numbers jump to the source.
import * as crypto from 'node:crypto';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { Launch, run } from './launch';

export interface PlanDep {
  line: number;
  mnemonic: string;
  block?: string;
  pred?: string;
  countFrom?: number;
}

export interface PlanWait {
  line: number;
  column?: number;
  block?: string;
  placement?: string;
  instruction: string;
  counter: string;
  count: number;
  reason?: string;
  deps?: PlanDep[];
}

export interface PlanDiagnostic {
  line?: number;
  column?: number;
  severity?: string;
  message: string;
  code?: string;
}

export interface PlanFunction {
  name: string;
  waits: PlanWait[];
  diagnostics?: PlanDiagnostic[];
}

export interface Plan {
  file: string;
  options?: Record<string, unknown>;
  diagnostics?: PlanDiagnostic[];
  functions: PlanFunction[];
}

/** CLI flags for the analysis settings (same meaning as the server's settings). */
export function planArgs(config: vscode.WorkspaceConfiguration): string[] {
  const args: string[] = [];
  const numWaves = config.get<number>('numWaves', 0);
  if (numWaves > 0) {
    args.push('--num-waves', String(numWaves));
  }
  const arch = config.get<string>('arch', '').trim();
  if (arch) {
    args.push('--arch', arch);
  }
  if (config.get<boolean>('enableLoopCarriedTokenDeps', false)) {
    args.push('--loop-carried-token-deps');
  }
  if (config.get<boolean>('enableTensorDescriptorWar', false)) {
    args.push('--tensor-descriptor-war');
  }
  if (!config.get<boolean>('optimize', true)) {
    args.push('--no-optimize');
  }
  return args;
}

/** Run `stinkywait plan --json` on `text` (the unsaved buffer, fed on stdin). */
export async function computePlan(python: string, languageId: string, text: string, cwd: string | undefined): Promise<Plan> {
  const config = vscode.workspace.getConfiguration('stinkywait');
  const language = languageId === 'stir' ? 'stir' : 'asm';
  const args = ['-m', 'stinkywait_core.cli.main', 'plan', '-', '--json', '--language', language, ...planArgs(config)];
  const result = await run(python, args, { cwd, timeoutMs: 60000, input: text });
  if (result.spawnError) {
    throw new Error(`cannot run ${python}: ${result.spawnError.message}`);
  }
  let parsed: Plan;
  try {
    parsed = JSON.parse(result.stdout) as Plan;
  } catch {
    throw new Error(`${python} ${args.join(' ')} exited with ${result.code}:\n${(result.stderr || result.stdout).trim().slice(0, 4000)}`);
  }
  if (!Array.isArray(parsed.functions)) {
    throw new Error('stinkywait plan --json: no "functions" array in the output');
  }
  return parsed;
}

function esc(s: unknown): string {
  return String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

function lineLink(line: number | undefined, column?: number): string {
  if (!line) {
    return '';
  }
  return `<a href="#" class="line" data-line="${line}" data-column="${column ?? 1}">L${line}</a>`;
}

function renderDiagnostics(diags: PlanDiagnostic[] | undefined): string {
  if (!diags || diags.length === 0) {
    return '';
  }
  const rows = diags.map((d) => `<li class="sev-${esc(d.severity ?? 'info')}">${lineLink(d.line, d.column)} <b>${esc(d.severity ?? '')}</b> ${esc(d.message)}${d.code ? ` <code>${esc(d.code)}</code>` : ''}</li>`);
  return `<ul class="diags">${rows.join('')}</ul>`;
}

export function renderPlanHtml(plan: Plan, title: string, nonce: string, cspSource: string, sourceLine: (line: number) => string): string {
  const total = plan.functions.reduce((n, f) => n + f.waits.length, 0);
  const options = plan.options ? Object.entries(plan.options).map(([k, v]) => `<code>${esc(k)}=${esc(JSON.stringify(v))}</code>`).join(' ') : '';
  const sections = plan.functions.map((f) => {
    const rows = f.waits.map((w) => {
      const deps = (w.deps ?? []).map((d) => `<li>${lineLink(d.line)} <code>${esc(d.mnemonic)}</code>${d.block ? ` in ^${esc(d.block)}` : ''}${d.pred ? ` via ^${esc(d.pred)}` : ''}${d.countFrom !== undefined && d.countFrom !== null ? `, countFrom ${esc(d.countFrom)}` : ''}</li>`);
      return `<tr>
        <td>${lineLink(w.line, w.column)}</td>
        <td><code class="wait">${esc(w.instruction)}</code></td>
        <td>${w.block ? `^${esc(w.block)}` : ''}${w.placement ? ` <span class="muted">(${esc(w.placement)})</span>` : ''}</td>
        <td><code>${esc(sourceLine(w.line))}</code></td>
        <td>${esc(w.reason ?? '')}${deps.length ? `<ul class="deps">${deps.join('')}</ul>` : ''}</td>
      </tr>`;
    });
    const table = rows.length
      ? `<table><thead><tr><th>Line</th><th>Wait</th><th>Block</th><th>Placed at</th><th>Why</th></tr></thead><tbody>${rows.join('')}</tbody></table>`
      : '<p class="muted">No waits needed.</p>';
    return `<section><h2>${esc(f.name || '(file)')} <span class="muted">${f.waits.length} wait${f.waits.length === 1 ? '' : 's'}</span></h2>${table}${renderDiagnostics(f.diagnostics)}</section>`;
  });
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${cspSource} 'nonce-${nonce}'; script-src 'nonce-${nonce}';">
<title>${esc(title)}</title>
<style nonce="${nonce}">
  body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 1em 2em; }
  table { border-collapse: collapse; width: 100%; margin: .5em 0 1em; }
  th, td { text-align: left; vertical-align: top; padding: 3px 8px; border-bottom: 1px solid var(--vscode-editorGroup-border); }
  th { font-weight: 600; }
  code { font-family: var(--vscode-editor-font-family); line-height: 1.5; }
  code.wait { color: var(--vscode-charts-orange, #d18616); white-space: nowrap; }
  .muted { opacity: .7; font-weight: normal; font-size: .9em; }
  ul.deps { margin: .2em 0 0; padding-left: 1.2em; }
  a.line { font-family: var(--vscode-editor-font-family); }
  .sev-error { color: var(--vscode-errorForeground); }
</style></head>
<body>
<h1>${esc(title)}</h1>
<p id="summary"><b>${total}</b> planned wait${total === 1 ? '' : 's'} in ${plan.functions.length} function${plan.functions.length === 1 ? '' : 's'}. ${options}</p>
${renderDiagnostics(plan.diagnostics)}
${sections.join('\n')}
<script nonce="${nonce}">
  const vscode = acquireVsCodeApi();
  document.addEventListener('click', (e) => {
    const a = e.target.closest('a.line');
    if (!a) { return; }
    e.preventDefault();
    vscode.postMessage({ type: 'reveal', line: Number(a.dataset.line), column: Number(a.dataset.column) });
  });
</script>
</body></html>`;
}

function renderError(title: string, message: string, nonce: string): string {
  return `<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'nonce-${nonce}';">
<style nonce="${nonce}">body{font-family:var(--vscode-font-family);color:var(--vscode-foreground)} pre{white-space:pre-wrap;color:var(--vscode-errorForeground)}</style>
</head><body><h1>${esc(title)}</h1><p>The wait plan could not be computed.</p><pre>${esc(message)}</pre>
<p>Check <code>stinkywait.server.pythonPath</code>: the plan view runs <code>stinkywait plan --json</code> with that interpreter.</p></body></html>`;
}

export class PlanView implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private source: vscode.Uri | undefined;
  private timer: NodeJS.Timeout | undefined;
  private generation = 0;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly launch: () => Launch,
  ) {
    this.disposables.push(
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (this.panel && this.source && e.document.uri.toString() === this.source.toString()) {
          this.refresh(700);
        }
      }),
    );
  }

  async show(uri?: vscode.Uri): Promise<void> {
    const target = uri ?? vscode.window.activeTextEditor?.document.uri;
    if (!target) {
      void vscode.window.showWarningMessage('stinkywait: open a kernel (.s, .amdgcn, .stir) to see its wait plan.');
      return;
    }
    this.source = target;
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel('stinkywait.plan', 'Wait plan', { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, {
        enableScripts: true,
        enableFindWidget: true,
        localResourceRoots: [],
      });
      this.panel.onDidDispose(() => {
        this.panel = undefined;
      }, null, this.disposables);
      this.panel.webview.onDidReceiveMessage((m: { type: string; line: number; column: number }) => this.reveal(m), null, this.disposables);
    } else {
      this.panel.reveal(undefined, true);
    }
    await this.update();
  }

  refresh(delay = 0): void {
    if (!this.panel) {
      return;
    }
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => void this.update(), delay);
  }

  private async update(): Promise<void> {
    const panel = this.panel;
    const source = this.source;
    if (!panel || !source) {
      return;
    }
    const generation = ++this.generation;
    const doc = await vscode.workspace.openTextDocument(source);
    const title = `Wait plan: ${path.basename(source.fsPath || source.path)}`;
    panel.title = title;
    const nonce = crypto.randomBytes(16).toString('base64');
    const launch = this.launch();
    const python = launch.python ?? 'python3';
    try {
      const started = Date.now();
      const plan = await computePlan(python, doc.languageId, doc.getText(), launch.cwd);
      if (generation !== this.generation || this.panel !== panel) {
        return;
      }
      this.output.info(`wait plan of ${source.fsPath}: ${plan.functions.reduce((n, f) => n + f.waits.length, 0)} waits in ${Date.now() - started} ms`);
      panel.webview.html = renderPlanHtml(plan, title, nonce, panel.webview.cspSource, (line) => (line >= 1 && line <= doc.lineCount ? doc.lineAt(line - 1).text.trim() : ''));
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.output.error(`wait plan: ${message}`);
      if (generation === this.generation && this.panel === panel) {
        panel.webview.html = renderError(title, message, nonce);
      }
    }
  }

  private async reveal(m: { type: string; line: number; column: number }): Promise<void> {
    if (m.type !== 'reveal' || !this.source || !Number.isFinite(m.line)) {
      return;
    }
    const doc = await vscode.workspace.openTextDocument(this.source);
    const line = Math.max(0, Math.min(doc.lineCount - 1, m.line - 1));
    const column = Math.max(0, (Number.isFinite(m.column) ? m.column : 1) - 1);
    const pos = new vscode.Position(line, column);
    const shown = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === this.source?.toString());
    const editor = await vscode.window.showTextDocument(doc, { viewColumn: shown?.viewColumn ?? vscode.ViewColumn.One, selection: new vscode.Range(pos, pos) });
    editor.revealRange(new vscode.Range(pos, pos), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }

  dispose(): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.panel?.dispose();
    for (const d of this.disposables.splice(0)) {
      d.dispose();
    }
  }
}
