/** HS256 JWT check for the engine API (as Ethereum's engine API: `iat` within ±60 s). */
import { createHmac, timingSafeEqual } from 'node:crypto';

const MAX_SKEW_SECONDS = 60;

/** Verifies `Authorization: Bearer <jwt>` against `secret`; false on any defect. */
export function verifyEngineJwt(header: string | undefined, secret: Uint8Array, nowSeconds = Math.floor(Date.now() / 1000)): boolean {
  const m = /^Bearer ([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/.exec(header ?? '');
  if (!m) return false;
  const [, h, p, s] = m as unknown as [string, string, string, string];
  try {
    const head = JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as { alg?: string };
    if (head.alg !== 'HS256') return false;
    const expected = createHmac('sha256', secret).update(`${h}.${p}`).digest();
    const got = Buffer.from(s, 'base64url');
    if (got.length !== expected.length || !timingSafeEqual(got, expected)) return false;
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as { iat?: unknown };
    return typeof claims.iat === 'number' && Math.abs(claims.iat - nowSeconds) <= MAX_SKEW_SECONDS;
  } catch {
    return false;
  }
}

/** Makes an engine JWT (for callers such as the beacon). */
export function signEngineJwt(secret: Uint8Array, nowSeconds = Math.floor(Date.now() / 1000)): string {
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const body = `${enc({ alg: 'HS256', typ: 'JWT' })}.${enc({ iat: nowSeconds })}`;
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
}
