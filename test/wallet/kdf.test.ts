/** Argon2id derivation: one derivation per distinct input within a process, handed out as copies. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { deriveKey, newKdfParams } from '../../src/wallet/kdf.js';

test('deriveKey: the same password, salt and parameters give the same key; a caller wiping its copy changes nothing for the next', async () => {
  const params = newKdfParams(64);
  const [a, b] = await Promise.all([deriveKey('pw', params), deriveKey('pw', params)]);
  assert.equal(a, b);
  assert.is(a.length, 32);
  const kept = Uint8Array.from(a);
  a.fill(0);
  assert.equal(await deriveKey('pw', params), kept, 'a remembered derivation is not the caller\'s buffer');
});

test('deriveKey: another password, salt or parameter derives another key', async () => {
  const params = newKdfParams(64);
  const base = await deriveKey('pw', params);
  const others = [await deriveKey('pw2', params), await deriveKey('pw', newKdfParams(64)), await deriveKey('pw', { ...params, iterations: params.iterations + 1 })];
  for (const k of others) assert.not.equal(k, base);
});

test.run();
