/** `scienceevolve resume`: continues interrupted runs (SPEC §10.3). */
import { closeHostSupervisor, resumeRuns } from '@scienceevolve/sdk';
import { remedyOf } from '@scienceevolve/sdk/errors';
import { publicError } from '@scienceevolve/sdk/internal';
import { parseCommand, required } from '../args.js';
import { command } from '../optionTable.js';
import { EXIT, failureText, type Io, printJson, usageError } from '../output.js';
import { cancelOnSignal, progressOnStderr, runEngineOptions } from './run.js';
import { askOnTerminal, attended } from '../operatorPrompt.js';

export async function resumeCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(command('resume'), argv);
  if (positionals.length > 0) throw usageError('resume takes no positional arguments');
  const abort = new AbortController();
  const dispose = cancelOnSignal(abort, io);
  try {
    const dataDir = required(values['data-dir'], '--data-dir', 'the directory that holds all ScienceEvolve state');
    const project = required(
      values.project,
      '--project',
      'the project whose runs to continue (see `scienceevolve status`)',
    );
    const results = await resumeRuns({
      dataDir,
      project,
      run: values.run,
      ...runEngineOptions(values),
      signal: abort.signal,
      onEvent: progressOnStderr(io),
      ...(attended() ? { askOperator: askOnTerminal } : {}),
    });
    // The error as events publish it: a service's (or CLI's) stderr lines stay in run.json, out of the output.
    // A run whose record is damaged comes back failed with error store_tampered naming the run and its file.
    const runs = results.map((r) => ({ run: r.run, status: r.status, output: r.output, error: publicError(r.error) }));
    if (values.json) printJson(io, { runs });
    else if (runs.length === 0) io.stdout('no interrupted or cancelled runs\n');
    else {
      for (const r of runs) {
        io.stdout(`${r.run}: ${r.status}${r.output !== null ? `\n${r.output}` : ''}\n`);
        if (r.error !== null) {
          io.stdout(`  error ${r.error.code}: ${r.error.message}\n`);
          io.stdout(`  remedy: ${remedyOf(r.error)}\n`);
        }
      }
    }
    // As `run` does: each run's error on stderr with the end of the failed service's stderr (run.json's,
    // redacted) and its fix; the lines above stay as they are for scripts that read stdout.
    for (const r of results) if (r.error) io.stderr(failureText(r.error, { head: `${r.run}: error` }));
    return results.every((r) => r.status === 'succeeded') ? EXIT.ok : EXIT.failed;
  } finally {
    dispose();
    await closeHostSupervisor();
  }
}
