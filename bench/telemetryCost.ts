/**
 * The per-call cost of OpenTelemetry export on rows 5a and 5b (docs/telemetry.md), reported beside the
 * benchmarks: `npm run build && node --import tsx bench/telemetryCost.ts [--quick]`.
 *
 * Telemetry starts once per process, so each side runs in a child process of its own, alternating
 * off, on, off, on … (5 pairs, 3 with --quick, after a warm-up pair): a child starts the benchmark
 * service, times sequential `tools/call`s of its `echo` through the in-process surface (5a) and through
 * `services serve` as an external client spawns it (5b), and prints the p50s. "On" points
 * `OTEL_EXPORTER_OTLP_ENDPOINT` at a sink in this process that answers every export with 200, so the cost
 * is the spans, the propagation and the exports, not a remote collector. The figure is the median over
 * pairs of the p50 difference (on − off).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startTelemetry } from '../packages/sdk/dist/events/telemetry.js';
import { createSurface } from '../packages/sdk/dist/surface/surface.js';
import { type BenchContext, makeScratch, median, now, percentile, removeDir } from './lib/common.js';
import { cpuMsOf } from './lib/processes.js';
import { SERVICE, closeSupervisor, setupProject, startOurs } from './lib/services.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const ARGS = { text: 'hello from the benchmark' };

/** A side's figures for one row: p50 latency, and CPU ms per call (of `cpu()`: this process or another). */
interface Figures {
  p50: number;
  cpu: number;
}

async function measure(call: () => Promise<unknown>, count: number, cpu: () => number): Promise<Figures> {
  for (let i = 0; i < 20; i++) await call();
  const samples: number[] = [];
  const before = cpu();
  for (let i = 0; i < count; i++) {
    const start = now();
    await call();
    samples.push(now() - start);
  }
  return { p50: percentile(samples, 50), cpu: (cpu() - before) / count };
}

/** CPU ms of this process so far. */
const ownCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

type Side = { inProcess: Figures; bridge: Figures };

/** Child mode: one side's p50s of 5a and 5b, as one JSON line on stdout. */
async function child(count: number): Promise<void> {
  await startTelemetry();
  const scratch = await makeScratch(`tel${process.pid}`);
  const ctx: BenchContext = { quick: true, token: `tel${process.pid}`, repo: REPO, scratch, log: () => {} };
  try {
    const project = await setupProject(ctx, 'telemetry');
    const services = await startOurs(project, 'solo');
    let inProcess: Figures;
    try {
      const surface = createSurface(services.sessions);
      inProcess = await measure(() => surface.callTool(`${SERVICE}__echo`, ARGS), count, ownCpu);
    } finally {
      await services.close();
    }
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        join(REPO, 'packages/cli/bin/scienceevolve.js'),
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
      ],
      env: { ...getDefaultEnvironment(), ...process.env } as Record<string, string>,
      stderr: 'ignore',
    });
    const client = new Client({ name: 'bench-telemetry', version: '1.0.0' });
    await client.connect(transport);
    let bridge: Figures;
    try {
      // The bridge's CPU: the `services serve` process (the service's own is the same on both sides).
      const servePid = transport.pid!;
      bridge = await measure(
        () => client.callTool({ name: `${SERVICE}__echo`, arguments: ARGS }),
        count,
        () => cpuMsOf(servePid),
      );
    } finally {
      await client.close();
    }
    await closeSupervisor();
    process.stdout.write(`${JSON.stringify({ inProcess, bridge })}\n`);
  } finally {
    await removeDir(scratch);
  }
}

async function side(endpoint: string | undefined, count: number): Promise<Side> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
  const c = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', String(count)], {
    cwd: REPO,
    env: { ...env, ...(endpoint === undefined ? {} : { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  c.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  const [code] = (await once(c, 'close')) as [number | null];
  if (code !== 0) throw new Error(`a ${endpoint === undefined ? 'off' : 'on'} side exited ${code}`);
  return JSON.parse(out.trim().split('\n').at(-1)!) as Side;
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const count = quick ? 300 : 1000;
  const pairs = quick ? 3 : 5;
  let exports = 0;
  const sink = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      exports += 1;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  sink.listen(0, '127.0.0.1');
  await once(sink, 'listening');
  const endpoint = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
  try {
    await side(undefined, 50);
    await side(endpoint, 50);
    const off: Side[] = [];
    const on: Side[] = [];
    for (let i = 0; i < pairs; i++) {
      off.push(await side(undefined, count));
      on.push(await side(endpoint, count));
      process.stderr.write(`pair ${i + 1}: off ${JSON.stringify(off.at(-1))} on ${JSON.stringify(on.at(-1))}\n`);
    }
    const diff = (row: keyof Side, f: keyof Figures) => median(on.map((o, i) => o[row][f] - off[i]![row][f]));
    const p = (list: Side[], row: keyof Side, f: keyof Figures) => median(list.map((x) => x[row][f])).toFixed(3);
    const line = (label: string, row: keyof Side, cpuOf: string) =>
      `${label}: p50 off ${p(off, row, 'p50')} ms, on ${p(on, row, 'p50')} ms (+${diff(row, 'p50').toFixed(3)} ms); ` +
      `CPU per call in ${cpuOf} off ${p(off, row, 'cpu')} ms, on ${p(on, row, 'cpu')} ms (+${diff(row, 'cpu').toFixed(3)} ms)`;
    process.stdout.write(
      [
        line('5a in-process surface', 'inProcess', 'the host'),
        line('5b stdio bridge', 'bridge', 'the bridge process (10 ms ticks)'),
        `(${pairs} pairs of ${count} calls each side; ${exports} export requests received)`,
      ].join('\n') + '\n',
    );
  } finally {
    sink.close();
  }
}

const at = process.argv.indexOf('--child');
if (at !== -1) await child(Number(process.argv[at + 1]));
else await main();
