/** Choosing loopback ports for a devnet: the conventional ones when free, else any free port. */
import { createServer } from 'node:net';

/** Whether `port` can be bound on 127.0.0.1 right now. */
export function portFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, host, () => s.close(() => resolve(true)));
  });
}

/** A port the kernel says is free on 127.0.0.1. */
export function anyFreePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * One port per entry of `preferred`: that port when it is free and not already chosen, else a
 * free ephemeral port. Free now is not free forever; the nodes fail clearly if a port is taken
 * between this check and their bind.
 */
export async function choosePorts(preferred: readonly number[]): Promise<number[]> {
  const chosen: number[] = [];
  for (const p of preferred) {
    if (p > 0 && !chosen.includes(p) && (await portFree(p))) {
      chosen.push(p);
      continue;
    }
    let q: number;
    do q = await anyFreePort();
    while (chosen.includes(q) || preferred.includes(q));
    chosen.push(q);
  }
  return chosen;
}
