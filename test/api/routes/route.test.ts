/**
 * The route table (src/api/routes): URL building, and the rule that a route path is spelled only
 * there. The scan reads every string and template literal in src/ with the TypeScript parser
 * (comments do not count) and names each file outside src/api/routes that spells a path.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { route, routePaths, routeUrl } from '../../../src/api/routes/route.js';

const SRC = fileURLToPath(new URL('../../../../src', import.meta.url));

/** A literal that is, or begins, a route path of one of svc's servers. */
const ROUTE_LITERAL = /^\/(api\/v1\/|health$|metrics$|faucet$|ws$)/;

/**
 * Files that still spell route paths of their own, to be moved onto the table (issue 28 item 1).
 * The test fails when a file not listed spells one, and when a listed file no longer does, so the
 * list only shrinks.
 */
const PENDING = new Set<string>([
]);

function tsFiles(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) tsFiles(p, out);
    else if (e.name.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** The route-path literals of one source file. */
function routeLiterals(file: string): string[] {
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const found: string[] = [];
  const visit = (n: ts.Node): void => {
    if ((ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n) || ts.isTemplateHead(n) || ts.isTemplateMiddle(n) || ts.isTemplateTail(n)) && ROUTE_LITERAL.test(n.text)) found.push(n.text);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return found;
}

test('routeUrl fills path parameters, encodes them, and appends defined query values', () => {
  const r = route<{ ok: true }, undefined, { block?: string; keys?: string; n?: number }>()('GET', '/api/v1/accounts/:address/proof/:slot');
  assert.is(routeUrl(r, { address: '0xab', slot: 'a b/c' }), '/api/v1/accounts/0xab/proof/a%20b%2Fc');
  assert.is(routeUrl(r, { address: '0xab', slot: '1' }, { block: 'head', keys: undefined, n: 3 }), '/api/v1/accounts/0xab/proof/1?block=head&n=3');
  assert.is(routeUrl(r, { address: '0xab', slot: '1' }, {}), '/api/v1/accounts/0xab/proof/1');
  assert.throws(() => routeUrl(r, { address: '0xab' } as never), /parameter slot is missing/);
});

test('routePaths lists the path first, then its aliases', () => {
  const r = route()('POST', '/api/v1/faucet/claim', ['/faucet']);
  assert.equal(routePaths(r), ['/api/v1/faucet/claim', '/faucet']);
});

test('route paths are spelled only in src/api/routes', () => {
  const offenders: string[] = [];
  const stale: string[] = [];
  for (const file of tsFiles(SRC)) {
    const rel = relative(SRC, file).split('\\').join('/');
    if (rel.startsWith('api/routes/')) continue;
    const lits = routeLiterals(file);
    if (lits.length > 0 && !PENDING.has(rel)) offenders.push(`${rel}: ${[...new Set(lits)].join(', ')}`);
    if (lits.length === 0 && PENDING.has(rel)) stale.push(rel);
  }
  assert.equal(offenders, [], `route paths outside src/api/routes:\n${offenders.join('\n')}`);
  assert.equal(stale, [], `listed as pending but spells no route path (remove from PENDING):\n${stale.join('\n')}`);
});

test.run();
