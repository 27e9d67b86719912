/**
 * A block's state transition (the spec's step 6) once its header checks passed: each transaction
 * against a view of the parent's state (transfers, contracts, bridge and registry operations,
 * ECDSA authorisations), then the block's consensus rewards (rewards.ts). Refuses the block on
 * its first invalid transaction; a transaction that is valid but fails gets a status-0 receipt.
 */
import { BRIDGE_ADDRESS, DEPOSIT_ADDRESS, EXIT_ADDRESS, HASH_BYTES, RANDAO_COMMIT_ADDRESS, TX_BASE_GAS } from '../../core/constants.js';
import type { BlockRecommitments } from '../../core/consensus/recommit.js';
import { BlockError, TxError } from '../../core/errors.js';
import { toHex } from '../../core/codec/bytes.js';
import type { Genesis } from '../../core/genesis/genesis.js';
import type { Block } from '../../core/types/block.js';
import { type AuthorizationTx, type EcdsaAuthorizedTx, type StandardTx, type Transaction, TxType, isAuthorization, maxCost, txKind } from '../../core/types/transaction.js';
import { checkGasLimit } from '../../core/gas.js';
import type { LogJson, Receipt } from '../../api/execution.js';
import { type AuthChanges, AuthOverlay, type Authorizations } from './txpool/authorizations.js';
import type { Registry, RegistryChanges } from './registry.js';
import type { StateView } from './state/types.js';
import type { View } from './state/view.js';
import type { ConsensusAccounting, IncludedVote } from './rewards.js';
import { runContractTx } from '../../vm/index.js';
import { type BridgeDocs, type BridgeExecution, bridgeKind } from './bridge.js';

/** The refusal of a block for one of its transactions. */
export function txFail(hash: string, reason: string): BlockError {
  return new BlockError('INVALID_TRANSACTION', `tx ${hash}: ${reason}`);
}

/** What a block's execution adds up to: the stored changes, receipts and totals of its record. */
export interface BlockExecution {
  senders: string[];
  receipts: Receipt[];
  gasUsed: number;
  fees: bigint;
  registry: RegistryChanges;
  authorizations: AuthChanges;
}

/** One block's execution in progress (BlockExecutor.execute): its inputs, and what its transactions have added up to so far. */
interface BlockRun {
  readonly block: Block;
  readonly blockHashHex: string;
  readonly proposer: string;
  readonly state: View;
  readonly recommits: BlockRecommitments;
  readonly docs: BridgeDocs;
  readonly senders: Set<string>;
  readonly receipts: Receipt[];
  readonly registry: RegistryChanges;
  readonly auth: AuthOverlay;
  /** Gas used by the transactions so far. */
  cumulative: bigint;
  fees: bigint;
  /** Fees not yet credited to the proposer (see payProposer), and whether any were charged since the last credit. */
  owedFees: bigint;
  owed: boolean;
  /** Logs emitted so far: they are numbered across the block, as eth_getLogs reports them. */
  logCount: number;
}

/**
 * Executes blocks against state views. One instance lives as long as the chain: the import path
 * calls its methods for every transaction, so V8 keeps one optimised copy of each (see execute).
 */
export class BlockExecutor {
  private readonly maxGas: bigint;
  private readonly minGasPrice: bigint;
  private readonly minStake: bigint;

  constructor(
    genesis: Genesis,
    private readonly registry: Registry,
    private readonly auth: Authorizations,
    private readonly bridge: BridgeExecution,
    private readonly accounting: ConsensusAccounting,
  ) {
    this.maxGas = BigInt(genesis.config.max_gas_per_block);
    this.minGasPrice = BigInt(genesis.config.min_gas_price);
    this.minStake = BigInt(genesis.config.min_validator_stake);
  }

