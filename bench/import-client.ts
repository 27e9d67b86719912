/**
 * Child process that plays the beacon node of the engine REST import rows (bench/execution.ts):
 * it POSTs a block to newPayload and parses the answer in a process of its own, as a beacon
 * does, so the node's main thread does only the node's work and the client's CPU is counted
 * apart. Receives each block's bodies before its runs (`ImportClientInit`, untimed), then for each
 * `ImportRequest` POSTs one body over node:http and answers with an `ImportReply`; exits when the
 * parent disconnects. An SSZ
 * block asks for the compact SSZ answer, reads every receipt's status and kind and parses the
 * receipts a bridge applies, as the beacon's engine client and bridge do; a JSON block takes the
 * JSON answer.
 */
import http from 'node:http';
import { decodeImportAnswer, receiptsWhere } from '../src/api/import-answer.js';
import { isBridgeOutcome } from '../src/node/beacon/bridge/store.js';

/** The bodies the child keeps for the runs of block `block` (its height): SSZ bytes and the spec's JSON. */
export interface ImportClientInit {
  block: number;
  ssz: Uint8Array;
  json: string;
}

/** One newPayload POST of block `block`'s body of `kind` to `url`. */
export interface ImportRequest {
  url: string;
  kind: 'ssz' | 'json';
  block: number;
}

/** The outcome of a POST: the answer's status and parsed figures, or why it failed, and the child's CPU for it. */
export type ImportReply =
  | { ok: true; gasUsed: number; stateRoot: string; canonical: boolean; seconds: number; cpuSeconds: number }
  | { ok: false; error: string; cpuSeconds: number };

const bodies = new Map<number, ImportClientInit>();

/** POSTs one body; resolves with the answer's status, media type and bytes. */
function post(url: URL, body: string | Uint8Array, type: string): Promise<{ status: number; type: string; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': type, accept: type, 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: (res.headers['content-type'] ?? '').split(';')[0]!.trim(), bytes: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function run(r: ImportRequest): Promise<ImportReply> {
  const cpu = process.cpuUsage();
  const cpuSeconds = (): number => {
    const d = process.cpuUsage(cpu);
    return (d.user + d.system) / 1e6;
  };
  try {
    const b = bodies.get(r.block);
    if (!b) throw new Error(`no bodies received for block ${r.block}`);
    const body = r.kind === 'ssz' ? b.ssz : b.json;
    const t = performance.now();
    const { status, type, bytes } = await post(new URL(r.url), body, r.kind === 'ssz' ? 'application/octet-stream' : 'application/json');
    if (status === 200 && type === 'application/octet-stream') {
      const answer = decodeImportAnswer(bytes);
      // As the beacon does: every receipt's outcome is read, and the bridge's receipts are parsed.
      receiptsWhere(answer, isBridgeOutcome);
      if (answer.outcomes.some((o) => o.status !== 1)) return { ok: false, error: 'a receipt failed', cpuSeconds: cpuSeconds() };
      return { ok: true, gasUsed: answer.gas_used, stateRoot: answer.state_root, canonical: answer.canonical, seconds: (performance.now() - t) / 1000, cpuSeconds: cpuSeconds() };
    }
    const json = JSON.parse(bytes.toString('utf8')) as { success: boolean; data?: { gas_used: number; state_root: string; canonical: boolean }; error?: { code: string; message: string } };
    const seconds = (performance.now() - t) / 1000;
    if (status !== 200 || !json.success || !json.data) return { ok: false, error: `newPayload answered ${status} ${JSON.stringify(json.error ?? json.data).slice(0, 300)}`, cpuSeconds: cpuSeconds() };
    return { ok: true, gasUsed: json.data.gas_used, stateRoot: json.data.state_root, canonical: json.data.canonical, seconds, cpuSeconds: cpuSeconds() };
  } catch (err) {
    return { ok: false, error: (err as Error).message, cpuSeconds: cpuSeconds() };
  }
}

process.on('disconnect', () => process.exit(0));
process.on('message', (m: ImportClientInit | ImportRequest) => {
  if ('ssz' in m) {
    // Advanced serialisation hands a Uint8Array over as a Buffer-less view: node:http takes either.
    bodies.set(m.block, m);
    process.send!('ready');
    return;
  }
  void run(m).then((reply) => process.send!(reply));
});
