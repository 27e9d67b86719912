/**
 * What `svc contract deploy|call|read|logs` do, over the execution REST API: encode calldata
 * (src/core/codec/calldata.ts), estimate gas when none is given, sign and send through
 * send.ts, and decode return values and events.
 */
import { readFile } from 'node:fs/promises';
import { type LogJson, MAX_LOG_BLOCK_RANGE, type Receipt, type TxStatus } from '../api/execution.js';
import { parseHex, toHex } from '../core/codec/bytes.js';
import { type CallValue, CalldataError, decodeValues, encodeCall, encodeDeploy, eventTopic, parseCliArg, topicAddress, valueToJson } from '../core/codec/calldata.js';
import { SvcError } from '../core/errors.js';
import { normalizeAddress } from '../core/crypto/address.js';
import { resolveSigningWallet } from '../wallet/tx-builder.js';
import type { ExecutionClient } from './execution.js';
import { sendValueTx, type SendResult, waitForInclusion } from './send.js';

/** The first four bytes of every WebAssembly module. */
const WASM_MAGIC = [0x00, 0x61, 0x73, 0x6d];

/** A contract file that cannot be deployed as it is: missing, empty or not WebAssembly. */
export class ContractFileError extends SvcError {}

/** Reads a compiled contract and checks that it is a WebAssembly module (the node validates the rest). */
export async function readWasm(path: string): Promise<Uint8Array> {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await readFile(path));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ContractFileError('CONTRACT_FILE', `cannot read ${path}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (err as Error).message}`);
  }
  if (bytes.length < 8 || WASM_MAGIC.some((b, i) => bytes[i] !== b)) {
    throw new ContractFileError('CONTRACT_FILE', `${path} is not a WebAssembly module (it does not start with \\0asm); build one with \`svc contract build FILE.ts\``);
  }
  return bytes;
}

/** CLI arguments as typed calldata values (see parseCliArg); a bad one is USAGE naming its position. */
export function parseArgs(args: readonly string[]): CallValue[] {
  return args.map((a, i) => {
    try {
      return parseCliArg(a);
    } catch (err) {
      if (err instanceof CalldataError) throw new SvcError('USAGE', `argument ${i + 1} (${JSON.stringify(a)}): ${err.message}`);
      throw err;
    }
  });
}

/** Signing and fee settings shared by deploy and call. */
export interface TxSettings {
  client: ExecutionClient;
  from: string;
  /** Base-10 wei. */
  value: string;
  gasPrice: string;
  /** Omitted: the node's estimate. */
  gasLimit?: string | undefined;
  nonce?: string | undefined;
  chainId?: string | undefined;
  password: () => Promise<string>;
  warn?: (line: string) => void;
}

/** A sent deployment or call, and its receipt when waited for. */
export interface ContractTxResult extends SendResult {
  /** The estimate used as gas limit, when none was given. */
  estimated_gas?: number;
  state?: TxStatus['state'];
  receipt?: Receipt;
}

/** Sends a deployment or call: estimates gas from the signing address when no limit is given. */
async function sendContractTx(s: TxSettings, to: string | null, data: Uint8Array): Promise<ContractTxResult> {
  const hex = toHex(data);
  let gasLimit = s.gasLimit;
  let estimated: number | undefined;
  if (gasLimit === undefined) {
    const from = (await resolveSigningWallet(s.from)).wallet.file.address;
    // A call the node predicts to fail is refused here with its reason; --gas-limit sends it anyway.
    estimated = (await s.client.estimateGas({ from, to, data: hex, value: s.value })).gas;
    gasLimit = String(estimated);
  }
  const sent = await sendValueTx({
    client: s.client,
    from: s.from,
    input: { to, value: s.value, gasPrice: s.gasPrice, gasLimit, data: hex, nonce: s.nonce },
    chainId: s.chainId,
    password: s.password,
    ...(s.warn ? { warn: s.warn } : {}),
  });
  return { ...sent, ...(estimated === undefined ? {} : { estimated_gas: estimated }) };
}

/** Deploys `code` with constructor arguments. */
export function deployContract(s: TxSettings, code: Uint8Array, args: readonly CallValue[]): Promise<ContractTxResult> {
  return sendContractTx(s, null, encodeDeploy(code, args));
}

/** Calls `method` of the contract at `address` in a transaction. */
export function callContract(s: TxSettings, address: string, method: string, args: readonly CallValue[]): Promise<ContractTxResult> {
  return sendContractTx(s, normalizeAddress(address), encodeMethod(method, args));
}

function encodeMethod(method: string, args: readonly CallValue[]): Uint8Array {
  try {
    return encodeCall(method, args);
  } catch (err) {
    if (err instanceof CalldataError) throw new SvcError('USAGE', err.message);
    throw err;
  }
}

