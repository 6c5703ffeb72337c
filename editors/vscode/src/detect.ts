// Content-based language detection for `.s`/`.asm` files. VS Code's `firstLine` rule only sees
// line 1, but llc writes `.text` first and `.amdgcn_target` on a later line, hand-written gfx9
// kernels put their `.amdhsa_kernel` block after the code, and other assembly extensions may
// have claimed `.s`. When such a file is AMDGPU assembly by its content (detection.ts: a
// target directive anywhere in a bounded prefix, or AMDGPU-only mnemonics), switch it to
// `amdgpu-asm` (unless the user associated the extension explicitly).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { isAmdgpuAssembly } from './detection';

const EXTENSIONS = new Set(['.s', '.asm']);

/** Language ids a `.s` file gets from VS Code or common assembly extensions. */
const GENERIC_ASM_IDS = new Set(['plaintext', 'asm', 'gas', 'arm', 'arm64', 'assembly', 'asm-collection', 'riscv', 'mips', 'x86', 'nasm', 'masm', 'asm-intel-x86-generic']);

function explicitlyAssociated(fileName: string): boolean {
  const assoc = vscode.workspace.getConfiguration('files').get<Record<string, string>>('associations') ?? {};
  const base = path.basename(fileName).toLowerCase();
  const ext = path.extname(base);
  return Object.keys(assoc).some((pattern) => {
    const p = pattern.toLowerCase();
    return p === `*${ext}` || p === `**/*${ext}` || p === base;
  });
}

export function shouldSwitchToAmdgpu(doc: vscode.TextDocument): boolean {
  if (doc.languageId === 'amdgpu-asm' || !GENERIC_ASM_IDS.has(doc.languageId)) {
    return false;
  }
  if (!EXTENSIONS.has(path.extname(doc.fileName).toLowerCase())) {
    return false;
  }
  if (!vscode.workspace.getConfiguration('stinkywait').get<boolean>('detectAmdgpuAssembly', true)) {
    return false;
  }
  if (explicitlyAssociated(doc.fileName)) {
    return false;
  }
  return isAmdgpuAssembly(doc.getText());
}

/** Switch `doc` to amdgpu-asm when it qualifies; resolves to the (possibly new) document. */
export async function detectAmdgpuAssembly(doc: vscode.TextDocument): Promise<vscode.TextDocument> {
  if (!shouldSwitchToAmdgpu(doc)) {
    return doc;
  }
  return vscode.languages.setTextDocumentLanguage(doc, 'amdgpu-asm');
}
