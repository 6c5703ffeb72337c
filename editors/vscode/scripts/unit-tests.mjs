// Unit tests of the extension's pure modules (no VS Code needed): esbuild bundles each
// test/unit/*.test.ts with what it imports into a temporary CommonJS file, `node --test` runs them.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const tests = fs.readdirSync(path.join(root, 'test', 'unit')).filter((f) => f.endsWith('.test.ts'));
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'stinkywait-unit-'));
try {
  await build({
    absWorkingDir: root,
    entryPoints: tests.map((f) => path.join('test', 'unit', f)),
    outdir: out,
    outExtension: { '.js': '.cjs' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node18',
    external: ['vscode'],
    logLevel: 'warning',
  });
  const files = fs.readdirSync(out).filter((f) => f.endsWith('.cjs')).map((f) => path.join(out, f));
  const r = spawnSync(process.execPath, ['--test', ...files], {
    cwd: root, stdio: 'inherit', env: { ...process.env, STINKYWAIT_EXT_ROOT: root },
  });
  process.exitCode = r.status ?? 1;
} finally {
  fs.rmSync(out, { recursive: true, force: true });
}
