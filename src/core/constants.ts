/**
 * Fixed protocol sizes and gas schedule. Tunable chain parameters (gas caps, minimum
 * gas price, timing) live in the genesis document, not here.
 */

/** ML-DSA-65 public key length (FIPS 204). */
export const PUBLIC_KEY_BYTES = 1952;
/** ML-DSA-65 signature length (FIPS 204 final; the spec's 3293 is the superseded round-3 size). */
export const SIGNATURE_BYTES = 3309;
/** ML-DSA-65 secret key length (FIPS 204). */
export const SECRET_KEY_BYTES = 4032;
/** ML-DSA key-generation seed ξ. */
export const KEYGEN_SEED_BYTES = 32;
/** EVM-style address length. */
export const ADDRESS_BYTES = 20;
/** SHA3-256 output length. */
export const HASH_BYTES = 32;
/** Chain ids are at most 12 bytes of UTF-8, zero-padded in signed encodings. */
export const CHAIN_ID_BYTES = 12;
/** Recoverable secp256k1 signature r ‖ s ‖ v. */
export const ECDSA_SIGNATURE_BYTES = 65;
/** Largest `data` field; a deployment at the 30M gas cap is at most 149,840 bytes of code. */
export const MAX_TX_DATA_BYTES = 1 << 18;
/** Largest encoded transaction envelope accepted anywhere. */
export const MAX_TX_BYTES = MAX_TX_DATA_BYTES + 8192;
/** Most transactions one block may carry. */
export const MAX_BLOCK_TXS = 4096;
/** Most transactions in one batch submission (POST /api/v1/transactions/batch). */
export const MAX_TX_BATCH = 1024;
/**
 * Most attestations one block may carry: 512 is two epochs' votes of 256 validators (each vote
 * is includable in its target epoch and the next), about 1.7 MB of ML-DSA signatures at most.
 */
export const MAX_BLOCK_ATTESTATIONS = 512;
/**
 * Most slashing evidences one block may carry: each is about 6.9 KB, so 16 add at most 110 KB,
 * and a validator is slashed once, so even a mass equivocation of 256 validators clears in 16 blocks.
 */
export const MAX_BLOCK_SLASHINGS = 16;
/**
 * A slashed validator loses stake / 32 (rounded down), burned: the cut leaves the registry stake
 * and nobody receives it. With the forced exit this matches Ethereum's initial penalty scale
 * (1/32 of effective balance), enough to make an equivocation cost more than any single block pays.
 */
export const SLASHING_PENALTY_DIVISOR = 32n;
/**
 * Epochs of each validator's signed proposals and votes the beacon's slashing detector keeps
 * (behind the current epoch): equivocations older than this are not detected. Bounds the
 * detector's memory and store to validators × window entries.
 */
export const SLASHING_WINDOW_EPOCHS = 64;
/**
 * Epochs of each key's vote history the validator client's slashing protection keeps behind the
 * key's newest target: older votes are dropped as the target and source low watermarks rise to
 * cover them (src/node/validator/slashing/protection.ts proves nothing they refused is then
 * allowed). Lighthouse keeps the same 512. Bounds the memory and work of every check per key.
 */
export const SLASHING_PROTECTION_HISTORY_EPOCHS = 512;
/**
 * Votes are pruned once this many epochs have passed the horizon, not with every vote: a key's
 * watermark record carries its 1,952-byte public key, so it is rewritten once every 32 votes
 * rather than with each, and a key holds at most 512 + 32 epochs of votes.
 */
export const SLASHING_PROTECTION_PRUNE_EPOCHS = 32;
/**
 * Slots of each key's proposal history kept behind its newest signed slot, pruned under a rising
 * slot watermark: 512 epochs of the mainnet preset's 32 slots (shorter epochs keep more epochs).
 */
export const SLASHING_PROTECTION_HISTORY_SLOTS = 16_384;

/** Intrinsic gas of a value transfer or call. */
export const TX_BASE_GAS = 21_000n;
/** Intrinsic gas of a contract deployment, before its per-byte cost. */
export const DEPLOY_BASE_GAS = 32_000n;
/** Gas per byte of deployed code. */
export const DEPLOY_BYTE_GAS = 200n;
/** Gas per storage slot written. */
export const STORAGE_WRITE_GAS = 20_000n;
/** Gas of a Dilithium verification inside the VM. */
export const DILITHIUM_VERIFY_GAS = 50_000n;

