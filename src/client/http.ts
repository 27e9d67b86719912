/** Fetch plumbing shared by the HTTP clients: one exchange, the error envelope, transport faults. */
import { JSON_MEDIA_TYPE, SSZ_MEDIA_TYPE } from '../api/media.js';

/** The answer of one exchange: status and the body parsed as JSON (undefined when it is not JSON). */
export interface JsonExchange {
  res: Response;
  json: unknown;
}

/**
 * Sends one request with a deadline and parses the answer as JSON; transport failures reject as
 * fetch does. A Uint8Array body is sent as SSZ bytes (application/octet-stream), anything else as JSON.
 */
export async function exchangeJson(url: string, method: string, body: unknown, headers: Record<string, string>, timeoutMs: number): Promise<JsonExchange> {
  const init: RequestInit = { method, headers: { accept: JSON_MEDIA_TYPE, ...headers }, signal: AbortSignal.timeout(timeoutMs) };
  if (body instanceof Uint8Array) {
    init.body = body;
    (init.headers as Record<string, string>)['content-type'] = SSZ_MEDIA_TYPE;
  } else if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = JSON_MEDIA_TYPE;
  }
  return readJson(await fetch(url, init));
}

/** The answer with its body parsed as JSON (undefined when it is empty or not JSON). */
export async function readJson(res: Response): Promise<JsonExchange> {
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { res, json };
}

/** `{success: false, error: {code, message}}` → its code and message. */
export function envelopeError(v: unknown): { code: string; message: string } | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const err = (v as { error?: unknown }).error;
  if (typeof err !== 'object' || err === null) return undefined;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code !== 'string' || typeof message !== 'string') return undefined;
  return { code, message };
}

/** True when fetch gave up on its deadline. */
export function isTimeout(err: unknown): boolean {
  const name = (err as { name?: string }).name;
  return name === 'TimeoutError' || name === 'AbortError';
}

/** A short human reason for a transport failure (connection refused, host not found, …). */
export function transportReason(err: unknown, baseUrl: string): string {
  const e = err as { message?: string; cause?: { code?: string; message?: string } };
  const code = e.cause?.code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'connection reset';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'host unreachable';
  if (e.cause?.message === 'bad port') return `fetch refuses port ${new URL(baseUrl).port || 'of this URL'}: it is on the blocked-ports list`;
  return e.cause?.message ?? e.message ?? String(err);
}
