// "Show Wait Plan": every planned wait of the current buffer in a webview, as the server
// explains it (`stinkywait/plan`: the same words as the hints and the hover); line numbers
// jump to the source; follows edits. Opened from the hover's link at a line, it starts with
// that line's whole explanation (the summary and the FIFO state the hover has no room for)
// and its waits marked.
import * as crypto from 'node:crypto';
import * as path from 'node:path';
import * as vscode from 'vscode';

export interface PlanWait {
  line: number;
  column?: number;
  block?: string;
  placement?: string;
  instruction: string;
  counter: string;
  count: number;
  rule?: string;
  proven?: boolean;
  label?: string;
  /** the explanation, one sentence per entry (markdown: `code`, **bold**) */
  summary?: string[];
  producer?: { line: number; mnemonic: string; countFrom: number } | null;
  others?: string[];
  /** predicted stall: cycles on the hot path (one trip of `loop` inside a loop) */
  stall?: { cycles: number; total?: number; loop?: string | null } | null;
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
  /** the server sends the waits costliest first (predicted stall) */
  waits: PlanWait[];
  stall?: number | null;
  diagnostics?: PlanDiagnostic[];
}

export interface Plan {
  file: string;
  /** the line the view was opened at (the hover's link): its whole hover, as markdown */
  focus?: { line: number; markdown: string | null } | null;
  target?: string;
  /** the analysis settings a user can change */
  settings?: Record<string, unknown>;
  diagnostics?: PlanDiagnostic[];
  functions: PlanFunction[];
}

/** The settings worth a mention in the header: those that differ from their defaults. */
const SETTING_DEFAULTS: Record<string, unknown> = { numWaves: 0, optimize: true, enableLoopCarriedTokenDeps: true, enableTensorDescriptorWar: false, coalesceWindow: -1 };

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

