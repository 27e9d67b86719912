/**
 * HTTP client for node-to-node calls (beacon → execution engine, validator → beacon): node:http or
 * node:https with one keep-alive agent per base URL. Global fetch (undici) cost about 4× the client
 * CPU per request on the 2-core devnet, CPU that competes with block production. Answers are
 * returned as status, media type and body bytes; every failure before a complete answer is an
 * HttpClientError with a machine code.
 */
import http from 'node:http';
import https from 'node:https';
import { SvcError } from '../core/errors.js';

/** Why no complete answer arrived. */
export type HttpClientErrorCode = 'HTTP_TIMEOUT' | 'HTTP_UNREACHABLE' | 'HTTP_ABORTED' | 'HTTP_TRUNCATED' | 'HTTP_BODY_TOO_LARGE' | 'HTTP_CLOSED';

/** A request that got no complete answer; `reason` is a short human cause (connection refused, …). */
export class HttpClientError extends SvcError<HttpClientErrorCode> {
  constructor(
    code: HttpClientErrorCode,
    message: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

/** One complete answer. `contentType` is the media type, lowercase, without parameters ('' when absent). */
export interface HttpAnswer {
  status: number;
  /** A 2xx status. */
  ok: boolean;
  statusText: string;
  contentType: string;
  body: Uint8Array;
}

/** The answer's body parsed as JSON: undefined when it is empty or not JSON. */
export function jsonBody(a: HttpAnswer): unknown {
  if (a.body.byteLength === 0) return undefined;
  try {
    return JSON.parse(Buffer.from(a.body.buffer, a.body.byteOffset, a.body.byteLength).toString('utf8'));
  } catch {
    return undefined;
  }
}

/** One request: a Uint8Array body goes as given (the caller sets its content-type), a string as UTF-8. */
export interface HttpRequest {
  method: string;
  /** Path and query, appended to the base URL's path. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Deadline of the whole exchange, answer body included. */
  timeoutMs: number;
  /** Aborts the request (HTTP_ABORTED) when it fires. */
  signal?: AbortSignal;
}

export interface HttpClientOptions {
  /** Largest answer body accepted (HTTP_BODY_TOO_LARGE beyond it), so a runaway peer cannot exhaust memory. */
  maxBodyBytes?: number;
  /** Connections kept per base URL. */
  maxSockets?: number;
  /** How long a kept connection may stay idle before this side closes it (default IDLE_MS). */
  idleMs?: number;
}

const DEFAULT_MAX_BODY_BYTES = 256 * 1024 * 1024;
/** How long a kept connection may stay idle (the agent destroys a free socket on its timeout). */
const IDLE_MS = 4_000;

const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'host unreachable',
};

/** A short human reason for a socket error. */
function reasonOf(err: Error): string {
  const code = (err as NodeJS.ErrnoException).code;
  return (code && REASONS[code]) ?? err.message;
}

/** Keep-alive HTTP(S) client bound to one base URL (`http://host:port/prefix`). */
export class HttpClient {
  readonly baseUrl: string;
  private readonly url: URL;
  private readonly transport: typeof http | typeof https;
  private readonly agent: http.Agent;
  private readonly maxBodyBytes: number;
  /** Requests in flight, so `close` can end them. */
  private readonly inFlight = new Set<http.ClientRequest>();
  private closed = false;

