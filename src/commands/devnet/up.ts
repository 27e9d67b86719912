import { Flags } from '@oclif/core';
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { SvcCommand } from '../../cli/base.js';
import { MAX_GENESIS_VALIDATORS } from '../../genesis/build.js';
import { devnetLayout } from '../../devnet/layout.js';
import { DEVNET_KDF_MEMORY_KIB, type RunningDevnet, prepareDevnet, startDevnet } from '../../devnet/lifecycle.js';
import { DevnetError, type ValidatorProcesses, defaultDevnetDir, pidAlive, readManifest } from '../../devnet/manifest.js';
import { VALIDATOR_PROCESS_MODES } from '../../devnet/plan.js';
import { PRESETS } from '../../core/genesis/genesis.js';
import { type DevnetEvent, Observer } from '../../devnet/observer.js';
import { type StartedEvent, startedEvent, startedLines } from '../../devnet/summary.js';
import { LIGHT_PROCESS_FLAGS, RUN_JS } from '../../devnet/supervisor.js';
import { MAX_DEVNET_NODES } from '../../devnet/topology.js';
import { registerCounterparts } from '../../devnet/bridge.js';
import { parseTokens } from '../../cli/bridge-flags.js';
import { resolve } from 'node:path';

/** How long `--detach` waits for the network to come up (and, with --counterpart, both registrations). */
const DETACH_TIMEOUT_MS = 240_000;
/** Least wait for a registration's block (20 slots when longer). */
const REGISTER_TIMEOUT_MS = 60_000;

