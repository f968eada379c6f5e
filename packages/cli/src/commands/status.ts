/** `scienceevolve status`: runs, invocations, live services and the accepted version. */
import { runStatus } from '@scienceevolve/sdk';
import { parse, required } from '../args.js';
import { EXIT, type Io, printJson, usageError } from '../output.js';

export const STATUS_HELP = [
  'status --data-dir D [--project P] [--json]',
  '                                     runs, invocations, live services and the accepted version',
].join('\n');

export async function statusCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(argv, { 'data-dir': { type: 'string' }, project: { type: 'string' } });
  if (positionals.length > 0) throw usageError('status takes no positional arguments');
  const report = await runStatus({
    dataDir: required(values['data-dir'], '--data-dir', 'the directory that holds all ScienceEvolve state'),
    project: values.project,
  });
  if (values.json) {
    printJson(io, report);
    return EXIT.ok;
  }
  if (report.projects.length === 0) io.stdout(`no projects in ${report.dataDir}\n`);
  for (const p of report.projects) {
    io.stdout(`project ${p.project}: accepted version ${p.acceptedVersion ?? '(none)'}\n`);
    for (const r of p.runs) {
      io.stdout(
        `  run ${r.run}: ${r.status} (started ${r.startedAt}${r.resumes > 0 ? `, resumed ${r.resumes}×` : ''})\n`,
      );
      for (const i of r.invocations) {
        io.stdout(
          `    ${i.agent} ${i.id}: ${i.state}, ${i.attempts} attempt${i.attempts === 1 ? '' : 's'}${i.restarted ? ', restarted' : ''}\n`,
        );
      }
    }
    for (const s of p.liveServices) {
      io.stdout(
        `  live service pid ${s.pid} (invocation ${s.invocation}, host ${s.hostPid}${s.hostAlive ? '' : ' — dead: a stray'})\n`,
      );
    }
  }
  return EXIT.ok;
}