  /** Accounts a block certainly reads: proposer, senders, recipients, rewarded attesters. */
  touchedBy(block: Block, verified: Array<{ signer: string | null }>, recipients: ReadonlyArray<string | null>, votes: readonly IncludedVote[], proposer: string): string[] {
    const out = [proposer];
    const txs = block.transactions;
    for (let i = 0; i < txs.length; i++) {
      const tx = txs[i]!;
      out.push(verified[i]!.signer!);
      if (tx.type === TxType.EcdsaAuthorized) out.push(toHex(tx.from));
      const to = recipients[i];
      if (to) out.push(to);
    }
    for (const v of votes) {
      const e = this.registry.all()[v.validator];
      if (e) out.push(e.address);
    }
    return out;
  }

  /** Executes a block's transactions (step 6), then credits its consensus rewards; throws on the first invalid transaction. */
  execute(
    block: Block,
    blockHashHex: string,
    verified: Array<{ hash: string; signer: string | null }>,
    recipients: ReadonlyArray<string | null>,
    state: View,
    votes: readonly IncludedVote[],
    recommits: BlockRecommitments,
    docs: BridgeDocs,
  ): BlockExecution {
    const proposer = toHex(block.header.validatorId);
    const run: BlockRun = {
      block,
      blockHashHex,
      proposer,
      state,
      recommits,
      docs,
      senders: new Set<string>(),
      receipts: [],
      registry: { added: [], exited: [] },
      auth: new AuthOverlay(this.auth),
      cumulative: 0n,
      fees: 0n,
      owedFees: 0n,
      owed: false,
      logCount: 0,
    };
    // One method call per transaction, not a callback made per block: a closure made per block
    // starts without optimised code once a full collection has dropped the last block's (V8
    // keeps it only weakly), so many blocks ran the body unoptimised while TurboFan compiled it
    // again (tens of ms on a worker thread). A method keeps its code, and is hot within a block.
    const txs = block.transactions;
    for (let i = 0; i < txs.length; i++) this.executeTx(run, txs[i]!, i, verified[i]!.hash, verified[i]!.signer!, recipients[i] ?? null);
    this.payProposer(run);
    // After the transactions, so a reward never funds a transaction of the block that earns it.
    this.accounting.credit(state, proposer, votes);
    return { senders: [...run.senders], receipts: run.receipts, gasUsed: Number(run.cumulative), fees: run.fees, registry: run.registry, authorizations: run.auth.changes };
  }

  /**
   * Credits the proposer's fees owed so far in one write rather than one per transaction: nothing
   * reads the proposer's balance between plain transfers by others, and every transaction that
   * could (the proposer's own, contracts, bridge and registry operations) finds them credited
   * first. `owed` keeps the proposer touched exactly when a fee-paying transaction ran.
   */
  private payProposer(run: BlockRun): void {
    if (!run.owed) return;
    run.state.addBalance(run.proposer, run.owedFees);
    run.owedFees = 0n;
    run.owed = false;
  }

