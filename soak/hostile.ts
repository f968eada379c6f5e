/**
 * Hostile invocations: `services probe` of an agent whose services are drawn at random from the hostile
 * fixtures, several probes at once; after each, the count of surviving marked processes (goal 0) and of
 * surviving env-clearing grandchildren (found by a token on their command line, since they carry no marker).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type Rng,
  fixtureDefinition,
  killAll,
  markedPids,
  pidsWithArg,
  pool,
  runCli,
  survivorsAfter,
  tallyCollection,
} from './common.js';

/** The hostile fixtures: file (test/fixtures/services, or `soak:` for soak/fixtures), and what it does. */
export const HOSTILE: ReadonlyArray<{ file: string; what: string; args?: (dir: string, token: string) => string[] }> = [
  { file: 'ignoresSigterm.cjs', what: 'ignores SIGTERM' },
  {
    file: 'spawnsGrandchildren.cjs',
    what: 'setsid grandchild ignoring SIGTERM',
    args: (dir) => [join(dir, 'pids.json')],
  },
  { file: 'printsBannerOnStdout.cjs', what: 'stdout garbage before setup' },
  { file: 'soak:writesGarbageAfterSetup.cjs', what: 'stdout garbage after setup' },
  { file: 'progressBarBeforeAnswer.cjs', what: '\\r progress bar' },
  { file: 'floodsStderr.cjs', what: '10 MB stderr' },
  { file: 'neverAnswersInitialize.cjs', what: 'hangs in initialize' },
  { file: 'exitsAtStart.cjs', what: 'exits at start' },
  { file: 'writesInvalidUtf8.cjs', what: 'non-UTF-8 stdout' },
  { file: 'soak:clearsEnvDoubleFork.cjs', what: 'setsid env -i grandchild', args: (_dir, token) => [token] },
  { file: 'soak:forkBomb.cjs', what: 'bounded fork bomb (1,023 processes)' },
];

/** The fork-bomb fixture's file, for its own figure. */
export const FORK_BOMB = 'soak:forkBomb.cjs';

/** One invocation's outcome. */
interface Outcome {
  fixtures: string[];
  exit: number | null;
  states: string[];
  marked: number;
  envCleared: number;
  ms: number;
  problem?: string;
}

/** What the hostile part found. */
export interface HostileReport {
  invocations: number;
  concurrency: number;
  services: number;
  /** Per fixture: its services, how many got ready or failed, and the invocations it was in that left marked processes. */
  perFixture: Record<string, { services: number; ready: number; failed: number; invocationsWithSurvivors: number }>;
  /** Invocations with the fork bomb, and the marked processes they left. */
  bombInvocations: number;
  bombSurvivors: number;
  markedSurvivors: number;
  envClearedSurvivors: number;
  invocationsWithSurvivors: string[];
  problems: string[];
  medianMs: number;
  /** The collection mechanism each probe's report named: name → probes. */
  collection: Map<string, number>;
}

/** Runs `count` hostile probes, `concurrency` at once. */
export async function hostile(
  rng: Rng,
  count: number,
  concurrency: number,
  budgetMs: number,
  runTag: string,
): Promise<HostileReport> {
  const plans = Array.from({ length: count }, () => {
    const n = 1 + rng.int(3);
    return Array.from({ length: n }, () => rng.pick(HOSTILE));
  });
  const collection = new Map<string, number>();
  const outcomes = await pool(plans, concurrency, async (plan, i): Promise<Outcome> => {
    const dir = mkdtempSync(join(tmpdir(), 'se-soak-hostile-'));
    const project = `soak-${runTag}-h${i}`;
    const token = `se-soak-${runTag}-h${i}-envcleared`;
    try {
      const defs: Record<string, unknown> = {};
      const servers: unknown[] = [];
      plan.forEach((f, j) => {
        defs[`d${j}`] = fixtureDefinition(f.file, f.args ? { args: f.args(dir, token) } : {});
        servers.push({ name: `s${j}`, project: `d${j}` });
      });
      const workflowPath = join(dir, 'workflow.json');
      writeFileSync(workflowPath, JSON.stringify({ agents: { main: { mcpServers: servers } }, mcpDefinitions: defs }));
      const run = await runCli([
        'services',
        'probe',
        '--data-dir',
        join(dir, 'data'),
        '--project',
        project,
        '--workflow',
        workflowPath,
        '--workspace',
        join(dir, 'ws'),
        '--agent',
        'main',
        '--grace-ms',
        '300',
        '--startup-budget-ms',
        String(budgetMs),
        '--json',
      ]);
      tallyCollection(collection, run.stdout);
      let states: string[] = [];
      let problem: string | undefined;
      try {
        const report = JSON.parse(run.stdout) as { services?: Array<{ state: string }>; error?: { code: string } };
        states = report.services?.map((s) => s.state) ?? [];
        if (report.error) problem = `probe failed as a whole: ${report.error.code}`;
      } catch {
        problem = `no JSON document (exit ${run.code}, signal ${run.signal}): ${run.stderr.slice(0, 200)}`;
      }
      if (/^\s+at .*:\d+:\d+\)?$/m.test(run.stderr)) problem = `stack trace on stderr: ${run.stderr.slice(0, 300)}`;
      const marked = await survivorsAfter(() => markedPids(project), 5000);
      const cleared = await survivorsAfter(() => pidsWithArg(token), 2000);
      killAll([...marked, ...cleared]);
      return {
        fixtures: plan.map((f) => f.file),
        exit: run.code,
        states,
        marked: marked.length,
        envCleared: cleared.length,
        ms: run.ms,
        ...(problem ? { problem } : {}),
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  const perFixture: HostileReport['perFixture'] = Object.create(null);
  const report: HostileReport = {
    invocations: outcomes.length,
    concurrency,
    services: 0,
    perFixture,
    markedSurvivors: 0,
    envClearedSurvivors: 0,
    invocationsWithSurvivors: [],
    problems: [],
    medianMs: 0,
    collection,
    bombInvocations: 0,
    bombSurvivors: 0,
  };
  for (const o of outcomes) {
    o.fixtures.forEach((f, j) => {
      perFixture[f] ??= { services: 0, ready: 0, failed: 0, invocationsWithSurvivors: 0 };
      const e = perFixture[f];
      e.services++;
      report.services++;
      if (o.states[j] === 'ready') e.ready++;
      else e.failed++;
    });
    for (const f of new Set(o.fixtures))
      if (o.marked > 0) (perFixture[f] as { invocationsWithSurvivors: number }).invocationsWithSurvivors++;
    if (o.fixtures.includes(FORK_BOMB)) {
      report.bombInvocations++;
      report.bombSurvivors += o.marked;
    }
    report.markedSurvivors += o.marked;
    report.envClearedSurvivors += o.envCleared;
    if (o.marked + o.envCleared > 0)
      report.invocationsWithSurvivors.push(
        `[${o.fixtures.join(', ')}]: ${o.marked} marked, ${o.envCleared} env-cleared`,
      );
    if (o.problem) report.problems.push(`[${o.fixtures.join(', ')}]: ${o.problem}`);
  }
  const times = outcomes.map((o) => o.ms).sort((a, b) => a - b);
  report.medianMs = times[Math.floor(times.length / 2)] ?? 0;
  return report;
}
