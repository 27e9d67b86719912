/**
 * End to end: `svc light verify` against a running 4-validator devnet (real processes) verifies
 * the latest finality update from the genesis file alone, the header chain and a prefunded
 * account's balance; against a lying beacon (test/helpers/tamper-proxy.ts in front of the real
 * one) that drops signatures, forges a signature, a header or an ancestor, or alters a proof, it
 * fails naming the check that failed. From a checkpoint, the validator set is the genesis file's
 * or a pinned --validators file: a beacon serving the real checkpoint header with its own one-key
 * set and a forged balance is refused.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { expectCliError, expectJsonOk, runCli } from '../helpers/cli.js';
import { getJson, waitFor, withDevnet } from '../helpers/network.js';
import { startTamperProxy, type Tamper } from '../helpers/tamper-proxy.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { participationBits } from '../../src/core/light/verify.js';
import { checkpointForgery } from '../helpers/light-forgery.js';

const VALIDATORS = 4;

test('svc light verify proves the finalized header and a balance; a tampered beacon is refused, naming the failed check', async () => {
  await withDevnet({ validators: VALIDATORS }, async (devnet) => {
    const { env, beaconUrl, genesisPath } = devnet;
    await devnet.startAll();
    // A prefunded account that is neither a validator (rewards move its balance) nor the faucet.
    const g = devnet.genesis;
    const entry = g.alloc.find((a: { address: string }) => a.address !== g.config.faucet.address && !g.validators.some((v: { address: string }) => v.address === a.address));
    assert.ok(entry, 'genesis prefunds an ordinary account');
    const account = entry.address as string;
    const funded = entry.balance as string;
    // Finality needs two epochs after the first; allow twelve, from genesis, on a busy machine.
    const epochMs = devnet.slotMs * devnet.slotsPerEpoch;
    const deadline = Math.max(0, devnet.genesis.genesis_time * 1000 - Date.now()) + 12 * epochMs + 30_000;
    const update = await waitFor('a light-client finality update', async () => {
      const r = await fetch(`${beaconUrl}/api/v1/light/finality_update`).then((x) => x.json() as Promise<any>);
      return r.success ? r.data : undefined;
    }, deadline);
    assert.ok(update.finalized.epoch >= 1);
    assert.ok(update.signers * 3 >= VALIDATORS * 2, `${update.signers} signers`);

    const verify = (url: string, json = true) => runCli(['light', 'verify', '--genesis', genesisPath, '--beacon', url, '--account', account, ...(json ? ['--json'] : [])], env);

    const v = expectJsonOk(await verify(beaconUrl));
    assert.is(v.trusted.source, 'genesis');
    assert.is(v.setChanges, 0, 'the devnet set never changed: no set change to follow');
    assert.ok(v.finalized.epoch >= update.finalized.epoch);
    assert.ok(v.finalized.signers * 3 >= VALIDATORS * 2);
    assert.is(v.account.address, account);
    // Nothing was sent from this account: its balance is the genesis allocation at every height.
    assert.is(v.account.balance, funded);
    assert.is(v.account.provenAgainst.index, v.finalized.index);
    // The verified header is the beacon's block at that hash, and it is finalized there.
    const block = (await getJson(`${beaconUrl}/api/v1/beacon/blocks/${v.finalized.hash}`)).data;
    assert.is(block.index, v.finalized.index);
    assert.is(block.block.header.state_root, v.finalized.stateRoot);
    assert.ok((await devnet.head()).finalized.epoch >= v.finalized.epoch);
    assert.ok(v.ancestry.headers >= 1 && v.ancestry.lowest >= 1);

    const text = await verify(beaconUrl, false);
    assert.is(text.code, 0, text.stderr);
    assert.match(text.stdout, /^Finalized {7}epoch \d+, block \d+ 0x[0-9a-f]{64}$/m);
    assert.match(text.stdout, new RegExp(`^Balance .*\\(${funded} wei\\), verified$`, 'm'));

    // From a finalized checkpoint instead of genesis: the votes are counted against the genesis set.
    const cp = expectJsonOk(await runCli(['light', 'verify', '--genesis', genesisPath, '--beacon', beaconUrl, '--checkpoint', v.finalized.hash, '--account', account, '--json'], env));
    assert.is(cp.trusted.source, 'checkpoint');
    assert.is(cp.trusted.set, 'genesis');
    // Or against a pinned set: the bootstrap's own format, saved from a beacon the user trusts.
    const pinnedPath = join(devnet.dir, 'pinned-validators.json');
    await writeFile(pinnedPath, JSON.stringify((await getJson(`${beaconUrl}/api/v1/light/bootstrap?root=${v.finalized.hash}`)).data.validators));
    const withPinned = (url: string) => runCli(['light', 'verify', '--genesis', genesisPath, '--beacon', url, '--checkpoint', v.finalized.hash, '--validators', pinnedPath, '--account', account, '--json'], env);
    const pinned = expectJsonOk(await withPinned(beaconUrl));
    assert.is(pinned.trusted.set, 'pinned');
    assert.is(pinned.account.balance, funded);
    // The liar: the real checkpoint header, its own one-key set, a child "finalized" by that key and a forged balance.
    const forgery = checkpointForgery({ chainId: g.chain_id, slotsPerEpoch: devnet.slotsPerEpoch, account });
    const liar = await startTamperProxy(beaconUrl, forgery.tamper, forgery.answer);
    try {
      const r = await runCli(['light', 'verify', '--genesis', genesisPath, '--beacon', liar.url, '--checkpoint', v.finalized.hash, '--account', account, '--json'], env);
      assert.ok(liar.tampered >= 1, 'the liar served its set');
      // Its served set is never taken: the set comes from genesis through verified set changes, so its votes fail.
      expectCliError(r, { exit: 1, code: 'LIGHT_BAD_SIGNATURE', messageIncludes: ['attestation of validator 0'], json: true });
      // With the set pinned, the liar's votes are checked against the real keys.
      expectCliError(await withPinned(liar.url), { exit: 1, code: 'LIGHT_BAD_SIGNATURE', messageIncludes: ['attestation of validator 0'], json: true });
    } finally {
      await liar.close();
    }
    assert.is(cp.trusted.root, v.finalized.hash);
    assert.is(cp.trusted.index, v.finalized.index);
    assert.ok(cp.finalized.index >= v.finalized.index);
    assert.is(cp.account.balance, funded);
    // A root that is not finalized is refused by the beacon, and a lying bootstrap by the client.
    const head = await devnet.waitHead('a head above the finalized block', (hd) => hd.index > cp.finalized.index, 20 * devnet.slotMs);
    // Asked at once: the head needs two more epochs of votes before it can be final.
    const notFinal = (await fetch(`${beaconUrl}/api/v1/light/bootstrap?root=${head.root}`).then(async (x) => ({ status: x.status, body: (await x.json()) as any })));
    assert.is(notFinal.status, 409);
    assert.is(notFinal.body.error.code, 'NOT_FINALIZED');
    const forgedBoot = await startTamperProxy(beaconUrl, (path, d) => {
      if (path === '/api/v1/light/bootstrap' && d.header) d.header.state_root = '0x' + '33'.repeat(32);
      return d;
    });
    try {
      const r = await runCli(['light', 'verify', '--genesis', genesisPath, '--beacon', forgedBoot.url, '--checkpoint', v.finalized.hash, '--json'], env);
      expectCliError(r, { exit: 1, code: 'LIGHT_CHECKPOINT_MISMATCH', messageIncludes: ['not the checkpoint'], json: true });
    } finally {
      await forgedBoot.close();
    }

    const lies: Array<{ what: string; tamper: Tamper; code: string; includes: string }> = [
      {
        what: 'signatures dropped below 2/3 (bitfield kept consistent)',
        tamper: (path, d) => {
          if (path !== '/api/v1/light/finality_update') return d;
          d.attestations = d.attestations.slice(0, 1);
          d.participation = '0x' + Buffer.from(participationBits([d.attestations[0].validator_index], VALIDATORS)).toString('hex');
          return d;
        },
        code: 'LIGHT_INSUFFICIENT_STAKE',
        includes: 'below 2/3',
      },
      {
        what: 'signatures dropped, bitfield unchanged',
        tamper: (path, d) => (path === '/api/v1/light/finality_update' ? { ...d, attestations: d.attestations.slice(1) } : d),
        code: 'LIGHT_BITFIELD_MISMATCH',
        includes: 'participation bitfield',
      },
      {
        what: 'a forged signature',
        tamper: (path, d) => {
          if (path !== '/api/v1/light/finality_update') return d;
          const s: string = d.attestations[0].signature;
          d.attestations[0].signature = s.slice(0, 10) + (s[10] === '0' ? '1' : '0') + s.slice(11);
          return d;
        },
        code: 'LIGHT_BAD_SIGNATURE',
        includes: 'signature verification failed',
      },
      {
        what: 'a forged finalized header (another state root)',
        tamper: (path, d) => {
          if (path === '/api/v1/light/finality_update') d.header.state_root = '0x' + '11'.repeat(32);
          return d;
        },
        code: 'LIGHT_HEADER_MISMATCH',
        includes: 'not the finalized root',
      },
      {
        what: 'a forged ancestor',
        tamper: (path, d) => {
          if (path === '/api/v1/light/headers' && d.headers.length > 1) d.headers[1].merkle_root = '0x' + '22'.repeat(32);
          else if (path === '/api/v1/light/headers') d.headers[0].merkle_root = '0x' + '22'.repeat(32);
          return d;
        },
        code: 'LIGHT_ANCESTRY_BROKEN',
        includes: 'hashes to',
      },
      {
        what: 'an altered balance in the proof',
        tamper: (path, d) => {
          if (path === '/api/v1/light/proof') d.proof.balance = (BigInt(d.proof.balance) + 1n).toString();
          return d;
        },
        code: 'LIGHT_PROOF_INVALID',
        includes: 'does not verify against state_root',
      },
    ];
    for (const lie of lies) {
      const proxy = await startTamperProxy(beaconUrl, lie.tamper);
      try {
        const r = await verify(proxy.url);
        assert.ok(proxy.tampered >= 1, `${lie.what}: the proxy altered an answer`);
        expectCliError(r, { exit: 1, code: lie.code, messageIncludes: [lie.code, lie.includes], json: true });
      } finally {
        await proxy.close();
      }
    }

    // Finality moved on between the update and the proof (the block's state pruned): the client
    // starts again from a newer update, and gives up with the beacon's code after four tries.
    const pruned = { status: 410, body: { success: false, error: { code: 'STATE_PRUNED', message: 'the state of that block is pruned' } } };
    const once = await startTamperProxy(beaconUrl, (_p, d) => d, (path, seen) => (path === '/api/v1/light/proof' && seen === 0 ? pruned : undefined));
    try {
      const again = expectJsonOk(await verify(once.url));
      assert.is(again.account.balance, v.account.balance);
    } finally {
      await once.close();
    }
    const always = await startTamperProxy(beaconUrl, (_p, d) => d, (path) => (path === '/api/v1/light/proof' ? pruned : undefined));
    try {
      expectCliError(await verify(always.url), { exit: 1, code: 'STATE_PRUNED', messageIncludes: ['pruned'], json: true });
    } finally {
      await always.close();
    }
  });
});

test.run();
