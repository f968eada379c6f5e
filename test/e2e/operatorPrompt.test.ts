/**
 * The operator answers a service's question on the CLI's terminal (SPEC §7, `agents.<name>.elicitation:
 * "operator"`), for real: the built CLI runs under a pseudo-terminal (util-linux `script -qfec CMD
 * /dev/null`, so its stdin and stderr are a TTY) against a 2025-11-25 service (v1 SDK) that asks with
 * `elicitation/create`; the test types into the terminal as an operator would. Typed answer → the service
 * books with it (the secret field not echoed, `REDACTED` in the journal); `!decline` → the service is told
 * decline; Ctrl-C at the prompt cancels the run. Unattended (no TTY) the call fails `question_unanswered`
 * with the question. Every process (script, the CLI, its supervisor and service) is proven gone.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { runEventsPath, runRecordPath, type RunRecord } from '../../packages/sdk/src/engine/runRecord.js';
import type { RunEvent } from '../../packages/sdk/src/events/runEvents.js';
import { ProjectPaths } from '../../packages/sdk/src/store/projectStore.js';
import { runCliToEnd } from '../fixtures/engine/cli.js';
import { assertGone } from '../fixtures/store/children.js';
import { assertNothingLeft, type EngineSandbox, ofType, sandbox } from '../sdk/engine/helpers.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = fileURLToPath(new URL('../../packages/cli/bin/scienceevolve.js', import.meta.url));
const SECRET = 'tok-s3cr3t-9417';

/** The CLI on a pseudo-terminal: what the terminal shows, typing into it, and every pid seen under it. */
interface PtyCli {
  child: ChildProcess;
  /** Everything the terminal showed (stdout and stderr of the CLI, and the echo of what was typed). */
  screen(): string;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  type(text: string): void;
  exited: Promise<number | null>;
  /** `script` and every process seen under it (the CLI, its supervisor, the service). */
  pids(): number[];
}

/** A shell word: the argument in single quotes. */
function quoted(arg: string): string {
  return `'${arg.replaceAll("'", "'\\''")}'`;
}

/** Every live process that descends from `root`. */
function descendants(root: number): number[] {
  const children = (pid: number): number[] => {
    try {
      return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
        readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
      );
    } catch {
      return [];
    }
  };
  const found: number[] = [];
  const frontier = [root];
  while (frontier.length > 0) {
    for (const pid of children(frontier.pop()!)) {
      if (found.includes(pid)) continue;
      found.push(pid);
      frontier.push(pid);
    }
  }
  return found;
}

/** Starts `scienceevolve ...args` under `script` (a pty); killed and every pid proven gone in `t.after`. */
function startInPty(t: TestContext, args: string[]): PtyCli {
  assert.ok(existsSync('/usr/bin/script'), 'util-linux `script` is missing: apt-get install util-linux');
  const command = `exec ${[process.execPath, BIN, ...args].map(quoted).join(' ')}`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, TERM: 'xterm' },
  });
  assert.ok(child.pid !== undefined);
  const seen = new Set<number>([child.pid]);
  const look = setInterval(() => {
    for (const pid of descendants(child.pid!)) seen.add(pid);
  }, 50);
  let screen = '';
  const wakers = new Set<() => void>();
  const take = (chunk: string) => {
    // What the terminal shows: readline's cursor moves and line clears taken out.
    screen += chunk.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');
    for (const wake of [...wakers]) wake();
  };
  child.stdout!.setEncoding('utf8').on('data', take);
  child.stderr!.setEncoding('utf8').on('data', take);
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  void exited.then(() => clearInterval(look));
  t.after(async () => {
    clearInterval(look);
    for (const pid of seen) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await exited;
    for (const pid of seen) await assertGone(pid);
  });
  return {
    child,
    screen: () => screen,
    exited,
    pids: () => [...seen],
    type: (text) => child.stdin!.write(text),
    waitFor: (pattern, timeoutMs = 120_000) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (pattern.test(screen)) {
            wakers.delete(check);
            clearTimeout(timer);
            resolve();
          }
        };
        const timer = setTimeout(() => {
          wakers.delete(check);
          reject(new Error(`the terminal did not show ${pattern} within ${timeoutMs} ms:\n${screen}`));
        }, timeoutMs);
        wakers.add(check);
        void exited.then(() => {
          if (!pattern.test(screen)) {
            clearTimeout(timer);
            reject(new Error(`the CLI exited before the terminal showed ${pattern}:\n${screen}`));
          }
        });
        check();
      }),
  };
}

/** A project whose Main books a trip with the 2025-era asking service, the operator answering. */
async function operatorProject(t: TestContext, extra: string[] = []) {
  const box = await sandbox(t);
  const workflow = join(box.base, 'workflow.json');
  const script = join(box.base, 'script.json');
  await writeFile(
    workflow,
    JSON.stringify({
      agents: {
        main: {
          harness: { type: 'scripted' },
          mcpServers: [{ name: 'trips', project: 'trips' }],
          elicitation: 'operator',
        },
      },
      mcpDefinitions: {
        trips: {
          entrypoint: 'server.cjs',
          files: { 'server.cjs': readFileSync(new URL('../fixtures/elicitation/asksV1.cjs', import.meta.url), 'utf8') },
        },
      },
    }),
  );
  await writeFile(
    script,
    JSON.stringify({
      agents: { main: [{ call: 'trips__book', arguments: { city: 'Oslo' } }, { final: 'answer: {{0}}' }] },
    }),
  );
  const args = [
    'run',
    '--data-dir',
    box.dataDir,
    '--project',
    box.project,
    '--grace-ms',
    '300',
    ...extra,
    '--workspace',
    box.workspace,
    '--workflow',
    workflow,
    '--script',
    script,
    'book a trip',
  ];
  return { box, args };
}

