/**
 * Benchmark 5: `tools/call` round trip (sequential calls of the service's `echo`), p50 and p99, three
 * comparisons, each alternating batches A B A B … after a warm-up batch of each:
 *
 * - in-process surface (`createSurface` over an invocation's session) vs. the official v1 client
 *   directly on the same service (goal: p50 at most 0.1 ms more);
 * - the stdio face as users get it — `scienceevolve services serve` spawned by the v1 client's
 *   `StdioClientTransport` — vs. the direct client (goal: p50 at most 1.5×);
 * - the HTTP face as users get it — `scienceevolve services serve --http` (`serveHttp`) — vs.
 *   supergateway 4 `--stateful --outputTransport streamableHttp` in front of the same service, both
 *   called with the v1 `StreamableHTTPClientTransport` over 127.0.0.1 (goal: p50 at most 0.5×).
 *
 * The figure of a comparison is the median over pairs of the per-pair p50 ratio (or difference); p99 is
 * over every call of a side.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cp, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createSurface } from '../packages/sdk/dist/surface/surface.js';
import { processFacts } from '../packages/sdk/dist/invocation/invocation.js';
import { serviceNodePath } from '../packages/sdk/dist/processes/serviceEnv.js';
import {
  BENCH_RUN_ENV,
  type BenchContext,
  type ResultRow,
  failedRow,
  median,
  ms,
  now,
  percentile,
  ratio,
  runPairs,
} from './lib/common.js';
import { cpuMsOf, descendantsOf, exited, freePort, killWithEnv, stopGroup } from './lib/processes.js';
import { type BenchProject, SERVICE, startBaseline, startOurs } from './lib/services.js';

type Call = () => Promise<unknown>;

const ARGS = { text: 'hello from the benchmark' };

/** Runs `count` sequential calls; returns each round trip in ms. */
async function batch(call: Call, count: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = now();
    const result = (await call()) as { isError?: boolean };
    samples.push(now() - start);
    if (result?.isError) throw new Error(`a call failed: ${JSON.stringify(result)}`);
  }
  return samples;
}

interface Comparison {
  a: number[];
  b: number[];
  p50a: number[];
  p50b: number[];
  ratios: number[];
  diffs: number[];
  /** CPU ms per call over the timed batches: of this process, and of the other processes named. */
  cpuPerCall: { a: { host: number; others: number }; b: { host: number; others: number } };
}

/** Which other processes' CPU time to count for each side (the bridge, the gateway, the service). */
interface CpuPids {
  a: () => number[];
  b: () => number[];
}

async function compare(
  ctx: BenchContext,
  label: string,
  a: Call,
  b: Call,
  count: number,
  pids: CpuPids = { a: () => [], b: () => [] },
): Promise<Comparison> {
  const samples = { a: [] as number[], b: [] as number[] };
  const cpu = { a: { host: 0, others: 0 }, b: { host: 0, others: 0 } };
  const pairs = ctx.quick ? 5 : 10;
  let timed = false;
  const side = async (which: 'a' | 'b', call: Call, others: number[]) => {
    const hostBefore = process.cpuUsage();
    const othersBefore = others.reduce((sum, pid) => sum + cpuMsOf(pid), 0);
    const batchSamples = await batch(call, count);
    const host = process.cpuUsage(hostBefore);
    if (timed) {
      samples[which].push(...batchSamples);
      cpu[which].host += (host.user + host.system) / 1000;
      cpu[which].others += others.reduce((sum, pid) => sum + cpuMsOf(pid), 0) - othersBefore;
    }
    return percentile(batchSamples, 50);
  };
  let warmups = 0;
  const result = await runPairs(ctx, label, {
    warmup: 1,
    pairs,
    a: () => side('a', a, pids.a()),
    b: async () => {
      const p50 = await side('b', b, pids.b());
      // The first pair runPairs runs is the warm-up: count from the next one.
      if (++warmups === 1) timed = true;
      return p50;
    },
  });
  const calls = pairs * count;
  const perCall = (c: { host: number; others: number }) => ({ host: c.host / calls, others: c.others / calls });
  return {
    a: samples.a,
    b: samples.b,
    p50a: result.a,
    p50b: result.b,
    ratios: result.ratios,
    diffs: result.diffs,
    cpuPerCall: { a: perCall(cpu.a), b: perCall(cpu.b) },
  };
}

