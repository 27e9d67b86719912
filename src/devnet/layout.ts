/**
 * Where a devnet keeps its files. Data directories match `svc node all`'s layout, so a devnet can
 * be resumed in either mode (`--single-process` or one process per layer) on the same chain.
 */
import { join, resolve } from 'node:path';
import { MANIFEST_FILE } from './manifest.js';

/** Paths inside a devnet directory. */
export interface DevnetLayout {
  dir: string;
  genesisDir: string;
  genesis: string;
  keystores: string;
  data: string;
  logs: string;
  token: string;
  manifest: string;
  /** Output of a detached supervisor (NDJSON events and its own errors). */
  supervisorLog: string;
  /** Prometheus scrape configuration and alert rules for this devnet's ports (monitoring.ts). */
  monitoring: string;
}

/** The layout of the devnet in `dir`. */
export function devnetLayout(dir: string): DevnetLayout {
  const d = resolve(dir);
  return {
    dir: d,
    genesisDir: join(d, 'genesis'),
    genesis: join(d, 'genesis', 'genesis.json'),
    keystores: join(d, 'genesis', 'keystores'),
    data: join(d, 'data'),
    logs: join(d, 'logs'),
    token: join(d, 'validator-token'),
    manifest: join(d, MANIFEST_FILE),
    supervisorLog: join(d, 'supervisor.log'),
    monitoring: join(d, 'monitoring'),
  };
}

/** Data directory of the validator with this address (the name `svc node all` uses). */
export function validatorDataDir(layout: DevnetLayout, address: string): string {
  return join(layout.data, `validator-${address}`);
}

/**
 * Data directories of node `index`'s execution and beacon. Node 0 keeps `svc node all`'s layout
 * (data/execution, data/beacon), so a single-node devnet is resumable in either mode and a devnet
 * made before multi-node support resumes on the same chain; other nodes live in data/node-I/.
 */
export function nodeDataDirs(layout: DevnetLayout, index: number): { execution: string; beacon: string } {
  const base = index === 0 ? layout.data : join(layout.data, `node-${index}`);
  return { execution: join(base, 'execution'), beacon: join(base, 'beacon') };
}

/**
 * Data directory of node `index`'s packed validator process (`--validator-processes per-node`):
 * one slashing-protection database for all of that node's keys. Node 0's is `svc node all`'s
 * (DIR/data/validator), so a one-node devnet switches between single-process and packed processes
 * on the same history.
 */
export function nodeValidatorsDataDir(layout: DevnetLayout, index: number): string {
  return join(index === 0 ? layout.data : join(layout.data, `node-${index}`), 'validator');
}

/** Bearer token file of node `index`'s beacon: node 0 keeps DIR/validator-token; the others have their own. */
export function nodeTokenPath(layout: DevnetLayout, index: number): string {
  return index === 0 ? layout.token : join(layout.data, `node-${index}`, 'validator-token');
}

/** Supervised process names of node `index` (node 0's are plain `execution` and `beacon`, as before several nodes existed). */
export function nodeProcessNames(index: number): { execution: string; beacon: string } {
  return index === 0 ? { execution: 'execution', beacon: 'beacon' } : { execution: `execution-${index}`, beacon: `beacon-${index}` };
}

/** Log file of a supervised process. */
export function logPath(layout: DevnetLayout, name: string): string {
  return join(layout.logs, `${name}.log`);
}

/**
 * Everything `down --clean` removes (never anything else in the directory). `--fresh` keeps the
 * supervisor log: a detached supervisor is already writing its start-up there.
 */
export function devnetOwnedPaths(layout: DevnetLayout, opts: { keepSupervisorLog?: boolean } = {}): string[] {
  return [layout.genesisDir, layout.data, layout.logs, layout.token, layout.manifest, layout.monitoring, ...(opts.keepSupervisorLog ? [] : [layout.supervisorLog])];
}
