/**
 * A small lab of Linux network namespaces for partition tests (not a test file itself).
 *
 * Each host is a namespace with two links:
 *  - a data link (veth) to a bridge in a separate "switch" namespace, on 10.77.0.0/24: the only
 *    path between hosts, so taking a host's switch port down partitions it from the others;
 *  - a management link (veth) to the test's own namespace on its own /30, so the test keeps
 *    reaching every host's REST and beacon API while it is cut off.
 * Processes are started in a host with its `prefix` (`ip netns exec NS`, which execs, so a
 * SIGKILL reaches node itself). `writeHosts` gives every host the same hosts file: `ip netns exec`
 * bind-mounts /etc/netns/NS/hosts over /etc/hosts for the process, so names resolve by the lab's
 * table, not the machine's. Names are unique per run; `destroy` deletes the namespaces, the
 * management veths (deleting either end of a veth deletes the pair) and the /etc/netns
 * directories (`ip netns del` leaves those), and is safe to repeat.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';

const DATA_NET = '10.77.0';

/** One host of the lab. */
export interface LabHost {
  name: string;
  ns: string;
  /** Address on the data network (where peers reach it). */
  dataIp: string;
  /** Address of the host on its management link (where the test reaches it). */
  mgmtIp: string;
  /** Argv prefix that runs a command inside the host. */
  prefix: string[];
}

/** Network namespaces joined by a switch; hosts can be cut off and healed. */
export class NetnsLab {
  readonly hosts = new Map<string, LabHost>();
  private readonly namespaces: string[] = [];
  private readonly rootLinks: string[] = [];
  private readonly etcDirs: string[] = [];

  private constructor(
    private readonly ip: string,
    private readonly id: string,
  ) {}

  /** Where a node on `name` runs (its argv prefix), binds, and is reached: the test on the management link, peers on the data link. */
  placement(name: string): { prefix: string[]; apiHost: string; bindHost: string; p2pHost: string } {
    const host = this.hosts.get(name);
    if (!host) throw new Error(`no host ${name} in the lab`);
    return { prefix: host.prefix, apiHost: host.mgmtIp, bindHost: '0.0.0.0', p2pHost: host.dataIp };
  }

  private get switchNs(): string {
    return `svc${this.id}-sw`;
  }

