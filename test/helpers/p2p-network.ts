/**
 * Helpers for end-to-end tests of several nodes talking over libp2p (not a test file itself):
 * one `svc genesis new` chain, then per node a `svc node execution`, a `svc node beacon` and its
 * `svc node validator` processes, each layer with its own P2P port and the bootnodes of the nodes
 * started before it. A node without validators is a read-only follower.
 *
 * A node may live in a Linux network namespace (test/helpers/netns.ts): its processes are started
 * with `ip netns exec NS`, talk to each other on the namespace's loopback, gossip on its data
 * address and are reached by the test on its management address.
 *
 * Every process is SIGKILLed when `withP2pNet` returns or throws; on failure the stderr tail of
 * each process is printed (on success too with SVC_E2E_LOGS=<chars>).
 */
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { cliEnv, expectJsonOk, runCli } from './cli.js';
import { type BeaconHead, freePort, getJson, ProcessGroup, waitFor, withGenesisNetwork } from './network.js';

/** The prefunded account the tests send from (keystore password of the devnet preset). */
export const DEVNET_KEYSTORE_PASSWORD = 'svc-devnet';

/** Where a node's processes listen and how the test reaches them. */
export interface NodePlacement {
  /** Argv prefix that runs a process in the node's network namespace (absent: the test's own). */
  prefix?: string[];
  /** Address the test uses to reach REST, JSON-RPC and the beacon API. */
  apiHost: string;
  /** `--host` of execution and beacon (0.0.0.0 when the test reaches them from outside the namespace). */
  bindHost: string;
  /** `--p2p-host` of both layers: the address peers dial. */
  p2pHost: string;
}

const LOOPBACK: NodePlacement = { apiHost: '127.0.0.1', bindHost: '127.0.0.1', p2pHost: '127.0.0.1' };

/** One node: execution and beacon (with P2P) plus its validators; none makes it a follower. */
export class NetNode {
  /** Listen multiaddrs (with `/p2p/<id>`) each layer logged at its last start. */
  execAddrs: string[] = [];
  beaconAddrs: string[] = [];

  constructor(
    readonly name: string,
    readonly validators: readonly number[],
    readonly dataDir: string,
    readonly place: NodePlacement,
    readonly ports: { rest: number; rpc: number; beacon: number; execP2p: number; beaconP2p: number },
  ) {}

  get execUrl(): string {
    return `http://${this.place.apiHost}:${this.ports.rest}`;
  }
  get beaconUrl(): string {
    return `http://${this.place.apiHost}:${this.ports.beacon}`;
  }
  /** The URLs the node's own processes use for each other (loopback of their namespace). */
  get localExecUrl(): string {
    return `http://127.0.0.1:${this.ports.rest}`;
  }
  get localBeaconUrl(): string {
    return `http://127.0.0.1:${this.ports.beacon}`;
  }
  get execProc(): string {
    return `${this.name}-execution`;
  }
  get beaconProc(): string {
    return `${this.name}-beacon`;
  }
  validatorProc(i: number): string {
    return `${this.name}-validator-${i}`;
  }
  /** The peer id in this node's beacon multiaddrs. */
  get beaconPeerId(): string | undefined {
    return peerIdOf(this.beaconAddrs[0]);
  }
  get execPeerId(): string | undefined {
    return peerIdOf(this.execAddrs[0]);
  }
}

function peerIdOf(addr: string | undefined): string | undefined {
  const m = addr ? /\/p2p\/([^/]+)$/.exec(addr) : null;
  return m ? m[1] : undefined;
}

/** `GET /api/v1/blocks/:n` of execution (fields the tests compare). */
export interface ExecBlock {
  hash: string;
  number: number;
  state_root: string;
  canonical: boolean;
  finalized: boolean;
  proposer: string;
  transactions: string[];
}

/** One entry of `/api/v1/p2p/peers`. */
export interface PeerEntry {
  peer_id: string;
  address: string;
  direction: string;
  agent: string | null;
  connected_since: string;
  handshake: string;
}

