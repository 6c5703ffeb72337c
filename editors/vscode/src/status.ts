// Status bar item: server state, the number of waits planned for the active kernel and the
// target the analysis used. Shown whenever the active editor holds a `stir` or `amdgpu-asm`
// document (the extension re-checks on every event that can change that: editor switches,
// documents re-opened under another language, content detection), and always when the
// server failed.
import * as vscode from 'vscode';

export interface DocumentStatus {
  waits: number;
  target?: string;
  findings?: Record<string, number> | null;
  /** the kernel's predicted stall (the latency model's one-wave walk of the hot path) */
  stall?: { cycles: number; walk?: number } | null;
}

export type ServerState = 'starting' | 'running' | 'stopped' | 'failed';

const ICON: Record<ServerState, string> = {
  starting: '$(sync~spin)',
  running: '$(pulse)',
  stopped: '$(debug-stop)',
  failed: '$(error)',
};

export class StatusBar implements vscode.Disposable {
  state: ServerState = 'stopped';
  private detail = '';
  private waits: number | undefined;
  private target: string | undefined;
  private findings: Record<string, number> | null | undefined;
  private stall: { cycles: number; walk?: number } | null | undefined;
  private waitsUri: vscode.Uri | undefined;
  private visible = false;
  private readonly item: vscode.StatusBarItem;

  constructor() {
    this.item = vscode.window.createStatusBarItem('stinkywait.status', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'stinkywait';
    this.render();
  }

  setState(state: ServerState, detail = ''): void {
    this.state = state;
    this.detail = detail;
    if (state !== 'running') {
      this.waits = undefined;
    }
    this.render();
  }

  setDocumentStatus(status: DocumentStatus | undefined, uri?: vscode.Uri): void {
    this.waits = status?.waits;
    this.target = status?.target;
    this.findings = status?.findings;
    this.stall = status?.stall;
    this.waitsUri = uri;
    this.render();
  }

  get shown(): boolean {
    return this.visible || this.state === 'failed';
  }

  setVisible(visible: boolean): void {
    if (visible !== this.visible) {
      this.visible = visible;
      this.render();
    }
  }

  private render(): void {
    const item = this.item;
    let text = `${ICON[this.state]} stinkywait`;
    if (this.state === 'running' && this.waits !== undefined) {
      text += `: ${this.waits} wait${this.waits === 1 ? '' : 's'}`;
      if (this.target) {
        text += ` · ${this.target}`;
      }
    } else if (this.state !== 'running') {
      text += `: ${this.state}`;
    }
    item.text = text;
    const tip = new vscode.MarkdownString(undefined, true);
    tip.isTrusted = { enabledCommands: ['stinkywait.showWaitPlan', 'stinkywait.insertAllWaits', 'stinkywait.restartServer', 'stinkywait.showOutput'] };
    tip.appendMarkdown(`**stinkywait** language server: ${this.state}${this.detail ? ` (${escapeMd(this.detail)})` : ''}\n\n`);
    if (this.waits !== undefined && this.waitsUri) {
      tip.appendMarkdown(`${this.waits} planned wait(s) in \`${escapeMd(vscode.workspace.asRelativePath(this.waitsUri))}\``
        + (this.target ? ` for ${escapeMd(this.target)}` : '') + '\n\n');
      if (this.stall) {
        tip.appendMarkdown(`predicted stall: ~${this.stall.cycles} cycles on the hot path`
          + (this.stall.walk ? ` (of ~${this.stall.walk})` : '') + '\n\n');
      }
      if (this.findings) {
        const f = this.findings;
        tip.appendMarkdown(`hand-written waits: ${f.missing ?? 0} missing, ${f.unproven ?? 0} unproven `
          + `(disjointness not proved), ${(f.redundant ?? 0) + (f.stricter ?? 0)} redundant or stricter\n\n`);
      }
    }
    tip.appendMarkdown('[Show wait plan](command:stinkywait.showWaitPlan) · [Insert all waits](command:stinkywait.insertAllWaits) · ');
    tip.appendMarkdown('[Restart server](command:stinkywait.restartServer) · [Output](command:stinkywait.showOutput)');
    item.tooltip = tip;
    item.command = this.state === 'failed' || this.state === 'stopped' ? 'stinkywait.showOutput' : 'stinkywait.showWaitPlan';
    item.backgroundColor = this.state === 'failed' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
    // A failed server must be visible even when no kernel is open.
    if (this.visible || this.state === 'failed') {
      item.show();
    } else {
      item.hide();
    }
  }

  dispose(): void {
    this.item.dispose();
  }
}

function escapeMd(s: string): string {
  return s.replace(/[\\`*_{}[\]()#+!|<>]/g, (c) => '\\' + c);
}
