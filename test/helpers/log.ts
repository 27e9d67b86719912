/** A Logger that keeps what it is told, for tests that assert on log lines. */
import type { Logger } from '../../src/util/log.js';

/** One captured log line, with the wall time it was written. */
export interface LogLine {
  at: number;
  level: string;
  msg: string;
  fields: Record<string, unknown>;
}

/** A Logger and the lines it has captured, in order. */
export function captureLog(): { log: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: string) => (msg: string, fields: Record<string, unknown> = {}) => void lines.push({ at: Date.now(), level, msg, fields });
  return { log: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}
