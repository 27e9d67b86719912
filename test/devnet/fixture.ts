/** Shared pieces of the devnet unit tests: a hand-built manifest, temp dirs, deadline waits (not a test file itself). */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MANIFEST_VERSION, type DevnetManifest } from '../../src/devnet/manifest.js';

export const WEI = 10n ** 18n;
/** Peer ids of the sample node 0 (the shape libp2p prints for Ed25519 keys). */
export const PEER_EXECUTION = '12D3KooWExecution0000000000000000000000000000000000';
export const PEER_BEACON = '12D3KooWBeacon000000000000000000000000000000000000000';

/** A valid two-validator, two-account manifest for a devnet in `dir` (nothing is running). */
export function sampleManifest(dir: string): DevnetManifest {
  const proc = (name: string, port: number | null) => ({ name, pid: null, status: 'stopped' as const, restarts: 0, log: join(dir, 'logs', `${name}.log`), data_dir: join(dir, 'data', name), port });
  return {
    version: MANIFEST_VERSION,
    dir,
    state: 'stopped',
    mode: 'multi-process',
    validator_processes: 'per-validator',
    chain_id: 'svc-devnet',
    network_id: 1337,
    genesis: join(dir, 'genesis', 'genesis.json'),
    genesis_time: 1_700_000_000,
    slot_seconds: 2,
    slots_per_epoch: 8,
    endpoints: { execution: 'http://127.0.0.1:8546', rpc: 'http://127.0.0.1:8545', beacon: 'http://127.0.0.1:8080', ws: 'ws://127.0.0.1:8080/ws' },
    ports: { rest: 8546, rpc: 8545, beacon: 8080, validator_metrics: [8547, 8548] },
    validator_token_file: join(dir, 'validator-token'),
    p2p: true,
    nodes: [
      {
        index: 0,
        role: 'producer',
        processes: { execution: 'execution', beacon: 'beacon' },
        endpoints: { execution: 'http://127.0.0.1:8546', rpc: 'http://127.0.0.1:8545', beacon: 'http://127.0.0.1:8080', ws: 'ws://127.0.0.1:8080/ws' },
        ports: { rest: 8546, rpc: 8545, beacon: 8080 },
        p2p: {
          execution: { port: 9001, peer_id: PEER_EXECUTION, multiaddr: `/ip4/127.0.0.1/tcp/9001/p2p/${PEER_EXECUTION}`, bootnodes: [] },
          beacon: { port: 9000, peer_id: PEER_BEACON, multiaddr: `/ip4/127.0.0.1/tcp/9000/p2p/${PEER_BEACON}`, bootnodes: [] },
        },
        validators: [0, 1],
        validator_token_file: join(dir, 'validator-token'),
        data_dirs: { execution: join(dir, 'data', 'execution'), beacon: join(dir, 'data', 'beacon') },
      },
    ],
    supervisor: null,
    processes: [proc('execution', 8546), proc('beacon', 8080), { ...proc('validator-0', 8547), validators: [0] }, { ...proc('validator-1', 8548), validators: [1] }],
    validators: [
      { index: 0, address: '0x' + '11'.repeat(20), wallet: join(dir, 'genesis', 'keystores', 'validator-0.json') },
      { index: 1, address: '0x' + '22'.repeat(20), wallet: join(dir, 'genesis', 'keystores', 'validator-1.json') },
    ],
    accounts: [
      { index: 0, address: '0x' + 'aa'.repeat(20), wallet: join(dir, 'genesis', 'accounts', 'account-0.json') },
      { index: 1, address: '0x' + 'bb'.repeat(20), wallet: join(dir, 'genesis', 'accounts', 'account-1.json') },
    ],
    faucet: { index: 0, address: '0x' + 'fa'.repeat(20), wallet: join(dir, 'genesis', 'keystores', 'faucet.json') },
    keystore_password: 'svc-devnet',
    mnemonic: Array(23).fill('abandon').join(' ') + ' art',
    updated_at: '',
  };
}

/** A deep copy as plain JSON, for mutating into bad inputs. */
export function jsonCopy(v: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(v)) as Record<string, unknown>;
}

/** Runs `fn` with a fresh directory under os.tmpdir(), removed afterwards whatever happens. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T> | T): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-devnet-unit-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs `fn` with SVC_HOME set to `home`, restoring the previous value afterwards. */
export async function withSvcHome<T>(home: string, fn: () => Promise<T> | T): Promise<T> {
  const saved = process.env.SVC_HOME;
  process.env.SVC_HOME = home;
  try {
    return await fn();
  } finally {
    if (saved === undefined) delete process.env.SVC_HOME;
    else process.env.SVC_HOME = saved;
  }
}

/** Polls `check` (every `everyMs`) until it is true, failing with `what` after `ms`. */
export async function waitUntil(what: string, check: () => boolean, ms = 5_000, everyMs = 5): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** `p`, or a rejection naming `what` if it has not settled within `ms`. */
export async function within<T>(what: string, p: Promise<T>, ms = 5_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