/** 1 native token in wei. */
export const WEI_PER_TOKEN = 10n ** 18n;
/** 1 gwei in wei. */
export const GWEI = 10n ** 9n;

/** System address receiving validator deposits (value = stake, data = 32-byte RANDAO commitment). */
export const DEPOSIT_ADDRESS = '0x0000000000000000000000000000000000001000';
/** System address receiving validator exits (value 0, no data, sent by the validator). */
export const EXIT_ADDRESS = '0x0000000000000000000000000000000000001001';
/** System address receiving RANDAO re-commitments (value 0, data = the new 32-byte commitment, sent by the validator). */
export const RANDAO_COMMIT_ADDRESS = '0x0000000000000000000000000000000000001002';
/**
 * System address of the bridge (docs/bridge.md): it holds locked amounts and the bridge reserve,
 * its storage holds lock states, release markers and registered counterparts, and transactions to
 * it carry one bridge operation (a 1-byte op code, then its payload).
 */
export const BRIDGE_ADDRESS = '0x0000000000000000000000000000000000001003';
/**
 * Most signatures one bridge proof carries in each of its two lists (finality votes, BID
 * signatures). The binding limit is MAX_TX_DATA_BYTES: a release costs about 6.8 KB per signer,
 * so 256 KiB of data carries 36 signers, a counterpart of up to 54 equal-stake validators.
 */
export const MAX_BRIDGE_SIGNERS = 64;
/** Most trie nodes in one bridge proof path (a 32-byte key has 64 nibbles, plus the leaf). */
export const MAX_BRIDGE_PROOF_NODES = 65;
/**
 * Most registry entries a bridge set update carries (docs/bridge.md "Set updates"). The binding
 * limit is MAX_TX_DATA_BYTES: an entry is 2,046 bytes and its storage proof a few hundred more.
 */
export const MAX_BRIDGE_SET_VALIDATORS = 1024;
/** Largest trie node encoding a proof may carry (an internal node: 3 + 16 × 32 bytes). */
export const MAX_TRIE_NODE_BYTES = 3 + 16 * HASH_BYTES;
/** Gas per payload byte of a bridge operation, on top of TX_BASE_GAS (the Ethereum calldata figure). */
export const BRIDGE_BYTE_GAS = 16n;
/** Longest lock timeout a lock may ask for, seconds after its block (7 days). */
export const MAX_BRIDGE_TIMEOUT_SECONDS = 7 * 24 * 3600;

/** Most RANDAO re-commitments one block applies; later ones in the block fail (receipt status 0). */
export const MAX_BLOCK_RANDAO_COMMITS = 16;

/** Most headers one light-client header-chain answer carries (GET /api/v1/light/headers). */
export const MAX_LIGHT_HEADERS = 256;
/** Finality updates the beacon keeps (one per finalized epoch, the newest): older ones are deleted. */
export const LIGHT_UPDATES_KEPT = 64;
/** Finalizing links whose signed votes the beacon holds at once while they wait for finality. */
export const LIGHT_PENDING_LINKS = 16;

/** Engine block bodies: a 30M-gas block of transfers is about 1,430 × 10.7 KB of hex JSON ≈ 15 MB. */
export const ENGINE_BODY_LIMIT = 32 * 1024 * 1024;
/**
 * Largest block frame on gossip and sync: half the engine API's body limit. Blocks reach execution
 * as SSZ, but every block must also fit the JSON forms of the same APIs (hex, two characters per
 * byte), and the SSZ bound of 4,096 maximal envelopes is over 1 GB. Frames above it are refused
 * before decoding; the host carries frames of this size (MAX_GOSSIP_RPC_BYTES, STREAM_READ_BUFFER_BYTES).
 */
export const MAX_BLOCK_BYTES = ENGINE_BODY_LIMIT / 2;

/** Most set changes one light-client page carries (GET /api/v1/light/set_changes); a page also stops past MAX_SET_CHANGE_PAGE_BYTES. */
export const MAX_SET_CHANGES_PER_PAGE = 16;
/** A set-change page stops once its updates pass this many bytes of JSON (it always carries at least one). */
export const MAX_SET_CHANGE_PAGE_BYTES = 8 * 1024 * 1024;
