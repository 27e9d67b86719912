/**
 * Worker thread body: the RANDAO commitments of a devnet genesis (`randao_chain_length` hashes
 * per validator), computed while the genesis worker derives the keys: the two take about as long
 * at 64 validators, and the machine's other core is idle until the nodes start.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { toHex } from '../core/codec/bytes.js';
import { randaoCommitment } from '../core/crypto/randao.js';
import { type GenesisPlan, planChainLength, validatorKeySeeds } from '../genesis/build.js';

const plan = workerData as GenesisPlan;
const length = planChainLength(plan);
parentPort!.postMessage(validatorKeySeeds(plan).map((seed) => toHex(randaoCommitment(seed, length))));
