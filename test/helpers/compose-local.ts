/**
 * Runs a generated Compose file's `svc` services as local processes, for machines without a
 * container engine (not a test file itself). What the engine would provide is replaced, and
 * nothing else is touched. Both placements share:
 * - each named volume is a directory under the test's temp dir, mounted paths rewritten to it;
 * - each secret is its `file:` (relative to the Compose file), `/run/secrets/NAME` rewritten to it;
 * - `depends_on` is honoured: `service_completed_successfully` waits for exit 0,
 *   `service_healthy` runs the service's own healthcheck command, where the service runs, until
 *   it passes.
 * Only where a service runs differs:
 * - `netnsPlan`: each service in its own network namespace of a NetnsLab (test/helpers/netns.ts),
 *   with the Compose file's exact ports, listen addresses and references by service name, which
 *   resolve through the lab's hosts file to the service's namespace: nothing but paths rewritten;
 * - `loopbackPlan`: every service on loopback: its own listening ports (`--rest-port`, `--port`, …)
 *   become free ports, `--host`/`--p2p-host`/`--metrics-host` 127.0.0.1, and references to another
 *   service (`http://SERVICE:PORT`, `/dns4/SERVICE/tcp/PORT/…`) point at that service's free port,
 *   on 127.0.0.1 (URLs) or `localhost` (multiaddrs keep their DNS form, so DNS dialling is exercised).
 * Services of other images (Prometheus, Grafana) are not run; `skipped` lists them.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ComposeFile, ComposeService } from '../../src/devnet/export/compose.js';
import { REPO_ROOT } from './cli.js';
import type { NetnsLab } from './netns.js';
import { ProcessGroup, freePort, waitFor } from './network.js';

/** Flags whose value is a port the process itself listens on. */
const LISTEN_PORT_FLAGS = new Set(['--rest-port', '--rpc-port', '--port', '--p2p-port', '--metrics-port']);
/** Flags whose value is an interface the process listens on. */
const LISTEN_HOST_FLAGS = new Set(['--host', '--p2p-host', '--metrics-host']);
/** Container paths that must not survive into a local command. */
const CONTAINER_PATH = /^\/(svc|data|run\/secrets|app)(\/|$)/;

/** One service, ready to run locally. */
export interface LocalService {
  name: string;
  args: string[];
  env: Record<string, string>;
  /** The healthcheck command (argv), rewritten; undefined when the service has none. */
  health: string[] | undefined;
  dependsOn: NonNullable<ComposeService['depends_on']>;
  /** Argv prefix the service and its healthcheck run under (empty: the test's own namespace). */
  prefix: string[];
  /** Where the test reaches the service's listening ports. */
  address: string;
  /** Its listening ports: container port → port the test reaches it on at `address`. */
  ports: Map<number, number>;
}

/** The local form of every service of `file` whose image is `image`. */
export interface LocalPlan {
  services: Map<string, LocalService>;
  /** Services not run (another image), by name. */
  skipped: string[];
}

/** A service as the Compose file gives it, paths already local: what both placements start from. */
interface ParsedService {
  name: string;
  /** The command with volume and secret paths rewritten, nothing else. */
  args: string[];
  env: Record<string, string>;
  /** The healthcheck argv (without CMD), the image's /app pointing at this repository. */
  health: string[] | undefined;
  dependsOn: NonNullable<ComposeService['depends_on']>;
  /** The ports it listens on, as its command names them. */
  listens: number[];
}

