/**
 * Bridge suite (`npm run bench -- --only bridge`): two devnets bridged on this machine (A and B,
 * 4 validators each, default 2 s slots and 2-slot epochs), a relayer (`svc bridge relay`) with a
 * wallet on each, and one lock on A sent through `svc bridge send`. Timed, each beside the floor
 * the protocol allows (ratio < 1 is inside it):
 * - BID registered → 2/3 of the stake signed (beacon history), against one slot (validator duty);
 * - lock → FINALIZED on A, against three epochs of A (the lock's block finalised with a finalised
 *   block above it, so the latest finalised header proves it);
 * - lock → release in a block on B, against that plus one relay interval and one slot of B;
 * - lock → completion on A, against twice the finality floor (A's, then B's for the release) plus
 *   two relay intervals and two slots: the release must itself be final before A completes.
 */
import { withBridgeDevnets, startRelayer, svcJson } from '../test/helpers/bridge-devnets.js';
import type { BidView } from '../src/api/bridge.js';
import { type BenchResult, formatTable } from './harness.js';

const VALIDATORS = 4;
/** Finality floor in epochs: the lock's epoch, the next one justified over it, one more for a finalised block above. */
const FINALITY_EPOCHS = 3;

async function bid(url: string, id: string): Promise<BidView | undefined> {
  const r = await fetch(`${url}/api/v1/bridge/bids/${id}`);
  if (r.status !== 200) return undefined;
  return ((await r.json()) as { data: BidView }).data;
}

async function until<T>(what: string, f: () => Promise<T | undefined>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`bridge bench: ${what} not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Runs the bridge suite and prints its table unless `print` is false. */
export async function runBridgeBench(opts: { print?: boolean } = {}): Promise<{ results: BenchResult[]; details: Record<string, unknown> }> {
  return withBridgeDevnets({ validators: VALIDATORS }, async (p) => {
    const slotMs = p.slotMs;
    const epochMs = slotMs * p.slotsPerEpoch;
    const intervalMs = slotMs;
    const relayer = startRelayer(['--from', p.b.account(1).wallet, '--source-from', p.a.account(2).wallet, '--source', p.a.dir, '--dest', p.b.dir], p.env);
    try {
      const recipient = '0x' + 'be'.repeat(20);
      const t0 = Date.now();
      const sent = await svcJson<{ bid: string }>(['bridge', 'send', '--on', p.a.dir, '--from', p.a.account(1).wallet, '--to', recipient, '--amount', '1', '--chain', 'svc-b', '--timeout', '10m'], p.env);
      const budget = 40 * epochMs + 60_000;
      const released = await until('the release on B', async () => ((await bid(p.b.beaconUrl, sent.bid))?.status === 'COMPLETED' ? Date.now() : undefined), budget);
      const completed = await until('the completion on A', async () => ((await bid(p.a.beaconUrl, sent.bid))?.status === 'COMPLETED' ? Date.now() : undefined), budget);
      const view = (await bid(p.a.beaconUrl, sent.bid))!;
      const at = (s: BidView['status']) => {
        const h = view.history.find((x) => x.status === s);
        return h ? Date.parse(h.at) : NaN;
      };
      const signMs = at('ATTESTED') - at('PENDING');
      const finalMs = at('FINALIZED') - t0;
      const releaseMs = released - t0;
      const completeMs = completed - t0;
      const finality = FINALITY_EPOCHS * epochMs;
      const limits = { sign: slotMs, final: finality, release: finality + intervalMs + slotMs, complete: 2 * finality + 2 * intervalMs + 2 * slotMs };
      const row = (name: string, ms: number, limit: number, why: string): BenchResult => ({ name, backend: `2 devnets × ${VALIDATORS} validators, ${slotMs / 1000} s slots`, unit: 's', value: ms / 1000, ratio: ms / limit, note: `${(ms / limit).toFixed(2)}x ${why}` });
      const results = [
        row('BID registered → 2/3 signed', signMs, limits.sign, `one slot (${limits.sign / 1000} s)`),
        row('lock → FINALIZED on A', finalMs, limits.final, `${FINALITY_EPOCHS} epochs (${limits.final / 1000} s)`),
        row('lock → release in a block on B', releaseMs, limits.release, `finality + interval + slot (${limits.release / 1000} s)`),
        row('lock → completion on A', completeMs, limits.complete, `2 × finality + 2 × (interval + slot) (${limits.complete / 1000} s)`),
      ];
      if (opts.print !== false) console.log(formatTable('Bridge: lock to completion on two devnets (relayer interval = one slot)', results));
      return { results, details: { slotMs, epochMs, intervalMs, bid: sent.bid, history: view.history, relayerActions: relayer.actions.length, dir: p.root } };
    } finally {
      await relayer.stop();
    }
  });
}
