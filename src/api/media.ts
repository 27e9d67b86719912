/**
 * Media types of the binary (SSZ) and JSON bodies every svc HTTP API accepts and, where the
 * client asks with `Accept`, answers: the one definition servers and clients import.
 */

/** SSZ bytes: a signed transaction envelope, an envelope list, or a block. */
export const SSZ_MEDIA_TYPE = 'application/octet-stream';

/** JSON bodies (the spec's shapes). */
export const JSON_MEDIA_TYPE = 'application/json';

/** Whether an `Accept` header asks for SSZ bytes (an explicit `application/octet-stream`). */
export function acceptsSsz(accept: string | undefined): boolean {
  return accept !== undefined && accept.split(',').some((p) => p.split(';')[0]!.trim().toLowerCase() === SSZ_MEDIA_TYPE);
}
