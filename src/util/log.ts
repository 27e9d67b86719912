/** Structured logs: one JSON object per line on stderr, filtered by level. */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Parses a level name; anything else is an error for the caller to report. */
export function isLogLevel(v: string): v is LogLevel {
  return v in ORDER;
}

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** A logger writing JSON lines (`{"ts","level","component","msg",...fields}`) to `out`. */
export function createLogger(component: string, level: LogLevel = 'info', out: (line: string) => void = (l) => process.stderr.write(l + '\n')): Logger {
  const emit = (lvl: LogLevel) => (msg: string, fields: Record<string, unknown> = {}) => {
    if (ORDER[lvl] < ORDER[level]) return;
    out(JSON.stringify({ ts: new Date().toISOString(), level: lvl, component, msg, ...fields }, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
  };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}

/** A logger that drops everything (unit tests). */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