function figures(c: Comparison): Record<string, unknown> {
  return {
    oursP50PerPair: c.p50a,
    baselineP50PerPair: c.p50b,
    oursP50: percentile(c.a, 50),
    oursP99: percentile(c.a, 99),
    baselineP50: percentile(c.b, 50),
    baselineP99: percentile(c.b, 99),
    ratios: c.ratios,
    diffsMs: c.diffs,
    calls: c.a.length,
    cpuMsPerCall: c.cpuPerCall,
  };
}

/** "CPU per call: ours X (host) + Y (others), baseline …" for a row's notes. */
function cpuNote(c: Comparison, othersA: string, othersB: string): string {
  const f = (v: number) => `${v.toFixed(3)} ms`;
  const { a, b } = c.cpuPerCall;
  return `CPU per call (load-independent): ours ${f(a.host)} in this process + ${f(a.others)} in ${othersA}; baseline ${f(b.host)} + ${f(b.others)} in ${othersB}`;
}

const lat = (samples: number[]) => `p50 ${ms(percentile(samples, 50))}, p99 ${ms(percentile(samples, 99))}`;

/** The CLI's command line for `services serve` of agent `solo` of the project. */
function serveArgs(ctx: BenchContext, project: BenchProject, extra: string[]): string[] {
  return [
    join(ctx.repo, 'packages', 'cli', 'bin', 'scienceevolve.js'),
    'services',
    'serve',
    '--data-dir',
    project.dataDir,
    '--project',
    project.projectId,
    '--workspace',
    project.workspace,
    '--agent',
    'solo',
    ...extra,
  ];
}

/** Starts `services serve --http` and resolves with its URL and token once it listens. */
async function startHttpFace(
  ctx: BenchContext,
  project: BenchProject,
): Promise<{ child: ChildProcess; url: string; token: string }> {
  const tokenFile = join(project.dataDir, `token-${Date.now()}`);
  const child = spawn(process.execPath, serveArgs(ctx, project, ['--http', '--token-file', tokenFile, '--json']), {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr?.resume();
  try {
    // `--json` prints one JSON document (pretty-printed): read until it parses.
    let text = '';
    const info = await Promise.race([
      new Promise<{ url: string }>((resolve) => {
        child.stdout!.on('data', (chunk: Buffer) => {
          text += chunk.toString('utf8');
          try {
            resolve(JSON.parse(text) as { url: string });
          } catch {
            // Not complete yet.
          }
        });
      }),
      exited(child).then(() => {
        throw new Error('services serve --http exited before it printed its URL');
      }),
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('services serve --http did not print its URL within 30 s')), 30_000).unref(),
      ),
    ]);
    const token = (await readFile(tokenFile, 'utf8')).trim();
    return { child, url: info.url, token };
  } catch (error) {
    await stopGroup(child);
    throw error;
  }
}

