/**
 * A test tool that makes a validator equivocate (not a test file itself): it unlocks the
 * validator's keystore itself and signs, outside the validator client and its slashing
 * protection, a second block for a slot the validator already proposed and a second vote for a
 * target epoch it already voted for, then hands them to one beacon like any proposer would.
 */
import { readFile } from 'node:fs/promises';
import { parseHex, toHex } from '../../src/core/codec/bytes.js';
import { type Genesis, genesisHash } from '../../src/core/genesis/genesis.js';
import { type Block, blockFromJson, blockToJson, bodyMerkleRoot, signBlock } from '../../src/core/types/block.js';
import { type Attestation, attestationToJson, signAttestation } from '../../src/core/types/attestation.js';
import { unlockKeystore } from '../../src/cli/node-setup.js';
import type { WalletKeys } from '../../src/wallet/derivation.js';
import { getJson } from './network.js';

/** The validator's keys from its keystore (devnet password). */
export function loadValidatorKeys(keystore: string, genesis: Genesis): Promise<WalletKeys> {
  return unlockKeystore(keystore, genesis, { envVar: 'SVC_EQUIVOCATE_PASSWORD', what: 'validator', flag: '--password-file' });
}

async function post(url: string, body: unknown, token: string): Promise<{ status: number; body: any }> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
  return { status: r.status, body: await r.json().catch(() => null) };
}

/** A block the validator proposed on `beaconUrl`'s chain, scanning back from the head, with a body to change. */
export async function findOwnBlock(beaconUrl: string, validatorIndex: number): Promise<Block | undefined> {
  const head = (await getJson(`${beaconUrl}/api/v1/beacon/head`)).data as { slot: number };
  for (let slot = head.slot; slot > 0; slot--) {
    const r = await getJson(`${beaconUrl}/api/v1/beacon/blocks/${slot}`).catch(() => undefined);
    if (!r?.success || r.data.proposer_index !== validatorIndex || !r.data.block) continue;
    const block = blockFromJson(r.data.block);
    if (block.attestations.length > 0 || block.transactions.length > 0) return block;
  }
  return undefined;
}

/**
 * A sibling of `honest`: same parent, slot, seed and reveal, but with an emptied body, so its
 * merkle_root (and the SignedHeader) differs. It is a valid block, which is what makes it a fork.
 */
export function conflictingBlock(honest: Block, keys: WalletKeys, chainId: string, validatorIndex: number): Block {
  const header = { ...honest.header, merkleRoot: bodyMerkleRoot([], [], []) };
  return signBlock(header, [], keys.mldsa, chainId, validatorIndex, [], []);
}

/** Submits a block to a beacon's proposal route; returns the HTTP status and body. */
export function proposeTo(beaconUrl: string, token: string, block: Block): Promise<{ status: number; body: any }> {
  return post(`${beaconUrl}/api/v1/validator/blocks/propose`, blockToJson(block), token);
}

/**
 * A vote conflicting with the validator's latest vote on `beaconUrl` (same target epoch, another
 * head: the genesis root), signed with the key; undefined until the validator has voted.
 */
export async function conflictingVote(beaconUrl: string, keys: WalletKeys, genesis: Genesis, validatorIndex: number): Promise<Attestation | undefined> {
  const v = (await getJson(`${beaconUrl}/api/v1/validators/${validatorIndex}`)).data as { latest_vote: { root: string; epoch: number } | null };
  if (!v.latest_vote) return undefined;
  const slot = v.latest_vote.epoch * genesis.config.slots_per_epoch;
  const genesisRoot = toHex(genesisHash(genesis));
  if (v.latest_vote.root === genesisRoot) return undefined;
  const target = { epoch: v.latest_vote.epoch, root: parseHex(v.latest_vote.root, 'root', 32) };
  const data = { slot, beaconBlockRoot: parseHex(genesisRoot, 'genesis root', 32), source: { epoch: 0, root: parseHex(genesisRoot, 'genesis root', 32) }, target };
  return signAttestation(validatorIndex, data, keys.mldsa, genesis.chain_id);
}

/** Submits an attestation to a beacon; returns the HTTP status and body. */
export function attestTo(beaconUrl: string, token: string, att: Attestation): Promise<{ status: number; body: any }> {
  return post(`${beaconUrl}/api/v1/attestation`, attestationToJson(att), token);
}

/** The bearer token a node's beacon wrote. */
export async function beaconToken(file: string): Promise<string> {
  return (await readFile(file, 'utf8')).trim();
}