export default class DevnetUp extends SvcCommand {
  static override summary = 'Start (or resume) a local N-validator devnet: K nodes, F read-only followers, one validator process per node';
  static override description = [
    'Generates a devnet genesis from the public dev mnemonic (prefunded accounts, faucet, validator keys), bearer token and ports, writes DIR/devnet.json, starts every layer and waits until each is healthy. Other svc commands then target this devnet without URL flags.',
    'In a terminal it shows a live dashboard; without one, or with --json, it prints one JSON event per line (started, block, finalized, error, stopped). Ctrl-C or SIGTERM stops every process cleanly. --detach returns once the network is up and leaves it running (stop it with svc devnet down).',
    'With --nodes K the validators are spread round-robin over K producing nodes (validator i on node i mod K); --followers F adds read-only nodes. Every node knows the others\' peer ids in advance (written to devnet.json) and dials them as bootnodes.',
    'Each producing node runs one validator client holding all of its validators (process `validators`, `validators-I` on node I; one slashing-protection database per node). --validator-processes per-validator runs one client per validator instead (`validator-K`), as a network of separate operators would. A resumed devnet keeps the layout its slashing protection is in.',
    'Running up on a directory that holds a devnet resumes that chain where it stopped; --fresh deletes it and starts over. A process that crashes is reported and restarted once.',
    'Bridge: every new devnet allocates --bridge-reserve tokens (default 1000000) to the bridge. With --chain-id ID --counterpart DIR_A it becomes the counterpart of the running devnet in DIR_A: its validator keys derive from their own index range (so the two sets differ), its genesis lists DIR_A as a bridge counterpart, and once both are healthy its own genesis is registered on DIR_A (signed by the validators of DIR_A) before `started` is printed (docs/devnet.md, "Counterpart devnets").',
  ].join('\n');
  static override examples = [
    '<%= config.bin %> devnet up --validators 4',
    '<%= config.bin %> devnet up --validators 4 --detach --json',
    '<%= config.bin %> devnet up --validators 4 --nodes 2 --followers 1',
    '<%= config.bin %> devnet up --validators 64 --detach',
    '<%= config.bin %> devnet up --validators 4 --validator-processes per-validator',
    '<%= config.bin %> devnet up --validators 16 --slot-time 1 --single-process --dir ./net',
    '<%= config.bin %> devnet up --dir ./b --chain-id svc-b --counterpart ./a --detach',
  ];
  static override flags = {
    validators: Flags.integer({ description: 'number of validators (default 4 for a new chain; a resumed chain keeps its own)', min: 1, max: MAX_GENESIS_VALIDATORS }),
    dir: Flags.string({ description: 'devnet directory (default: $SVC_HOME/devnet)' }),
    'slot-time': Flags.integer({ description: `seconds per slot (new chain; default ${PRESETS.devnet.slot_seconds})`, min: 1, max: 3600 }),
    'slots-per-epoch': Flags.integer({ description: `slots per epoch (new chain; default ${PRESETS.devnet.slots_per_epoch})`, min: 1, max: 1024 }),
    accounts: Flags.integer({ description: 'prefunded accounts (new chain)', default: 10, min: 0, max: 1000 }),
    nodes: Flags.integer({ description: 'producing nodes (execution + beacon), validators spread round-robin across them (default 1, or the resumed devnet\'s)', min: 1, max: MAX_DEVNET_NODES }),
    followers: Flags.integer({ description: 'read-only nodes (execution + beacon, no validators) following the chain over P2P (default 0, or the resumed devnet\'s)', min: 0, max: MAX_DEVNET_NODES }),
    p2p: Flags.boolean({ description: 'run libp2p hosts on every node (--no-p2p: one node alone, as before P2P)', default: true, allowNo: true }),
    'validator-processes': Flags.string({ description: 'per-node: one validator client per producing node holding its validators (default for a new chain); per-validator: one client per validator (a resumed devnet keeps its own)', options: [...VALIDATOR_PROCESS_MODES] }),
    'single-process': Flags.boolean({ description: 'run every layer in one process (svc node all; one node only)' }),
    fresh: Flags.boolean({ description: 'delete the devnet in DIR and start a new chain' }),
    detach: Flags.boolean({ description: 'return once the network is up; leave it running in the background' }),
    'chain-id': Flags.string({ description: 'chain id of a new chain (default svc-devnet); its validator keys derive from their own index range, so two chain ids never share validators' }),
    counterpart: Flags.string({ description: 'directory of a running devnet to bridge with: a new devnet\'s genesis lists it as a counterpart, and once both are up this chain is registered on it (docs/bridge.md)', helpValue: 'DIR' }),
    'bridge-reserve': Flags.string({ description: 'tokens the bridge holds at genesis to pay releases from (new chain; default 1000000)', helpValue: 'TOKENS' }),
    'kdf-memory': Flags.integer({ description: `Argon2id memory in KiB of the devnet keystores (new chain; default ${DEVNET_KDF_MEMORY_KIB}: the keys and password are public)`, min: 64, max: 4 * 1024 * 1024, helpGroup: 'ADVANCED' }),
  };