/** A chain made by `svc genesis new` and the nodes running on it. */
export class P2pNet extends ProcessGroup {
  readonly net: string;
  readonly genesisPath: string;
  /** The parsed genesis.json. */
  genesis: any;
  readonly nodes: NetNode[] = [];

  constructor(readonly dir: string) {
    super(cliEnv(dir, { SVC_PASSWORD: 'e2e-password' }));
    this.net = join(dir, 'net');
    this.genesisPath = join(this.net, 'genesis.json');
  }

  get slotMs(): number {
    return this.genesis.config.slot_seconds * 1000;
  }
  get slotsPerEpoch(): number {
    return this.genesis.config.slots_per_epoch;
  }
  get epochMs(): number {
    return this.slotMs * this.slotsPerEpoch;
  }
  epochOf(slot: number): number {
    return Math.floor(slot / this.slotsPerEpoch);
  }
  /** The current slot by our clock (the nodes share the machine's clock). */
  slotNow(): number {
    return Math.max(0, Math.floor((Date.now() - this.genesis.genesis_time * 1000) / this.slotMs));
  }
  /** Waits until the chain's clock reaches `slot`. */
  waitSlot(slot: number): Promise<true> {
    return waitFor(`slot ${slot}`, async () => (this.slotNow() >= slot ? true : undefined), Math.max(0, (slot - this.slotNow()) * this.slotMs) + 10_000);
  }

  /** Declares a node (ports allocated now, nothing started). */
  async addNode(name: string, validators: readonly number[], place: NodePlacement = LOOPBACK): Promise<NetNode> {
    const ports = { rest: await freePort(), rpc: await freePort(), beacon: await freePort(), execP2p: await freePort(), beaconP2p: await freePort() };
    const node = new NetNode(name, validators, join(this.net, name), place, ports);
    this.nodes.push(node);
    return node;
  }

  private prefix(node: NetNode): { prefix?: string[] } {
    return node.place.prefix ? { prefix: node.place.prefix } : {};
  }

  private p2pFlags(port: number, host: string, bootnodes: readonly string[]): string[] {
    return ['--p2p-port', String(port), '--p2p-host', host, ...(bootnodes.length > 0 ? ['--bootnodes', bootnodes.join(',')] : [])];
  }

  /** The multiaddrs `proc` logged in its current run's `p2p listening` line, dialable ones only. */
  async listenAddrs(proc: string): Promise<string[]> {
    const line = await this.waitLog(proc, 'p2p listening', 30_000);
    const addrs = (line.addrs as unknown[] | undefined) ?? [];
    const usable = addrs.filter((a): a is string => typeof a === 'string' && a.includes('/p2p/') && !a.includes('/0.0.0.0/'));
    assert.ok(usable.length > 0, `${proc}: no dialable /p2p/ multiaddr in its "p2p listening" line: ${JSON.stringify(line)}`);
    return usable;
  }

  /** Starts (or restarts, same data dir and ports) execution; waits for /health and its listen addresses. */
  async startExecution(node: NetNode, bootnodes: readonly string[]): Promise<void> {
    this.start(node.execProc, [
      'node', 'execution', '--genesis', this.genesisPath, '--data-dir', join(node.dataDir, 'execution'),
      '--host', node.place.bindHost, '--rest-port', String(node.ports.rest), '--rpc-port', String(node.ports.rpc),
      // As a devnet runs it (devnet/plan.ts): a second verifier thread is a second isolate to load, for a few transactions a slot.
      '--verifier-threads', '1',
      ...this.p2pFlags(node.ports.execP2p, node.place.p2pHost, bootnodes),
    ], this.prefix(node));
    await waitFor(`${node.execProc} /health`, async () => ((await getJson(`${node.execUrl}/health`)).status === 'healthy' ? true : undefined), 60_000);
    node.execAddrs = await this.listenAddrs(node.execProc);
  }

