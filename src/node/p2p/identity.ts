/**
 * The node's libp2p identity: an Ed25519 key persisted in `<dataDir>/p2p/peer-key` (protobuf-marshalled,
 * mode 0600), so a node keeps its peer id across restarts and the devnet can know bootnode peer ids
 * before starting the nodes. Peer ids stay classical: every payload that matters carries its own
 * ML-DSA-65 signature (DECISIONS.md, P2P).
 */
import './polyfill.js';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateKeyPair, generateKeyPairFromSeed, privateKeyFromProtobuf, privateKeyToProtobuf } from '@libp2p/crypto/keys';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import type { PrivateKey } from '@libp2p/interface';
import { SvcError } from '../../core/errors.js';
import { P2pError } from './errors.js';
import { writeFileAtomic } from '../../util/fs.js';
import { hasCode } from '../../api/errors.js';

/** Path of the peer key inside a data directory. */
export function peerKeyPath(dataDir: string): string {
  return join(dataDir, 'p2p', 'peer-key');
}

/** Ed25519 seed length accepted by `writePeerKeyFromSeed`. */
export const PEER_KEY_SEED_BYTES = 32;

async function readPeerKey(path: string): Promise<PrivateKey | undefined> {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await readFile(path));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const key = privateKeyFromProtobuf(bytes);
    if (key.type !== 'Ed25519') throw new Error(`key type ${key.type}`);
    return key;
  } catch (err) {
    // A damaged identity must not be silently replaced: peers and bootnode lists know the old id.
    throw new P2pError('P2P_PEER_KEY_INVALID', `${path} is not an Ed25519 libp2p private key (${(err as Error).message}); move it away to create a new identity`, { cause: err });
  }
}

/**
 * Loads a provisioned peer key (`--p2p-key-file`): it must exist, since its peer id is already
 * named as a bootnode elsewhere and a fresh key would silently make those entries unreachable.
 */
export async function loadPeerKeyFile(path: string): Promise<PrivateKey> {
  const key = await readPeerKey(path);
  if (!key) throw new P2pError('P2P_PEER_KEY_MISSING', `--p2p-key-file ${path} does not exist`);
  return key;
}

/** Loads the persisted peer key, creating (durably) a fresh one on first start. */
export async function loadOrCreatePeerKey(dataDir: string): Promise<PrivateKey> {
  const path = peerKeyPath(dataDir);
  const existing = await readPeerKey(path);
  if (existing) return existing;
  const key = await generateKeyPair('Ed25519');
  try {
    await writeFileAtomic(path, privateKeyToProtobuf(key), { mode: 0o600 });
  } catch (err) {
    // Another process created it first: its key is the identity, not ours.
    if (err instanceof SvcError && hasCode(err, 'FILE_EXISTS')) {
      const raced = await readPeerKey(path);
      if (raced) return raced;
    }
    throw err;
  }
  return key;
}

async function keyFromSeed(seed: Uint8Array): Promise<PrivateKey> {
  if (seed.length !== PEER_KEY_SEED_BYTES) throw new P2pError('P2P_PEER_KEY_SEED', `peer key seed must be ${PEER_KEY_SEED_BYTES} bytes, got ${seed.length}`);
  return generateKeyPairFromSeed('Ed25519', seed);
}

/** Writes the peer key derived from a 32-byte seed to `path` (replacing any) and returns its peer id. */
export async function writePeerKeyFileFromSeed(path: string, seed: Uint8Array): Promise<string> {
  const key = await keyFromSeed(seed);
  await writeFileAtomic(path, privateKeyToProtobuf(key), { force: true, mode: 0o600 });
  return peerIdFromPrivateKey(key).toString();
}

/** Writes the peer key derived from a 32-byte seed into `dataDir` (replacing any) and returns its peer id. */
export function writePeerKeyFromSeed(dataDir: string, seed: Uint8Array): Promise<string> {
  return writePeerKeyFileFromSeed(peerKeyPath(dataDir), seed);
}

/** The peer id of the key a 32-byte seed derives, without writing it (manifests name it in advance). */
export async function peerIdFromSeed(seed: Uint8Array): Promise<string> {
  return peerIdFromPrivateKey(await keyFromSeed(seed)).toString();
}

/** The peer id of the key persisted in `dataDir`, or undefined when there is none yet. */
export async function peerIdFromKeyFile(dataDir: string): Promise<string | undefined> {
  const key = await readPeerKey(peerKeyPath(dataDir));
  return key ? peerIdFromPrivateKey(key).toString() : undefined;
}