  async run(): Promise<StartedEvent | undefined> {
    const { flags } = await this.parse(DevnetUp);
    const dir = devnetLayout(flags.dir ?? defaultDevnetDir()).dir;
    if (flags.detach) {
      const args = ['--accounts', String(flags.accounts)];
      if (flags.validators !== undefined) args.push('--validators', String(flags.validators));
      if (flags['slot-time'] !== undefined) args.push('--slot-time', String(flags['slot-time']));
      if (flags['slots-per-epoch'] !== undefined) args.push('--slots-per-epoch', String(flags['slots-per-epoch']));
      if (flags['kdf-memory'] !== undefined) args.push('--kdf-memory', String(flags['kdf-memory']));
      if (flags.nodes !== undefined) args.push('--nodes', String(flags.nodes));
      if (flags.followers !== undefined) args.push('--followers', String(flags.followers));
      if (!flags.p2p) args.push('--no-p2p');
      if (flags['single-process']) args.push('--single-process');
      if (flags['validator-processes'] !== undefined) args.push('--validator-processes', flags['validator-processes']);
      if (flags.fresh) args.push('--fresh');
      if (flags['chain-id'] !== undefined) args.push('--chain-id', flags['chain-id']);
      if (flags.counterpart !== undefined) args.push('--counterpart', resolve(flags.counterpart));
      if (flags['bridge-reserve'] !== undefined) args.push('--bridge-reserve', flags['bridge-reserve']);
      return this.detach(dir, args);
    }

    const prep = await prepareDevnet({
      dir,
      validators: flags.validators,
      accounts: flags.accounts,
      slotSeconds: flags['slot-time'],
      slotsPerEpoch: flags['slots-per-epoch'],
      nodes: flags.nodes,
      followers: flags.followers,
      p2p: flags.p2p,
      singleProcess: flags['single-process'] === true,
      ...(flags['validator-processes'] !== undefined ? { validatorProcesses: flags['validator-processes'] as ValidatorProcesses } : {}),
      fresh: flags.fresh === true,
      kdfMemoryKib: flags['kdf-memory'] ?? DEVNET_KDF_MEMORY_KIB,
      ...(flags['chain-id'] !== undefined ? { chainId: flags['chain-id'] } : {}),
      ...(flags.counterpart !== undefined ? { counterpart: flags.counterpart } : {}),
      ...(flags['bridge-reserve'] !== undefined ? { bridgeReserve: parseTokens(flags['bridge-reserve'], '--bridge-reserve') } : {}),
    });
    const ndjson = this.jsonEnabled() || !process.stdout.isTTY;
    const emit = (e: DevnetEvent | StartedEvent | { event: 'stopped'; time: string }) => {
      if (ndjson) process.stdout.write(JSON.stringify(e) + '\n');
    };
    if (!ndjson) this.note(`${prep.resumed ? 'Resuming' : 'Starting'} the devnet in ${dir} ...`);

    // A signal during start-up is honoured once start-up ends, so nothing already started is
    // orphaned. Listeners stay installed (not `once`): ink's signal-exit re-raises a signal it
    // sees no other listener for, which would kill this process before the nodes are stopped.
    // SIGHUP (terminal closed) stops the devnet like Ctrl-C.
    const stopSignal = new Promise<string>((resolve) => {
      for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => resolve(sig));
    });

    // The observer subscribes before the nodes are healthy, so blocks proposed while the last
    // validators are still starting are seen too; its events wait until `started` is printed.
    let running: RunningDevnet | undefined;
    const observer = new Observer(prep.manifest, () => running?.supervisor.processes() ?? [], !ndjson);
    const early: DevnetEvent[] = [];
    let live = false;
    observer.on('event', (e) => (live ? emit(e) : early.push(e)));
    observer.start();
    running = await startDevnet(prep, process.env).catch((err: Error) => {
      observer.stop();
      emit({ event: 'error', time: new Date().toISOString(), message: err.message });
      throw err;
    });
    // Both chains must know each other before a user can lock: register before announcing `started`.
    const counterpart = running.manifest.counterpart;
    if (counterpart) {
      const slotMs = prep.genesis.config.slot_seconds * 1000;
      const registrations = await registerCounterparts(running.manifest, prep.genesis, counterpart.dir, Math.max(REGISTER_TIMEOUT_MS, 20 * slotMs)).catch(async (err: Error) => {
        emit({ event: 'error', time: new Date().toISOString(), message: `bridge registration with ${counterpart.dir}: ${err.message}` });
        observer.stop();
        await running!.stop();
        throw err;
      });
      for (const r of registrations) observer.note('info', r.tx_hash ? `registered ${r.registered} (${r.genesis_hash}) on ${r.on} in ${r.tx_hash}` : `${r.registered} already a counterpart of ${r.on} (its genesis or an earlier registration)`);
    }
    const supervisor = running.supervisor;
    supervisor.on('change', () => observer.processesChanged());
    supervisor.on('crash', (c) => observer.note('crash', `${c.name} crashed (${c.signal ?? `exit ${c.code}`}); log: ${c.log}`, { process: c.name, log: c.log }));
    supervisor.on('restart', (r) => observer.note('restart', `${r.name} restarted (pid ${r.pid})`));
    supervisor.on('failed', (f) => observer.note('error', `${f.name} failed: ${f.reason}; log: ${f.log}`, { process: f.name, log: f.log }));
    observer.processesChanged();

