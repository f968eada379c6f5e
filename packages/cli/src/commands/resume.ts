/** `scienceevolve resume`: continues interrupted runs (SPEC §10.3). */
import { closeHostSupervisor, publicError, resumeRuns } from '@scienceevolve/sdk';
import { parse, positiveInt, required } from '../args.js';
import { EXIT, type Io, printJson, usageError } from '../output.js';
import { queueUrlOption } from '../queueUrlOption.js';
import { cancelOnSignal, progressOnStderr, queueOption } from './run.js';

export const RESUME_HELP = [
  'resume --data-dir D --project P [--run R] [--queue redis://… | --queue-env VAR | --queue-file F] [--no-prestart] [--json]',
  '                                     continue interrupted and cancelled runs: Main continues from its checkpoint',
].join('\n');

export async function resumeCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(argv, {
    'data-dir': { type: 'string' },
    project: { type: 'string' },
    run: { type: 'string' },
    'startup-budget-ms': { type: 'string' },
    'max-concurrent-starts': { type: 'string' },
    'start-queue-limit-ms': { type: 'string' },
    'grace-ms': { type: 'string' },
    queue: { type: 'string' },
    'queue-env': { type: 'string' },
    'queue-file': { type: 'string' },
    'queue-name': { type: 'string' },
    'queue-unreachable-ms': { type: 'string' },
    'no-prestart': { type: 'boolean', default: false },
    'prestart-idle-ms': { type: 'string' },
  });
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
      startupBudgetMs: positiveInt(values['startup-budget-ms'], '--startup-budget-ms'),
      maxConcurrentStarts: positiveInt(values['max-concurrent-starts'], '--max-concurrent-starts'),
      startQueueLimitMs: positiveInt(values['start-queue-limit-ms'], '--start-queue-limit-ms'),
      graceMs: positiveInt(values['grace-ms'], '--grace-ms'),
      queue: queueOption(queueUrlOption(values), values['queue-name'], values['queue-unreachable-ms']),
      prestart: !values['no-prestart'],
      prestartIdleMs: positiveInt(values['prestart-idle-ms'], '--prestart-idle-ms'),
      signal: abort.signal,
      onEvent: progressOnStderr(io),
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
          if (r.error.remedy !== undefined) io.stdout(`  remedy: ${r.error.remedy}\n`);
        }
      }
    }
    return results.every((r) => r.status === 'succeeded') ? EXIT.ok : EXIT.failed;
  } finally {
    dispose();
    await closeHostSupervisor();
  }
}