  private run(args: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      execFile(this.ip, args, { timeout: 10_000 }, (err, _stdout, stderr) => (err ? reject(new Error(`ip ${args.join(' ')}: ${stderr.trim() || err.message}`)) : resolve()));
    });
  }

  /**
   * Creates the lab with `names` hosts, or returns why it cannot be made here (not root, no
   * iproute2, no namespace or veth support): the caller skips with that message.
   */
  static async create(names: readonly string[]): Promise<NetnsLab | string> {
    if (process.platform !== 'linux') return `network namespaces need Linux (this is ${process.platform})`;
    if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'network namespaces need root (ip netns add)';
    const ip = ['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip', '/bin/ip'].find((p) => existsSync(p));
    if (!ip) return 'iproute2 (ip) is not installed';
    const lab = new NetnsLab(ip, randomBytes(3).toString('hex'));
    try {
      await lab.build(names);
      return lab;
    } catch (err) {
      await lab.destroy();
      return `cannot build network namespaces: ${(err as Error).message}`;
    }
  }

  private async addNs(ns: string): Promise<void> {
    await this.run(['netns', 'add', ns]);
    this.namespaces.push(ns);
    await this.run(['-n', ns, 'link', 'set', 'lo', 'up']);
  }

  private async build(names: readonly string[]): Promise<void> {
    // A /30 per host for management, in a 10.x range picked per run so concurrent labs differ.
    const mgmtBlock = 100 + (parseInt(this.id.slice(0, 2), 16) % 100);
    await this.addNs(this.switchNs);
    await this.run(['-n', this.switchNs, 'link', 'add', 'br0', 'type', 'bridge']);
    await this.run(['-n', this.switchNs, 'link', 'set', 'br0', 'up']);
    for (const [k, name] of names.entries()) {
      const ns = `svc${this.id}-${name}`;
      await this.addNs(ns);
      const dataIp = `${DATA_NET}.${k + 1}`;
      await this.run(['link', 'add', 'data0', 'netns', ns, 'type', 'veth', 'peer', 'name', `port-${name}`, 'netns', this.switchNs]);
      await this.run(['-n', ns, 'addr', 'add', `${dataIp}/24`, 'dev', 'data0']);
      await this.run(['-n', ns, 'link', 'set', 'data0', 'up']);
      await this.run(['-n', this.switchNs, 'link', 'set', `port-${name}`, 'master', 'br0']);
      await this.run(['-n', this.switchNs, 'link', 'set', `port-${name}`, 'up']);
      const rootLink = `svc${this.id}m${k}`;
      const base = 4 * k;
      const rootIp = `10.${mgmtBlock}.${parseInt(this.id.slice(2, 4), 16)}.${base + 1}`;
      const mgmtIp = `10.${mgmtBlock}.${parseInt(this.id.slice(2, 4), 16)}.${base + 2}`;
      await this.run(['link', 'add', rootLink, 'type', 'veth', 'peer', 'name', 'mgmt0', 'netns', ns]);
      this.rootLinks.push(rootLink);
      await this.run(['addr', 'add', `${rootIp}/30`, 'dev', rootLink]);
      await this.run(['link', 'set', rootLink, 'up']);
      await this.run(['-n', ns, 'addr', 'add', `${mgmtIp}/30`, 'dev', 'mgmt0']);
      await this.run(['-n', ns, 'link', 'set', 'mgmt0', 'up']);
      this.hosts.set(name, { name, ns, dataIp, mgmtIp, prefix: [this.ip, 'netns', 'exec', ns] });
    }
  }

  private host(name: string): LabHost {
    const h = this.hosts.get(name);
    if (!h) throw new Error(`no host ${name} in the lab`);
    return h;
  }

  /** Cuts `name` off the data network (its switch port goes down; in-flight packets are lost, not refused). */
  async cut(name: string): Promise<void> {
    await this.run(['-n', this.switchNs, 'link', 'set', `port-${this.host(name).name}`, 'down']);
  }

  /** Puts `name` back on the data network. */
  async heal(name: string): Promise<void> {
    await this.run(['-n', this.switchNs, 'link', 'set', `port-${this.host(name).name}`, 'up']);
  }

  /**
   * Writes /etc/netns/NS/hosts for every host: localhost plus `names` (name → address), so a
   * process started with a host's `prefix` resolves those names through this file.
   */
  writeHosts(names: ReadonlyMap<string, string>): void {
    const body = ['127.0.0.1 localhost', '::1 localhost', ...[...names].map(([name, addr]) => `${addr} ${name}`)].join('\n') + '\n';
    for (const h of this.hosts.values()) {
      const dir = `/etc/netns/${h.ns}`;
      if (!this.etcDirs.includes(dir)) this.etcDirs.push(dir);
      mkdirSync(dir, { recursive: true });
      writeFileSync(`${dir}/hosts`, body);
    }
  }

  /** Deletes every namespace, management link and /etc/netns directory of the lab (errors ignored: best effort, repeatable). */
  async destroy(): Promise<void> {
    if (this.etcDirs.length > 0) {
      for (const d of this.etcDirs.splice(0)) rmSync(d, { recursive: true, force: true });
      // /etc/netns itself goes too once empty; another lab's directories keep it.
      try {
        rmdirSync('/etc/netns');
      } catch {
        // not empty, or already gone
      }
    }
    for (const l of this.rootLinks.splice(0)) await this.run(['link', 'del', l]).catch(() => undefined);
    for (const ns of this.namespaces.splice(0).reverse()) await this.run(['netns', 'del', ns]).catch(() => undefined);
  }
}

/** Runs `fn` with a lab of `names` hosts, destroyed afterwards; `onSkip` gets the reason when none can be made. */
export async function withNetnsLab<T>(names: readonly string[], fn: (lab: NetnsLab) => Promise<T>, onSkip: (reason: string) => void): Promise<T | undefined> {
  const lab = await NetnsLab.create(names);
  if (typeof lab === 'string') {
    onSkip(lab);
    return undefined;
  }
  try {
    return await fn(lab);
  } finally {
    await lab.destroy();
  }
}
