/**
 * A `tools/call` to an authenticated remote service, token held, against the same call without
 * authorization (issue 24's bench figure; standalone: `node --import tsx bench/remoteAuthCall.ts`). Both
 * services are test/fixtures/e2e/oauthRemote.cjs (one with `NO_AUTH=1`); the client is the SDK's remote
 * session (`connectRemoteService`), with the stored sign-in from `remoteCredentials` for the first. The
 * token is obtained once before measuring (a loopback sign-in with the scripted browser): refresh is
 * outside the call path. Alternating A B A B, 7 pairs of 200 calls after a warm-up; medians of per-pair p50.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { remoteCredentials } from '../packages/sdk/src/invocation/remoteCredentials.js';
import { openInBrowser, startLoopbackSignIn } from '../packages/sdk/src/sessions/loopbackSignIn.js';
import { connectRemoteService } from '../packages/sdk/src/sessions/remoteService.js';

const repo = resolve(fileURLToPath(new URL('..', import.meta.url)));
const FIXTURE = join(repo, 'test/fixtures/e2e/oauthRemote.cjs');
const BROWSER = join(repo, 'scripts/conformance-browser.mjs');
const PAIRS = 7;
const CALLS = 200;

async function startFixture(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [FIXTURE], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.setEncoding('utf8');
  const url = await new Promise<string>((done, fail) => {
    child.stdout!.on('data', (chunk: string) => {
      out += chunk;
      if (out.includes('\n')) done((JSON.parse(out) as { url: string }).url);
    });
    child.once('exit', () => fail(new Error('fixture exited')));
  });
  return { child, url };
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function callTimes(session: Awaited<ReturnType<typeof connectRemoteService>>, n: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await session.callTool('whoami', {});
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}

const dataDir = mkdtempSync(join(tmpdir(), 'se-bench-auth-'));
const authed = await startFixture({});
const open = await startFixture({ NO_AUTH: '1' });
try {
  const hostEnv = { ...process.env, BROWSER };
  const loopback = await startLoopbackSignIn({ print: () => {}, open: (url) => openInBrowser(url, hostEnv) });
  const login = await connectRemoteService({
    name: 'papers',
    url: authed.url,
    ...remoteCredentials({ name: 'papers', url: authed.url }, { dataDir, projectId: 'bench', hostEnv }, loopback),
  });
  await login.close();
  await loopback.close();
  const a = await connectRemoteService({
    name: 'papers',
    url: authed.url,
    ...remoteCredentials({ name: 'papers', url: authed.url }, { dataDir, projectId: 'bench', hostEnv }),
  });
  const b = await connectRemoteService({ name: 'papers', url: open.url });
  await callTimes(a, 50);
  await callTimes(b, 50);
  const pairs: Array<{ a50: number; b50: number; a99: number; b99: number }> = [];
  for (let i = 0; i < PAIRS; i++) {
    const ta = await callTimes(a, CALLS);
    const tb = await callTimes(b, CALLS);
    pairs.push({ a50: quantile(ta, 0.5), b50: quantile(tb, 0.5), a99: quantile(ta, 0.99), b99: quantile(tb, 0.99) });
  }
  await a.close();
  await b.close();
  const median = (values: number[]) => values.sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
  const a50 = median(pairs.map((p) => p.a50));
  const b50 = median(pairs.map((p) => p.b50));
  const a99 = median(pairs.map((p) => p.a99));
  const b99 = median(pairs.map((p) => p.b99));
  process.stdout.write(
    `${JSON.stringify({ authenticated: { p50: a50, p99: a99 }, unauthenticated: { p50: b50, p99: b99 }, ratioP50: a50 / b50 }, null, 2)}\n`,
  );
} finally {
  authed.child.kill('SIGTERM');
  open.child.kill('SIGTERM');
  rmSync(dataDir, { recursive: true, force: true });
}
