// Puts the language server into the extension (bundled/, shipped in the .vsix):
//   bundled/tool/  the server's sources: stinkywait_core and stinkywait_lsp from the checkout
//   bundled/libs/  its pure-Python dependencies, pinned with hashes (bundled/requirements.txt)
// and checks that `python -S bundled/stinkywait_server.py --version` starts with nothing but
// the standard library and the bundle (-S: no site-packages). The interpreter used for pip is
// STINKYWAIT_PYTHON, else <repo>/.venv/bin/python, else python3.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ext = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const repo = path.resolve(ext, '..', '..');
const bundled = path.join(ext, 'bundled');
const venvPython = path.join(repo, '.venv', 'bin', 'python');
const python = process.env.STINKYWAIT_PYTHON || (fs.existsSync(venvPython) ? venvPython : 'python3');

function copySources(from, to) {
  fs.mkdirSync(to, { recursive: true });
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    if (entry.name === '__pycache__' || entry.name.endsWith('.pyc')) continue;
    const src = path.join(from, entry.name);
    const dst = path.join(to, entry.name);
    if (entry.isDirectory()) copySources(src, dst);
    else if (/\.(py|lark|typed)$/.test(entry.name)) fs.copyFileSync(src, dst);
  }
}

for (const dir of ['tool', 'libs']) fs.rmSync(path.join(bundled, dir), { recursive: true, force: true });
for (const pkg of ['stinkywait_core', 'stinkywait_lsp']) copySources(path.join(repo, pkg), path.join(bundled, 'tool', pkg));
execFileSync(python, [
  '-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-deps', '--only-binary=:all:',
  '--require-hashes', '--no-compile', '--target', path.join(bundled, 'libs'), '-r', path.join(bundled, 'requirements.txt'),
], { stdio: 'inherit' });
fs.rmSync(path.join(bundled, 'libs', 'bin'), { recursive: true, force: true });

// The bundle must start on its own: no site-packages, from a directory outside the checkout.
const probe = execFileSync(python, ['-S', '-c', [
  'import runpy, sys',
  `sys.argv = ["stinkywait_server.py", "--version"]`,
  `sys.path.insert(0, ${JSON.stringify(bundled)})`,
  'import importlib.util',
  'try:',
  `    runpy.run_path(${JSON.stringify(path.join(bundled, 'stinkywait_server.py'))}, run_name="__main__")`,
  'except SystemExit as e:',
  '    code = e.code',
  'import pygls, lsprotocol, lark, cattrs, attrs, stinkywait_core, stinkywait_lsp',
  'mods = [pygls, lsprotocol, lark, cattrs, attrs, stinkywait_core, stinkywait_lsp]',
  `outside = [m.__name__ for m in mods if not m.__file__.startswith(${JSON.stringify(bundled + path.sep)})]`,
  'print("outside the bundle:", outside) if outside else None',
  'sys.exit(1 if outside or code not in (0, None) else 0)',
].join('\n')], { cwd: os.tmpdir(), encoding: 'utf8' });
process.stdout.write(probe);
const size = (dir) => fs.readdirSync(dir, { withFileTypes: true }).reduce((n, e) => n + (e.isDirectory() ? size(path.join(dir, e.name)) : fs.statSync(path.join(dir, e.name)).size), 0);
console.log(`bundled the server with ${python}: tool ${(size(path.join(bundled, 'tool')) / 1024).toFixed(0)} KiB, libs ${(size(path.join(bundled, 'libs')) / 1024).toFixed(0)} KiB`);