    const started = startedEvent(running.manifest, prep.genesis, prep.resumed);
    emit(started);
    live = true;
    for (const e of early.splice(0)) emit(e);
    if (!ndjson) for (const line of startedLines(started)) this.log(line);
    observer.note('started', `${started.validators.length} validators up (${started.mode})`);
    const dashboard = ndjson ? undefined : (await import('../../devnet/dashboard-app.js')).renderDashboard(observer);

    const signal = await stopSignal;
    observer.note('info', `${signal}: stopping every process`);
    await running.stop();
    observer.stop();
    dashboard?.unmount();
    emit({ event: 'stopped', time: new Date().toISOString() });
    if (!ndjson) this.note(`Stopped. Resume with: svc devnet up --dir ${dir}`);
    return undefined;
  }

  /** Starts a supervisor (this command without --detach) in the background and waits until it reports the network up. */
  private async detach(dir: string, flagArgs: string[]): Promise<StartedEvent> {
    const layout = devnetLayout(dir);
    const existing = readManifest(dir);
    if (existing && pidAlive(existing.supervisor?.pid)) {
      throw new DevnetError('DEVNET_RUNNING', `a devnet is already running in ${dir} (supervisor pid ${existing.supervisor!.pid}); stop it with: svc devnet down --dir ${dir}`);
    }
    mkdirSync(dir, { recursive: true });
    const args = ['devnet', 'up', '--dir', dir, '--json', ...flagArgs];
    const fd = openSync(layout.supervisorLog, 'w');
    const child = spawn(process.execPath, [...LIGHT_PROCESS_FLAGS, RUN_JS, ...args], { stdio: ['ignore', fd, fd], detached: true, env: process.env });
    closeSync(fd);
    child.unref();
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let gone = false;
    void exited.then(() => (gone = true));
    const deadline = Date.now() + DETACH_TIMEOUT_MS;
    for (;;) {
      const started = lastStarted(layout.supervisorLog);
      if (started) {
        this.say(startedLines(started).join('\n'));
        this.say('');
        this.say(`Running in the background (supervisor pid ${child.pid}). Status: svc devnet status · logs: svc devnet logs beacon · stop: svc devnet down`);
        return started;
      }
      if (gone || Date.now() > deadline) {
        const failure = lastError(layout.supervisorLog);
        if (!gone) process.kill(child.pid!, 'SIGTERM');
        if (failure) throw new DevnetError(failure.code, `${failure.message} (supervisor log: ${layout.supervisorLog})`);
        throw new DevnetError('DEVNET_START_FAILED', `${gone ? `the supervisor exited (exit ${child.exitCode})` : `not up within ${DETACH_TIMEOUT_MS / 1000} s`}; see ${layout.supervisorLog}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** JSON documents in a supervisor log: NDJSON events, or the pretty-printed error envelope of a failed start. */
function events(path: string): Array<Record<string, unknown>> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  const out: Array<Record<string, unknown>> = [];
  let doc = '';
  for (const line of text.split('\n')) {
    if (!doc && !line.startsWith('{')) continue;
    doc += line + '\n';
    try {
      out.push(JSON.parse(doc) as Record<string, unknown>);
      doc = '';
    } catch {
      // not complete yet (a multi-line document, or a partial last line read again on the next poll)
    }
  }
  return out;
}

function lastStarted(path: string): StartedEvent | undefined {
  return events(path).find((e) => e.event === 'started') as StartedEvent | undefined;
}

/** The failure a detached supervisor reported last: its error envelope (with code) or error event. */
function lastError(path: string): { code: string; message: string } | undefined {
  const errs = events(path).filter((e) => e.event === 'error' || e.success === false);
  const last = errs[errs.length - 1];
  if (!last) return undefined;
  const env = last.error as { code?: unknown; message?: unknown } | undefined;
  const message = env?.message ?? last.message;
  if (typeof message !== 'string') return undefined;
  return { code: typeof env?.code === 'string' ? env.code : 'DEVNET_START_FAILED', message };
}
