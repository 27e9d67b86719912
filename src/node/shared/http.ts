/** Fastify plumbing shared by the REST and JSON-RPC servers: error envelope, limits, client address. */
import Fastify, { type FastifyInstance, type FastifyError, type FastifyReply, type FastifyRequest } from 'fastify';
import { type ServerResponse, STATUS_CODES } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { SvcError } from '../../core/errors.js';
import { SSZ_MEDIA_TYPE } from '../../api/media.js';
import { ERROR_STATUS, httpStatusOf } from '../../api/errors.js';
import type { Logger } from '../../util/log.js';

/** Default request body limit: a transaction at the size cap in hex JSON fits several times over. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;
// Defined with the other protocol limits, which processes without an HTTP server (the validator
// client) import without loading fastify.
export { ENGINE_BODY_LIMIT } from '../../core/constants.js';

/** Longest request target (path and query) answered normally; longer ones get 414 URI_TOO_LONG. */
export const MAX_URL_BYTES = 8 * 1024;
/**
 * Node's parser limit for the whole request head. It is well above MAX_URL_BYTES so an over-long
 * URL reaches the router and gets its 414 on a connection that stays open (Node's default, 16 KiB,
 * failed such requests in the parser: 431 with a foreign body and every pipelined request behind
 * it reset). Beyond this the parser cannot continue the connection: see clientError below.
 */
export const MAX_HEADER_BYTES = 64 * 1024;

/** The DECISIONS.md error envelope. */
export function errorBody(code: string, message: string): { success: false; error: { code: string; message: string } } {
  return { success: false, error: { code, message } };
}

/** Maps any thrown value to (status, code, message); bad input is never a 500. */
export function classify(err: unknown): { status: number; code: string; message: string } {
  if (err instanceof SvcError) return { status: httpStatusOf(err), code: err.code, message: err.message };
  const e = err as { code?: string; statusCode?: number; message?: string };
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: ERROR_STATUS.BODY_TOO_LARGE, code: 'BODY_TOO_LARGE', message: e.message ?? 'request body is too large' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: ERROR_STATUS.UNSUPPORTED_MEDIA_TYPE, code: 'UNSUPPORTED_MEDIA_TYPE', message: `send JSON (Content-Type: application/json) or, where the route takes SSZ, bytes (Content-Type: ${SSZ_MEDIA_TYPE})` };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: ERROR_STATUS.INVALID_JSON, code: 'INVALID_JSON', message: 'request body is empty' };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: ERROR_STATUS.INVALID_REQUEST, code: 'INVALID_REQUEST', message: 'Content-Length does not match the body' };
  }
  if (err instanceof SyntaxError || (e.statusCode === 400 && /JSON/i.test(e.message ?? ''))) return { status: ERROR_STATUS.INVALID_JSON, code: 'INVALID_JSON', message: `request body is not valid JSON: ${e.message}` };
  if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) return { status: e.statusCode, code: 'INVALID_REQUEST', message: e.message ?? 'bad request' };
  return { status: ERROR_STATUS.INTERNAL, code: 'INTERNAL', message: 'internal error' };
}

/**
 * A Fastify instance with the envelope on every error and on unknown routes; HTTPS when `tls`
 * (PEM certificate and key) is given.
 */
