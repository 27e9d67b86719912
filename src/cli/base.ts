/**
 * Base of every `svc` command: `--json` prints exactly one JSON document on stdout; failures
 * print one line on stderr (and, with --json, an error envelope on stdout) and exit non-zero.
 */
import { Command } from '@oclif/core';
import { SvcError } from '../core/errors.js';
import { hasCode } from '../api/errors.js';

/** Exit code for bad usage (unknown flag, missing argument), as oclif reports it. */
const USAGE_EXIT = 2;

interface OclifErrorLike {
  oclif?: { exit?: number | false };
}

/** Flags that cannot be used together or do not parse: exit 2 and code USAGE, like oclif's own flag errors. */
export class UsageError extends SvcError {
  readonly oclif = { exit: USAGE_EXIT };

  constructor(message: string) {
    super('USAGE', message);
  }
}

export abstract class SvcCommand extends Command {
  static override enableJsonFlag = true;

  /** Prints human output; suppressed under --json so stdout stays one JSON document. */
  protected say(line = ''): void {
    if (!this.jsonEnabled()) this.log(line);
  }

  /** Prints a note to stderr (progress, warnings) so it never mixes with stdout data. */
  protected note(line: string): void {
    process.stderr.write(line + '\n');
  }

  protected override async catch(err: Error & OclifErrorLike): Promise<void> {
    // Bad usage found after parsing (a flag combination the command refuses) is exit 2 as well.
    const usage = (typeof err.oclif?.exit === 'number' && err.oclif.exit === USAGE_EXIT) || (err instanceof SvcError && hasCode(err, 'USAGE'));
    const code = err instanceof SvcError ? err.code : usage ? 'USAGE' : 'ERROR';
    process.exitCode = usage ? USAGE_EXIT : typeof err.oclif?.exit === 'number' && err.oclif.exit > 0 ? err.oclif.exit : 1;
    const message = (err.message || String(err))
      .replace(/^The following errors? occurred:\s*/, '')
      .split('\n')
      .map((l) => l.trim().replace(/[.:]$/, ''))
      .filter(Boolean)
      .join('; ');
    if (this.jsonEnabled()) this.logJson({ success: false, error: { code, message } });
    process.stderr.write(`Error: ${message}\n`);
    if (process.env.SVC_DEBUG && err.stack) process.stderr.write(err.stack + '\n');
  }
}