/** Waits until the transaction is in a block and returns it with its receipt (status 0 included: see receiptFailure). */
export async function waitForReceipt(client: ExecutionClient, sent: ContractTxResult, timeoutMs: number): Promise<ContractTxResult & { receipt: Receipt }> {
  const status = await waitForInclusion(client, sent.hash, { timeoutMs });
  return { ...sent, state: status.state, receipt: status.receipt! };
}

/** A status-0 receipt as TX_FAILED (exit 1), naming the reason and the gas charged; undefined on success. */
export function receiptFailure(receipt: Receipt): SvcError | undefined {
  if (receipt.status === 1) return undefined;
  return new SvcError('TX_FAILED', `transaction ${receipt.transactionHash} failed in block ${receipt.blockNumber}${receipt.error ? `: ${receipt.error}` : ''} (gas charged ${receipt.gasUsed}, fee ${receipt.fee} wei)`);
}

/** A read-only call's decoded return values. */
export interface ReadResult {
  address: string;
  method: string;
  block_number: number;
  gas_used: number;
  return_data: string;
  /** Decoded tagged values; absent when the return data is not in the tagged format. */
  values?: Array<ReturnType<typeof valueToJson>>;
  decode_error?: string;
}

/** Runs `method` without a transaction (the node's eth_call) and decodes what it returns. */
export async function readContract(client: ExecutionClient, address: string, method: string, args: readonly CallValue[], o: { from?: string; block?: string } = {}): Promise<ReadResult> {
  const to = normalizeAddress(address);
  const r = await client.call({ to, data: toHex(encodeMethod(method, args)), ...(o.from ? { from: normalizeAddress(o.from, 'from') } : {}), ...(o.block ? { block: o.block } : {}) });
  const base = { address: to, method, block_number: r.block_number, gas_used: r.gas_used, return_data: r.return_data };
  const decoded = decodeTagged(r.return_data);
  return 'values' in decoded ? { ...base, values: decoded.values } : { ...base, decode_error: decoded.error };
}

function decodeTagged(hex: string): { values: Array<ReturnType<typeof valueToJson>> } | { error: string } {
  try {
    return { values: decodeValues(parseHex(hex, 'return data')).map(valueToJson) };
  } catch (err) {
    if (err instanceof CalldataError) return { error: err.message };
    throw err;
  }
}

/** A log with its topics and data decoded where they follow the conventions (docs/contracts.md). */
export interface DecodedLog extends LogJson {
  /** The event name when topic0 is SHA3-256 of the name asked for. */
  event?: string;
  /** Each topic after topic0 read as an address, where it is one. */
  topic_addresses: Array<string | null>;
  values?: Array<ReturnType<typeof valueToJson>>;
  decode_error?: string;
}

/** A `--from`/`--to` bound: a height or latest, finalized, earliest. */
export function parseBound(v: string | undefined, flag: string): number | string | undefined {
  if (v === undefined) return undefined;
  if (/^(0|[1-9][0-9]{0,15})$/.test(v)) return Number(v);
  if (['latest', 'finalized', 'earliest'].includes(v)) return v;
  throw new SvcError('USAGE', `${flag} must be a block number, latest, finalized or earliest; got ${JSON.stringify(v)}`);
}

/** The logs a contract emitted over a range, optionally one event's, decoded. */
export async function contractLogs(client: ExecutionClient, address: string, o: { from?: number | string; to?: number | string; event?: string } = {}): Promise<{ from_block: number; to_block: number; logs: DecodedLog[] }> {
  const emitter = normalizeAddress(address);
  const topic0 = o.event === undefined ? undefined : eventTopic(o.event);
  // Without --from: the widest window the node answers, ending at --to (default the head).
  let from = o.from;
  if (from === undefined) {
    const to = typeof o.to === 'number' ? o.to : o.to === undefined ? (await client.health()).latest_block : (await client.block(o.to)).number;
    from = Math.max(0, to - (MAX_LOG_BLOCK_RANGE - 1));
  }
  const r = await client.logs({ address: [emitter], from, ...(o.to === undefined ? {} : { to: o.to }), ...(topic0 ? { topics: [[topic0]] } : {}) });
  return {
    from_block: r.from_block,
    to_block: r.to_block,
    logs: r.logs.map((l) => {
      const decoded = decodeTagged(l.data);
      return {
        ...l,
        ...(topic0 && l.topics[0] === topic0 ? { event: o.event } : {}),
        topic_addresses: l.topics.slice(1).map((t) => topicAddress(t) ?? null),
        ...('values' in decoded ? { values: decoded.values } : { decode_error: decoded.error }),
      };
    }),
  };
}
