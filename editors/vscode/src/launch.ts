// How the language server is started, and a preflight check that turns the usual start-up
// failures (no interpreter, package not installed, wrong path) into a message with the fix.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';

export type LaunchSource = 'stinkywait.server.path' | 'stinkywait.server.pythonPath' | 'python3';

export interface Launch {
  /** executable to spawn */
  command: string;
  args: string[];
  /** which setting decided the command (shown in messages and logs) */
  source: LaunchSource;
  /** interpreter to use for the `stinkywait` CLI (plan view); undefined when unknown */
  python: string | undefined;
  cwd: string | undefined;
}

export interface LaunchProblem {
  message: string;
  /** the concrete fix, shown to the user */
  fix: string;
  detail?: string;
}

function firstWorkspaceFolder(): string | undefined {
  const folders = vscode.workspace.workspaceFolders;
  return folders && folders.length > 0 ? folders[0].uri.fsPath : undefined;
}

/** Expand `~`, `${workspaceFolder}`, `${userHome}` and `${env:NAME}`; resolve relative paths
 *  against the first workspace folder (so `.venv/bin/python` works per project). */
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

export function resolveLaunch(config = vscode.workspace.getConfiguration('stinkywait')): Launch {
  const cwd = firstWorkspaceFolder();
  const serverPath = config.get<string>('server.path', '').trim();
  const pythonSetting = config.get<string>('server.pythonPath', '').trim();
  const python = pythonSetting ? expandPath(pythonSetting) : undefined;
  if (serverPath) {
    const command = expandPath(serverPath);
    const args = config.get<string[]>('server.args', []).map((a) => String(a));
    // A console script installed next to an interpreter: use that interpreter for the CLI.
    let sibling: string | undefined;
    if (path.isAbsolute(command)) {
      const candidate = path.join(path.dirname(command), process.platform === 'win32' ? 'python.exe' : 'python');
      sibling = fs.existsSync(candidate) ? candidate : undefined;
    }
    return { command, args, source: 'stinkywait.server.path', python: python ?? sibling ?? 'python3', cwd };
  }
  if (python) {
    return { command: python, args: ['-m', 'stinkywait_lsp'], source: 'stinkywait.server.pythonPath', python, cwd };
  }
  return { command: 'python3', args: ['-m', 'stinkywait_lsp'], source: 'python3', python: 'python3', cwd };
}

export function describeLaunch(l: Launch): string {
  return [l.command, ...l.args].map((p) => (/\s/.test(p) ? JSON.stringify(p) : p)).join(' ');
}

/** Is `command` runnable: an existing file, or a name found on PATH? */
export function findExecutable(command: string): string | undefined {
  if (command.includes('/') || command.includes('\\')) {
    return fs.existsSync(command) ? command : undefined;
  }
  const exts = process.platform === 'win32' ? (process.env.PATHEXT ?? '.EXE').split(';') : [''];
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) {
      continue;
    }
    for (const ext of exts) {
      const candidate = path.join(dir, command + ext);
      try {
        fs.accessSync(candidate, fs.constants.X_OK);
        return candidate;
      } catch {
        // not here
      }
    }
  }
  return undefined;
}

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  spawnError?: NodeJS.ErrnoException;
}

export function run(command: string, args: string[], options: { cwd?: string; timeoutMs?: number; input?: string } = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = execFile(
      command,
      args,
      { cwd: options.cwd, timeout: options.timeoutMs ?? 20000, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const err = error as (NodeJS.ErrnoException & { code?: number | string }) | null;
        if (err && typeof err.code === 'string') {
          resolve({ code: null, stdout: String(stdout), stderr: String(stderr), spawnError: err });
          return;
        }
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) });
      },
    );
    if (options.input !== undefined) {
      child.stdin?.end(options.input);
    }
  });
}

const installHint = 'install it with `<python> -m pip install -e <stinkywait checkout>` (or `pip install stinkywait`)';

/** Check that the server can start before handing it to the language client. */
export async function preflight(l: Launch): Promise<LaunchProblem | undefined> {
  const exe = findExecutable(l.command);
  if (!exe) {
    if (l.source === 'stinkywait.server.path') {
      return {
        message: `stinkywait: the server command "${l.command}" from stinkywait.server.path does not exist.`,
        fix: 'Set stinkywait.server.path to the full path of stinkywait-lsp (e.g. <venv>/bin/stinkywait-lsp), or clear it to use stinkywait.server.pythonPath.',
      };
    }
    if (l.source === 'stinkywait.server.pythonPath') {
      return {
        message: `stinkywait: the interpreter "${l.command}" from stinkywait.server.pythonPath does not exist.`,
        fix: 'Set stinkywait.server.pythonPath to a Python 3.11+ interpreter that has stinkywait installed (e.g. <checkout>/.venv/bin/python).',
      };
    }
    return {
      message: 'stinkywait: no `python3` on PATH, so the language server cannot start.',
      fix: 'Set stinkywait.server.pythonPath to a Python 3.11+ interpreter that has stinkywait installed (e.g. <checkout>/.venv/bin/python).',
    };
  }
  if (l.source === 'stinkywait.server.path') {
    return undefined;
  }
  const probe = await run(l.command, ['-c', 'import sys; print(sys.version_info[0], sys.version_info[1])'], { cwd: l.cwd });
  if (probe.spawnError || probe.code !== 0) {
    return {
      message: `stinkywait: cannot run "${l.command}": ${probe.spawnError?.message ?? probe.stderr.trim()}`,
      fix: 'Set stinkywait.server.pythonPath to a working Python 3.11+ interpreter.',
    };
  }
  const [major, minor] = probe.stdout.trim().split(/\s+/).map((x) => Number(x));
  if (major < 3 || (major === 3 && minor < 11)) {
    return {
      message: `stinkywait: ${l.command} is Python ${major}.${minor}; the server needs Python 3.11 or newer.`,
      fix: 'Set stinkywait.server.pythonPath to a Python 3.11+ interpreter that has stinkywait installed.',
    };
  }
  // Runs the real entry point, so a broken install (missing pygls, import errors) shows up here.
  const entry = await run(l.command, [...l.args, '--version'], { cwd: l.cwd });
  if (entry.code !== 0) {
    const missing = /No module named '?stinkywait/.test(entry.stderr);
    return {
      message: missing
        ? `stinkywait: the package is not installed for ${l.command}.`
        : `stinkywait: "${l.command} ${l.args.join(' ')} --version" failed.`,
      fix: missing
        ? `Either ${installHint.replace('<python>', l.command)}, or point stinkywait.server.pythonPath at the interpreter of the environment that has it.`
        : 'See the stinkywait output channel for the error; check that stinkywait and its dependencies (pygls 2, lsprotocol) are installed for this interpreter.',
      detail: entry.stderr.trim(),
    };
  }
  return undefined;
}
