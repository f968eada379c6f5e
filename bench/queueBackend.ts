/**
 * Benchmark 12: the queue backend on one machine. A run whose Main delegates N invocations (64; 8 with
 * --quick), each with 2 services, one after another, in one process (the baseline) and through a real
 * redis-server to 1, 2 and 3 local `scienceevolve worker` processes. Main delegates one at a time, so the
 * workers never run two invocations at once: on one machine the figure is the queue's overhead per
 * invocation (job round trip, definitions checked and stored on the worker, events carried back), not a
 * speed-up. One sample per configuration (the whole row takes minutes).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runWorkflow } from '../packages/sdk/dist/index.js';
import { type BenchContext, type ResultRow, ms, now, ratio, scratchDir } from './lib/common.js';
import { exited } from './lib/processes.js';

export async function queueBackendBench(ctx: BenchContext): Promise<ResultRow[]> {
  const n = ctx.quick ? 8 : 64;
  const dir = await scratchDir(ctx, 'queue-');
  const service = readFileSync(join(ctx.repo, 'bench/fixtures/benchService.cjs'), 'utf8');
  const workflow = {
    orchestration: { invocationRetries: 0 },
    agents: {
      main: { harness: { type: 'scripted' }, mcpServers: [] },
      analyst: {
        harness: { type: 'scripted' },
        mcpServers: [
          { name: 'one', project: 'one' },
          { name: 'two', project: 'two' },
        ],
      },
    },
    mcpDefinitions: {
      one: { entrypoint: 'server.cjs', files: { 'server.cjs': service } },
      // A second definition (a different digest), so each invocation starts two processes.
      two: { entrypoint: 'server.cjs', files: { 'server.cjs': `${service}\n// two\n` } },
    },
  };
  const script = {
    agents: {
      main: [
        ...Array.from({ length: n }, (_, i) => ({
          call: 'scienceevolve__delegate',
          arguments: { agent: 'analyst', task: `task ${i}` },
        })),
        { final: 'done' },
      ],
      analyst: Array.from({ length: n }, () => ({ final: 'ok' })),
    },
  };
  const runOnce = async (label: string, queue?: string): Promise<number> => {
    const workspace = join(dir, `ws-${label}`);
    await mkdir(workspace, { recursive: true });
    const start = now();
    const result = await runWorkflow({
      dataDir: join(dir, `data-${label}`),
      project: `bench-${ctx.token}-queue-${label}`,
      workspace,
      workflow,
      script,
      requirement: 'bench',
      startupBudgetMs: 180_000,
      ...(queue === undefined ? {} : { queue }),
    });
    const elapsed = now() - start;
    if (result.status !== 'succeeded') throw new Error(`the ${label} run ${result.status}: ${result.error?.message}`);
    return elapsed;
  };

  const local = await runOnce('local');
  ctx.log(`  ${n} invocations in one process: ${ms(local)}`);
  const redis = await startRedis(dir);
  const queued: number[] = [];
  try {
    for (const k of [1, 2, 3]) {
      const workers = await Promise.all(
        Array.from({ length: k }, (_, i) => startWorker(ctx, redis.url, join(dir, `worker-${k}-${i}`))),
      );
      try {
        queued.push(await runOnce(`queue-${k}`, redis.url));
        ctx.log(`  ${n} invocations over ${k} worker(s): ${ms(queued.at(-1)!)}`);
      } finally {
        for (const w of workers) w.kill('SIGTERM');
        await Promise.all(workers.map((w) => exited(w)));
      }
    }
  } finally {
    redis.child.kill('SIGKILL');
    await exited(redis.child);
  }
  const perInvocation = (total: number) => ms((total - local) / n);
  return [
    {
      id: '12',
      measure: `the queue backend: ${n} invocations over 1, 2, 3 local workers`,
      baseline: `the same ${n} in one process`,
      ours: queued.map((q, i) => `${i + 1} worker${i === 0 ? '' : 's'}: ${ms(q)}`).join('; '),
      theirs: ms(local),
      figure: queued.map((q) => ratio(q / local)).join(' / '),
      goal: "reported: the queue's overhead on one machine",
      verdict: 'n/a',
      notes: `one sample each; Main delegates one invocation at a time, so more workers on one machine cannot go faster: the figure is the queue's overhead (${queued.map(perInvocation).join(' / ')} per invocation), not a speed-up; single samples, so on a busy machine a figure below 1× is noise`,
      data: { invocations: n, localMs: local, queuedMs: queued },
    },
  ];
}

async function startRedis(dir: string): Promise<{ url: string; child: ChildProcess }> {
  const socket = join(dir, 'redis.sock');
  const child = spawn('redis-server', ['--port', '0', '--unixsocket', socket, '--dir', dir, '--save', ''], {
    stdio: 'ignore',
  });
  const deadline = Date.now() + 10_000;
  while (!existsSync(socket)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error('redis-server did not start');
    await sleep(20);
  }
  return { url: `unix://${socket}`, child };
}

async function startWorker(ctx: BenchContext, url: string, dataDir: string): Promise<ChildProcess> {
  const bin = join(ctx.repo, 'packages/cli/bin/scienceevolve.js');
  const child = spawn(process.execPath, [bin, 'worker', '--queue', url, '--data-dir', dataDir], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => {
    err += c;
  });
  const deadline = Date.now() + 60_000;
  while (!/ready/.test(err)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the worker did not start:\n${err}`);
    await sleep(20);
  }
  return child;
}
