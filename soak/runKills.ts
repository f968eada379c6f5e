/**
 * Host SIGKILLs at random moments of `scienceevolve run`: a scripted workflow whose Main and worker use
 * hostile-ish services (a setsid-grandchild spawner, a SIGTERM-ignoring service, a slow tool) is run, and
 * the host is SIGKILLed after a random delay (half within the first 1.5 s: while it loads the workflow,
 * spawns and registers Main's services; half up to 6 s: during Main's calls, the delegation and the
 * worker's own services). Then the project's marked processes are counted once the supervisor had time
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

/** `count` runs, each SIGKILLed at a random moment, then resumed; `concurrency` at once. */
export async function runKills(rng: Rng, count: number, concurrency: number, runTag: string): Promise<RunKillReport> {
  const delays = Array.from({ length: count }, () => (rng.int(2) === 0 ? rng.int(1500) : 1500 + rng.int(4500)));
  const report: RunKillReport = {
    tries: count,
    killedBeforeRecorded: 0,
    finishedBeforeKill: 0,
    neededResume: 0,
    resumeCompleted: 0,
    leftovers: 0,
    leftoversAfterResume: 0,
    problems: [],
  };
  await pool(delays, concurrency, async (delay, i) => {
    const dir = mkdtempSync(join(tmpdir(), 'se-soak-run-'));
    const project = `soak-${runTag}-r${i}`;
    const dataDir = join(dir, 'data');
    const at = `try ${i} (killed after ${delay} ms)`;
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
        { stdio: ['ignore', 'ignore', 'ignore'] },
      );
      const closed = new Promise((r) => child.once('close', r));
      await new Promise((r) => setTimeout(r, delay));
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
        return;
      }
      if (runs.every((r) => r.status === 'succeeded')) {
        report.finishedBeforeKill++;
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
      if (done && after.length > 0 && after.every((r) => r.status === 'succeeded')) report.resumeCompleted++;
      else
        report.problems.push(
          `${at}: resume exit ${resumed.code}: ${results.map((r) => `${r.status} ${JSON.stringify(r.output)} ${r.error?.code ?? ''}`).join('; ') || 'no runs'}; status then: ${after.map((r) => r.status).join(', ')}`,
        );
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
