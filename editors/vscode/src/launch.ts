// How the language server is started. The .vsix carries the server (bundled/: its sources and
// pure-Python dependencies), so all it needs is a Python >= 3.11, found in this order:
// `stinkywait.server.pythonPath`, the Python extension's interpreter (when it is installed),
// then python3 / python3.13 / python3.12 / python3.11 / python on PATH. `stinkywait.server.path`
// (a command) bypasses all of it. When nothing fits, one message says what was tried and how
// to fix it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { findExecutable, probeVersion, run } from './interpreter';
import { expandPath, firstWorkspaceFolder } from './paths';

export type LaunchSource = 'stinkywait.server.path' | 'stinkywait.server.pythonPath' | 'the Python extension' | 'PATH';

export interface Launch {
  /** executable to spawn */
  command: string;
  args: string[];
  /** which setting or search decided the command (shown in messages and logs) */
  source: LaunchSource;
  /** the interpreter, when the server runs on one we chose */
  python: string | undefined;
  /** the interpreter's version ("3.11.7"), when probed */
  version?: string;
  /** the server comes from the extension's bundle (else from the interpreter's environment) */
  bundled: boolean;
  cwd: string | undefined;
}

export interface LaunchProblem {
  message: string;
  /** the concrete fix, shown to the user */
  fix: string;
  detail?: string;
}

export const MIN_PYTHON: [number, number] = [3, 11];
const PATH_NAMES = process.platform === 'win32' ? ['python3', 'python'] : ['python3', 'python3.13', 'python3.12', 'python3.11', 'python'];
const FIX_NO_PYTHON =
  'Install Python 3.11 or newer (python.org, or your package manager, e.g. `sudo apt install python3.11`) and make it `python3` on PATH, or set stinkywait.server.pythonPath to its full path.';

export function describeLaunch(l: Launch): string {
  return [l.command, ...l.args].map((p) => (/\s/.test(p) ? JSON.stringify(p) : p)).join(' ');
}

/** The launcher of the bundled server, when this build of the extension carries one. */
export function bundledLauncher(extensionPath: string): string | undefined {
  const launcher = path.join(extensionPath, 'bundled', 'stinkywait_server.py');
  const ok = fs.existsSync(launcher) && fs.existsSync(path.join(extensionPath, 'bundled', 'libs', 'pygls'))
    && fs.existsSync(path.join(extensionPath, 'bundled', 'tool', 'stinkywait_lsp'));
  return ok ? launcher : undefined;
}

interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } | undefined;
    resolveEnvironment(env: { path: string } | string): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
  };
}

/** The interpreter the Python extension has selected for the workspace (undefined when the
 *  extension is not installed or has none). */
