/** Reading devnet log files: the list, the last lines, and following new output. */
import { existsSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { devnetLayout } from './layout.js';
import { DevnetError, readManifest } from './manifest.js';

/** A process's log file. */
export interface LogFile {
  name: string;
  path: string;
}

/** The log files of the devnet in `dir`: every supervised process, then the supervisor's own. */
export function logFiles(dir: string): LogFile[] {
  const layout = devnetLayout(dir);
  const m = readManifest(layout.dir);
  if (!m) throw new DevnetError('DEVNET_NOT_FOUND', `no devnet in ${layout.dir} (start one with: svc devnet up --dir ${layout.dir})`);
  const files = m.processes.map((p) => ({ name: p.name, path: p.log }));
  if (existsSync(layout.supervisorLog)) files.push({ name: 'supervisor', path: layout.supervisorLog });
  return files;
}

/** Bytes read from the end of a file to find its last lines (then more, if that was not enough). */
const TAIL_CHUNK = 64 * 1024;

/** The last `n` lines of a file (empty when the file does not exist yet). */
export async function tailLines(path: string, n: number): Promise<string[]> {
  if (n === 0 || !existsSync(path)) return [];
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    let start = size;
    // Raw bytes, decoded once at the end: a chunk boundary can fall inside a multi-byte
    // character. A newline byte never occurs inside one, so counting them is safe.
    const chunks: Buffer[] = [];
    let newlines = 0;
    while (start > 0) {
      const len = Math.min(TAIL_CHUNK, start);
      start -= len;
      const buf = Buffer.alloc(len);
      await fh.read(buf, 0, len, start);
      chunks.unshift(buf);
      for (let i = buf.indexOf(0x0a); i !== -1; i = buf.indexOf(0x0a, i + 1)) newlines += 1;
      if (newlines > n) break;
    }
    const lines = Buffer.concat(chunks).toString('utf8').split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    return lines.slice(-n);
  } finally {
    await fh.close();
  }
}

/** Calls `write` with everything appended to `path` from now until `signal` aborts (a truncated, deleted and recreated, or replaced log is followed from its start). */
export async function followLog(path: string, write: (chunk: string) => void, signal: AbortSignal, everyMs = 200): Promise<void> {
  // The file is identified by its inode too: a log deleted and recreated, or replaced, may already
  // be longer than the old offset when it is next looked at.
  let ino: number | undefined;
  let offset = 0;
  if (existsSync(path)) ({ ino, size: offset } = await stat(path));
  while (!signal.aborted) {
    await new Promise<void>((resolve) => {
      const onAbort = () => (clearTimeout(t), resolve());
      const t = setTimeout(() => (signal.removeEventListener('abort', onAbort), resolve()), everyMs);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    if (!existsSync(path)) {
      ino = undefined;
      offset = 0;
      continue;
    }
    const st = await stat(path);
    if (st.ino !== ino || st.size < offset) offset = 0;
    ino = st.ino;
    const size = st.size;
    if (size === offset) continue;
    const fh = await open(path, 'r');
    try {
      const buf = Buffer.alloc(size - offset);
      await fh.read(buf, 0, buf.length, offset);
      offset = size;
      write(buf.toString('utf8'));
    } finally {
      await fh.close();
    }
  }
}
