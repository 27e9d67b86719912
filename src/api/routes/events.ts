/**
 * The beacon's public event stream: a WebSocket upgrade of `GET /ws` (any query string), served by
 * the hub in src/node/beacon/events.ts and read by src/client/event-stream.ts. Each message is a
 * BeaconEvent (src/api/events.ts); the stream is public and read-only.
 */
import type { BeaconEvent } from '../events.js';
import { route } from './route.js';

/** The stream route; `Res` is one message of it. */
export const eventRoutes = {
  stream: route<BeaconEvent>()('GET', '/ws'),
} as const;
