/**
 * Choosing loopback ports for processes that are started later (a devnet's nodes, or a test's):
 * the preferred port when it is free, else a free port below the kernel's ephemeral range.
 *
 * "Free now" is checked by binding, and the port is then handed to a process that binds it
 * seconds later. Two things can take it in between, and both are closed here:
 * - an outgoing connection's local port: the kernel picks those from the ephemeral range
 *   (32768–60999 on Linux), so ports are chosen below it, never with `listen(0)`;
 * - another svc process choosing at the same moment (two devnets, or parallel test files): every
 *   chosen port is reserved by an exclusive lock file naming the chooser's pid in a directory
 *   shared by the machine's svc processes; a reservation whose pid is gone is taken over.
 */
import { mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Lowest port chosen when a preferred one is taken (above the registered services' usual ports). */
export const PORT_RANGE_FIRST = 20_000;
/** Highest port chosen: the last one below Linux's default ephemeral range (32768–60999). */
export const PORT_RANGE_LAST = 32_767;

/** Where reservations live: one file per port, holding the reserving pid. */
export function reservationDir(): string {
  return process.env.SVC_PORT_RESERVATIONS ?? join(tmpdir(), 'svc-port-reservations');
}

const mine = new Set<string>();
let cleanupInstalled = false;

function pidAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function releaseMine(): void {
  for (const f of mine) {
    try {
      unlinkSync(f);
    } catch {
      // Already gone (taken over after we were presumed dead, or cleaned by hand).
    }
  }
  mine.clear();
}

/**
 * Reserves `port` for this process: true when it created the reservation (or took over one whose
 * pid is dead, or `reuseOwn` and this process holds it), false when another live process (or,
 * without `reuseOwn`, this one) holds it. Reservations are dropped when this process exits; the
 * ports stay bound by the processes they were chosen for.
 */
export function reservePort(port: number, reuseOwn = false): boolean {
  const dir = reservationDir();
  mkdirSync(dir, { recursive: true });
  const file = join(dir, String(port));
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      mine.add(file);
      if (!cleanupInstalled) {
        cleanupInstalled = true;
        process.once('exit', releaseMine);
      }
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let holder: number;
    try {
      holder = Number(readFileSync(file, 'utf8'));
    } catch {
      continue; // released between our write and our read: try again
    }
    if (holder === process.pid) return reuseOwn;
    if (pidAlive(holder)) return false;
    // Stale: exactly one contender can rename the stale file away (the others get ENOENT), so
    // two processes never both take over the same reservation.
    const aside = `${file}.stale-${process.pid}`;
    try {
      renameSync(file, aside);
      unlinkSync(aside);
    } catch {
      // Someone else moved it first; the next attempt sees their reservation or none.
    }
  }
  return false;
}

/** Whether `port` can be bound on `host` right now. */
export function portFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, host, () => s.close(() => resolve(true)));
  });
}

/** Reserves `port` when no other svc process holds it and it can be bound now. */
async function claim(port: number, host: string, reuseOwn: boolean): Promise<boolean> {
  if (!reservePort(port, reuseOwn)) return false;
  if (await portFree(port, host)) return true;
  // Bound by something that is not an svc chooser: leave the reservation so nobody else tries it
  // until we exit, which costs nothing.
  return false;
}

/**
 * A free port of [PORT_RANGE_FIRST, PORT_RANGE_LAST], reserved for this process, not in `avoid`.
 * The scan starts at a random offset so that concurrent choosers rarely contend.
 */
export async function anyFreePort(host = '127.0.0.1', avoid: readonly number[] = []): Promise<number> {
  const size = PORT_RANGE_LAST - PORT_RANGE_FIRST + 1;
  const start = Math.floor(Math.random() * size);
  for (let i = 0; i < size; i++) {
    const port = PORT_RANGE_FIRST + ((start + i) % size);
    if (avoid.includes(port)) continue;
    if (await claim(port, host, false)) return port;
  }
  throw new Error(`no free port between ${PORT_RANGE_FIRST} and ${PORT_RANGE_LAST} on ${host}`);
}

/**
 * One port per entry of `preferred`: that port when it is free, not reserved by another process
 * and not already chosen, else a free port below the ephemeral range. A preferred port this
 * process reserved earlier is its own to reuse (a devnet prepared again in one process keeps its
 * ports). The nodes still fail clearly if something outside svc binds a port between this choice
 * and their start.
 */
export async function choosePorts(preferred: readonly number[]): Promise<number[]> {
  const chosen: number[] = [];
  for (const p of preferred) {
    if (p > 0 && !chosen.includes(p) && (await claim(p, '127.0.0.1', true))) {
      chosen.push(p);
      continue;
    }
    chosen.push(await anyFreePort('127.0.0.1', [...chosen, ...preferred]));
  }
  return chosen;
}
