// The AMDGPU detector (src/detection.ts) on real files: the aiter gfx942/gfx950/gfx1250 kernels
// of ../shared/corpus/asm (skipped when absent), llc-22 output for gfx9-11 (when installed),
// and x86, ARM and RISC-V assembly, which must never be taken.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { amdgpuEvidence, amdgpuMnemonicFamilies, hasAmdgpuDirective, MAX_DIRECTIVE_CHARS } from '../../src/detection';

const ext = process.env.STINKYWAIT_EXT_ROOT ?? process.cwd();
const repo = path.resolve(ext, '..', '..');
const corpus = path.resolve(repo, '..', 'shared', 'corpus', 'asm');
const irDir = path.resolve(repo, '..', 'shared', 'tools', 'llvm', 'ir');
const foreign = path.join(ext, 'test', 'fixtures', 'foreign');
const read = (p: string) => fs.readFileSync(p, 'utf8');
const haveLlc = spawnSync('llc-22', ['--version']).status === 0;
const DIRECTIVE_LINE = /^\s*\.(amdgcn_target|amdhsa_|end_amdhsa_)|amdhsa\.target|st\.token/;
const withoutDirectives = (text: string) => text.split('\n').filter((l) => !DIRECTIVE_LINE.test(l)).join('\n');

function llc(args: string[], input: string): string | undefined {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sw-llc-')), 'out.s');
  const r = spawnSync('llc-22', [...args, input, '-o', out], { encoding: 'utf8' });
  return r.status === 0 ? read(out) : undefined;
}

const kernels = ['aiter_gfx942_flatmm_uk_f16f8_128x256x128.s', 'aiter_gfx950_a8w8_cktile_gemm_256x256x128.s',
  'aiter_gfx1250_mxscale_gemm1_final_isa.s', 'aiter_gfx1250_mxscale_gemm2_final_isa.s'];

for (const name of kernels) {
  const file = path.join(corpus, name);
  test(`corpus ${name}: detected by its directive, and by its mnemonics alone`, { skip: !fs.existsSync(file) && '../shared absent' }, () => {
    const text = read(file);
    assert.equal(amdgpuEvidence(text), 'directive');
    assert.equal(amdgpuEvidence(withoutDirectives(text)), 'mnemonics');
  });
}

test('gfx942 flatmm: the directive is far from the top and still found', { skip: !fs.existsSync(path.join(corpus, kernels[0])) && '../shared absent' }, () => {
  const lines = read(path.join(corpus, kernels[0])).split('\n');
  const first = lines.findIndex((l) => /^\s*\.(amdgcn_target|amdhsa_kernel|amdhsa_code_object_version)\b/.test(l));
  assert.ok(first > 1000, `first directive on line ${first + 1}`);
  assert.ok(hasAmdgpuDirective(lines.join('\n')));
  // the kernel's first 200 lines (code only) already carry several AMDGPU-only families
  const head = amdgpuMnemonicFamilies(lines.slice(0, 200));
  assert.ok(head.size >= 3, [...head].join(','));
});

for (const file of ['examples/gemm_loop.s', 'editors/vscode/test/fixtures/gemm_loop.s', 'editors/vscode/test/fixtures/llc_order.s']) {
  test(`repo ${file} is AMDGPU assembly`, () => {
    assert.ok(amdgpuEvidence(read(path.join(repo, file))));
  });
}

for (const cpu of ['gfx90a', 'gfx942', 'gfx950', 'gfx1030', 'gfx1100', 'gfx1201']) {
  for (const ir of ['lds_compute.ll', 'loop_global.ll']) {
    const input = path.join(irDir, ir);
    test(`llc-22 -mcpu=${cpu} ${ir}: detected with and without its directives`, { skip: (!haveLlc || !fs.existsSync(input)) && 'llc-22 or ../shared absent' }, () => {
      const text = llc(['-O2', '-mtriple=amdgcn-amd-amdhsa', `-mcpu=${cpu}`], input);
      assert.ok(text !== undefined, 'llc-22 failed');
      assert.equal(amdgpuEvidence(text), 'directive');
      assert.equal(amdgpuEvidence(withoutDirectives(text)), 'mnemonics');
    });
  }
}

const foreignFiles = fs.readdirSync(foreign).filter((f) => f.endsWith('.s'));
test('the committed foreign fixtures are there', () => assert.ok(foreignFiles.length >= 4));
for (const f of [...foreignFiles, '../not_amdgpu.s']) {
  test(`foreign ${f} is not AMDGPU assembly`, () => {
    const text = read(path.join(foreign, f));
    assert.equal(amdgpuEvidence(text), undefined);
    assert.equal(amdgpuMnemonicFamilies(text.split('\n')).size, 0);
  });
}

const triples = [['x86_64-linux-gnu'], ['x86_64-linux-gnu', '--x86-asm-syntax=intel'], ['i686-linux-gnu'],
  ['aarch64-linux-gnu'], ['aarch64-apple-darwin'], ['armv7-linux-gnueabihf'], ['thumbv7m-none-eabi'],
  ['riscv64-linux-gnu', '-mattr=+v'], ['riscv32-unknown-elf'], ['mips64el-linux-gnuabi64'], ['powerpc64le-linux-gnu'],
  ['s390x-linux-gnu'], ['sparcv9-linux-gnu'], ['loongarch64-linux-gnu'], ['hexagon-unknown-elf']];
for (const [triple, ...more] of triples) {
  test(`llc-22 ${triple} ${more.join(' ')}: not AMDGPU assembly`, { skip: !haveLlc && 'llc-22 not installed' }, (t) => {
    for (const opt of ['-O0', '-O2']) {
      const text = llc([opt, `-mtriple=${triple}`, ...more], path.join(foreign, 'saxpy.ll'));
      if (text === undefined) {
        t.skip(`llc-22 has no ${triple} backend`);
        return;
      }
      assert.equal(amdgpuEvidence(text), undefined, `${triple} ${opt}`);
    }
  });
}

test('labels and words inside operands do not count', () => {
  const text = ['s_endpgm:', 'v_mfma_f32_16x16x16f16:', '\tcall s_waitcnt', '\tmovq buffer_load_dword(%rip), %rax', '\t# s_waitcnt vmcnt(0)'].join('\n');
  assert.equal(amdgpuEvidence(text), undefined);
  assert.equal(amdgpuEvidence('\ts_waitcnt vmcnt(0)\n'), undefined, 'one family is not enough');
  assert.equal(amdgpuEvidence('\ts_waitcnt vmcnt(0)\n\ts_endpgm\n'), 'mnemonics');
});

test('the directive search is bounded', () => {
  const filler = '\tnop\n'.repeat(Math.ceil(MAX_DIRECTIVE_CHARS / 5) + 1);
  assert.ok(hasAmdgpuDirective(`.amdgcn_target "amdgcn-amd-amdhsa--gfx942"\n${filler}`));
  assert.ok(!hasAmdgpuDirective(`${filler}.amdgcn_target "amdgcn-amd-amdhsa--gfx942"\n`));
});