  constructor(baseUrl: string, opts: HttpClientOptions = {}) {
    let url: URL;
    try {
      url = new URL(baseUrl);
    } catch {
      throw new SvcError('INVALID_URL', `not a URL: ${JSON.stringify(baseUrl)}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new SvcError('INVALID_URL', `only http:// and https:// URLs are supported, got ${JSON.stringify(baseUrl)}`);
    this.url = url;
    this.baseUrl = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
    this.transport = url.protocol === 'https:' ? https : http;
    // An idle connection is closed by this side after IDLE_MS, before a server closes it (Node's
    // default keep-alive timeout is 5 s): a request written on a connection the server is closing
    // would fail with a reset, and it is never re-sent.
    const agentOpts = { keepAlive: true, maxSockets: opts.maxSockets ?? 16, scheduling: 'lifo' as const, timeout: opts.idleMs ?? IDLE_MS };
    this.agent = url.protocol === 'https:' ? new https.Agent(agentOpts) : new http.Agent(agentOpts);
    this.maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  }

  /**
   * Sends one request and reads the whole answer; rejects only with HttpClientError. Never sends
   * a request twice: a connection reset cannot tell a request the server never read from one it
   * acted on (a POST of an attestation or a block must not go out again unasked).
   */
  request(r: HttpRequest): Promise<HttpAnswer> {
    const what = `${r.method} ${this.baseUrl}${r.path}`;
    if (this.closed) return Promise.reject(new HttpClientError('HTTP_CLOSED', `${what}: the client is shut down`, 'shutting down'));
    if (r.signal?.aborted) return Promise.reject(new HttpClientError('HTTP_ABORTED', `${what} was aborted`, 'aborted'));
    const body = typeof r.body === 'string' ? Buffer.from(r.body, 'utf8') : r.body;
    const headers: Record<string, string | number> = { ...r.headers };
    if (body !== undefined) headers['content-length'] = body.byteLength;
    return new Promise<HttpAnswer>((resolve, reject) => {
      let answered = false;
      let done = false;
      const req = this.transport.request({
        protocol: this.url.protocol,
        hostname: this.url.hostname.replace(/^\[|\]$/g, ''),
        port: this.url.port || undefined,
        path: this.url.pathname.replace(/\/+$/, '') + r.path,
        method: r.method,
        headers,
        agent: this.agent,
      });
      this.inFlight.add(req);
      const finish = (err: Error | undefined, answer?: HttpAnswer): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        r.signal?.removeEventListener('abort', onAbort);
        this.inFlight.delete(req);
        if (answer) return resolve(answer);
        req.destroy();
        reject(err);
      };
      const fail = (code: HttpClientErrorCode, reason: string, cause?: unknown): void =>
        finish(new HttpClientError(code, `${what}: ${reason}`, reason, cause === undefined ? undefined : { cause }));
      const timer = setTimeout(() => fail('HTTP_TIMEOUT', `no complete answer within ${r.timeoutMs} ms`), r.timeoutMs);
      const onAbort = (): void => fail('HTTP_ABORTED', 'aborted');
      r.signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', (err: Error) => {
        if (err instanceof HttpClientError) return finish(err);
        fail(answered ? 'HTTP_TRUNCATED' : 'HTTP_UNREACHABLE', answered ? `the answer was cut off (${reasonOf(err)})` : reasonOf(err), err);
      });
      req.on('response', (res: http.IncomingMessage) => {
        answered = true;
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.byteLength;
          if (size > this.maxBodyBytes) return fail('HTTP_BODY_TOO_LARGE', `the answer is larger than ${this.maxBodyBytes} bytes`);
          chunks.push(c);
        });
        // 'aborted' (Node 20) and a close without 'end' both mean the connection dropped mid-body.
        res.on('aborted', () => fail('HTTP_TRUNCATED', 'the answer was cut off (connection closed mid-body)'));
        res.on('error', (err: Error) => fail('HTTP_TRUNCATED', `the answer was cut off (${reasonOf(err)})`, err));
        res.on('close', () => {
          if (!res.complete) fail('HTTP_TRUNCATED', 'the answer was cut off (connection closed mid-body)');
        });
        res.on('end', () => {
          if (!res.complete) return fail('HTTP_TRUNCATED', 'the answer was cut off (connection closed mid-body)');
          const type = res.headers['content-type'] ?? '';
          const status = res.statusCode ?? 0;
          finish(undefined, {
            status,
            ok: status >= 200 && status < 300,
            statusText: res.statusMessage ?? '',
            contentType: type.split(';')[0]!.trim().toLowerCase(),
            body: chunks.length === 1 ? new Uint8Array(chunks[0]!.buffer, chunks[0]!.byteOffset, chunks[0]!.byteLength) : new Uint8Array(Buffer.concat(chunks)),
          });
        });
      });
      req.end(body);
    });
  }

  /** Ends requests in flight (HTTP_CLOSED) and the kept connections; later requests fail with HTTP_CLOSED. */
  close(): void {
    this.closed = true;
    for (const req of this.inFlight) req.destroy(new HttpClientError('HTTP_CLOSED', `request to ${this.baseUrl} ended: the client is shutting down`, 'shutting down'));
    this.agent.destroy();
  }
}

const clients = new Map<string, HttpClient>();

/** The process-wide client of a base URL (one keep-alive agent per base URL, created on first use). */
export function httpClientFor(baseUrl: string): HttpClient {
  let c = clients.get(baseUrl);
  if (!c) {
    c = new HttpClient(baseUrl);
    clients.set(baseUrl, c);
  }
  return c;
}
