/**
 * TLS material for a node's HTTPS listener (DECISIONS.md: validator bearer tokens travel over
 * TLS when a certificate is configured). The PEM files are read and checked before anything
 * starts, so a bad file is one clear error instead of an OpenSSL stack from deep inside the
 * server.
 */
import { NodeError } from './errors.js';
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';

/** A certificate (chain) and its private key, PEM text as given to `https.createServer`. */
export interface TlsPair {
  cert: string;
  key: string;
}

/** A checked pair plus what was learnt from it (for warnings and logs). */
export interface LoadedTlsPair extends TlsPair {
  /** The leaf certificate (the first in the cert file). */
  certificate: X509Certificate;
}

/** Why a TLS file was refused; `code` is TLS_FILE_UNREADABLE, TLS_INVALID_CERT, TLS_INVALID_KEY or TLS_KEY_MISMATCH. */
export class TlsError extends NodeError {}

/** OpenSSL's library and reason, without the "error:1E08010C:…::" number, which means nothing to a user. */
function reason(err: unknown): string {
  const e = err as { message?: string; reason?: string; library?: string };
  if (e.reason) return `OpenSSL ${e.library ? `${e.library}: ` : ''}${e.reason}`;
  return (e.message ?? String(err)).replace(/^error:[0-9A-F]+:[^:]*:[^:]*:/i, '').trim();
}

async function readPem(file: string, flag: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new TlsError('TLS_FILE_UNREADABLE', `cannot read ${flag} file ${file}${code ? ` (${code})` : ''}`);
  }
}

/**
 * Reads and checks a PEM certificate and private key: both must parse and the key must belong
 * to the certificate. Errors name the flag and the file (`flags` defaults to `--tls-cert` and
 * `--tls-key`).
 */
export async function loadTlsPair(certFile: string, keyFile: string, flags: { cert: string; key: string } = { cert: '--tls-cert', key: '--tls-key' }): Promise<LoadedTlsPair> {
  const cert = await readPem(certFile, flags.cert);
  const key = await readPem(keyFile, flags.key);
  // X509Certificate accepts DER too; the HTTPS server wants PEM, so insist on the PEM armour.
  if (!cert.includes('-----BEGIN CERTIFICATE-----')) throw new TlsError('TLS_INVALID_CERT', `${flags.cert} file ${certFile} is not a PEM certificate (no BEGIN CERTIFICATE block)`);
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch (err) {
    throw new TlsError('TLS_INVALID_CERT', `${flags.cert} file ${certFile} is not a valid PEM certificate (${reason(err)})`);
  }
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(key)) throw new TlsError('TLS_INVALID_KEY', `${flags.key} file ${keyFile} is not a PEM private key (no BEGIN PRIVATE KEY block)`);
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(key);
  } catch (err) {
    throw new TlsError('TLS_INVALID_KEY', `${flags.key} file ${keyFile} is not a usable PEM private key (${reason(err)})`);
  }
  if (!certificate.checkPrivateKey(privateKey)) throw new TlsError('TLS_KEY_MISMATCH', `${flags.key} file ${keyFile} is not the private key of the certificate in ${flags.cert} file ${certFile}`);
  return { cert, key, certificate };
}

/**
 * Problems a client would hit with this certificate when connecting to `host` at `now`: expired
 * or not yet valid, or a name that does not cover the listen address. Empty when none; warnings,
 * not errors, since clients may reach the node under another name (a proxy, a DNS name).
 */
export function tlsWarnings(c: X509Certificate, host: string, now = new Date()): string[] {
  const out: string[] = [];
  if (now < new Date(c.validFrom)) out.push(`the certificate is not valid before ${c.validFrom}`);
  if (now > new Date(c.validTo)) out.push(`the certificate expired on ${c.validTo}`);
  // A wildcard listen address says nothing about the name clients will use.
  const wildcard = host === '0.0.0.0' || host === '::' || host === '';
  if (!wildcard && (isIP(host) ? c.checkIP(host) : c.checkHost(host)) === undefined) out.push(`the certificate does not name ${host} (add it to subjectAltName), so clients connecting to ${host} will refuse it`);
  return out;
}