  /** Executes transaction `i` of `run`'s block (`to`: its recipient's hex, null for none) and appends its receipt; throws if it is invalid. */
  private executeTx(run: BlockRun, raw: Transaction, i: number, hash: string, signer: string, to: string | null): void {
    const { block, blockHashHex, state, auth, registry } = run;
    if (isAuthorization(raw)) {
      if (signer === run.proposer) this.payProposer(run);
      run.senders.add(signer);
      run.receipts.push(this.authorize(raw, signer, state, auth, { hash, index: i, blockHash: blockHashHex, blockNumber: block.header.index, cumulative: run.cumulative }));
      return;
    }
    const tx: StandardTx | EcdsaAuthorizedTx = raw;
    // Type 3 acts for `from`; its signature only proves the ECDSA key, which `from` must have authorised.
    const sender = tx.type === 3 ? toHex(tx.from) : signer;
    run.senders.add(sender);
    if (tx.type === 3 && !auth.has(sender, signer)) throw txFail(hash, `${new TxError('ErrInvalidSignature').message}: ECDSA key ${signer} is not authorised for ${sender}`);
    const kind = to === BRIDGE_ADDRESS ? bridgeKind(tx.data) : to === DEPOSIT_ADDRESS ? 'deposit' : to === EXIT_ADDRESS ? 'exit' : to === RANDAO_COMMIT_ADDRESS ? 'randao_commit' : txKind(tx);
    if (sender === run.proposer || kind !== 'transfer') this.payProposer(run);
    try {
      checkGasLimit(tx, this.maxGas);
    } catch (err) {
      throw txFail(hash, (err as Error).message);
    }
    if (run.cumulative + tx.gasLimit > this.maxGas) throw txFail(hash, `block gas limit ${this.maxGas} exceeded`);
    if (tx.gasPrice < this.minGasPrice) throw txFail(hash, new TxError('ErrGasPriceTooLow').message);
    const acc = state.account(sender);
    if (tx.nonce !== acc.nonce) throw txFail(hash, `invalid nonce: transaction nonce ${tx.nonce}, account nonce ${acc.nonce}`);
    if (acc.balance < maxCost(tx)) throw txFail(hash, new TxError('ErrInsufficientFunds').message);
    let outcome: { status: 0 | 1; gasUsed: bigint; contractAddress: string | null; logs: LogJson[]; error?: string | undefined };
    // A plain transfer's value leaves the sender with its fee, in one write.
    let debit = 0n;
    if (kind === 'contract_deploy' || kind === 'contract_call') {
      // The VM moves the value and reverts its own changes on failure; nothing but the value
      // leaves the sender's balance during the run, so the fee charged afterwards is covered.
      const r = runContractTx(state, { from: sender, to, value: tx.value, data: tx.data, gasLimit: tx.gasLimit, nonce: tx.nonce, blockNumber: block.header.index, timestampMs: block.header.timestampMs });
      const first = run.logCount;
      const logs = r.logs.map((l, j) => ({ address: l.address, topics: l.topics.map((t) => toHex(t)), data: toHex(l.data), blockNumber: block.header.index, blockHash: blockHashHex, transactionHash: hash, transactionIndex: i, logIndex: first + j }));
      run.logCount += logs.length;
      outcome = { status: r.status, gasUsed: r.gasUsed, contractAddress: r.status === 1 ? r.contractAddress : null, logs, error: r.error };
    } else if (to === BRIDGE_ADDRESS) {
      // The operation moves its own value (a lock's), and only when it succeeds.
      const r = this.bridge.execute({ sender, hash, value: tx.value, data: tx.data }, state, run.docs, block.header.timestampMs);
      const logs = r.log ? [{ ...r.log, blockNumber: block.header.index, blockHash: blockHashHex, transactionHash: hash, transactionIndex: i, logIndex: run.logCount++ }] : [];
      outcome = { status: r.status, gasUsed: r.gasUsed, contractAddress: null, logs, error: r.error };
    } else {
      let error: string | undefined;
      if (kind === 'deposit') error = tx.type === 0 ? this.deposit(tx, sender, registry) : 'a deposit must be signed by the ML-DSA key it registers';
      else if (kind === 'exit') error = this.exit(tx, sender, registry);
      else if (kind === 'randao_commit') error = this.recommit(i, run.recommits, registry);
      if (error === undefined && tx.value > 0n) {
        state.addBalance(to!, tx.value);
        debit = tx.value;
      }
      outcome = { status: error === undefined ? 1 : 0, gasUsed: TX_BASE_GAS, contractAddress: null, logs: [], error };
    }
    const fee = outcome.gasUsed * tx.gasPrice;
    state.addBalance(sender, -(fee + debit));
    run.owedFees += fee;
    run.owed = true;
    state.incrementNonce(sender);
    run.cumulative += outcome.gasUsed;
    run.fees += fee;
    run.receipts.push({
      transactionHash: hash,
      transactionIndex: i,
      blockHash: blockHashHex,
      blockNumber: block.header.index,
      from: sender,
      to,
      kind,
      status: outcome.status,
      gasUsed: Number(outcome.gasUsed),
      cumulativeGasUsed: Number(run.cumulative),
      effectiveGasPrice: tx.gasPrice.toString(),
      fee: fee.toString(),
      contractAddress: outcome.contractAddress,
      logs: outcome.logs,
      ...(outcome.error === undefined ? {} : { error: outcome.error }),
    });
  }

