/** Plumbing shared by the HTTP clients: one exchange (node:http keep-alive, see util/http-client), the error envelope, transport faults. */
import { JSON_MEDIA_TYPE, SSZ_MEDIA_TYPE } from '../api/media.js';
import { type HttpAnswer, type HttpClient, HttpClientError, httpClientFor, jsonBody } from '../util/http-client.js';

/** Status line of an answer. */
export interface AnswerHead {
  status: number;
  /** 2xx. */
  ok: boolean;
  statusText: string;
}

/** The answer of one exchange: status and the body parsed as JSON (undefined when it is not JSON). */
export interface JsonExchange {
  res: AnswerHead;
  json: unknown;
}

/**
 * Sends one request with a deadline over the process's keep-alive connection to that origin (or
 * over `via`, a client of that origin a caller keeps to itself so it can close it) and returns
 * the raw answer; transport failures reject with HttpClientError.
 */
export function exchange(url: string, method: string, body: string | Uint8Array | undefined, headers: Record<string, string>, timeoutMs: number, via?: HttpClient): Promise<HttpAnswer> {
  const u = new URL(url);
  return (via ?? httpClientFor(u.origin)).request({ method, path: u.pathname + u.search, headers, body, timeoutMs });
}

/**
 * Sends one request with a deadline and parses the answer as JSON; transport failures reject with
 * HttpClientError. A Uint8Array body is sent as SSZ bytes (application/octet-stream), anything else as JSON.
 */
export async function exchangeJson(url: string, method: string, body: unknown, headers: Record<string, string>, timeoutMs: number): Promise<JsonExchange> {
  const h: Record<string, string> = { accept: JSON_MEDIA_TYPE, ...headers };
  let payload: string | Uint8Array | undefined;
  if (body instanceof Uint8Array) {
    payload = body;
    h['content-type'] = SSZ_MEDIA_TYPE;
  } else if (body !== undefined) {
    payload = JSON.stringify(body);
    h['content-type'] = JSON_MEDIA_TYPE;
  }
  return readJson(await exchange(url, method, payload, h, timeoutMs));
}

/** The answer with its body parsed as JSON (undefined when it is empty or not JSON). */
export function readJson(a: HttpAnswer): JsonExchange {
  return { res: { status: a.status, ok: a.ok, statusText: a.statusText }, json: jsonBody(a) };
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

/** True when the exchange gave up on its deadline. */
export function isTimeout(err: unknown): boolean {
  return err instanceof HttpClientError && err.code === 'HTTP_TIMEOUT';
}

/** A short human reason for a transport failure (connection refused, host not found, cut off, …). */
export function transportReason(err: unknown): string {
  if (err instanceof HttpClientError) return err.reason;
  return (err as { message?: string }).message ?? String(err);
}
