/**
 * The run viewer (`scienceevolve ui`) in a real browser: Debian's chromium driven by playwright-core,
 * against the built CLI in a child process and a data dir holding a real scripted run (Main delegating to
 * a worker, both calling a real fixture service). One run, one viewer and one browser serve every case
 * (starting them costs seconds on 2 cores); each case opens its own page. Timeouts: the run starts real
 * services (60 s), chromium starts in 1–3 s; a `waitFor` is the only timing in here.
 */
import assert from 'node:assert/strict';
import {
  appendFileSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { acceptWorkflow, readAccepted } from '../../packages/sdk/src/store/workflowVersions.js';
import { ProjectPaths } from '../../packages/sdk/src/store/projectStore.js';
import { runWorkflow, startRun } from '../../packages/sdk/src/engine/runs.js';
import type { RunEvent } from '../../packages/sdk/src/events/runEvents.js';
import { readEvents } from '../../packages/sdk/src/events/journal.js';
import { agent, fixtureDefinition } from '../fixtures/engine/workflows.js';
import { assertNothingLeft, ofType, sandbox } from '../sdk/engine/helpers.js';
import { ARTIFACTS, get, launchChromium, startUi } from './helpers.js';

/** Every path under `root` with its size and modification time. */
function snapshot(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      const st = statSync(path);
      out.set(path, `${entry.isDirectory() ? 'd' : 'f'} ${st.size} ${st.mtimeMs}`);
      if (entry.isDirectory()) walk(path);
    }
  };
  walk(root);
  return out;
}

const XSS = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">';

