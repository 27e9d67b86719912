/**
 * The layer rules of .dependency-cruiser.cjs (docs/architecture.md, "Layers"), run over src/,
 * bench/ and test/helpers by dependency-cruiser's API on the TypeScript sources: which folders a
 * layer may import, and no import cycle anywhere. A violation fails naming the rule and the
 * import (from → to); a cycle also prints its path.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ICruiseOptions, type ICruiseResult, type IViolation, cruise } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');

/**
 * Violations tolerated for now, as `rule: from → to`, each with its owner in a comment: none since
 * the execution API took a modules object instead of the node (issue 28 item 4). The test fails on
 * a violation not listed here, and on a listed one that no longer occurs, so the list only
 * shrinks: when a change removes a violation, it removes its line here too. A cycle is reported
 * once per import on it (`from` is a module of the cycle, `to` the next one).
 */
const KNOWN = new Set<string>([]);

/** One violation as KNOWN spells it. */
function key(v: IViolation): string {
  return `${v.rule.name}: ${v.from} → ${v.to}`;
}

/** A violation as the failure message shows it: the rule, the import, and a cycle's path. */
function describe(v: IViolation): string {
  const cycle = v.cycle?.length ? `\n      cycle: ${[v.from, ...v.cycle.map((c) => c.name)].join(' → ')}` : '';
  return `${key(v)}${cycle}`;
}

/** Cruises `paths` under `baseDir` with the repository's rules and `tsconfig` (relative to baseDir). */
async function cruiseWithRules(baseDir: string, paths: string[], tsconfig: string): Promise<ICruiseResult> {
  const options: ICruiseOptions = { ...(await extractDepcruiseOptions(CONFIG)), baseDir, tsConfig: { fileName: tsconfig }, validate: true };
  const result = await cruise(paths, options, {}, { tsConfig: extractTSConfig(join(baseDir, tsconfig)) });
  assert.type(result.output, 'object', 'dependency-cruiser returns its result as an object');
  return result.output as ICruiseResult;
}

test('the layer rules hold over src/, bench/ and test/helpers (KNOWN only shrinks)', async () => {
  const result = await cruiseWithRules(ROOT, ['src', 'bench', 'test/helpers'], 'tsconfig.json');
  // The rules only mean something if the sources were found and their imports resolved.
  const sources = result.modules.filter((m) => m.source.startsWith('src/'));
  assert.ok(sources.length > 200, `cruised ${sources.length} modules of src/`);
  assert.ok(
    result.modules.some((m) => m.source === 'src/node/beacon/node.ts' && m.dependencies.some((d) => d.resolved.startsWith('src/core/'))),
    'a .js import of a .ts source resolves (src/node/beacon/node.ts → src/core/...)',
  );
  const violations = result.summary.violations;
  const found = new Set(violations.map(key));
  const unexpected = violations.filter((v) => !KNOWN.has(key(v))).map(describe);
  const gone = [...KNOWN].filter((k) => !found.has(k));
  assert.ok(unexpected.length === 0, `imports against the layer rules (.dependency-cruiser.cjs, docs/architecture.md "Layers"):\n  ${unexpected.join('\n  ')}\n`);
  assert.ok(gone.length === 0, `no longer violated: remove from KNOWN in test/architecture/dependencies.test.ts:\n  ${gone.join('\n  ')}\n`);
});

test('the rules catch a layer crossing, a node layer importing another, and a cycle', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-layers-'));
  try {
    const files: Record<string, string> = {
      'src/core/a.ts': "import { b } from '../devnet/b.js';\nexport const a = b;\n",
      'src/devnet/b.ts': 'export const b = 1;\n',
      'src/node/validator/v.ts': "import { e } from '../beacon/e.js';\nexport const v = e;\n",
      'src/node/beacon/e.ts': "import { c } from '../shared/c.js';\nexport const e = c;\n",
      'src/node/shared/c.ts': 'export const c = 2;\n',
      'src/util/x.ts': "import { y } from './y.js';\nexport const x = (): number => y();\n",
      'src/util/y.ts': "import { x } from './x.js';\nexport const y = (): number => x();\n",
      'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true }, include: ['src/**/*.ts'] }),
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    const result = await cruiseWithRules(dir, ['src'], 'tsconfig.json');
    const violations = result.summary.violations;
    assert.equal(violations.filter((v) => v.rule.name !== 'no-circular').map(key).sort(), [
      'core-imports-core: src/core/a.ts → src/devnet/b.ts',
      'node-layers-apart: src/node/validator/v.ts → src/node/beacon/e.ts',
    ]);
    // dependency-cruiser names a cycle from one of its modules; which one is its choice.
    const cycles = violations.filter((v) => v.rule.name === 'no-circular');
    assert.ok(cycles.length > 0 && cycles.every((v) => ['src/util/x.ts', 'src/util/y.ts'].includes(v.from) && ['src/util/x.ts', 'src/util/y.ts'].includes(v.to)), cycles.map(describe).join('\n'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
