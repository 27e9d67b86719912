/** The beacon node: storage, engine client, chain, P2P, REST routes, the /ws event stream, the slot timer. */
import { NodeError } from '../shared/errors.js';
import type { FastifyInstance } from 'fastify';
import { ClassicLevel } from 'classic-level';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { backendFromEnv, initSignatureBackend } from '../../core/crypto/mldsa.js';
import { BeaconError } from './errors.js';
import { type Genesis, genesisHash } from '../../core/genesis/genesis.js';
import { toHex } from '../../core/codec/bytes.js';
import type { Logger } from '../../util/log.js';
import { writeFileAtomic } from '../../util/fs.js';
import { createServer, ENGINE_BODY_LIMIT } from '../shared/http.js';
import { ChainStore, type Db } from '../shared/store.js';
import type { TlsPair } from '../shared/tls.js';
import { registerBeaconRoutes } from './api.js';
import { BeaconChain } from './chain.js';
import { type EngineClient, connectEngine } from './engine-client.js';
import { EventHub } from './events.js';
import { BeaconMetrics } from './metrics.js';
import { BeaconNetwork } from './p2p.js';
import { startP2p } from '../p2p/host.js';

/** The beacon's libp2p host (`--p2p-host`, `--p2p-port`, `--bootnodes`). */
export interface BeaconP2pOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Multiaddrs `/ip4/…/tcp/…/p2p/<peer id>`. */
  bootnodes: string[];
  /** Provisioned peer key (`--p2p-key-file`) instead of `<data-dir>/p2p/peer-key`. */
  keyFile?: string | undefined;
  /** Peer target (`--max-peers`). */
  maxPeers?: number | undefined;
}

/** How to run a beacon node. */
export interface BeaconNodeOptions {
  genesis: Genesis;
  dataDir: string;
  host: string;
  port: number;
  executionUrl: string;
  engineJwtSecret?: Uint8Array;
  /** File holding the validators' bearer token; created (random, 0600) when absent. */
  tokenFile?: string;
  /** PEM certificate and key: REST and `/ws` are then served over HTTPS/WSS only (see loadTlsPair). */
  tls?: TlsPair;
  /** How long to wait for an unreachable execution node at start (default 30 s). */
  executionWaitMs?: number;
  /** The P2P host; absent: the beacon runs alone (`--no-p2p`), with no peers to follow or feed. */
  p2p?: BeaconP2pOptions;
  log: Logger;
}

/** Default wait for the execution node at start. */
const EXECUTION_WAIT_MS = 30_000;

/** Reads the validator token file, or issues a new random token into it. */
export async function loadOrIssueToken(path: string): Promise<string> {
  if (existsSync(path)) {
    const token = (await readFile(path, 'utf8')).trim();
    if (token.length < 16) throw new BeaconError('INVALID_TOKEN', `validator token in ${path} is shorter than 16 characters`);
    return token;
  }
  const token = randomBytes(32).toString('hex');
  await writeFileAtomic(path, token + '\n');
  return token;
}

export class BeaconNode {
  private constructor(
    readonly chain: BeaconChain,
    readonly app: FastifyInstance,
    readonly events: EventHub,
    private readonly db: Db,
    readonly tokenFile: string,
    private readonly log: Logger,
    private readonly scheme: 'http' | 'https',
    /** The beacon on the P2P network; undefined with --no-p2p. */
    readonly net: BeaconNetwork | undefined,
    private readonly engine: EngineClient,
  ) {}

