/**
 * The genesis step of an exported network (`svc devnet genesis`, run once by a Compose service
 * or a Kubernetes Job): writes the devnet genesis, its keystores and every node's libp2p key onto
 * the shared volume. Everything derives from the flags (dev mnemonic, fixed genesis time), so the
 * exporter knew the genesis hash and the peer ids before the cluster existed; running the step
 * again on the same volume rewrites the same files, and refuses a volume holding another chain.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { toHex } from '../../core/codec/bytes.js';
import { genesisHash } from '../../core/genesis/genesis.js';
import { buildGenesis, keystorePath, plannedGenesisFiles, writeGenesis } from '../../genesis/build.js';
import { loadGenesisFile } from '../../genesis/load.js';
import { writePeerKeyFileFromSeed } from '../../node/p2p/identity.js';
import { writeFileAtomic } from '../../util/fs.js';
import { DEV_MNEMONIC } from '../../wallet/derivation.js';
import { devnetGenesisPlan } from '../lifecycle.js';
import { peerKeySeed, validatorsByNode } from '../topology.js';
import { type ExportOptions, ExportError, checkNetworkShape, nodeKeystoreFile, peerKeyFile } from './model.js';

/** Inputs of the genesis step: the network's shape, as the export has it, and where to write. */
export type GenesisStepOptions = Pick<ExportOptions, 'validators' | 'producers' | 'followers' | 'accounts' | 'slotSeconds' | 'slotsPerEpoch' | 'genesisTime' | 'kdfMemoryKib'> & {
  out: string;
  password: string;
};

/** What the step wrote. */
export interface GenesisStepResult {
  genesis: string;
  genesis_hash: string;
  /** False when the volume already held this chain's genesis and keystores (they were kept). */
  created: boolean;
  nodes: Array<{ index: number; role: 'producer' | 'follower'; ordinal: number; execution: { peer_id: string; key: string }; beacon: { peer_id: string; key: string } }>;
}

/** Writes (or confirms) the genesis, keystores and P2P keys of an exported network in `o.out`. */
export async function runGenesisStep(o: GenesisStepOptions): Promise<GenesisStepResult> {
  checkNetworkShape(o);
  const built = buildGenesis(devnetGenesisPlan(o, o.genesisTime));
  const hash = genesisHash(built.genesis);
  const path = join(o.out, 'genesis.json');
  let created = true;
  if (existsSync(path)) {
    const have = toHex(genesisHash(await loadGenesisFile(path)));
    if (have !== toHex(hash)) throw new ExportError('GENESIS_MISMATCH', `${path} holds another chain (genesis hash ${have}, these flags make ${toHex(hash)}): use an empty volume`);
    created = !plannedGenesisFiles(o.out, o.validators, built.keys.length - o.validators - 1).every((f) => existsSync(f));
  }
  if (created) await writeGenesis(o.out, built, DEV_MNEMONIC, o.password, { force: true, kdfMemoryKib: o.kdfMemoryKib });

  // One node's validators as a StatefulSet find their keystore by ordinal: copy them per node.
  const byNode = validatorsByNode(built.genesis.validators.map((v) => v.index), o.producers);
  for (const [node, validators] of byNode.entries()) {
    for (const [ordinal, v] of validators.entries()) {
      // Atomic, like every keystore: a validator starting meanwhile never reads half a file.
      await writeFileAtomic(nodeKeystoreFile(o.out, node, ordinal), await readFile(keystorePath(o.out, 'validator', v)), { force: true });
    }
  }
  const nodes: GenesisStepResult['nodes'] = [];
  for (let i = 0; i < o.producers + o.followers; i++) {
    const role = i < o.producers ? 'producer' : 'follower';
    const ordinal = role === 'producer' ? i : i - o.producers;
    const key = (layer: 'execution' | 'beacon') => peerKeyFile(o.out, role, ordinal, layer);
    nodes.push({
      index: i,
      role,
      ordinal,
      execution: { key: key('execution'), peer_id: await writePeerKeyFileFromSeed(key('execution'), peerKeySeed(hash, i, 'execution')) },
      beacon: { key: key('beacon'), peer_id: await writePeerKeyFileFromSeed(key('beacon'), peerKeySeed(hash, i, 'beacon')) },
    });
  }
  return { genesis: path, genesis_hash: toHex(hash), created, nodes };
}