test('the run viewer shows a scripted run in chromium, follows it live, and gives a wrong token nothing', {
  timeout: 180_000,
}, async (t) => {
  const box = await sandbox(t);
  const result = await runWorkflow({
    ...box,
    workflow: {
      agents: { main: agent([['notes', 'notes']]), worker: agent([['notes', 'notes']]) },
      mcpDefinitions: { notes: fixtureDefinition('notesService.cjs') },
    },
    script: {
      agents: {
        main: [
          { call: 'notes__write', arguments: { name: 'main.txt', text: XSS } },
          { call: 'scienceevolve__delegate', arguments: { agent: 'worker', task: 'read the note' } },
          { final: 'worker said: {{1}}' },
        ],
        worker: [{ call: 'notes__read', arguments: { name: 'main.txt' } }, { final: 'read {{0}}' }],
      },
    },
    requirement: 'write a note and have it read',
    graceMs: 500,
  });
  assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
  const paths = new ProjectPaths(box.dataDir, box.project);
  const eventsPath = join(paths.runDir(result.run), 'events.jsonl');
  const events = await readEvents(eventsPath);
  await assertNothingLeft(box.project, events);
  const invocations = [...new Set(ofType(events, 'invocation.started').map((e) => e.invocation))];
  const toolCalls = ofType(events, 'tool.called');
  assert.equal(invocations.length, 2, 'Main and the worker');
  assert.ok(toolCalls.length >= 3, 'write, delegate, read');

  // A second version, so the project has a diff to show.
  const accepted = (await readAccepted(paths))!;
  const next = structuredClone(accepted.workflow) as typeof accepted.workflow;
  next.agents.worker!.instructions = 'Read carefully.';
  await acceptWorkflow(paths, next);

  const before = snapshot(box.dataDir);
  const ui = await startUi(t, box.dataDir);
  const browser = await launchChromium(t);
  const runHash = `#/p/${encodeURIComponent(box.project)}/r/${encodeURIComponent(result.run)}`;

  await t.test('the page of a finished run shows every invocation and tool call of its journal', async () => {
    const page = await browser.context.newPage();
    const seen: string[] = [];
    page.on('dialog', (d) => {
      seen.push(d.message());
      void d.dismiss();
    });
    await page.goto(ui.url);
    await page.locator(`tr[data-run="${result.run}"]`).waitFor({ timeout: 10_000 });
    assert.match((await page.locator(`tr[data-run="${result.run}"]`).textContent()) ?? '', /succeeded/);
    await page.goto(`${ui.url}${runHash}`);
    // The journal's last event drawn: everything before it is too.
    await page.locator('tr[data-type="run.finished"]').waitFor({ timeout: 10_000 });
    for (const id of invocations) {
      const lane = page.locator(`section.lane[data-invocation="${id}"]`);
      assert.equal(await lane.count(), 1, `a lane for invocation ${id}`);
      const calls = toolCalls.filter((c) => c.invocation === id);
      const rows = lane.locator('tr[data-type="tool.called"]');
      assert.equal(await rows.count(), calls.length, `every tool call of ${id}`);
      for (const [k, call] of calls.entries()) {
        const row = rows.nth(k);
        assert.equal(await row.getAttribute('data-tool'), call.tool);
        assert.match((await row.textContent()) ?? '', call.ok ? /\bok\b/ : /\berror\b/);
      }
    }
    assert.match((await page.locator('section.lane[data-agent="worker"] h2').textContent()) ?? '', /Agent worker/);
    assert.match(
      (await page.locator('section.lane[data-agent="worker"]').textContent()) ?? '',
      new RegExp(`delegated by ${invocations[0]}`),
    );
    assert.equal(await page.locator('div.invalid-line').count(), 0, 'every line of a real run matches its schema');
    const readyCount = ofType(events, 'service.ready').length;
    assert.equal(await page.locator('tr[data-type="service.ready"]').count(), readyCount, 'every service start');
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'viewer-timeline.png'), fullPage: true });
    assert.ok(readFileSync(join(ARTIFACTS, 'viewer-timeline.png')).length > 1000);
    assert.deepEqual(seen, [], 'no dialog opened');
    await page.close();
  });

  await t.test(
    'the run page shows the requirement, the answer unfolded, a legend, and says "finished"; the project is named by its workspace',
    async () => {
      const page = await browser.context.newPage();
      await page.goto(ui.url);
      const project = page.locator(`section.project[data-project="${box.project}"] h2`);
      await project.waitFor({ timeout: 10_000 });
      const title = (await project.textContent()) ?? '';
      assert.ok(title.startsWith(`Project ${box.workspace} `), `named by its workspace: ${title}`);
      assert.ok(title.includes(box.project), 'the id beside it');
      await page.goto(`${ui.url}${runHash}`);
      await page.locator('tr[data-type="run.finished"]').waitFor({ timeout: 10_000 });
      assert.equal(await page.locator('pre.requirement').textContent(), 'write a note and have it read');
      // The answer is shown as text, not behind a toggle.
      const answer = page.locator('pre.answer');
      assert.equal(await answer.textContent(), result.output);
      assert.ok(await answer.isVisible(), 'the answer is visible without a click');
      const legend = (await page.locator('.overview .legend').textContent()) ?? '';
      for (const meaning of ['tool call answered', 'answered an error', 'model turn', 'service start', 'failed']) {
        assert.ok(legend.includes(meaning), `the legend names ${meaning}: ${legend}`);
      }
      // Set once the event stream has opened.
      await page.locator('#live', { hasText: /\S/ }).waitFor({ timeout: 10_000 });
      const live = (await page.locator('#live').textContent()) ?? '';
      assert.match(live, /^finished \(succeeded\)$/);
      await page.close();
    },
  );

  await t.test('a tool argument holding <script> is shown as text and never runs', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${ui.url}${runHash}`);
    const write = page.locator('tr[data-tool="notes__write"]').first();
    await write.waitFor({ timeout: 10_000 });
    await write.locator('details.tool-args summary').click();
    const shown = await write.locator('details.tool-args pre').textContent();
    assert.ok(shown?.includes(XSS.replaceAll('"', '\\"')), `the argument as text: ${shown}`);
    assert.equal(await page.locator('script:not([src])').count(), 0, 'no script element from the data');
    assert.equal(await page.locator('img').count(), 0, 'no img element from the data');
    assert.equal(await page.evaluate('window.__xss'), undefined);
    await page.close();
  });

  await t.test('a service stderr log is shown on demand', async () => {
    const ready = ofType(events, 'service.ready').find((e) => e.kind === 'project')!;
    // A line of our own, so the page's text can be checked against it.
    const log = join(paths.invocationDir(result.run, ready.servicesId), 'mcp', `${ready.service}.stderr.log`);
    appendFileSync(log, 'viewer-test: <b>not bold</b>\n');
    const page = await browser.context.newPage();
    await page.goto(`${ui.url}${runHash}`);
    const button = page.locator(`button[data-log="${ready.servicesId}/${ready.service}"]`).first();
    await button.click({ timeout: 10_000 });
    const pre = page.locator('div.log pre').first();
    await pre.waitFor({ timeout: 10_000 });
    assert.match((await pre.textContent()) ?? '', /viewer-test: <b>not bold<\/b>/);
    await page.close();
  });

  await t.test('accepted versions are listed with their diff', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${ui.url}#/p/${encodeURIComponent(box.project)}/v/2`);
    await page.locator('section.diff').first().waitFor({ timeout: 10_000 });
    const text = (await page.locator('main').textContent()) ?? '';
    assert.match(text, /changed agents: worker/);
    assert.match(text, /Read carefully\./);
    await page.close();
  });

  await t.test('a live run shows a new tool call within a second of its event', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${ui.url}${runHash}`);
    await page.locator('section.lane').nth(1).waitFor({ timeout: 10_000 });
    const main = ofType(events, 'invocation.started')[0]!;
    const base = { run: result.run, invocation: main.invocation, agent: main.agent };
    const added: RunEvent[] = [
      { ...base, type: 'tool.calling', time: new Date().toISOString(), tool: 'notes__live_probe' },
      {
        ...base,
        type: 'tool.called',
        time: new Date().toISOString(),
        tool: 'notes__live_probe',
        arguments: { probe: true },
        ok: true,
        durationMs: 3,
        summary: 'live',
      },
    ];
    appendFileSync(eventsPath, added.map((e) => `${JSON.stringify(e)}\n`).join(''));
    const lane = page.locator(`section.lane[data-invocation="${main.invocation}"]`);
    await lane.locator('tr[data-type="tool.called"][data-tool="notes__live_probe"]').waitFor({ timeout: 1000 });

    // The kinds a scripted run does not produce: model turns with usage, a retry, a failed attempt with its
    // diagnostics, a reconfiguration.
    const time = new Date().toISOString();
    const more: RunEvent[] = [
      { ...base, type: 'model.retry', time, turn: 1, attempt: 1, delayMs: 250, status: 429, message: 'rate limited' },
      {
        ...base,
        type: 'model.called',
        time,
        turn: 1,
        model: 'gpt-test',
        usage: { inputTokens: 1234, outputTokens: 56, cachedInputTokens: 7 },
        durationMs: 420,
        finishReason: 'tool-calls',
      },
      {
        ...base,
        type: 'invocation.attempt_failed',
        time,
        attempt: 1,
        willRetry: true,
        error: {
          code: 'service_exited',
          message: 'service "notes" exited',
          remedy: 'read its log',
          data: { exitCode: 3 },
        },
      },
      { ...base, type: 'workflow.reconfigured', time, version: 2, changedMcps: [], changedAgents: ['worker'] },
      // A question left unanswered in a run that has ended: shown in its lane, but nobody is waited for.
      { ...base, type: 'tool.asking', time, tool: 'notes__ask', mode: 'form', message: 'which date?' },
    ];
    appendFileSync(eventsPath, more.map((e) => `${JSON.stringify(e)}\n`).join(''));
    await lane.locator('tr[data-type="workflow.reconfigured"]').waitFor({ timeout: 5000 });
    await lane.locator('tr[data-type="tool.asking"]').waitFor({ timeout: 5000 });
    assert.equal(await page.locator('.questions-pending').count(), 0, 'a run that ended waits for no operator');
    assert.match(
      (await lane.locator('tr[data-type="model.called"]').textContent()) ?? '',
      /gpt-test.*1,234 in \/ 56 out · 7 cached/,
    );
    assert.match((await lane.locator('tr[data-type="model.retry"]').textContent()) ?? '', /HTTP 429: rate limited/);
    const failed = lane.locator('tr[data-type="invocation.attempt_failed"]');
    assert.match(
      (await failed.textContent()) ?? '',
      /will retry.*service_exited: service "notes" exited — read its log/,
    );
    await failed.locator('details summary').click();
    assert.match((await failed.locator('details pre').textContent()) ?? '', /"exitCode": 3/);
    assert.match((await lane.locator('h2 + p').textContent()) ?? '', /1 model call, 1,234 in \/ 56 out/);
    await lane.locator('tr[data-type="workflow.reconfigured"] a').click();
    await page.locator('section.diff').first().waitFor({ timeout: 5000 });
    await page.close();
  });

  // Security finding 6: a service that can write the journal appended a wrong-typed line; the old viewer threw in
  // its renderer on every render and showed a blank run page. Now the line is shown as text and the rest is drawn.
  await t.test(
    'a journal line that does not match its schema is shown as text and the run is still drawn',
    async () => {
      const page = await browser.context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${ui.url}${runHash}`);
      await page.locator('tr[data-type="run.finished"]').waitFor({ timeout: 10_000 });
      const main = ofType(events, 'invocation.started')[0]!;
      const base = { run: result.run, invocation: main.invocation, agent: main.agent };
      const time = new Date().toISOString();
      const forged = { ...base, type: 'workflow.reconfigured', time, version: 3, changedMcps: 'x', changedAgents: [] };
      const after: RunEvent = { ...base, type: 'tool.calling', time, tool: 'notes__after_forgery' };
      appendFileSync(eventsPath, `${JSON.stringify(forged)}\n${JSON.stringify(after)}\n`);
      const lane = page.locator(`section.lane[data-invocation="${main.invocation}"]`);
      await lane.locator('tr[data-type="tool.calling"][data-tool="notes__after_forgery"]').waitFor({ timeout: 5000 });
      const shown = page.locator('div.invalid-line');
      assert.equal(await shown.count(), 1, 'the forged line, once');
      const text = (await shown.textContent()) ?? '';
      assert.match(text, /"workflow\.reconfigured" event: field "changedMcps" does not match the event's schema/);
      assert.match(text, /"changedMcps":"x"/, 'shown as written');
      assert.equal(await page.locator('tr[data-type="run.finished"]').count(), 1, 'the run is still drawn');
      assert.deepEqual(errors, [], 'the renderer did not throw');
      // A reload draws the same page from the start of the journal.
      await page.reload();
      await lane.locator('tr[data-type="tool.calling"][data-tool="notes__after_forgery"]').waitFor({ timeout: 5000 });
      assert.equal(await page.locator('div.invalid-line').count(), 1);
      await page.close();
    },
  );

  await t.test('a wrong or missing token gets nothing; a foreign Host or Origin and a write are refused', async () => {
    const page = await browser.context.newPage();
    const bad = new URL(ui.url);
    bad.searchParams.set('token', `${ui.token.slice(0, -1)}x`);
    const response = await page.goto(bad.href);
    assert.equal(response?.status(), 401);
    const body = await page.content();
    assert.ok(!body.includes(box.project) && !body.includes(result.run), 'nothing of the data dir');
    await page.close();
    const q = `project=${box.project}&run=${result.run}`;
    for (const path of ['/', '/viewer.js', '/api/projects', `/api/run?${q}`, `/api/events?${q}`]) {
      for (const suffix of [
        '',
        path.includes('?') ? '&token=' : '?token=',
        path.includes('?') ? '&token=wrong' : '?token=wrong',
      ]) {
        const r = await get(`${ui.origin}${path}${suffix}`);
        assert.equal(r.status, 401, `${path}${suffix}`);
        assert.ok(!r.body.includes(box.project) && !r.body.includes(result.run), `${path}${suffix} shows nothing`);
      }
    }
    const withToken = `${ui.origin}/api/projects?token=${ui.token}`;
    assert.equal((await get(withToken)).status, 200);
    assert.equal((await get(withToken, { host: `evil.example:${new URL(ui.url).port}` })).status, 403);
    assert.equal((await get(withToken, { origin: 'http://evil.example' })).status, 403);
    assert.equal((await get(withToken, {}, 'POST')).status, 405);
    assert.equal((await get(withToken, {}, 'DELETE')).status, 405);
  });

  await t.test('ids from the request are looked up in the store, never used as paths', async () => {
    const ready = ofType(events, 'service.ready')[0]!;
    const tk = `token=${ui.token}`;
    const cases = [
      `/api/run?project=..&run=${result.run}&${tk}`,
      `/api/run?project=${box.project}&run=..%2F..%2F..&${tk}`,
      `/api/version?project=${box.project}&version=0x2&${tk}`,
      `/api/version?project=${box.project}&version=3&${tk}`,
      `/api/log?project=${box.project}&run=${result.run}&servicesId=..%2F..&service=${ready.service}&${tk}`,
      `/api/log?project=${box.project}&run=${result.run}&servicesId=${ready.servicesId}&service=..%2F..%2Frun&${tk}`,
      `/api/events?project=constructor&run=${result.run}&${tk}`,
      `/etc/passwd?${tk}`,
    ];
    for (const path of cases) {
      const r = await get(`${ui.origin}${path}`);
      assert.equal(r.status, 404, `${path}: ${r.body}`);
      assert.ok(!r.body.includes('root:'), path);
    }
    const ok = await get(
      `${ui.origin}/api/log?project=${box.project}&run=${result.run}&servicesId=${ready.servicesId}&service=${ready.service}&${tk}`,
    );
    assert.equal(ok.status, 200, ok.body);
  });

  // Nothing the viewer did wrote to the data dir: every file and folder is as it was, but for the lines this
  // test itself appended to the journal and to one stderr log.
  await t.test('the data dir is unchanged by the viewer', () => {
    const after = snapshot(box.dataDir);
    const ready = ofType(events, 'service.ready').find((e) => e.kind === 'project')!;
    const log = join(paths.invocationDir(result.run, ready.servicesId), 'mcp', `${ready.service}.stderr.log`);
    for (const path of [eventsPath, log]) {
      assert.ok(after.has(path) && before.has(path), path);
      after.delete(path);
      before.delete(path);
    }
    assert.deepEqual(after, before);
  });

  await t.test('a stderr log replaced by a symlink is not followed', async () => {
    const ready = ofType(events, 'service.ready').filter((e) => e.kind === 'project')[1]!;
    const log = join(paths.invocationDir(result.run, ready.servicesId), 'mcp', `${ready.service}.stderr.log`);
    rmSync(log);
    symlinkSync('/etc/passwd', log);
    const r = await get(
      `${ui.origin}/api/log?project=${box.project}&run=${result.run}&servicesId=${ready.servicesId}&service=${ready.service}&token=${ui.token}`,
    );
    assert.equal(r.status, 404, r.body);
    assert.ok(!r.body.includes('root:'));
  });

  await t.test('a running run is followed: a call in progress, then its answer and the run finished', async () => {
    // In the workspace: the service runs sandboxed (the default), and sees the workspace but not the host's /tmp.
    const release = join(box.workspace, 'release');
    const handle = startRun({
      ...box,
      workflow: {
        agents: { main: agent([['waits', 'waits']]) },
        mcpDefinitions: { waits: fixtureDefinition('../viewer/waitsForFile.cjs') },
      },
      script: { agents: { main: [{ call: 'waits__wait', arguments: { path: release } }, { final: 'done: {{0}}' }] } },
      requirement: 'wait for the file',
      graceMs: 500,
    });
    // Released whatever happens, so a failing case never leaves the run waiting (its folder may be gone by then).
    t.after(() => {
      try {
        writeFileSync(release, '');
      } catch {
        // the sandbox is already removed, and the run with it
      }
    });
    for await (const e of handle.events()) if (e.type === 'tool.calling') break;
    const page = await browser.context.newPage();
    await page.goto(`${ui.url}#/p/${encodeURIComponent(box.project)}/r/${encodeURIComponent(handle.runId)}`);
    const calling = page.locator('tr[data-type="tool.calling"][data-tool="waits__wait"]');
    await calling.waitFor({ timeout: 10_000 });
    assert.match((await calling.textContent()) ?? '', /in progress/);
    assert.match((await page.locator('h1').textContent()) ?? '', /running/);
    writeFileSync(release, '');
    const called = page.locator('tr[data-type="tool.called"][data-tool="waits__wait"]');
    await called.waitFor({ timeout: 10_000 });
    assert.equal(await calling.count(), 0, 'the call in progress became its answer');
    await called.locator('details.tool-result summary').click();
    assert.match((await called.locator('details.tool-result pre').textContent()) ?? '', /released by /);
    const finished = await handle.result;
    assert.equal(finished.status, 'succeeded', JSON.stringify(finished.error));
    await page.locator('tr[data-type="run.finished"]').waitFor({ timeout: 10_000 });
    await page.locator('h1 .badge.succeeded').waitFor({ timeout: 10_000 });
    await page.close();
    await assertNothingLeft(box.project, await readEvents(join(paths.runDir(handle.runId), 'events.jsonl')));
  });

  assert.ok(browser.pids().length > 0);
  assert.doesNotMatch(ui.stderr(), /error/i);
});
