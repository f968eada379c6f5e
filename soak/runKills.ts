/**
 * Host SIGKILLs at random moments of `scienceevolve run`: a scripted workflow whose Main and worker use
 * hostile-ish services (a setsid-grandchild spawner, a SIGTERM-ignoring service, a slow tool) is run, and
 * the host is SIGKILLed at a random moment: a third after a random delay within the first 1.5 s (while
 * it loads the workflow, spawns and registers Main's services), two thirds 0–300 ms after a random one of
 * its progress lines on stderr (a service ready, a tool call, the delegation, the worker's services, the
 * end), so the kills spread over the whole run however loaded the machine is. Then the project's marked processes are counted once the supervisor had time
 * to collect (grace 300 ms; polled 15 s; goal 0), `status` says what the run became, and every run that
 * was interrupted is continued by `resume`, which must finish it `succeeded` with the script's answer.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, type Rng, fixtureDefinition, killAll, markedPids, pool, runCli, survivorsAfter } from './common.js';

/** The answer the script's Main gives: its final `done {{2}}` with the worker's echo. */
export const RUN_ANSWER = 'done b';

/** What the run-kill part found. */
export interface RunKillReport {
  tries: number;
  /** Killed before `run.json` was written (nothing to resume). */
  killedBeforeRecorded: number;
  /** The run had already succeeded when the kill came. */
  finishedBeforeKill: number;
  /** Runs `resume` had to continue. */
  neededResume: number;
  /** Of those, continued to `succeeded` with the script's answer. */
  resumeCompleted: number;
  /** Marked processes left after the kill (after the supervisor's collection). */
  leftovers: number;
  /** Marked processes left after `resume` returned. */
  leftoversAfterResume: number;
  problems: string[];
  /** By kill moment (`start` or `line a–b`): how many tries ended in each outcome. */
  byMoment: Map<string, Record<'before run.json' | 'finished' | 'resumed' | 'problem', number>>;
}

/** The bucket a kill point falls in, for the page. */
function momentOf(point: KillPoint): string {
  if (point.afterLine === 0) return 'within 1.5 s of the start';
  const from = Math.floor((point.afterLine - 1) / 4) * 4 + 1;
  return `after progress line ${from}–${Math.min(from + 3, RUN_PROGRESS_LINES)}`;
}

/** The workflow and script of one try (`dir`: where the spawner writes its pids). */
function runFiles(dir: string): { workflow: unknown; script: unknown } {
  const scripted = { type: 'scripted' };
  return {
    workflow: {
      agents: {
        main: {
          harness: scripted,
          instructions: 'call, delegate, call, answer',
          mcpServers: [
            { name: 'spawner', project: 'spawner' },
            { name: 'stubborn', project: 'stubborn' },
            { name: 'slow', project: 'slow' },
          ],
        },
        analyst: {
          harness: scripted,
          instructions: 'call and answer',
          mcpServers: [
            { name: 'stubborn', project: 'stubborn' },
            { name: 'slow', project: 'slow' },
          ],
        },
      },
      mcpDefinitions: {
        spawner: fixtureDefinition('spawnsGrandchildren.cjs', { args: [join(dir, 'pids.json')] }),
        stubborn: fixtureDefinition('ignoresSigterm.cjs'),
        slow: fixtureDefinition('slowTool.cjs'),
      },
    },
    script: {
      agents: {
        main: [
          { call: 'slow__sleep', arguments: { ms: 300 } },
          { call: 'stubborn__echo', arguments: { text: 'a' } },
          { call: 'scienceevolve__delegate', arguments: { agent: 'analyst', task: 'echo b' } },
          { call: 'slow__sleep', arguments: { ms: 300 } },
          { final: 'done {{2}}' },
        ],
        analyst: [
          { call: 'slow__sleep', arguments: { ms: 300 } },
          { call: 'stubborn__echo', arguments: { text: 'b' } },
          { final: '{{1}}' },
        ],
      },
    },
  };
}

/** The runs `status --json` lists for `project` (empty when the project or its runs do not exist yet). */
async function runsOf(dataDir: string, project: string): Promise<Array<{ run: string; status: string }>> {
  const st = await runCli(['status', '--data-dir', dataDir, '--project', project, '--json'], { timeoutMs: 60_000 });
  try {
    const doc = JSON.parse(st.stdout) as { projects?: Array<{ runs?: Array<{ run: string; status: string }> }> };
    return doc.projects?.[0]?.runs ?? [];
  } catch {
    return [];
  }
}

/** Progress lines a whole run of the script writes on stderr (a kill after line k picks k from 1 to this). */
export const RUN_PROGRESS_LINES = 16;

/** When to kill: `afterLine` 0 means `ms` after the start, else `ms` after that progress line. */
interface KillPoint {
  afterLine: number;
  ms: number;
}