async function pythonExtensionInterpreter(log: (m: string) => void): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension<PythonExtensionApi>('ms-python.python');
  if (!ext) {
    return undefined;
  }
  try {
    const api = ext.isActive ? ext.exports : await ext.activate();
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const active = api?.environments?.getActiveEnvironmentPath(folder);
    if (!active) {
      return undefined;
    }
    const resolved = await api.environments?.resolveEnvironment(active);
    return resolved?.executable?.uri?.fsPath ?? active.path;
  } catch (err) {
    log(`the Python extension did not name an interpreter: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }
}

function atLeast(version: [number, number]): boolean {
  return version[0] > MIN_PYTHON[0] || (version[0] === MIN_PYTHON[0] && version[1] >= MIN_PYTHON[1]);
}

/** Decide how to start the server. Probes interpreters (a few ms each), never throws. */
export async function resolveLaunch(extensionPath: string, log: (m: string) => void,
  config = vscode.workspace.getConfiguration('stinkywait')): Promise<Launch | LaunchProblem> {
  const cwd = firstWorkspaceFolder();
  const serverPath = config.get<string>('server.path', '').trim();
  if (serverPath) {
    const args = config.get<string[]>('server.args', []).map((a) => String(a));
    return { command: expandPath(serverPath), args, source: 'stinkywait.server.path', python: undefined, bundled: false, cwd };
  }
  const launcher = bundledLauncher(extensionPath);
  const fromEnvironment = config.get<string>('server.importStrategy', 'useBundled') === 'fromEnvironment' || !launcher;
  if (!launcher) {
    log('this build of the extension carries no server (bundled/): using the interpreter\'s installed stinkywait');
  }
  const args = fromEnvironment ? ['-m', 'stinkywait_lsp'] : [launcher as string];
  const tried: string[] = [];

  const setting = config.get<string>('server.pythonPath', '').trim();
  if (setting) {
    const python = expandPath(setting);
    const found = findExecutable(python);
    const version = found ? await probeVersion(found, cwd) : undefined;
    if (version && atLeast(version.parsed)) {
      return { command: found as string, args, source: 'stinkywait.server.pythonPath', python: found, version: version.text, bundled: !fromEnvironment, cwd };
    }
    // the user chose this interpreter: say why it does not work instead of silently using another
    return found
      ? {
        message: `stinkywait: the interpreter "${python}" from stinkywait.server.pythonPath is ${version ? `Python ${version.text}` : 'not a working Python'}; the server needs Python 3.11 or newer.`,
        fix: 'Set stinkywait.server.pythonPath to a Python 3.11+ interpreter, or clear it to let the extension find one.',
      }
      : {
        message: `stinkywait: the interpreter "${python}" from stinkywait.server.pythonPath does not exist.`,
        fix: 'Set stinkywait.server.pythonPath to a Python 3.11+ interpreter (e.g. /usr/bin/python3.11), or clear it to let the extension find one.',
      };
  }

  const candidates: { python: string; source: LaunchSource }[] = [];
  const fromExtension = await pythonExtensionInterpreter(log);
  if (fromExtension) {
    candidates.push({ python: fromExtension, source: 'the Python extension' });
  }
  for (const name of PATH_NAMES) {
    const found = findExecutable(name);
    if (found) {
      candidates.push({ python: found, source: 'PATH' });
    } else {
      tried.push(`${name}: not on PATH`);
    }
  }
  const seen = new Set<string>();
  for (const c of candidates) {
    const real = safeRealpath(c.python);
    if (seen.has(real)) {
      continue;
    }
    seen.add(real);
    const version = await probeVersion(c.python, cwd);
    if (version && atLeast(version.parsed)) {
      return { command: c.python, args, source: c.source, python: c.python, version: version.text, bundled: !fromEnvironment, cwd };
    }
    tried.push(`${c.python} (${c.source}): ${version ? `Python ${version.text}` : 'does not run'}`);
  }
  return {
    message: 'stinkywait: no Python 3.11 or newer was found to run the language server.',
    fix: FIX_NO_PYTHON,
    detail: `tried: ${tried.join('; ') || 'nothing'}`,
  };
}

function safeRealpath(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

const installHint = 'install it with `<python> -m pip install -e <stinkywait checkout>` (or `pip install stinkywait`)';

/** Check that the server starts before handing it to the language client: the real entry
 *  point with `--version`, so a broken bundle or install shows up here, with the fix. */
export async function preflight(l: Launch): Promise<LaunchProblem | undefined> {
  const exe = findExecutable(l.command);
  if (!exe) {
    return {
      message: `stinkywait: the server command "${l.command}" from stinkywait.server.path does not exist.`,
      fix: 'Set stinkywait.server.path to the full path of stinkywait-lsp (e.g. <venv>/bin/stinkywait-lsp), or clear it to use the bundled server.',
    };
  }
  if (l.source === 'stinkywait.server.path') {
    return undefined;
  }
  const entry = await run(l.command, [...l.args, '--version'], { cwd: l.cwd });
  if (entry.code === 0) {
    return undefined;
  }
  const missing = /No module named '?stinkywait/.test(entry.stderr);
  return {
    message: missing
      ? `stinkywait: the package is not installed for ${l.command} (stinkywait.server.importStrategy is "fromEnvironment").`
      : `stinkywait: "${describeLaunch(l)} --version" failed.`,
    fix: missing
      ? `Either ${installHint.replace('<python>', l.command)}, or set stinkywait.server.importStrategy to "useBundled".`
      : 'See the stinkywait output for the error; "useBundled" needs nothing installed but Python 3.11+.',
    detail: (entry.spawnError?.message ?? entry.stderr).trim(),
  };
}
