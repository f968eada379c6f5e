/**
 * `scienceevolve run`, `status` and the demo as a user runs them: the built CLI in a child process. Each run
 * starts real Node services (1–2 s each on 2 cores); timeouts are set for that.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { RunStatusReport, StatusReport } from '../../packages/sdk/src/engine/runStatus.js';
import type { RunEvent } from '../../packages/sdk/src/events/runEvents.js';
import { runCliToEnd } from '../fixtures/engine/cli.js';
import { agent, fixtureDefinition } from '../fixtures/engine/workflows.js';
import { assertGone } from '../fixtures/store/children.js';
import { assertNothingLeft, ofType, sandbox } from '../sdk/engine/helpers.js';

async function files(base: string, workflow: unknown, script: unknown): Promise<{ workflow: string; script: string }> {
  const paths = { workflow: join(base, 'workflow.json'), script: join(base, 'script.json') };
  await writeFile(paths.workflow, JSON.stringify(workflow));
  await writeFile(paths.script, JSON.stringify(script));
  return paths;
}

test('run --json: {run, status, output, events}, progress on stderr; status --json shows the run', async (t) => {
  const box = await sandbox(t);
  const paths = await files(
    box.base,
    { agents: { main: agent([['notes', 'notes']]) }, mcpDefinitions: { notes: fixtureDefinition('notesService.cjs') } },
    {
      agents: {
        main: [
          { call: 'notes__write', arguments: { name: 'n.txt', text: 'hello' } },
          { call: 'notes__read', arguments: { name: 'n.txt' } },
          { final: 'read back: {{1}}' },
        ],
      },
    },
  );
  const common = ['--data-dir', box.dataDir, '--project', box.project];
  const run = await runCliToEnd(t, [
    'run',
    ...common,
    '--workspace',
    box.workspace,
    '--workflow',
    paths.workflow,
    '--script',
    paths.script,
    '--grace-ms',
    '500',
    '--json',
    'write and read a note',
  ]);
  assert.equal(run.code, 0, run.stderr);
  const doc = run.json as { run: string; status: string; output: string; events: RunEvent[] };
  assert.deepEqual(Object.keys(doc).sort(), ['events', 'output', 'run', 'status']);
  assert.equal(doc.status, 'succeeded');
  assert.equal(doc.output, 'read back: hello');
  assert.deepEqual(
    doc.events.map((e) => e.type).filter((type) => !type.startsWith('service.') && type !== 'tool.calling'),
    [
      'run.started',
      'invocation.started',
      'invocation.state',
      'invocation.checkpoint',
      'tool.called',
      'invocation.checkpoint',
      'tool.called',
      'invocation.checkpoint',
      'invocation.state',
      'invocation.finished',
      'run.finished',
    ],
  );
  assert.deepEqual(
    ofType(doc.events, 'invocation.state').map((e) => [e.from, e.to]),
    [
      ['starting', 'running'],
      ['running', 'succeeded'],
    ],
  );
  assert.match(run.stderr, /\[main\] invocation inv-\S+ attempt 1: starting services notes/);
  assert.match(run.stderr, /\[main\] service notes ready/);
  assert.match(run.stderr, /\[main\] calling notes__write/);
  assert.match(run.stderr, /events: .*events\.jsonl/);
  await assertNothingLeft(box.project, doc.events);

  const status = await runCliToEnd(t, ['status', ...common, '--json']);
  assert.equal(status.code, 0, status.stderr);
  const report = status.json as StatusReport;
  assert.equal(report.projects.length, 1);
  assert.equal(report.projects[0]!.acceptedVersion, 1);
  assert.deepEqual(report.projects[0]!.liveServices, []);
  const listed = report.projects[0]!.runs[0] as RunStatusReport;
  assert.equal(listed.run, doc.run);
  assert.equal(listed.status, 'succeeded');
  assert.deepEqual(
    listed.invocations.map((i) => [i.agent, i.state, i.attempts, i.restarted]),
    [['main', 'succeeded', 1, false]],
  );
});

test("run exits 1 when Main's invocation fails, 2 on a usage error", async (t) => {
  const box = await sandbox(t);
  const paths = await files(
    box.base,
    {
      orchestration: { invocationRetries: 0 },
      agents: { main: agent([['db', 'db']]) },
      mcpDefinitions: { db: fixtureDefinition('exitsAtStart.cjs') },
    },
    { agents: { main: [{ final: 'never' }] } },
  );
  const args = ['run', '--data-dir', box.dataDir, '--project', box.project, '--workspace', box.workspace];
  const failed = await runCliToEnd(t, [...args, '--workflow', paths.workflow, '--script', paths.script, '--json', 'r']);
  assert.equal(failed.code, 1, failed.stderr);
  assert.equal((failed.json as { status: string }).status, 'failed');
  assert.match(failed.stderr, /error \[service_exited\]: service "db" exited with code 3/);
  await assertNothingLeft(box.project, (failed.json as { events: RunEvent[] }).events);

  const usage = await runCliToEnd(t, [...args, '--workflow', paths.workflow]);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /run needs the requirement/);
});

test('the demo runs offline, checks itself and leaves nothing running', async (t) => {
  // `npm run demo` = build + this script; 60 s covers its 3 services on a slow CI machine.
  const script = fileURLToPath(new URL('../../scripts/demo.mjs', import.meta.url));
  const child = spawn(process.execPath, [script, '--clean'], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => {
    try {
      process.kill(child.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    out += c;
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    err += c;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  clearTimeout(timer);
  await assertGone(child.pid!);
  assert.equal(code, 0, `${out}\n${err}`);
  assert.match(out, /demo OK in [\d.]+ s; nothing left running/);
  assert.match(err, /\[reporter\] +→ charts__bar_chart/);
});
