/** Reading passwords and mnemonics: a file, an environment variable, or a hidden prompt. Never a flag value. */
import { readFile } from 'node:fs/promises';
import { SvcError } from '../core/errors.js';

/** Where a secret may come from, in order of preference. */
export interface SecretSource {
  file?: string | undefined;
  envVar: string;
  prompt: string;
  /** Ask twice and require a match (new passwords). */
  confirm?: boolean;
  /** Human name used in errors, e.g. "password". */
  what: string;
  fileFlag: string;
}

/** Reads a secret from a file (one trailing newline stripped), the env var, or a TTY prompt. */
export async function readSecret(src: SecretSource): Promise<string> {
  let value: string | undefined;
  if (src.file) {
    try {
      value = (await readFile(src.file, 'utf8')).replace(/\r?\n$/, '');
    } catch {
      throw new SvcError('SECRET_UNREADABLE', `cannot read ${src.what} file ${src.file}`);
    }
  } else if (process.env[src.envVar] !== undefined) {
    value = process.env[src.envVar];
  } else if (process.stdin.isTTY && process.stderr.isTTY) {
    value = await promptHidden(src.prompt);
    if (src.confirm && (await promptHidden(`Repeat ${src.what}: `)) !== value) {
      throw new SvcError('SECRET_MISMATCH', `the two ${src.what}s do not match`);
    }
  } else {
    throw new SvcError('SECRET_REQUIRED', `a ${src.what} is required: pass ${src.fileFlag} FILE or set ${src.envVar} (no terminal to prompt on)`);
  }
  if (!value) throw new SvcError('SECRET_REQUIRED', `the ${src.what} must not be empty`);
  return value;
}

/** Prompts on stderr with echo off; Ctrl-C aborts with exit code 130. */
export function promptHidden(question: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    process.stderr.write(question);
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding('utf8');
    let buf = '';
    const finish = () => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') {
          finish();
          resolve(buf);
          return;
        }
        if (ch === '\u0003') {
          finish();
          process.exitCode = 130;
          reject(new SvcError('INTERRUPTED', 'interrupted'));
          return;
        }
        if (ch === '\u007f' || ch === '\b') buf = buf.slice(0, -1);
        else if (ch >= ' ') buf += ch;
      }
    };
    stdin.on('data', onData);
  });
}

/** The wallet password, per the usual sources (`--password-file`, `SVC_PASSWORD`, prompt). */
export function readPassword(file: string | undefined, opts: { confirm?: boolean; prompt?: string } = {}): Promise<string> {
  return readSecret({ file, envVar: 'SVC_PASSWORD', prompt: opts.prompt ?? 'Password: ', confirm: opts.confirm ?? false, what: 'password', fileFlag: '--password-file' });
}