  /** Executes a gas-free ECDSA authorisation or revocation (nonce consumed, no fee). */
  private authorize(tx: AuthorizationTx, sender: string, state: StateView, auth: AuthOverlay, at: { hash: string; index: number; blockHash: string; blockNumber: number; cumulative: bigint }): Receipt {
    const acc = state.account(sender);
    if (tx.nonce !== acc.nonce) throw txFail(at.hash, `invalid nonce: transaction nonce ${tx.nonce}, account nonce ${acc.nonce}`);
    state.incrementNonce(sender);
    const ecdsa = toHex(tx.ecdsaAddress);
    const revoke = tx.type === TxType.EcdsaRevocation;
    const done = revoke ? auth.remove(sender, ecdsa) : auth.add(sender, ecdsa);
    return {
      transactionHash: at.hash,
      transactionIndex: at.index,
      blockHash: at.blockHash,
      blockNumber: at.blockNumber,
      from: sender,
      to: null,
      kind: revoke ? 'ecdsa_revocation' : 'ecdsa_authorization',
      status: done ? 1 : 0,
      gasUsed: 0,
      cumulativeGasUsed: Number(at.cumulative),
      effectiveGasPrice: '0',
      fee: '0',
      contractAddress: null,
      logs: [],
      ...(done ? {} : { error: revoke ? `ECDSA key ${ecdsa} is not authorised` : `ECDSA key ${ecdsa} is already authorised` }),
    };
  }

  /** A deposit registers the sender's key; returns a failure reason (tx status 0) or undefined. */
  private deposit(tx: StandardTx, sender: string, changes: RegistryChanges): string | undefined {
    if (tx.value < this.minStake) return `deposit below the minimum stake of ${this.minStake} wei`;
    if (tx.data.length !== HASH_BYTES) return 'deposit data must be the 32-byte RANDAO commitment';
    if (this.registry.get(sender) || changes.added.some((e) => e.address === sender)) return 'sender is already a validator';
    changes.added.push({
      index: this.registry.size + changes.added.length,
      address: sender,
      public_key: toHex(tx.publicKey),
      stake: tx.value.toString(),
      randao_commitment: toHex(tx.data),
      active: true,
      slashed: false,
    });
    return undefined;
  }

  /** A re-commitment replaces the sender's RANDAO commitment (judged by blockRecommitments); returns a failure reason or undefined. */
  private recommit(txIndex: number, recommits: BlockRecommitments, changes: RegistryChanges): string | undefined {
    const failure = recommits.failed.get(txIndex);
    if (failure !== undefined) return failure;
    const c = recommits.applied.find((r) => r.txIndex === txIndex)!;
    const entry = this.registry.all()[c.validatorIndex]!;
    (changes.recommitted ??= []).push({ index: c.validatorIndex, previous: entry.randao_commitment, commitment: toHex(c.commitment) });
    return undefined;
  }

  /** An exit deactivates the sender's validator; returns a failure reason or undefined. */
  private exit(tx: StandardTx | EcdsaAuthorizedTx, sender: string, changes: RegistryChanges): string | undefined {
    const v = this.registry.get(sender);
    if (!v || !v.active || changes.exited.includes(v.index)) return 'sender is not an active validator';
    if (tx.value !== 0n || tx.data.length !== 0) return 'an exit carries no value and no data';
    changes.exited.push(v.index);
    return undefined;
  }
}
