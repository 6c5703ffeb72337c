// Finding and probing executables (node only, no vscode API): is a command on PATH, which
// Python version is an interpreter, run a command and collect its output.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  spawnError?: NodeJS.ErrnoException;
}

/** Is `command` runnable: an existing file, or a name found on PATH? Returns its path. */
export function findExecutable(command: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (command.includes('/') || command.includes('\\')) {
    return fs.existsSync(command) ? command : undefined;
  }
  const exts = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE').split(';') : [''];
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) {
      continue;
    }
    for (const ext of exts) {
      const candidate = path.join(dir, command + ext);
      try {
        fs.accessSync(candidate, fs.constants.X_OK);
        if (fs.statSync(candidate).isFile()) {
          return candidate;
        }
      } catch {
        // not here
      }
    }
  }
  return undefined;
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

/** The Python version of `python` ({text: "3.11.7", parsed: [3, 11]}), or undefined when it
 *  does not run as a Python. */
export async function probeVersion(python: string, cwd?: string): Promise<{ text: string; parsed: [number, number] } | undefined> {
  const r = await run(python, ['-c', 'import sys; print("%d.%d.%d" % sys.version_info[:3])'], { cwd, timeoutMs: 10000 });
  const m = /^(\d+)\.(\d+)\.(\d+)\s*$/.exec(r.stdout);
  if (r.code !== 0 || !m) {
    return undefined;
  }
  return { text: `${m[1]}.${m[2]}.${m[3]}`, parsed: [Number(m[1]), Number(m[2])] };
}
