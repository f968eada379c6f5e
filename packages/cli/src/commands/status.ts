/** `scienceevolve status`: runs, invocations, live services and the accepted version. */
import { type UsageTotals, runStatus } from '@scienceevolve/sdk/status';
import { parseCommand, required } from '../args.js';
import { command } from '../optionTable.js';
import { EXIT, type Io, printJson, usageError } from '../output.js';

export async function statusCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(command('status'), argv);
  if (positionals.length > 0) throw usageError('status takes no positional arguments');
  const report = await runStatus({
    dataDir: required(values['data-dir'], '--data-dir', 'the directory that holds all ScienceEvolve state'),
    project: values.project,
  });
  // Damage is reported and makes the exit status 1, so that a script notices it.
  const damaged = report.projects.some((p) => p.acceptedError !== null || p.corruptRuns.length > 0);
  const exit = damaged ? EXIT.failed : EXIT.ok;
  if (values.json) {
    printJson(io, report);
    return exit;
  }
  if (report.projects.length === 0) io.stdout(`no projects in ${report.dataDir}\n`);
  for (const p of report.projects) {
    if (p.acceptedError !== null) io.stdout(`project ${p.project}: DAMAGED STORE — ${p.acceptedError.message}\n`);
    else io.stdout(`project ${p.project}: accepted version ${p.acceptedVersion ?? '(none)'}\n`);
    for (const r of p.runs) {
      io.stdout(
        `  run ${r.run}: ${r.status} (started ${r.startedAt}${r.resumes > 0 ? `, resumed ${r.resumes}×` : ''})${usageText(r.usage)}${r.traceId === undefined ? '' : `, trace ${r.traceId}`}\n`,
      );
      for (const i of r.invocations) {
        io.stdout(
          `    ${i.agent} ${i.id}: ${i.state}, ${i.attempts} attempt${i.attempts === 1 ? '' : 's'}${i.restarted ? ', restarted' : ''}, ${i.toolCalls} tool call${i.toolCalls === 1 ? '' : 's'}${i.startQueuedMs > 0 ? `, ${i.startQueuedMs} ms queued to start` : ''}${usageText(i.usage)}\n`,
        );
      }
      for (const w of r.prestarted) {
        io.stdout(
          `    prestarted for ${w.agent} ${w.invocation}: since ${w.since}, services ${w.services.length > 0 ? w.services.join(', ') : '(not recorded)'}` +
            `${w.pids.length > 0 ? ` (pid ${w.pids.join(' ')})` : ''}, collected if unused at ${w.idleDeadline ?? '(not recorded)'}\n`,
        );
      }
    }
    for (const c of p.corruptRuns) io.stdout(`  run ${c.run}: DAMAGED RECORD — ${c.message}\n`);
    for (const s of p.liveServices) {
      io.stdout(
        `  live service pid ${s.pid} (invocation ${s.invocation}, host ${s.hostPid}${s.hostAlive ? '' : ' — dead: a stray'})\n`,
      );
    }
  }
  return exit;
}

/** `; 3 model calls, 1,200 in / 80 out tokens`, or nothing when no model was called. */
function usageText(usage: UsageTotals): string {
  if (usage.modelCalls === 0) return '';
  const n = (x: number) => x.toLocaleString('en-US');
  return `; ${n(usage.modelCalls)} model call${usage.modelCalls === 1 ? '' : 's'}, ${n(usage.inputTokens)} in / ${n(usage.outputTokens)} out tokens`;
}