/** The server's markdown-lite sentences as HTML: `code` and **bold**, everything escaped. */
function md(s: string): string {
  return esc(s).replace(/\*\*([^*]+)\*\*/g, '<b>$1</b>').replace(/`([^`]+)`/g, '<code>$1</code>');
}

/** The hover's markdown as HTML: paragraphs (blank lines), `---` rules, `- ` list items with
 *  their indented continuation lines, hard breaks (two trailing spaces); inline as `md`. */
export function mdBlocks(text: string): string {
  const out: string[] = [];
  for (const para of text.split(/\n\s*\n/)) {
    const lines = para.split('\n');
    if (lines.length === 1 && /^\s*---\s*$/.test(lines[0])) {
      out.push('<hr>');
      continue;
    }
    const items: string[][] = [];
    const prose: string[] = [];
    for (const line of lines) {
      if (/^- /.test(line)) items.push([line.slice(2)]);
      else if (items.length && /^\s+\S/.test(line)) items[items.length - 1].push(line.trim());
      else prose.push(line);
    }
    const joined = (parts: string[]) => parts.map((p) => md(p.replace(/\s+$/, ''))).join('<br>');
    if (prose.length) out.push(`<p>${joined(prose)}</p>`);
    if (items.length) out.push(`<ul>${items.map((i) => `<li>${joined(i)}</li>`).join('')}</ul>`);
  }
  return out.join('\n');
}

export function renderPlanHtml(plan: Plan, title: string, nonce: string, cspSource: string, sourceLine: (line: number) => string): string {
  const total = plan.functions.reduce((n, f) => n + f.waits.length, 0);
  const changed = Object.entries(plan.settings ?? {}).filter(([k, v]) => k in SETTING_DEFAULTS && SETTING_DEFAULTS[k] !== v);
  const settings = changed.length ? ` · ${changed.map(([k, v]) => `<code>${esc(k)}: ${esc(JSON.stringify(v))}</code>`).join(' ')}` : '';
  const focusLine = plan.focus?.line;
  const focus = plan.focus
    ? `<section id="focus"><h2>Line ${lineLink(plan.focus.line)}</h2>${plan.focus.markdown ? mdBlocks(plan.focus.markdown) : '<p class="muted">Nothing is explained at this line.</p>'}</section>`
    : '';
  const sections = plan.functions.map((f) => {
    const byStall = [...f.waits].sort((a, b) => (b.stall?.cycles ?? 0) - (a.stall?.cycles ?? 0));
    const rows = byStall.map((w) => {
      const stall = w.stall ? `~${w.stall.cycles} cycles stall${w.stall.loop ? ` (per trip of ${w.stall.loop})` : ''}` : '';
      const why = [
        `<b>${esc(w.rule ?? '')}</b>${w.proven === false ? ' <span class="tag">disjointness not proved</span>' : ''}`,
        ...(stall ? [md(stall)] : []),
        ...(w.summary ?? []).map((s) => md(s)),
        ...(w.others && w.others.length ? [`also drains ${w.others.map((o) => md(o)).join(', ')}`] : []),
      ];
      // the explanation gets a row of its own, as wide as the table: it reads well however
      // narrow the panel is (a fifth column would leave it a few characters wide)
      const mark = w.line === focusLine ? ' focused' : '';
      return `<tr class="wait-row${mark}">
        <td class="num">${lineLink(w.line, w.column)}</td>
        <td><code class="wait">${esc(w.instruction)}</code></td>
        <td>${md(w.block ?? '')}${w.placement === 'after' ? ' <span class="muted">(at its end)</span>' : ''}</td>
        <td class="src"><code title="${esc(sourceLine(w.line))}">${esc(sourceLine(w.line))}</code></td>
      </tr>
      <tr class="why-row${mark}"><td></td><td class="why" colspan="3">${why.map((p) => `<div>${p}</div>`).join('')}</td></tr>`;
    });
    const table = rows.length
      ? `<table><colgroup><col class="c-line"><col class="c-wait"><col class="c-block"><col class="c-src"></colgroup>
         <thead><tr><th>Line</th><th>Wait</th><th>Block</th><th>Before</th></tr></thead><tbody>${rows.join('')}</tbody></table>`
      : '<p class="muted">No waits needed.</p>';
    return `<section><h2>${esc(f.name || '(file)')} <span class="muted">${f.waits.length} wait${f.waits.length === 1 ? '' : 's'}${typeof f.stall === 'number' ? ` · ~${f.stall} cycles stall` : ''}</span></h2>${table}${renderDiagnostics(f.diagnostics)}</section>`;
  });
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${cspSource} 'nonce-${nonce}'; script-src 'nonce-${nonce}';">
<title>${esc(title)}</title>
<style nonce="${nonce}">
  body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 1em 2em; }
  table { border-collapse: collapse; width: 100%; margin: .5em 0 1em; table-layout: fixed; }
  col.c-line { width: 4.5em; } col.c-wait { width: 13em; } col.c-block { width: 9em; }
  th, td { text-align: left; vertical-align: top; padding: 3px 8px; }
  th, tr.why-row td { border-bottom: 1px solid var(--vscode-editorGroup-border); }
  tr.wait-row td { padding-top: 6px; }
  th { font-weight: 600; }
  code { font-family: var(--vscode-editor-font-family); line-height: 1.5; }
  code.wait { color: var(--vscode-charts-orange, #d18616); white-space: nowrap; }
  td.src code { display: block; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
  td.why { white-space: normal; overflow-wrap: break-word; line-height: 1.45; padding-bottom: 6px; }
  td.why div + div { margin-top: .15em; }
  .tag { font-size: .85em; padding: 0 .4em; border-radius: 3px; background: var(--vscode-badge-background); color: var(--vscode-badge-foreground); }
  .muted { opacity: .7; font-weight: normal; font-size: .9em; }
  a.line { font-family: var(--vscode-editor-font-family); }
  .sev-error { color: var(--vscode-errorForeground); }
  #focus { border-left: 3px solid var(--vscode-focusBorder); padding: 0 1em; margin: 1em 0; }
  #focus ul { padding-left: 1.2em; } #focus li { margin: .2em 0; line-height: 1.45; }
  tr.focused td { background: var(--vscode-editor-findMatchHighlightBackground, rgba(234, 92, 0, .2)); }
</style></head>
<body>
<h1>${esc(title)}</h1>
<p id="summary"><b>${total}</b> planned wait${total === 1 ? '' : 's'} in ${plan.functions.length} function${plan.functions.length === 1 ? '' : 's'}${plan.target ? ` · target <code>${esc(plan.target)}</code>` : ''}${settings}</p>
${renderDiagnostics(plan.diagnostics)}
${focus}
${sections.join('\n')}
<script nonce="${nonce}">
  const vscode = acquireVsCodeApi();
  document.getElementById('focus')?.scrollIntoView();
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
<p>The plan comes from the language server: see the <i>stinkywait</i> output, or run <i>stinkywait: Restart Language Server</i>.</p></body></html>`;
}

export class PlanView implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private source: vscode.Uri | undefined;
  /** the line the hover's link asked for (kept while the view shows that file) */
  private focusLine: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private generation = 0;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly fetch: (doc: vscode.TextDocument, line: number | undefined) => Promise<Plan>,
  ) {
    this.disposables.push(
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (this.panel && this.source && e.document.uri.toString() === this.source.toString()) {
          this.refresh(700);
        }
      }),
    );
  }

  async show(uri?: vscode.Uri, line?: number): Promise<void> {
    const target = uri ?? vscode.window.activeTextEditor?.document.uri;
    if (!target) {
      void vscode.window.showWarningMessage('stinkywait: open a kernel (.s, .amdgcn, .stir) to see its wait plan.');
      return;
    }
    this.source = target;
    this.focusLine = line;
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
    try {
      const started = Date.now();
      const plan = await this.fetch(doc, this.focusLine);
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
