/**
 * Helpers of the viewer tests: `scienceevolve ui` as a real child process (its URL read from stdout), and
 * Debian's chromium driven by playwright-core with a fresh profile, each closed in `t.after` and proven
 * gone — the browser with every process it started.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium } from 'playwright-core';
import { assertGone, isAlive } from '../fixtures/store/children.js';

const BIN = fileURLToPath(new URL('../../packages/cli/bin/scienceevolve.js', import.meta.url));
const DIST = fileURLToPath(new URL('../../packages/cli/dist/main.js', import.meta.url));
/** Debian's chromium (CI installs it: `.ci/run`). */
export const CHROMIUM = '/usr/bin/chromium';
/** Where the timeline screenshot is kept (gitignored). */
export const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

/** A running `scienceevolve ui`. */
export interface UiChild {
  pid: number;
  /** The printed URL, token included. */
  url: string;
  origin: string;
  token: string;
  stderr(): string;
}

/**
 * Starts `scienceevolve ui --data-dir D` and waits for its URL (30 s: loading the CLI costs about half a
 * second of CPU, many times that on a shared CI machine). SIGTERM then SIGKILL and the ESRCH proof are
 * registered at once.
 */
export async function startUi(t: TestContext, dataDir: string, extra: string[] = []): Promise<UiChild> {
  assert.ok(existsSync(DIST), 'the CLI is not built: run `npx tsc --build` (npm test does)');
  const child = spawn(process.execPath, [BIN, 'ui', '--data-dir', dataDir, ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  assert.ok(child.pid !== undefined);
  const pid = child.pid;
  const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  t.after(async () => {
    if (isAlive(pid)) process.kill(pid, 'SIGTERM');
    const timer = setTimeout(() => isAlive(pid) && process.kill(pid, 'SIGKILL'), 5000);
    await closed;
    clearTimeout(timer);
    await assertGone(pid);
  });
  let out = '';
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    err += c;
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL from scienceevolve ui within 30 s:\n${err}`)), 30_000);
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      const line = /^(http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]+)\n/m.exec(out);
      if (line) {
        clearTimeout(timer);
        resolve(line[1]!);
      }
    });
    void closed.then((code) => {
      clearTimeout(timer);
      reject(new Error(`scienceevolve ui exited (${code}) before printing a URL:\n${err}`));
    });
  });
  const parsed = new URL(url);
  return { pid, url, origin: parsed.origin, token: parsed.searchParams.get('token')!, stderr: () => err };
}

/** The parent pid of `pid`, or undefined when it is gone. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** Live processes other than this one whose command line mentions `text`. */
function mentioning(text: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text) && isAlive(pid)) found.push(pid);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Every live process that descends from `root`. */
function descendants(root: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const ppid = parentOf(pid);
    if (ppid !== undefined) parents.set(pid, ppid);
  }
  const found: number[] = [];
  const frontier = [root];
  while (frontier.length > 0) {
    const p = frontier.pop()!;
    for (const [pid, ppid] of parents) {
      if (ppid === p && !found.includes(pid)) {
        found.push(pid);
        frontier.push(pid);
      }
    }
  }
  return found;
}

/** A browser context of chromium with a fresh profile directory. */
export interface Browser {
  context: BrowserContext;
  /** Every chromium process seen while it ran (the browser, its zygotes, renderers, utilities). */
  pids(): number[];
}

/**
 * Launches headless chromium with a fresh user-data-dir. Fails with a clear message when chromium is not
 * installed: the browser tests are never skipped. In `t.after`: the context is closed, then every process
 * chromium started is proven gone (ESRCH), then the profile is removed.
 */
export async function launchChromium(t: TestContext): Promise<Browser> {
  assert.ok(
    existsSync(CHROMIUM),
    `${CHROMIUM} is missing: the viewer tests need Debian's chromium (apt-get install chromium; .ci/run installs it)`,
  );
  const profile = mkdtempSync(join(tmpdir(), 'se-viewer-profile-'));
  const before = new Set(descendants(process.pid));
  const seen = new Set<number>();
  const look = () => {
    for (const pid of descendants(process.pid)) {
      if (before.has(pid)) continue;
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('chromium')) seen.add(pid);
      } catch {
        // gone meanwhile
      }
    }
  };
  t.after(async () => {
    look();
    try {
      await context?.close();
    } finally {
      for (const pid of seen) await assertGone(pid, 10_000);
      // A helper that left the tree (a double fork) still names the profile on its command line.
      const deadline = Date.now() + 10_000;
      while (mentioning(profile).length > 0) {
        if (Date.now() > deadline) assert.fail(`chromium processes left: ${mentioning(profile).join(', ')}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
    }
  });
  let context: BrowserContext | undefined;
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 900 },
  });
  look();
  assert.ok(seen.size > 0, 'chromium started no process this test can see');
  return {
    context,
    pids: () => {
      look();
      return [...seen];
    },
  };
}

/** A request (GET unless told) with the headers given, from Node (not the browser): its status and body. */
export async function get(
  url: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<{ status: number; body: string }> {
  const { request } = await import('node:http');
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, method }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => {
        body += c;
        // An event stream never ends by itself: what came first is enough.
        if (res.headers['content-type']?.startsWith('text/event-stream')) req.destroy();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('close', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}