/** Starts supergateway in front of a copy of the service and resolves once it answers. */
async function startSupergateway(
  ctx: BenchContext,
  project: BenchProject,
): Promise<{ child: ChildProcess; url: string }> {
  const digest = project.version.digests[SERVICE]!;
  const dir = join(project.baselineRoot, `supergateway-${Date.now()}`);
  await mkdir(dir, { recursive: true });
  await cp(project.paths.sourceDir(digest, SERVICE), join(dir, SERVICE), { recursive: true });
  const port = await freePort();
  const command = `${process.execPath} ${join(dir, SERVICE, 'server.cjs')}`;
  const child = spawn(
    process.execPath,
    [
      join(ctx.repo, 'node_modules', 'supergateway', 'dist', 'index.js'),
      '--stdio',
      command,
      '--outputTransport',
      'streamableHttp',
      '--stateful',
      '--port',
      String(port),
      '--logLevel',
      'none',
    ],
    {
      cwd: project.workspace,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_PATH: serviceNodePath(), SCIENCEEVOLVE_BENCH_GATEWAY: ctx.token },
    },
  );
  child.stdout?.resume();
  child.stderr?.resume();
  const url = `http://127.0.0.1:${port}/mcp`;
  // Ready when the port accepts connections.
  const until = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`supergateway exited with ${child.exitCode}`);
    try {
      await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1000) });
      break;
    } catch {
      if (Date.now() > until) {
        await stopGroup(child);
        throw new Error('supergateway did not listen within 30 s');
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return { child, url };
}

async function httpClient(
  url: string,
  token?: string,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(
    new URL(url),
    token === undefined ? {} : { requestInit: { headers: { Authorization: `Bearer ${token}` } } },
  );
  const client = new Client({ name: 'bench-http', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

const SURFACE_NAME = `${SERVICE}__echo`;

/** Runs `body` with a cleanup list that is always run, last in first out, each step even when one throws. */
async function withCleanups<T>(
  ctx: BenchContext,
  body: (defer: (c: () => Promise<unknown>) => void) => Promise<T>,
): Promise<T> {
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    return await body((c) => cleanups.push(c));
  } finally {
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((error) => ctx.log(`  cleanup failed: ${String(error)}`));
    }
  }
}

/** The direct baseline: the v1 client on a copy of the service. */
async function startDirect(
  project: BenchProject,
  defer: (c: () => Promise<unknown>) => void,
): Promise<{ call: Call; pids: () => number[] }> {
  const direct = await startBaseline(project, SERVICE);
  defer(() => direct.close());
  return {
    call: () => direct.client.callTool({ name: 'echo', arguments: ARGS }),
    pids: () => (direct.pid === undefined ? [] : [direct.pid]),
  };
}

/** A process and its descendants, looked up when asked. */
const tree = (pid: number | undefined) => () => (pid === undefined ? [] : [pid, ...descendantsOf(pid)]);

function inProcessRow(ctx: BenchContext, project: BenchProject, count: number): Promise<ResultRow> {
  return withCleanups(ctx, async (defer) => {
    const direct = await startDirect(project, defer);
    const services = await startOurs(project, 'solo');
    defer(() => services.close());
    const surface = createSurface(services.sessions);
    if (!surface.tools.some((t) => t.name === SURFACE_NAME)) throw new Error(`the surface has no ${SURFACE_NAME}`);
    const servicePid = processFacts(services.sessions[0]).pid;
    const c = await compare(ctx, 'in-process surface', () => surface.callTool(SURFACE_NAME, ARGS), direct.call, count, {
      a: () => (servicePid === undefined ? [] : [servicePid]),
      b: direct.pids,
    });
    const diff = median(c.diffs);
    return {
      id: '5a',
      measure: '`tools/call` through the in-process surface',
      baseline: 'official v1 client, direct stdio to the same service',
      ours: lat(c.a),
      theirs: lat(c.b),
      figure: `${diff >= 0 ? '+' : ''}${diff.toFixed(3)} ms p50`,
      goal: '≤ +0.1 ms p50',
      verdict: diff <= 0.1 ? 'met' : 'missed',
      notes: `median over ${c.ratios.length} pairs of batches of ${count} sequential calls (after a warm-up batch each) of the per-pair p50 difference; p99 over all calls of a side; ${cpuNote(c, 'the service', 'the service')}`,
      data: figures(c),
    };
  });
}

function stdioFaceRow(ctx: BenchContext, project: BenchProject, count: number): Promise<ResultRow> {
  return withCleanups(ctx, async (defer) => {
    const direct = await startDirect(project, defer);
    // The stdio face as users get it: `services serve` launched by an MCP client.
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: serveArgs(ctx, project, []),
      env: { ...getDefaultEnvironment(), [BENCH_RUN_ENV]: ctx.token },
      cwd: project.workspace,
      stderr: 'pipe',
    });
    transport.stderr?.on('data', () => {});
    const client = new Client({ name: 'bench-stdio-face', version: '1.0.0' });
    defer(async () => {
      await client.close().catch(() => {});
      await transport.close().catch(() => {});
    });
    await client.connect(transport);
    const c = await compare(
      ctx,
      'stdio face',
      () => client.callTool({ name: SURFACE_NAME, arguments: ARGS }),
      direct.call,
      count,
      { a: tree(transport.pid ?? undefined), b: direct.pids },
    );
    const r = median(c.ratios);
    return {
      id: '5b',
      measure: '`tools/call` through the stdio face (`services serve`)',
      baseline: 'official v1 client, direct stdio to the same service',
      ours: lat(c.a),
      theirs: lat(c.b),
      figure: `${ratio(r)} p50`,
      goal: '≤ 1.5× p50',
      verdict: r <= 1.5 ? 'met' : 'missed',
      notes: `the v1 client launches \`scienceevolve services serve\` (one more process hop than direct); median over ${c.ratios.length} pairs of batches of ${count} sequential calls of the per-pair p50 ratio; ${cpuNote(c, 'the face process and the service', 'the service')}`,
      data: figures(c),
    };
  });
}

