// Status bar item: server state plus the number of waits planned for the active kernel.
import * as vscode from 'vscode';

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

  setWaitCount(n: number | undefined, uri?: vscode.Uri): void {
    this.waits = n;
    this.waitsUri = uri;
    this.render();
  }

  setVisible(visible: boolean): void {
    this.visible = visible;
    this.render();
  }

  private render(): void {
    const item = this.item;
    let text = `${ICON[this.state]} stinkywait`;
    if (this.state === 'running' && this.waits !== undefined) {
      text += `: ${this.waits} wait${this.waits === 1 ? '' : 's'}`;
    } else if (this.state !== 'running') {
      text += `: ${this.state}`;
    }
    item.text = text;
    const tip = new vscode.MarkdownString(undefined, true);
    tip.isTrusted = { enabledCommands: ['stinkywait.showWaitPlan', 'stinkywait.insertAllWaits', 'stinkywait.restartServer', 'stinkywait.showOutput'] };
    tip.appendMarkdown(`**stinkywait** language server: ${this.state}${this.detail ? ` (${escapeMd(this.detail)})` : ''}\n\n`);
    if (this.waits !== undefined && this.waitsUri) {
      tip.appendMarkdown(`${this.waits} planned wait(s) in \`${escapeMd(vscode.workspace.asRelativePath(this.waitsUri))}\`\n\n`);
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