  /** Starts (or restarts) the beacon; waits until it is healthy and for its listen addresses. */
  async startBeacon(node: NetNode, bootnodes: readonly string[]): Promise<void> {
    this.start(node.beaconProc, [
      'node', 'beacon', '--genesis', this.genesisPath, '--data-dir', join(node.dataDir, 'beacon'),
      '--host', node.place.bindHost, '--port', String(node.ports.beacon), '--execution-url', node.localExecUrl,
      ...this.p2pFlags(node.ports.beaconP2p, node.place.p2pHost, bootnodes),
    ], this.prefix(node));
    await waitFor(`${node.beaconProc} health`, async () => ((await getJson(`${node.beaconUrl}/beacon/v1/node/health`)).status === 'healthy' ? true : undefined), 60_000);
    node.beaconAddrs = await this.listenAddrs(node.beaconProc);
  }

  /** Starts (or restarts, same data dir) validator `i` against the node's beacon. */
  startValidator(node: NetNode, i: number): void {
    this.start(node.validatorProc(i), [
      'node', 'validator',
      '--keystore', join(this.net, 'keystores', `validator-${i}.json`),
      '--genesis', this.genesisPath,
      '--beacon-url', node.localBeaconUrl,
      '--token-file', join(node.dataDir, 'beacon', 'validator-token'),
      '--data-dir', join(node.dataDir, `validator-${i}`),
      '--metrics-port', '0',
    ], this.prefix(node));
  }

  /** Execution then beacon, bootstrapped from `boot`'s layers (validators not started). */
  async startLayers(node: NetNode, boot: readonly NetNode[]): Promise<void> {
    await this.startExecution(node, boot.flatMap((b) => b.execAddrs));
    await this.startBeacon(node, boot.flatMap((b) => b.beaconAddrs));
  }

  /** Starts the node's validators. */
  startValidators(node: NetNode): void {
    for (const i of node.validators) this.startValidator(node, i);
  }

  /** SIGKILLs the node's execution and beacon (validators keep running). */
  async killLayers(node: NetNode): Promise<void> {
    await Promise.all([this.kill(node.execProc), this.kill(node.beaconProc)]);
  }

  /** The beacon's head with its checkpoints. */
  async head(node: NetNode): Promise<BeaconHead> {
    return (await getJson(`${node.beaconUrl}/api/v1/beacon/head`)).data as BeaconHead;
  }

  /** The beacon's `/api/v1/p2p/peers` list. */
  async beaconPeers(node: NetNode): Promise<PeerEntry[]> {
    const r = await getJson(`${node.beaconUrl}/api/v1/p2p/peers`);
    const peers = r.data?.peers ?? r.peers;
    if (!Array.isArray(peers)) throw new Error(`${node.beaconProc} /api/v1/p2p/peers: ${JSON.stringify(r)}`);
    return peers as PeerEntry[];
  }