function httpFaceRow(ctx: BenchContext, project: BenchProject, count: number): Promise<ResultRow> {
  return withCleanups(ctx, async (defer) => {
    const face = await startHttpFace(ctx, project);
    defer(() => stopGroup(face.child));
    const gateway = await startSupergateway(ctx, project);
    defer(async () => {
      await stopGroup(gateway.child);
      await killWithEnv('SCIENCEEVOLVE_BENCH_GATEWAY', ctx.token);
    });
    const ours = await httpClient(face.url, face.token);
    defer(() => ours.client.close());
    const theirs = await httpClient(gateway.url);
    defer(async () => {
      await theirs.transport.terminateSession().catch(() => {});
      await theirs.client.close();
    });
    const c = await compare(
      ctx,
      'HTTP face',
      () => ours.client.callTool({ name: SURFACE_NAME, arguments: ARGS }),
      () => theirs.client.callTool({ name: 'echo', arguments: ARGS }),
      count,
      { a: tree(face.child.pid), b: tree(gateway.child.pid) },
    );
    const r = median(c.ratios);
    return {
      id: '5c',
      measure: '`tools/call` through the HTTP face (`services serve --http`)',
      baseline: 'supergateway 4.0.0 `--stateful --outputTransport streamableHttp` in front of the same service',
      ours: lat(c.a),
      theirs: lat(c.b),
      figure: `${ratio(r)} p50`,
      goal: '≤ 0.5× p50',
      verdict: r <= 0.5 ? 'met' : 'missed',
      notes: `both called with the v1 StreamableHTTPClientTransport on 127.0.0.1 (supergateway has no bind option and listens on all interfaces); median over ${c.ratios.length} pairs of batches of ${count} sequential calls of the per-pair p50 ratio; ${cpuNote(c, 'the face process and the service', 'supergateway and the service')}`,
      data: figures(c),
    };
  });
}

export async function toolCallBench(ctx: BenchContext, project: BenchProject): Promise<ResultRow[]> {
  const count = ctx.quick ? 60 : 300;
  const httpCount = ctx.quick ? 30 : 100;
  const sections: [string, string, string, () => Promise<ResultRow>][] = [
    ['5a', '`tools/call` through the in-process surface', '≤ +0.1 ms p50', () => inProcessRow(ctx, project, count)],
    ['5b', '`tools/call` through the stdio face', '≤ 1.5× p50', () => stdioFaceRow(ctx, project, count)],
    ['5c', '`tools/call` through the HTTP face', '≤ 0.5× p50', () => httpFaceRow(ctx, project, httpCount)],
  ];
  const rows: ResultRow[] = [];
  for (const [id, measure, goal, run] of sections) {
    const t0 = now();
    try {
      rows.push(await run());
      ctx.log(`  ${id}: ${((now() - t0) / 1000).toFixed(1)} s`);
    } catch (error) {
      ctx.log(`  ${id} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      rows.push(failedRow(id, measure, goal, error));
    }
  }
  return rows;
}
