/** WebSocket server plumbing the beacon's /ws and the execution's JSON-RPC socket share. */
import { WebSocket } from 'ws';

/** How long a client has to answer a close frame before its socket is cut. */
export const CLOSE_GRACE_MS = 1_000;

/**
 * Sends every socket a close frame (1001 going away), terminates those that have not closed
 * within `graceMs`, and resolves once every one is closed.
 */
export async function closeSockets(sockets: readonly WebSocket[], graceMs = CLOSE_GRACE_MS): Promise<void> {
  const gone = sockets.map((ws) => (ws.readyState === WebSocket.CLOSED ? Promise.resolve() : new Promise<void>((r) => ws.once('close', () => r()))));
  for (const ws of sockets) ws.close(1001, 'server shutting down');
  const grace = setTimeout(() => {
    for (const ws of sockets) if (ws.readyState !== WebSocket.CLOSED) ws.terminate();
  }, graceMs);
  await Promise.all(gone);
  clearTimeout(grace);
}
