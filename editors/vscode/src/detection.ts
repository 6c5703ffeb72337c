// Is this assembly text AMDGPU assembly? Pure logic (no `vscode` import), so the extension's
// unit tests run it on real files with plain Node.
//
// Two signals, both bounded so that opening a 100k-line file costs a few milliseconds:
//  * a target directive (`.amdgcn_target`, `.amdhsa_code_object_version`, `.amdhsa_kernel`)
//    or a `// st.token:` annotation anywhere in the first MAX_DIRECTIVE_CHARS characters: hand
//    written kernels put their `.amdhsa_kernel` block after the code (aiter's gfx942 flatmm
//    kernel has it at line 1362 of 1447), compilers put `.amdgcn_target` near the top;
//  * the mnemonics: at least MIN_MNEMONICS distinct AMDGPU-only instruction families among the
//    first MAX_MNEMONIC_LINES lines. Every name in the list has an underscore-separated
//    prefix (`s_`, `v_`, `ds_`, `buffer_`, `global_`, ...) that no x86, ARM or RISC-V
//    instruction has, and a line only counts when the name is its first word and not a label.

/** How far the directive search reads (about 40k lines of typical kernel text). */
export const MAX_DIRECTIVE_CHARS = 2_000_000;
/** How many lines the mnemonic scan reads. */
export const MAX_MNEMONIC_LINES = 4000;
/** Distinct AMDGPU-only families that make a file AMDGPU assembly without a directive. */
export const MIN_MNEMONICS = 2;

const DIRECTIVE = /^[ \t]*\.(?:amdgcn_target|amdhsa_code_object_version|amdhsa_kernel)\b|\/\/[ \t]*st\.token:\d/m;

/** AMDGPU-only instruction families: (family, first-word pattern). */
const FAMILIES: ReadonlyArray<readonly [string, RegExp]> = [
  ['s_waitcnt', /^s_waitcnt(?:_[a-z]+)?$/],
  ['s_wait', /^s_wait_[a-z_]+$/],
  ['s_endpgm', /^s_endpgm$/],
  ['s_load', /^s_(?:load|buffer_load)_(?:dword|b\d+|u\d+|i\d+)\w*$/],
  ['s_barrier', /^s_barrier(?:_\w+)?$/],
  ['s_setprio', /^s_setprio$/],
  ['buffer', /^buffer_(?:load|store|atomic)_\w+$/],
  ['global', /^global_(?:load|store|atomic)_\w+$/],
  ['flat', /^flat_(?:load|store|atomic)_\w+$/],
  ['ds', /^ds_(?:read|write|load|store|add|swizzle|bpermute|permute)\w*$/],
  ['mfma', /^v_mfma_\w+$/],
  ['wmma', /^v_s?wmmac?_\w+$/],
  ['accvgpr', /^v_accvgpr_(?:read|write|mov)\w*$/],
  ['v_alu', /^v_(?:mov|add|sub|mul|mad|fma|lshl|lshr|ashr|and|or|xor|cndmask|cmp|cvt|perm|readfirstlane|pk)_\w+$/],
  ['tensor', /^tensor_\w+$/],
];

const FIRST_WORD = /^[ \t]*([A-Za-z_][\w.]*)(?=$|[ \t])/;

/** The AMDGPU-only families among `lines` (first words that are not labels). */
export function amdgpuMnemonicFamilies(lines: readonly string[]): Set<string> {
  const found = new Set<string>();
  const n = Math.min(lines.length, MAX_MNEMONIC_LINES);
  for (let i = 0; i < n; i++) {
    const m = FIRST_WORD.exec(lines[i]);
    if (!m) {
      continue;
    }
    const word = m[1].toLowerCase();
    for (const [family, re] of FAMILIES) {
      if (!found.has(family) && re.test(word)) {
        found.add(family);
        break;
      }
    }
    if (found.size >= FAMILIES.length) {
      break;
    }
  }
  return found;
}

/** A target directive or st.token annotation within the bounded prefix of `text`. */
export function hasAmdgpuDirective(text: string): boolean {
  return DIRECTIVE.test(text.length > MAX_DIRECTIVE_CHARS ? text.slice(0, MAX_DIRECTIVE_CHARS) : text);
}

/** Why `text` is AMDGPU assembly ("directive", "mnemonics"), or undefined when it is not. */
export function amdgpuEvidence(text: string): 'directive' | 'mnemonics' | undefined {
  if (hasAmdgpuDirective(text)) {
    return 'directive';
  }
  // only the lines the scan reads are split off
  const head: string[] = [];
  let start = 0;
  while (head.length < MAX_MNEMONIC_LINES && start <= text.length) {
    const nl = text.indexOf('\n', start);
    const end = nl < 0 ? text.length : nl;
    head.push(text.slice(start, end));
    if (nl < 0) {
      break;
    }
    start = nl + 1;
  }
  return amdgpuMnemonicFamilies(head).size >= MIN_MNEMONICS ? 'mnemonics' : undefined;
}

export function isAmdgpuAssembly(text: string): boolean {
  return amdgpuEvidence(text) !== undefined;
}
