/** Runs the built `scienceevolve` bin as a real child process and proves it gone afterwards. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { assertGone } from '../fixtures/store/children.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BIN = fileURLToPath(new URL('../../packages/cli/bin/scienceevolve.js', import.meta.url));
const DIST = fileURLToPath(new URL('../../packages/cli/dist/main.js', import.meta.url));

/** What one run of the CLI did. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (undefined when it is not JSON). */
  json: unknown;
}

/** A stack frame line as V8 prints it. */
const STACK_FRAME = /^\s+at .*(\(.*:\d+:\d+\)|:\d+:\d+)$/m;

/**
 * Runs `scienceevolve ...args` from the repository root (with `options.env` as its environment when given). Asserts that no stack trace reached stderr and
 * that the process is gone. Timeout 30 s: a command here does no network and starts no service and
 * takes well under a second, but loading the CLI costs about half a second of CPU and a shared CI
 * machine can stretch that many times over.
 */
export async function runCli(
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<CliResult> {
  assert.ok(existsSync(DIST), 'the CLI is not built: run `npx tsc --build` (npm test does)');
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: options.env ?? process.env,
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
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  clearTimeout(timer);
  assert.ok(child.pid !== undefined);
  await assertGone(child.pid);
  assert.doesNotMatch(stderr, STACK_FRAME, `no stack trace on stderr without --debug:\n${stderr}`);
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  return { code, stdout, stderr, json };
}

/** The fixture path of a workflow document. */
export function workflowFixture(name: string): string {
  return fileURLToPath(new URL(`../fixtures/workflows/${name}`, import.meta.url));
}

/** Asserts the CLI's error document: `{ ok: false, error: { code, message, remedy?, data? } }`. */
export function assertErrorJson(
  json: unknown,
  code: string,
): { code: string; message: string; remedy?: string; data?: Record<string, unknown> } {
  const doc = json as { ok: boolean; error: { code: string; message: string; remedy?: string } };
  assert.deepEqual(Object.keys(doc).sort(), ['error', 'ok']);
  assert.equal(doc.ok, false);
  assert.equal(doc.error.code, code);
  assert.equal(typeof doc.error.message, 'string');
  for (const key of Object.keys(doc.error)) assert.ok(['code', 'message', 'remedy', 'data'].includes(key), key);
  return doc.error;
}
