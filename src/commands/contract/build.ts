import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { Args, Flags } from '@oclif/core';
import { SvcCommand, UsageError } from '../../cli/base.js';
import { SvcError } from '../../core/errors.js';
import { writeFileAtomic } from '../../util/fs.js';
import { compileContract, formatDiagnostic, SDK_MODULE } from '../../contract/compile.js';

export default class ContractBuild extends SvcCommand {
  static override summary = 'Compile an AssemblyScript contract to WebAssembly for `contract deploy`';
  static override description = `The contract imports the SDK as "${SDK_MODULE}" (see contracts/README.md) and may live anywhere on disk. The output is checked by the same function deployment runs (only svc.* host imports, no floating point, one memory under the cap, the size limit, …) and must have no start function. Writes FILE.wasm beside the source unless --out is given (an existing file is replaced).`;
  static override examples = [
    '<%= config.bin %> contract build contracts/examples/token.ts',
    '<%= config.bin %> contract build ./my-contract.ts --out build/my-contract.wasm --json',
  ];
  static override args = { file: Args.string({ description: 'AssemblyScript source (.ts)', required: true }) };
  static override flags = {
    out: Flags.string({ description: 'output file (default: FILE with .wasm instead of .ts)' }),
  };

  async run() {
    const { args, flags } = await this.parse(ContractBuild);
    if (!args.file.endsWith('.ts')) throw new UsageError(`FILE must be an AssemblyScript source ending in .ts, got ${args.file}`);
    if (flags.out !== undefined && flags.out.trim() === '') throw new UsageError('--out must not be empty');
    const source = resolve(args.file);
    if (!existsSync(source) || !statSync(source).isFile()) throw new SvcError('FILE_NOT_FOUND', `${args.file} not found`);
    const out = resolve(flags.out ?? args.file.replace(/\.ts$/, '.wasm'));

    const built = await compileContract(source);
    await writeFileAtomic(out, built.wasm, { force: true, mode: 0o644 });

    const warnings = built.warnings.map(formatDiagnostic);
    if (!this.jsonEnabled()) for (const w of warnings) this.note(`warning: ${w}`);
    this.say(`Built:    ${flags.out ?? args.file.replace(/\.ts$/, '.wasm')} (${built.wasm.length} bytes)`);
    this.say(`Init:     ${built.hasInit ? 'yes (runs once at deployment with the constructor arguments)' : 'no'}`);
    this.say(`Methods:  ${built.methods.length > 0 ? built.methods.join(', ') : '(none)'}`);
    this.say(`Imports:  ${built.imports.map((i) => `svc.${i}`).join(', ') || '(none)'}`);
    return { source, out, size: built.wasm.length, init: built.hasInit, methods: built.methods, imports: built.imports, warnings };
  }
}