  /** Starts serving once the execution node answers (its registry is read at start; waits up to 30 s for it). */
  static async start(o: BeaconNodeOptions): Promise<BeaconNode> {
    const backend = await initSignatureBackend(backendFromEnv(), (m) => o.log.warn(m));
    o.log.info('signature backend', { backend: backend.name });
    // Built first: bad TLS material fails here, before anything is created or opened.
    let app: FastifyInstance;
    try {
      app = createServer(o.log, ENGINE_BODY_LIMIT, o.tls);
    } catch (err) {
      throw new NodeError('TLS_INVALID', `cannot serve TLS with the given certificate and key: ${(err as Error).message}`);
    }
    await mkdir(o.dataDir, { recursive: true });
    const tokenFile = o.tokenFile ?? join(o.dataDir, 'validator-token');
    const token = await loadOrIssueToken(tokenFile);
    const db = new ClassicLevel<string, string>(join(o.dataDir, 'beacon'), { keyEncoding: 'utf8', valueEncoding: 'utf8' }) as unknown as Db;
    try {
      await db.open();
    } catch (err) {
      throw new BeaconError('DB_OPEN_FAILED', `cannot open the beacon database in ${o.dataDir}: ${(err as { cause?: Error }).cause?.message ?? (err as Error).message}`);
    }
    const expected = { chain_id: o.genesis.chain_id, network_id: o.genesis.network_id, genesis_hash: toHex(genesisHash(o.genesis)) };
    let engine: EngineClient;
    try {
      // A URL other than http(s):// is refused here (INVALID_URL), before any waiting.
      engine = connectEngine(o.executionUrl.replace(/\/+$/, ''), expected, o.engineJwtSecret);
    } catch (err) {
      await db.close();
      throw err;
    }
    try {
      await engine.waitUntilReachable(o.executionWaitMs ?? EXECUTION_WAIT_MS, () => o.log.info('waiting for the execution node', { url: engine.baseUrl, up_to_seconds: (o.executionWaitMs ?? EXECUTION_WAIT_MS) / 1000 }));
      // Another chain's execution would reject every block or, worse, import this chain's
      // blocks onto its own state: refuse to start rather than run beside it.
      await engine.checkChain();
    } catch (err) {
      engine.close();
      await db.close();
      throw err;
    }
    const metrics = new BeaconMetrics();
    const events = EventHub.attach(app.server, { log: o.log, metrics });
    let chain: BeaconChain;
    try {
      chain = await BeaconChain.open({ genesis: o.genesis, store: new ChainStore(db), engine, events, metrics, log: o.log });
    } catch (err) {
      events.close();
      engine.close();
      await db.close();
      throw err;
    }
    // HTTP listens before P2P starts: a client (or test) that finds the node on the network, or
    // reads its `p2p listening` line, must find the REST port open, not refused.
    let net: BeaconNetwork | undefined;
    registerBeaconRoutes(app, { chain, engine, token, metrics, log: o.log, events, ...(o.p2p ? { net: () => net } : {}) });
    const closeAll = async (): Promise<void> => {
      events.close();
      await app.close().catch(() => undefined);
      engine.close();
      await db.close();
    };
    try {
      await app.listen({ host: o.host, port: o.port });
    } catch (err) {
      await closeAll();
      throw new BeaconError('LISTEN_FAILED', `cannot listen on ${o.host}:${o.port}: ${(err as Error).message}`);
    }
    if (o.p2p) {
      try {
        const host = await startP2p({ layer: 'beacon', host: o.p2p.host, port: o.p2p.port, bootnodes: o.p2p.bootnodes, keyFile: o.p2p.keyFile, maxPeers: o.p2p.maxPeers, dataDir: o.dataDir, genesisHash: expected.genesis_hash, slotMs: o.genesis.config.slot_seconds * 1000, chainCheck: 'layer', metrics: metrics.registry, log: o.log });
        // The host logs `p2p listening` with its peer id and multiaddrs.
        net = BeaconNetwork.attach({ host, chain, metrics, log: o.log });
      } catch (err) {
        await closeAll();
        throw err;
      }
    }
    const node = new BeaconNode(chain, app, events, db, tokenFile, o.log, o.tls ? 'https' : 'http', net, engine);
    chain.start();
    o.log.info('beacon node started', { url: node.url, head_slot: chain.head().slot, validators: chain.validators().length, token_file: tokenFile, p2p: net ? net.host.peerId : 'off', peers: net?.peerCount() ?? 0 });
    return node;
  }

  /** Base URL (`https://` when serving TLS; the event stream is then `wss://…/ws`). */
  get url(): string {
    const a = this.app.server.address() as AddressInfo | null;
    return a ? `${this.scheme}://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}` : '';
  }

  /** Stops P2P, the timer, the stream and the server, then closes storage. */
  async stop(): Promise<void> {
    // First: nothing arriving from peers may reach a chain whose storage is closing.
    await this.net?.stop().catch((err: Error) => this.log.warn('p2p stop failed', { error: err.message }));
    this.chain.stop();
    this.events.close();
    await this.app.close().catch(() => undefined);
    // A call still out to execution (up to 30 s) must not hold the shutdown or touch closed storage.
    this.engine.close();
    if (this.db.status === 'open') await this.db.close();
    this.log.info('beacon node stopped');
  }
}
