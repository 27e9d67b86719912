/** Benchmark entry (`npm run bench -- [--seconds N] [--json]`): prints tables, or one JSON document with --json. */
import { runCryptoBench } from './crypto.js';
import { formatMachine, machineInfo } from './harness.js';

interface BenchArgs {
  seconds: number;
  json: boolean;
}

/** Parses `--seconds N` (or `--seconds=N`, default 1) and `--json`. */
function parseBenchArgs(argv: readonly string[]): BenchArgs {
  const args: BenchArgs = { seconds: 1, json: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--json') args.json = true;
    else if (arg === '--seconds' || arg.startsWith('--seconds=')) {
      const raw = arg === '--seconds' ? argv[++i] : arg.slice('--seconds='.length);
      const n = Number(raw);
      if (!Number.isFinite(n) || n <= 0) throw new Error(`--seconds needs a positive number, got ${raw ?? 'nothing'}`);
      args.seconds = n;
    } else throw new Error(`unknown argument ${arg} (expected --seconds N, --json)`);
  }
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
const crypto = await runCryptoBench({ seconds: args.seconds, print: !args.json });
if (args.json) console.log(JSON.stringify({ date: new Date().toISOString(), machine, seconds: args.seconds, crypto }, null, 2));
