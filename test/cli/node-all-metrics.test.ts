/**
 * `svc node all --validator-metrics-ports`: one distinct port per validator keystore, in index
 * order; anything else is a usage error (exit 2, code USAGE) naming the flag, before any key is
 * used. The servers themselves are exercised by the single-process devnet e2e.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseMetricsPorts } from '../../src/commands/node/all.js';
import { UsageError } from '../../src/cli/base.js';
import { expectError } from '../helpers/assert.js';

test('parseMetricsPorts: absent means no servers; one port per keystore, spaces allowed', () => {
  assert.is(parseMetricsPorts(undefined, 4), undefined);
  assert.equal(parseMetricsPorts('8547,8548, 8549', 3), [8547, 8548, 8549]);
  assert.equal(parseMetricsPorts('65535', 1), [65535]);
});

test('parseMetricsPorts: wrong count, non-ports and duplicates are usage errors naming the flag', () => {
  for (const [raw, n, why] of [
    ['8547,8548', 3, /2 port\(s\) for 3 validator keystore\(s\)/],
    ['8547', 0, /1 port\(s\) for 0/],
    ['8547,abc', 2, /"abc" is not a port/],
    ['8547,0', 2, /"0" is not a port/],
    ['8547,65536', 2, /"65536" is not a port/],
    ['8547,-1', 2, /"-1" is not a port/],
    ['8547,', 2, /"" is not a port/],
    ['8547,8547', 2, /lists a port twice/],
    ['1e3', 1, /"1e3" is not a port/],
  ] as const) {
    const err = expectError(() => parseMetricsPorts(raw, n), UsageError, { code: 'USAGE' });
    assert.match(err.message, /--validator-metrics-ports/);
    assert.match(err.message, why, raw);
  }
});

test.run();
