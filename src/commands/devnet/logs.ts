import { Args, Flags } from '@oclif/core';
import { devnetDirFlag } from '../../cli/flags.js';
import { SvcCommand } from '../../cli/base.js';
import { type LogFile, followLog, logFiles, tailLines } from '../../devnet/logs.js';
import { DevnetError, currentDevnetDir } from '../../devnet/manifest.js';

export default class DevnetLogs extends SvcCommand {
  static override summary = 'Print (or --follow) the log of a devnet process; without a name, list the log files';
  static override examples = ['<%= config.bin %> devnet logs', '<%= config.bin %> devnet logs beacon --follow', '<%= config.bin %> devnet logs validators --lines 200'];
  static override args = {
    process: Args.string({ description: 'execution, beacon, execution-I or beacon-I (node I), validators or validators-I (a node\'s validator client), validator-K (--validator-processes per-validator), node (single-process) or supervisor' }),
  };
  static override flags = {
    dir: devnetDirFlag,
    follow: Flags.boolean({ char: 'f', description: 'keep printing new lines until Ctrl-C' }),
    lines: Flags.integer({ char: 'n', description: 'how many of the last lines to print', default: 50, min: 0 }),
  };

  async run(): Promise<{ logs: LogFile[] } | { process: string; log: string; lines: string[] }> {
    const { args, flags } = await this.parse(DevnetLogs);
    if (flags.follow && this.jsonEnabled()) throw new DevnetError('USAGE', '--follow prints raw log lines; it cannot be combined with --json');
    const files = logFiles(flags.dir ?? currentDevnetDir());
    if (!args.process) {
      for (const f of files) this.say(`${f.name.padEnd(14)} ${f.path}`);
      return { logs: files };
    }
    const file = files.find((f) => f.name === args.process);
    if (!file) throw new DevnetError('UNKNOWN_PROCESS', `no process ${JSON.stringify(args.process)} in this devnet; one of: ${files.map((f) => f.name).join(', ')}`);
    const lines = await tailLines(file.path, flags.lines);
    if (this.jsonEnabled() && !flags.follow) return { process: file.name, log: file.path, lines };
    for (const l of lines) process.stdout.write(l + '\n');
    if (flags.follow) {
      const ac = new AbortController();
      process.once('SIGINT', () => ac.abort());
      process.once('SIGTERM', () => ac.abort());
      await followLog(file.path, (chunk) => process.stdout.write(chunk), ac.signal);
    }
    return { process: file.name, log: file.path, lines };
  }
}
