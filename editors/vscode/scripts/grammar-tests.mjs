// Grammar tests: scope assertions (test/grammar/assert) and snapshots (test/grammar/snap).
// `node scripts/grammar-tests.mjs --update` rewrites the snapshots after a deliberate change.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const update = process.argv.includes('--update');

const runs = [
  [bin('vscode-tmgrammar-test'), ['--config', 'package.json', 'test/grammar/assert/*']],
  [bin('vscode-tmgrammar-snap'), ['--config', 'package.json', ...(update ? ['--updateSnapshot'] : []), 'test/grammar/snap/*.amdgcn', 'test/grammar/snap/*.stir']],
];
let failed = 0;
for (const [cmd, args] of runs) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`grammar tests: ${path.basename(cmd)} failed (exit ${r.status ?? r.signal})`);
    failed++;
  }
}
process.exit(failed ? 1 : 0);
