/**
 * `svc bridge …` refuses bad input before touching the network, spec-style (one `Error:` line,
 * with --json the error envelope, exit 2 for usage, 1 otherwise), and with no devnet running and
 * no chain given names the flag to pass. The commands' work against live chains is in
 * test/e2e/bridge.test.ts.
 */
import { test } from 'uvu';
import { cliEnv, expectCliError, runCli, withTempDir } from '../helpers/cli.js';

const ADDR = '0x' + 'aa'.repeat(20);
const BID = '0x' + 'bb'.repeat(32);

test('send: bad amount, timeout and missing destination are usage errors (exit 2)', async () => {
  await withTempDir(async (dir) => {
    const env = cliEnv(dir);
    const base = ['bridge', 'send', '--to', ADDR, '--from', 'alice', '--chain', 'svc-b', '--json'];
    expectCliError(await runCli([...base, '--amount', 'five'], env), { exit: 2, code: 'USAGE', messageIncludes: ['--amount'], json: true });
    expectCliError(await runCli([...base, '--amount', '0'], env), { exit: 2, code: 'USAGE', messageIncludes: ['--amount'], json: true });
    expectCliError(await runCli([...base, '--amount', '1', '--timeout', '10y'], env), { exit: 2, code: 'USAGE', messageIncludes: ['--timeout'], json: true });
    expectCliError(await runCli([...base, '--amount', '1', '--timeout', '8d'], env), { exit: 2, code: 'USAGE', messageIncludes: ['7 days'], json: true });
    expectCliError(await runCli(['bridge', 'send', '--to', ADDR, '--from', 'alice', '--amount', '1', '--json'], env), { exit: 2, json: true });
    expectCliError(await runCli(['bridge', 'send', '--to', '0x12', '--from', 'alice', '--chain', 'svc-b', '--amount', '1', '--json'], env), { exit: 1, code: 'MALFORMED_INPUT', json: true });
  });
});

test('status and refund: a malformed BID id is MALFORMED_INPUT (exit 1); no chain to default to is NO_CHAIN', async () => {
  await withTempDir(async (dir) => {
    const env = cliEnv(dir);
    expectCliError(await runCli(['bridge', 'status', '0x1234', '--json'], env), { exit: 1, code: 'MALFORMED_INPUT', messageIncludes: ['BID id'], json: true });
    expectCliError(await runCli(['bridge', 'refund', 'nope', '--from', 'alice', '--json'], env), { exit: 1, code: 'MALFORMED_INPUT', json: true });
    expectCliError(await runCli(['bridge', 'status', BID, '--json'], env), { exit: 1, code: 'NO_CHAIN', messageIncludes: ['--on'], json: true });
    expectCliError(await runCli(['bridge', 'status', BID, '--on', 'http://127.0.0.1:1'], env), { exit: 2, code: 'USAGE', messageIncludes: ['BEACON_URL,EXECUTION_URL'], json: false });
  });
});

test('relay: --from is required; an unreachable chain is UNREACHABLE (exit 1)', async () => {
  await withTempDir(async (dir) => {
    const env = cliEnv(dir);
    expectCliError(await runCli(['bridge', 'relay', '--json'], env), { exit: 2, json: true });
    expectCliError(await runCli(['bridge', 'relay', '--from', 'x', '--source', 'http://127.0.0.1:1,http://127.0.0.1:1', '--dest', 'http://127.0.0.1:1,http://127.0.0.1:1', '--json'], env), {
      exit: 1,
      code: 'UNREACHABLE',
      json: true,
    });
    expectCliError(await runCli(['bridge', 'register', '--genesis', `${dir}/missing.json`, '--from', 'x', '--on', 'http://127.0.0.1:1,http://127.0.0.1:1', '--json'], env), { exit: 1, json: true });
  });
});

test.run();