function runOf(box: EngineSandbox, screen: string): { record: RunRecord; events: RunEvent[] } {
  const runId = /run (run-\S+) started/.exec(screen)?.[1];
  assert.ok(runId !== undefined, `no run started:\n${screen}`);
  const paths = new ProjectPaths(box.dataDir, box.project);
  const record = JSON.parse(readFileSync(runRecordPath(paths, runId), 'utf8')) as RunRecord;
  const events = readFileSync(runEventsPath(paths, runId), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as RunEvent);
  return { record, events };
}

/** Every file under `root` whose bytes hold `text`. */
function filesHolding(root: string, text: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      const st = statSync(path, { throwIfNoEntry: false });
      if (st?.isDirectory()) walk(path);
      else if (st?.isFile() && readFileSync(path).includes(text)) found.push(path);
    }
  };
  walk(root);
  return found;
}

test('script(1) is installed: the pty tests need it', () => {
  // util-linux: a pseudo-terminal without any new dependency.
  assert.match(execFileSync('script', ['--version'], { encoding: 'utf8' }), /util-linux/);
});

test('attended: the operator types the answer on the terminal, slower than the forwarding timeout; the service books with it, the secret unechoed', {
  timeout: 180_000,
}, async (t) => {
  // A person takes longer than a service should: the 2 s forwarding timeout waits while they answer.
  const { box, args } = await operatorProject(t, ['--forward-timeout-ms', '2000']);
  const cli = startInPty(t, args);
  await cli.waitFor(/\[main\] a service asks: Which date should the trip to Oslo be\?/);
  await cli.waitFor(/ {2}date \(string, YYYY-MM-DD; !decline, !cancel\): /);
  await sleep(3500);
  cli.type('2027-05-01\r');
  await cli.waitFor(/ {2}access_token \(string, [^)]*secret, not echoed; !decline, !cancel\): /);
  cli.type(`${SECRET}\r`);
  assert.equal(await cli.exited, 0, cli.screen());
  const { record, events } = runOf(box, cli.screen());
  assert.equal(record.status, 'succeeded');
  assert.equal(record.output, 'answer: booked Oslo on 2027-05-01', 'the service got the typed date');
  assert.equal(readFileSync(join(box.workspace, 'asks.log'), 'utf8'), 'asked\n', 'asked once');
  const questions = ofType(events, 'tool.question');
  assert.deepEqual(
    questions.map((q) => [q.policy, q.action, q.content]),
    [['operator', 'accept', { date: '2027-05-01', access_token: 'REDACTED' }]],
  );
  assert.ok(!cli.screen().includes(SECRET), `the secret was echoed:\n${cli.screen()}`);
  assert.deepEqual(filesHolding(box.dataDir, SECRET), [], 'the secret is in no file of the data dir');
  await assertNothingLeft(box.project, events);
  for (const pid of cli.pids()) await assertGone(pid);
});

test('attended: !decline at the prompt tells the service decline', { timeout: 180_000 }, async (t) => {
  const { box, args } = await operatorProject(t);
  const cli = startInPty(t, args);
  await cli.waitFor(/ {2}date \(string, YYYY-MM-DD; !decline, !cancel\): /);
  cli.type('!decline\r');
  assert.equal(await cli.exited, 0, cli.screen());
  const { record, events } = runOf(box, cli.screen());
  assert.equal(record.output, 'answer: not booked: decline');
  assert.deepEqual(
    ofType(events, 'tool.question').map((q) => [q.policy, q.action, q.content]),
    [['operator', 'decline', undefined]],
  );
  await assertNothingLeft(box.project, events);
  for (const pid of cli.pids()) await assertGone(pid);
});

test('attended: Ctrl-C at the prompt cancels the run, nothing left', { timeout: 180_000 }, async (t) => {
  const { box, args } = await operatorProject(t);
  const cli = startInPty(t, args);
  await cli.waitFor(/ {2}date \(string, YYYY-MM-DD; !decline, !cancel\): /);
  cli.type('\x03');
  const code = await cli.exited;
  assert.notEqual(code, 0, cli.screen());
  const { record, events } = runOf(box, cli.screen());
  assert.equal(record.status, 'cancelled', cli.screen());
  await assertNothingLeft(box.project, events);
  for (const pid of cli.pids()) await assertGone(pid);
});

test('unattended (no terminal): the call fails question_unanswered with the question', {
  timeout: 180_000,
}, async (t) => {
  const { box, args } = await operatorProject(t);
  const done = await runCliToEnd(t, args, 120_000);
  const { record, events } = runOf(box, done.stderr);
  const called = ofType(events, 'tool.called');
  assert.equal(called.length, 1);
  assert.equal(called[0]!.ok, false);
  assert.equal(called[0]!.code, 'question_unanswered');
  assert.match(called[0]!.summary, /Which date should the trip to Oslo be\?/);
  assert.match(called[0]!.summary, /"date"/);
  assert.deepEqual(
    ofType(events, 'tool.question').map((q) => [q.policy, q.action]),
    [['operator', 'cancel']],
  );
  assert.match(record.output ?? '', /no one could answer: Which date should the trip to Oslo be\?/);
  assert.match(done.stderr, /trips__book answered an error \[question_unanswered\]: service "trips" asked/);
  await assertNothingLeft(box.project, events);
});