  /** The value of an unlabelled counter or gauge on `url`'s `/metrics` (0 when absent: counters start unexported). */
  async metric(url: string, name: string): Promise<number> {
    const r = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5_000) });
    const line = (await r.text()).split('\n').find((l) => l.startsWith(`${name} `));
    return line ? Number(line.slice(name.length + 1)) : 0;
  }

  /** Execution's `/health` peer count. */
  async execPeerCount(node: NetNode): Promise<number> {
    return (await getJson(`${node.execUrl}/health`)).peers as number;
  }

  /** Waits until every node's beacon and execution has at least `min` peers. */
  async waitPeers(nodes: readonly NetNode[], min: number, ms: number): Promise<void> {
    for (const n of nodes) {
      await waitFor(`${n.beaconProc} to have ≥ ${min} peers`, async () => ((await this.beaconPeers(n)).length >= min ? true : undefined), ms);
      await waitFor(`${n.execProc} to have ≥ ${min} peers`, async () => ((await this.execPeerCount(n)) >= min ? true : undefined), ms);
    }
  }

  /** Execution's canonical block at height `n`, or undefined when it has none. */
  async execBlock(node: NetNode, n: number | string): Promise<ExecBlock | undefined> {
    const r = await getJson(`${node.execUrl}/api/v1/blocks/${n}`);
    if (r.success === false && r.error?.code === 'NOT_FOUND') return undefined;
    if (!r.data) throw new Error(`${node.execProc} GET blocks/${n}: ${JSON.stringify(r)}`);
    return r.data as ExecBlock;
  }

  /**
   * Waits until every node reports the same beacon head root at once and `ok` holds for it
   * (heads move every slot, so agreement is looked for again until the deadline).
   */
  async waitSameHead(nodes: readonly NetNode[], what: string, ok: (h: BeaconHead) => boolean, ms: number): Promise<BeaconHead> {
    let last: BeaconHead[] = [];
    try {
      return await waitFor(what, async () => {
        const heads = await Promise.all(nodes.map((n) => this.head(n)));
        last = heads;
        const h0 = heads[0]!;
        const same = heads.every((h) => h.root === h0.root && h.finalized.root === h0.finalized.root && h.finalized.epoch === h0.finalized.epoch);
        return same && ok(h0) ? h0 : undefined;
      }, ms, 200);
    } catch (err) {
      // Say which node differs in what (head or finality), not only that time ran out.
      const seen = last.map((h, i) => `${nodes[i]!.name}: head ${h.index}@${h.slot} ${h.root.slice(0, 10)}, justified ${h.justified.epoch}, finalized ${h.finalized.epoch} ${h.finalized.root.slice(0, 10)}`);
      throw new Error(`${(err as Error).message}; last seen: ${seen.join(' | ')}`);
    }
  }

  /**
   * Checks that `nodes` hold the same canonical block (hash and state root) at every height from
   * 1 to `upTo` (blocks at or below a common finalised height never change); returns the count.
   */
  async assertSameChain(nodes: readonly NetNode[], upTo: number): Promise<number> {
    for (let n = 1; n <= upTo; n++) {
      const blocks = await Promise.all(nodes.map((x) => this.execBlock(x, n)));
      const ref = blocks[0];
      assert.ok(ref, `${nodes[0]!.execProc} has no block ${n}`);
      for (let i = 1; i < nodes.length; i++) {
        const b = blocks[i];
        assert.ok(b, `${nodes[i]!.execProc} has no block ${n}`);
        assert.is(b.hash, ref.hash, `block ${n}: ${nodes[i]!.execProc} has ${b.hash}, ${nodes[0]!.execProc} ${ref.hash}`);
        assert.is(b.state_root, ref.state_root, `block ${n}: state root of ${nodes[i]!.execProc} ${b.state_root} ≠ ${nodes[0]!.execProc} ${ref.state_root}`);
      }
    }
    return upTo;
  }

  /** The lowest finalised execution height among `nodes`. */
  async commonFinalizedHeight(nodes: readonly NetNode[]): Promise<number> {
    const fin = await Promise.all(nodes.map(async (n) => (await this.execBlock(n, 'finalized'))?.number ?? 0));
    return Math.min(...fin);
  }

  /** Every "the beacon refused ..." line of every validator run, and every slashable vote a beacon saw. */
  misbehaviour(): string[] {
    const out: string[] = [];
    for (const n of this.nodes) {
      for (const i of n.validators) {
        for (const l of this.log(n.validatorProc(i), { allRuns: true })) if (/slashing protection refused/.test(l.msg)) out.push(`${n.validatorProc(i)}: ${JSON.stringify(l)}`);
      }
      for (const l of this.log(n.beaconProc, { allRuns: true })) if (l.msg === 'slashable attestation') out.push(`${n.beaconProc}: ${JSON.stringify(l)}`);
    }
    return out;
  }

  /**
   * What each validator signed, from its own logs (all runs): conflicting messages are two
   * blocks at one slot with different hashes, two votes for one target epoch with different
   * heads, or one vote surrounding another. Returns one line per conflict.
   */
  conflictingSignatures(): string[] {
    const out: string[] = [];
    for (const n of this.nodes) {
      for (const i of n.validators) {
        const name = n.validatorProc(i);
        const blocks = new Map<number, string>();
        const votes: Array<{ source: number; target: number; head: string }> = [];
        for (const l of this.log(name, { allRuns: true })) {
          if (l.msg === 'block proposed') {
            const slot = l.slot as number;
            const prev = blocks.get(slot);
            if (prev !== undefined && prev !== l.block_hash) out.push(`${name}: two blocks at slot ${slot}: ${prev}, ${String(l.block_hash)}`);
            blocks.set(slot, l.block_hash as string);
          } else if (l.msg === 'attestation sent') {
            const v = { source: l.source as number, target: l.target as number, head: l.head as string };
            for (const w of votes) {
              if (w.target === v.target && w.head !== v.head) out.push(`${name}: double vote for target ${v.target}`);
              if ((w.source < v.source && v.target < w.target) || (v.source < w.source && w.target < v.target)) out.push(`${name}: surround vote ${JSON.stringify(w)} / ${JSON.stringify(v)}`);
            }
            votes.push(v);
          }
        }
      }
    }
    return out;
  }

  /**
   * Kills every validator, exports its slashing-protection history (EIP-3076) and checks it has
   * no slot or target epoch signed twice with different signing roots.
   */
  async assertSlashingProtectionClean(): Promise<void> {
    for (const n of this.nodes) {
      for (const i of n.validators) {
        const name = n.validatorProc(i);
        if (this.running(name)) await this.kill(name);
        const doc = expectJsonOk(await runCli(['node', 'validator', 'slashing-protection', 'export', '--data-dir', join(n.dataDir, `validator-${i}`), '--genesis', this.genesisPath, '--json'], this.env));
        for (const rec of doc.data as Array<{ signed_blocks: Array<{ slot: string; signing_root?: string }>; signed_attestations: Array<{ target_epoch: string; signing_root?: string }> }>) {
          const bySlot = new Map<string, string | undefined>();
          for (const b of rec.signed_blocks) {
            if (bySlot.has(b.slot)) assert.is(b.signing_root, bySlot.get(b.slot), `${name}: two blocks signed at slot ${b.slot}`);
            bySlot.set(b.slot, b.signing_root);
          }
          const byTarget = new Map<string, string | undefined>();
          for (const a of rec.signed_attestations) {
            if (byTarget.has(a.target_epoch)) assert.is(a.signing_root, byTarget.get(a.target_epoch), `${name}: two votes signed for target ${a.target_epoch}`);
            byTarget.set(a.target_epoch, a.signing_root);
          }
        }
      }
    }
  }

  /** Sends `value` wei from prefunded account 0 to `to` through `node`'s REST; returns the hash. */
  async sendTransfer(node: NetNode, to: string, value: bigint): Promise<string> {
    const sent = expectJsonOk(await runCli([
      'tx', 'send', '--from', join(this.net, 'accounts', 'account-0.json'), '--to', to, '--value', String(value),
      '--execution-url', node.execUrl, '--json',
    ], { ...this.env, SVC_PASSWORD: DEVNET_KEYSTORE_PASSWORD }));
    assert.match(sent.hash, /^0x[0-9a-f]{64}$/);
    return sent.hash as string;
  }
}

/** A multi-node network on one fresh genesis: see withGenesisNetwork. */
export async function withP2pNet<T>(opts: { validators: number }, fn: (net: P2pNet) => Promise<T>): Promise<T> {
  return withGenesisNetwork(opts.validators, async (dir) => new P2pNet(dir), fn);
}

/** Starts two producers (validators 0-1 and 2-3), meshed, with validators running. */
export async function startProducers(net: P2pNet): Promise<[NetNode, NetNode]> {
  const p0 = await net.addNode('p0', [0, 1]);
  const p1 = await net.addNode('p1', [2, 3]);
  await net.startLayers(p0, []);
  await net.startLayers(p1, [p0]);
  await net.waitPeers([p0, p1], 1, 60_000);
  net.startValidators(p0);
  net.startValidators(p1);
  return [p0, p1];
}
