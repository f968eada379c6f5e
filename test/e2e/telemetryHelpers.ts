/**
 * Helpers of the telemetry end-to-end tests: the built CLI run as a child process with OTLP export
 * pointed at a test receiver (test/fixtures/otel/otlpReceiver.ts), and checks of the trace it sent.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import type { ReceivedSpan } from '../fixtures/otel/otlpReceiver.js';
import { assertGone, BIN, ROOT } from './helpers.js';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  json: unknown;
  /** Milliseconds from spawn to exit. */
  ms: number;
}

/** Runs the built CLI with `env` added to this process's (OTEL_* of this process removed first). */
export async function runCliWith(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 120_000): Promise<CliRun> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
  const started = Date.now();
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    stdout += c;
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  const ms = Date.now() - started;
  clearTimeout(timer);
  assert.ok(child.pid !== undefined);
  await assertGone(child.pid);
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  return { code, stdout, stderr, json, ms };
}

/** A port on 127.0.0.1 that nothing listens on (bound, then closed): a collector that is down. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Polls until `ready()` holds, to `timeoutMs` (default 10 s); spans of a child may arrive a little later. */
export async function until(ready: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ready() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
}

/** Asserts `spans` form one trace under one root, every parent among them; returns the trace id. */
export function assertOneTrace(spans: readonly ReceivedSpan[], root = 'scienceevolve.run'): string {
  assert.ok(spans.length > 0, 'spans were received');
  const traces = new Set(spans.map((s) => s.traceId));
  assert.equal(traces.size, 1, `one trace: ${[...traces].join(', ')}`);
  const ids = new Set(spans.map((s) => s.spanId));
  const roots = spans.filter((s) => s.parentSpanId === '');
  assert.deepEqual(
    roots.map((s) => s.name),
    [root],
    'one root span',
  );
  for (const s of spans) {
    if (s.parentSpanId !== '') assert.ok(ids.has(s.parentSpanId), `the parent of ${s.name} was received`);
  }
  return [...traces][0]!;
}

/** The span `s`'s parent among `spans`. */
export function parentOf(spans: readonly ReceivedSpan[], s: ReceivedSpan): ReceivedSpan | undefined {
  return spans.find((p) => p.spanId === s.parentSpanId);
}

/** Lines of `stderr` that report dropped spans. */
export function droppedLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => /OpenTelemetry: \d+ spans? could not be exported/.test(l));
}