/** `count` runs, each SIGKILLed at a random moment, then resumed; `concurrency` at once. */
export async function runKills(rng: Rng, count: number, concurrency: number, runTag: string): Promise<RunKillReport> {
  const points: KillPoint[] = Array.from({ length: count }, () =>
    rng.int(3) === 0
      ? { afterLine: 0, ms: rng.int(1500) }
      : { afterLine: 1 + rng.int(RUN_PROGRESS_LINES), ms: rng.int(300) },
  );
  const report: RunKillReport = {
    tries: count,
    killedBeforeRecorded: 0,
    finishedBeforeKill: 0,
    neededResume: 0,
    resumeCompleted: 0,
    leftovers: 0,
    leftoversAfterResume: 0,
    problems: [],
    byMoment: new Map(),
  };
  const outcome = (point: KillPoint, what: 'before run.json' | 'finished' | 'resumed' | 'problem') => {
    const key = momentOf(point);
    const row = report.byMoment.get(key) ?? { 'before run.json': 0, finished: 0, resumed: 0, problem: 0 };
    row[what]++;
    report.byMoment.set(key, row);
  };
  await pool(points, concurrency, async (point, i) => {
    const dir = mkdtempSync(join(tmpdir(), 'se-soak-run-'));
    const project = `soak-${runTag}-r${i}`;
    const dataDir = join(dir, 'data');
    const at = `try ${i} (killed ${point.ms} ms after ${point.afterLine === 0 ? 'the start' : `progress line ${point.afterLine}`})`;
    try {
      const { workflow, script } = runFiles(dir);
      writeFileSync(join(dir, 'wf.json'), JSON.stringify(workflow));
      writeFileSync(join(dir, 'script.json'), JSON.stringify(script));
      const child = spawn(
        process.execPath,
        [BIN, 'run', '--data-dir', dataDir, '--workflow', join(dir, 'wf.json'), '--workspace', join(dir, 'ws')].concat([
          '--project',
          project,
          '--script',
          join(dir, 'script.json'),
          '--grace-ms',
          '300',
          '--json',
          'echo through a worker',
        ]),
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      const closed = new Promise((r) => child.once('close', r));
      // The moment: the start, or the chosen progress line (or the end, if the run wrote fewer lines).
      const lineSeen = new Promise<void>((resolve) => {
        if (point.afterLine === 0) resolve();
        let lines = 0;
        // Read always, so a full pipe never stalls the host.
        child.stderr.setEncoding('utf8').on('data', (c: string) => {
          lines += c.split('\n').length - 1;
          if (lines >= point.afterLine) resolve();
        });
      });
      await Promise.race([lineSeen, closed]);
      await new Promise((r) => setTimeout(r, point.ms));
      child.kill('SIGKILL');
      await closed;
      const left = await survivorsAfter(() => markedPids(project), 15_000);
      if (left.length > 0) {
        report.leftovers += left.length;
        report.problems.push(`${at}: ${left.length} marked processes left after the kill`);
        killAll(left);
      }
      const runs = await runsOf(dataDir, project);
      if (runs.length === 0) {
        report.killedBeforeRecorded++;
        outcome(point, 'before run.json');
        return;
      }
      if (runs.every((r) => r.status === 'succeeded')) {
        report.finishedBeforeKill++;
        outcome(point, 'finished');
        return;
      }
      report.neededResume++;
      const resumed = await runCli(
        ['resume', '--data-dir', dataDir, '--project', project].concat(['--grace-ms', '300', '--json']),
        {
          timeoutMs: 120_000,
        },
      );
      let results: Array<{ run: string; status: string; output: string | null; error: { code: string } | null }> = [];
      try {
        results = (JSON.parse(resumed.stdout) as { runs: typeof results }).runs;
      } catch {
        report.problems.push(
          `${at}: resume printed no JSON document (exit ${resumed.code}): ${resumed.stderr.slice(0, 200)}`,
        );
      }
      if (/^\s+at .*:\d+:\d+\)?$/m.test(resumed.stderr))
        report.problems.push(`${at}: stack trace on resume's stderr: ${resumed.stderr.slice(0, 300)}`);
      const done = results.length > 0 && results.every((r) => r.status === 'succeeded' && r.output === RUN_ANSWER);
      const after = await runsOf(dataDir, project);
      if (done && after.length > 0 && after.every((r) => r.status === 'succeeded')) {
        report.resumeCompleted++;
        outcome(point, 'resumed');
      } else {
        outcome(point, 'problem');
        report.problems.push(
          `${at}: resume exit ${resumed.code}: ${results.map((r) => `${r.status} ${JSON.stringify(r.output)} ${r.error?.code ?? ''}`).join('; ') || 'no runs'}; status then: ${after.map((r) => r.status).join(', ')}`,
        );
      }
      const leftAfter = await survivorsAfter(() => markedPids(project), 10_000);
      if (leftAfter.length > 0) {
        report.leftoversAfterResume += leftAfter.length;
        report.problems.push(`${at}: ${leftAfter.length} marked processes left after resume returned`);
        killAll(leftAfter);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  return report;
}
