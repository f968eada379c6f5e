/**
 * The overhead of a polled MCP task call over a plain call of the same work (SPEC §7, issue 25): one
 * project service on the v1 SDK's experimental tasks (test/fixtures/tasks/tasksV1.cjs, suggesting a 100 ms
 * poll interval, the SDK's floor), through the in-process surface. A B A B: `plain_work {ms}` (answered
 * directly) then `work {ms}` (a task, polled), 2 warm-up pairs, then N pairs; the overhead of each pair is
 * the task call's time minus the plain call's. Prints p50 and p99 of both and of the overhead, as JSON.
 *
 *   node --import tsx bench/taskOverhead.ts [--pairs 30] [--ms 300]
 *
 * Not part of `npm run bench` (a standalone row; its figures are quoted in docs/long-running-tools.md).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildServiceEnv } from '../packages/sdk/src/processes/serviceEnv.js';
import { startStdioService } from '../packages/sdk/src/sessions/stdioService.js';
import { createSurface } from '../packages/sdk/src/surface/surface.js';

const { values } = parseArgs({
  options: { pairs: { type: 'string', default: '30' }, ms: { type: 'string', default: '300' } },
});
const pairs = Number.parseInt(values.pairs, 10);
const ms = Number.parseInt(values.ms, 10);

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}
function summary(samples: number[]): { p50: number; p99: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: Number(quantile(sorted, 0.5).toFixed(1)), p99: Number(quantile(sorted, 0.99).toFixed(1)) };
}

const dir = mkdtempSync(join(tmpdir(), 'se-bench-tasks-'));
const fixture = fileURLToPath(new URL('../test/fixtures/tasks/tasksV1.cjs', import.meta.url));
const marker = `se-bench-tasks-${process.pid}`;
const session = await startStdioService(
  {
    serviceName: 'lab',
    definitionName: 'lab',
    digest: 'b'.repeat(64),
    command: 'node',
    entrypointPath: fixture,
    args: [join(dir, 'tasks.log'), '100'],
    cwd: dir,
    env: buildServiceEnv({
      serviceName: 'lab',
      hostEnv: process.env,
      envFrom: {},
      workspace: dir,
      sourceDir: dir,
      projectRoot: dir,
      marker,
    }),
    stderrLogPath: join(dir, 'lab.stderr.log'),
    marker,
    graceMs: 500,
  },
  { deadline: Date.now() + 30_000 },
);
try {
  const surface = createSurface([session]);
  const plain: number[] = [];
  const task: number[] = [];
  const overhead: number[] = [];
  for (let i = 0; i < pairs + 2; i++) {
    let start = performance.now();
    await surface.callTool('lab__plain_work', { ms });
    const a = performance.now() - start;
    start = performance.now();
    const result = await surface.callTool('lab__work', { ms });
    const b = performance.now() - start;
    if (result.isError) throw new Error(JSON.stringify(result));
    if (i < 2) continue;
    plain.push(a);
    task.push(b);
    overhead.push(b - a);
  }
  surface.close();
  console.log(
    JSON.stringify({
      workMs: ms,
      pairs,
      pollIntervalMs: 100,
      plain: summary(plain),
      task: summary(task),
      overhead: summary(overhead),
    }),
  );
} finally {
  await session.close();
  rmSync(dir, { recursive: true, force: true });
}
