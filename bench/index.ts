/**
 * Benchmark entry (`npm run bench -- [--only crypto|execution|state|ws|beacon|propose|devnet|flood|p2p|network|vm|light|bridge|validator] [--seconds N] [--profile DIR]
 * [--rest-client http|fetch] [--json]`): prints tables, or one JSON document with --json.
 */
import { runBeaconBench } from './beacon.js';
import { runBridgeBench } from './bridge.js';
import { runCryptoBench } from './crypto.js';
import { runDevnetBench } from './devnet.js';
import { type RestClient, runExecutionBench } from './execution.js';
import { runFloodBench } from './flood.js';
import { runLightBench } from './light.js';
import { formatMachine, machineInfo } from './harness.js';
import { runNetworkBench } from './network.js';
import { runP2pBench } from './p2p.js';
import { runProposeBench } from './propose.js';
import { runStateBench } from './state.js';
import { runValidatorBench } from './validator.js';
import { runVmBench } from './vm.js';
import { runWsBench } from './ws.js';

const SUITES = ['crypto', 'execution', 'state', 'ws', 'beacon', 'propose', 'devnet', 'flood', 'p2p', 'network', 'vm', 'light', 'bridge', 'validator'] as const;
type Suite = (typeof SUITES)[number];

interface BenchArgs {
  seconds: number;
  json: boolean;
  only: Set<Suite>;
  profileDir?: string;
  restClient: RestClient;
}

/**
 * Parses `--seconds N` (default 1; the ws suite publishes for max(3, N) s), `--only
 * crypto|execution|state|ws|beacon|propose|devnet|flood|p2p|network|vm|light|bridge` (repeatable or comma-separated; default all), `--profile DIR` (CPU
 * profiles of the execution phases), `--rest-client http|fetch` (the admission load generator)
 * and `--json`.
 */
function parseBenchArgs(argv: readonly string[]): BenchArgs {
  const args: BenchArgs = { seconds: 1, json: false, only: new Set(), restClient: 'http' };
  const value = (i: number, name: string): [string | undefined, number] => {
    const arg = argv[i]!;
    return arg === name ? [argv[i + 1], i + 1] : [arg.slice(name.length + 1), i];
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--json') args.json = true;
    else if (arg === '--seconds' || arg.startsWith('--seconds=')) {
      const [raw, j] = value(i, '--seconds');
      i = j;
      const n = Number(raw);
      if (!Number.isFinite(n) || n <= 0) throw new Error(`--seconds needs a positive number, got ${raw ?? 'nothing'}`);
      args.seconds = n;
    } else if (arg === '--only' || arg.startsWith('--only=')) {
      const [raw, j] = value(i, '--only');
      i = j;
      for (const s of (raw ?? '').split(',')) {
        if (!(SUITES as readonly string[]).includes(s)) throw new Error(`--only needs ${SUITES.join(' or ')}, got ${s || 'nothing'}`);
        args.only.add(s as Suite);
      }
    } else if (arg === '--profile' || arg.startsWith('--profile=')) {
      const [raw, j] = value(i, '--profile');
      i = j;
      if (!raw) throw new Error('--profile needs a directory');
      args.profileDir = raw;
    } else if (arg === '--rest-client' || arg.startsWith('--rest-client=')) {
      const [raw, j] = value(i, '--rest-client');
      i = j;
      if (raw !== 'http' && raw !== 'fetch') throw new Error(`--rest-client needs http or fetch, got ${raw ?? 'nothing'}`);
      args.restClient = raw;
    } else throw new Error(`unknown argument ${arg} (expected --only crypto|execution|state|ws|beacon|propose|devnet|flood|p2p|network|vm|light|bridge|validator, --seconds N, --profile DIR, --rest-client http|fetch, --json)`);
  }
  if (args.only.size === 0) for (const s of SUITES) args.only.add(s);
  return args;
}

let args: BenchArgs;
try {
  args = parseBenchArgs(process.argv.slice(2));
} catch (err) {
  console.error((err as Error).message);
  process.exit(2);
}
const machine = machineInfo();
if (!args.json) console.log(`${formatMachine(machine)}\n`);
const report: Record<string, unknown> = { date: new Date().toISOString(), machine, seconds: args.seconds };
if (args.only.has('crypto')) {
  report.crypto = await runCryptoBench({ seconds: args.seconds, print: !args.json });
  if (!args.json && (args.only.has('execution') || args.only.has('ws') || args.only.has('beacon'))) console.log('');
}
if (args.only.has('execution')) {
  const { results, details } = await runExecutionBench({ seconds: args.seconds, print: !args.json, profileDir: args.profileDir, restClient: args.restClient });
  report.execution = results;
  report.executionDetails = details;
  if (!args.json && (args.only.has('ws') || args.only.has('beacon'))) console.log('');
}
if (args.only.has('state')) {
  const { results, details } = await runStateBench({ print: !args.json });
  report.state = results;
  report.stateDetails = details;
  if (!args.json && (args.only.has('ws') || args.only.has('beacon'))) console.log('');
}
if (args.only.has('ws')) {
  report.ws = await runWsBench({ seconds: args.seconds, print: !args.json });
  if (!args.json && args.only.has('beacon')) console.log('');
}
if (args.only.has('beacon')) {
  const { results, details } = await runBeaconBench({ seconds: args.seconds, print: !args.json });
  report.beacon = results;
  report.beaconDetails = details;
  if (!args.json && (args.only.has('propose') || args.only.has('devnet'))) console.log('');
}
if (args.only.has('propose')) {
  const { results, details } = await runProposeBench({ print: !args.json, ...(args.profileDir === undefined ? {} : { profileDir: args.profileDir }) });
  report.propose = results;
  report.proposeDetails = details;
  if (!args.json && args.only.has('devnet')) console.log('');
}
if (args.only.has('devnet')) {
  const { results, details } = await runDevnetBench({ print: !args.json });
  report.devnet = results;
  report.devnetDetails = details;
  if (!args.json && args.only.has('flood')) console.log('');
}
if (args.only.has('flood')) {
  const { results, details } = await runFloodBench({ print: !args.json });
  report.flood = results;
  report.floodDetails = details;
  if (!args.json && args.only.has('p2p')) console.log('');
}
if (args.only.has('p2p')) {
  report.p2p = (await runP2pBench({ print: !args.json })).results;
  if (!args.json && args.only.has('network')) console.log('');
}
if (args.only.has('network')) {
  const { results, details } = await runNetworkBench({ seconds: args.seconds, print: !args.json });
  report.network = results;
  report.networkDetails = details;
  if (!args.json && args.only.has('vm')) console.log('');
}
if (args.only.has('vm')) {
  report.vm = await runVmBench({ seconds: args.seconds, print: !args.json });
  if (!args.json && args.only.has('light')) console.log('');
}
if (args.only.has('light')) {
  const { results, details } = await runLightBench({ print: !args.json });
  report.light = results;
  report.lightDetails = details;
  if (!args.json && args.only.has('bridge')) console.log('');
}
if (args.only.has('bridge')) {
  const { results, details } = await runBridgeBench({ print: !args.json });
  report.bridge = results;
  report.bridgeDetails = details;
  if (!args.json && args.only.has('validator')) console.log('');
}
if (args.only.has('validator')) {
  const { results, details } = await runValidatorBench({ print: !args.json });
  report.validator = results;
  report.validatorDetails = details;
}
if (args.json) console.log(JSON.stringify(report, null, 2));