export function createServer(log: Logger, bodyLimit = DEFAULT_BODY_LIMIT, tls?: { cert: string; key: string }): FastifyInstance {
  const options = {
    logger: false,
    bodyLimit,
    http: { maxHeaderSize: MAX_HEADER_BYTES },
    clientErrorHandler: clientError,
    trustProxy: false,
    return503OnClosing: true,
    // Errors raised before routing (bad percent-encoding, over-long path parameters) bypass the
    // error handler; without this they answer Fastify's own body instead of the envelope.
    frameworkErrors: (err: FastifyError, _req: FastifyRequest, reply: FastifyReply) => {
      const c = classify(err);
      void reply.status(c.status).send(errorBody(c.code, c.message));
    },
  };
  // An https.Server is an http.Server to the type system (and to every route), so both
  // instances are the one FastifyInstance type callers use.
  const app: FastifyInstance = tls ? Fastify<HttpsServer>({ ...options, https: { cert: tls.cert, key: tls.key, maxHeaderSize: MAX_HEADER_BYTES } }) : Fastify(options);
  // SSZ bodies arrive as one Buffer under the same body limit; a route that takes no SSZ refuses
  // a Buffer body with its usual malformed-request error (see `sszBody`).
  app.addContentTypeParser(SSZ_MEDIA_TYPE, { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.addHook('onRequest', async (req, reply) => {
    if (req.url.length > MAX_URL_BYTES) {
      return reply.status(ERROR_STATUS.URI_TOO_LONG).send(errorBody('URI_TOO_LONG', `request URL is ${req.url.length} bytes; at most ${MAX_URL_BYTES} are accepted`));
    }
  });
  app.setErrorHandler((err, req, reply) => {
    const c = classify(err);
    if (c.status >= 500) log.error('request failed', { method: req.method, url: req.url, error: (err as Error).stack ?? String(err) });
    void reply.status(c.status).send(errorBody(c.code, c.message));
  });
  app.setNotFoundHandler((req, reply) => {
    void reply.status(ERROR_STATUS.NOT_FOUND).send(errorBody('NOT_FOUND', `no route ${req.method} ${req.url.split('?')[0]}`));
  });
  return app;
}

/**
 * A request the HTTP parser cannot read (a head over MAX_HEADER_BYTES, malformed framing) still
 * gets the envelope. The parser cannot resynchronise on that connection, so the answer closes it:
 * requests pipelined behind the bad one are not read (a client retries them on a new connection).
 */
function clientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, code, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'HEADERS_TOO_LARGE', `request line and headers exceed ${MAX_HEADER_BYTES} bytes`]
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'REQUEST_TIMEOUT', 'the request was not received in time']
        : [400, 'INVALID_REQUEST', 'the request is not valid HTTP/1.1'];
  const body = JSON.stringify(errorBody(code, message));
  const send = () => {
    if (!socket.writable) return void socket.destroy();
    socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  };
  // A complete request parsed before the bad one is still being answered (Node keeps the one in
  // flight on the socket): the error goes out after it, so no response is cut or interleaved. An
  // in-flight request whose own body was cut off (the peer closed mid-body) will never be
  // answered, so nothing waits for it: the connection closes now, which also fires its 'close'.
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (inFlight && !inFlight.writableFinished && inFlight.req.complete) {
    inFlight.once('finish', send);
    inFlight.once('close', () => inFlight.writableFinished || socket.destroy());
  } else {
    send();
  }
}

/** True for 127.0.0.0/8, ::1 and IPv4-mapped loopback. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.startsWith('::ffff:') ? address.slice(7) : address;
  return a === '::1' || /^127\.\d+\.\d+\.\d+$/.test(a);
}

/** The peer address of a request (no proxy headers are trusted). */
export function clientIp(req: FastifyRequest): string {
  return req.socket.remoteAddress ?? 'unknown';
}

/** The request's SSZ body (Content-Type: application/octet-stream), or undefined for a JSON one. */
export function sszBody(req: FastifyRequest): Uint8Array | undefined {
  return Buffer.isBuffer(req.body) ? new Uint8Array(req.body.buffer, req.body.byteOffset, req.body.byteLength) : undefined;
}

/** Sends SSZ bytes (an answer to a request whose Accept asked for them). */
export function okSsz(reply: FastifyReply, bytes: Uint8Array, status = 200): FastifyReply {
  return reply.status(status).type(SSZ_MEDIA_TYPE).send(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
}

/** Sends `{ success: true, data }`. */
export function ok<T>(reply: FastifyReply, data: T, status = 200): FastifyReply {
  return reply.status(status).send({ success: true, data });
}

/**
 * Answers a refused WebSocket upgrade with an HTTP status and the error envelope, then destroys
 * the socket (also after 5 s, so a peer that never reads cannot hold it open).
 */
export function refuseUpgrade(socket: import('node:stream').Duplex, status: number, code: string, message: string): void {
  const body = JSON.stringify(errorBody(code, message));
  socket.on('error', () => socket.destroy());
  socket.once('finish', () => socket.destroy());
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  setTimeout(() => socket.destroy(), 5_000).unref();
}
