// Settings that name files: `~`, `${workspaceFolder}`, `${userHome}`, `${env:NAME}`, and paths
// relative to the first workspace folder (so `.venv/bin/python` works per project).
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';

export function firstWorkspaceFolder(): string | undefined {
  const folders = vscode.workspace.workspaceFolders;
  return folders && folders.length > 0 ? folders[0].uri.fsPath : undefined;
}

export function expandPath(value: string, workspace = firstWorkspaceFolder()): string {
  let out = value.trim();
  out = out.replace(/\$\{userHome\}/g, os.homedir());
  out = out.replace(/\$\{env:([^}]+)\}/g, (_m, name: string) => process.env[name] ?? '');
  if (workspace) {
    out = out.replace(/\$\{workspaceFolder\}/g, workspace);
  }
  if (out === '~' || out.startsWith('~/')) {
    out = path.join(os.homedir(), out.slice(1));
  }
  const looksLikePath = out.includes('/') || out.includes('\\');
  if (looksLikePath && !path.isAbsolute(out) && workspace) {
    out = path.join(workspace, out);
  }
  return out;
}