/** Parses `file`'s services of `image`: volumes under `dir`, secrets relative to `composeDir`. */
function parseServices(file: ComposeFile, image: string, composeDir: string, dir: string): { parsed: ParsedService[]; names: string[]; skipped: string[] } {
  const names = Object.keys(file.services);
  const mine = names.filter((n) => file.services[n]!.image === image);
  const skipped = names.filter((n) => !mine.includes(n));
  const parsed = mine.map((name): ParsedService => {
    const s = file.services[name]!;
    const mounts: Array<[string, string]> = [];
    for (const v of s.volumes ?? []) {
      const [source, target] = v.split(':') as [string, string];
      const local = source.startsWith('.') || source.startsWith('/') ? resolve(composeDir, source) : join(dir, 'volumes', source);
      mkdirSync(local, { recursive: true });
      mounts.push([target, local]);
    }
    for (const sec of s.secrets ?? []) mounts.push([`/run/secrets/${sec}`, resolve(composeDir, file.secrets[sec]!.file)]);
    mounts.sort((a, b) => b[0].length - a[0].length);
    const path = (arg: string): string => {
      for (const [target, local] of mounts) if (arg === target || arg.startsWith(`${target}/`)) return local + arg.slice(target.length);
      return arg;
    };
    const raw = s.command ?? [];
    const listens: number[] = [];
    for (let i = 0; i < raw.length - 1; i++) if (LISTEN_PORT_FLAGS.has(raw[i]!)) listens.push(Number(raw[i + 1]));
    const test = s.healthcheck?.test;
    return {
      name,
      args: raw.map(path),
      env: { ...(s.environment ?? {}) },
      health: test ? test.slice(1).map((a) => a.replace(/^\/app\//, `${REPO_ROOT}/`)) : undefined,
      dependsOn: s.depends_on ?? {},
      listens,
    };
  });
  for (const p of parsed) for (const a of p.args) if (CONTAINER_PATH.test(a)) throw new Error(`${p.name}: argument ${a} names a container path that is not mounted`);
  return { parsed, names, skipped };
}

/**
 * Places `file`'s services of `image` in `lab`, one namespace per service (the lab's hosts are
 * taken in service order; the lab needs at least as many), and writes the lab's hosts file
 * mapping every service name to its namespace's data address. Commands keep their ports, listen
 * addresses and service names; only volume and secret paths change.
 */
export function netnsPlan(file: ComposeFile, image: string, composeDir: string, dir: string, lab: NetnsLab): LocalPlan {
  const { parsed, skipped } = parseServices(file, image, composeDir, dir);
  const hosts = [...lab.hosts.values()];
  if (hosts.length < parsed.length) throw new Error(`${parsed.length} services need as many namespaces; the lab has ${hosts.length}`);
  const services = new Map<string, LocalService>();
  const table = new Map<string, string>();
  parsed.forEach((p, k) => {
    const host = hosts[k]!;
    table.set(p.name, host.dataIp);
    services.set(p.name, { name: p.name, args: p.args, env: p.env, health: p.health, dependsOn: p.dependsOn, prefix: host.prefix, address: host.mgmtIp, ports: new Map(p.listens.map((port) => [port, port])) });
  });
  lab.writeHosts(table);
  return { services, skipped };
}

/**
 * Rewrites `file`'s services of `image` for loopback, volumes under `dir`, secrets relative to
 * `composeDir`; throws when an argument still names a service afterwards.
 */
export async function loopbackPlan(file: ComposeFile, image: string, composeDir: string, dir: string): Promise<LocalPlan> {
  const { parsed, names, skipped } = parseServices(file, image, composeDir, dir);
  // Every listening port of every service first: other services' arguments refer to them.
  const ports = new Map<string, Map<number, number>>();
  for (const p of parsed) {
    const own = new Map<number, number>();
    for (const port of p.listens) own.set(port, await freePort());
    ports.set(p.name, own);
  }
  const portOf = (service: string, port: number, where: string): number => {
    const local = ports.get(service)?.get(port);
    if (local === undefined) throw new Error(`${where} refers to ${service}:${port}, which no service listens on`);
    return local;
  };
  const refs = (arg: string, where: string): string =>
    arg
      .replace(/http:\/\/([a-z0-9-]+):(\d+)/g, (_m, host: string, port: string) => `http://127.0.0.1:${portOf(host, Number(port), where)}`)
      .replace(/\/dns4\/([a-z0-9-]+)\/tcp\/(\d+)/g, (_m, host: string, port: string) => `/dns4/localhost/tcp/${portOf(host, Number(port), where)}`);
  const services = new Map<string, LocalService>();
  for (const p of parsed) {
    const args = p.args.map((a, i) => {
      const flag = p.args[i - 1] ?? '';
      if (LISTEN_PORT_FLAGS.has(flag)) return String(portOf(p.name, Number(a), `${p.name} ${flag}`));
      if (LISTEN_HOST_FLAGS.has(flag)) return '127.0.0.1';
      return refs(a, `${p.name} ${flag}`);
    });
    for (const a of args) if (names.some((n) => a.includes(`//${n}:`) || a.includes(`/dns4/${n}/`))) throw new Error(`${p.name}: argument ${a} was not rewritten`);
    // The healthcheck probes the container's own loopback: here, the service's own free port.
    const health = p.health?.map((a) => refs(a.replace(/^http:\/\/127\.0\.0\.1:(\d+)/, (_m, port: string) => `http://${p.name}:${port}`), `${p.name} healthcheck`));
    services.set(p.name, { name: p.name, args, env: p.env, health, dependsOn: p.dependsOn, prefix: [], address: '127.0.0.1', ports: ports.get(p.name)! });
  }
  return { services, skipped };
}

/** Runs `argv` (node scripts only: the first element must be `node`) under `prefix` and resolves with its exit code. */
function runOnce(prefix: string[], argv: string[]): Promise<number | null> {
  if (argv[0] !== 'node') throw new Error(`healthcheck must run node, got ${argv[0]}`);
  const full = [...prefix, process.execPath, ...argv.slice(1)];
  return new Promise((resolve) => {
    const child = spawn(full[0]!, full.slice(1), { stdio: 'ignore' });
    child.once('exit', (code) => resolve(code));
    child.once('error', () => resolve(null));
  });
}

/**
 * Starts every service of `plan` in `group` in depends_on order (a service starts once each of its
 * dependencies meets its condition); `deadlineMs` bounds each wait. Resolves when all are started.
 */
export async function startLocal(plan: LocalPlan, group: ProcessGroup, deadlineMs: number): Promise<void> {
  const exited = new Map<string, Promise<number | null>>();
  const healthy = new Map<string, Promise<void>>();
  const started = new Map<string, Promise<void>>();
  const start = (name: string): Promise<void> => {
    const have = started.get(name);
    if (have) return have;
    const svc = plan.services.get(name);
    if (!svc) throw new Error(`no local service ${name}`);
    const p = (async () => {
      for (const [dep, { condition }] of Object.entries(svc.dependsOn)) {
        if (plan.skipped.includes(dep)) throw new Error(`${name} depends on ${dep}, which is not run locally`);
        await start(dep);
        if (condition === 'service_completed_successfully') {
          const code = await exited.get(dep)!;
          if (code !== 0) throw new Error(`${dep} exited with ${code}; ${name} depends on its success`);
        } else if (condition === 'service_healthy') {
          await healthOf(dep);
        }
      }
      const child = group.start(name, svc.args, { env: svc.env, prefix: svc.prefix });
      exited.set(name, new Promise((resolve) => child.once('exit', (code) => resolve(code))));
    })();
    started.set(name, p);
    return p;
  };
  const healthOf = (name: string): Promise<void> => {
    const have = healthy.get(name);
    if (have) return have;
    const svc = plan.services.get(name)!;
    if (!svc.health) throw new Error(`${name} has no healthcheck, yet a service waits for it to be healthy`);
    const argv = svc.health;
    const p = waitFor(`${name} healthcheck (${argv.join(' ')})`, async () => {
      if (!group.running(name)) throw new Error(`${name} is not running`);
      return (await runOnce(svc.prefix, argv)) === 0 ? true : undefined;
    }, deadlineMs, 500).then(() => undefined);
    healthy.set(name, p);
    return p;
  };
  await Promise.all([...plan.services.keys()].map(start));
}
