/**
 * The run viewer shows a service's questions (SPEC §7): a real run whose Main has `elicitation: "operator"`
 * calls a 2025-11-25 service (v1 SDK, `elicitation/create`) that asks for a date and a secret token; the
 * operator (the run's `askOperator`, held by the test) has not answered yet, and the viewer — the built CLI's
 * `scienceevolve ui` in Debian's chromium — shows the pending question live: its message and the fields it
 * asks for. Then the operator answers; the page shows the answer with the secret field `REDACTED` (as the
 * journal has it) and the question no longer pending. A URL-mode question is shown as text, never a link.
 * Every process (the run's service, the viewer, the browser) is proven gone.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { runWorkflow } from '../../packages/sdk/src/engine/runs.js';
import type { QuestionAnswer } from '../../packages/sdk/src/sessions/elicitation.js';
import { assertNothingLeft, ofType, sandbox } from '../sdk/engine/helpers.js';
import { launchChromium, startUi } from './helpers.js';

const SECRET = 'tok-viewer-5521';

test('the run viewer shows a question waiting for the operator, then its answer redacted; a URL question as text', {
  timeout: 180_000,
}, async (t) => {
  const box = await sandbox(t);
  let answer: ((a: QuestionAnswer) => void) | undefined;
  // Resolved by askOperator below once the question reached the operator.
  let reached: () => void = () => {};
  const asked = new Promise<void>((resolve) => {
    reached = resolve;
  });
  const running = runWorkflow({
    ...box,
    workflow: {
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
    },
    script: {
      agents: {
        main: [
          { call: 'trips__book', arguments: { city: 'Oslo' } },
          { call: 'trips__visit', arguments: { lab: 'cryo' } },
          { final: '{{0}} / {{1}}' },
        ],
      },
    },
    requirement: 'book a trip to Oslo',
    graceMs: 500,
    askOperator: (_question, { agent }) => {
      assert.equal(agent, 'main');
      return new Promise<QuestionAnswer>((resolve) => {
        answer = resolve;
        reached();
      });
    },
  });
  // A failure of the run must not go unobserved while the test waits on the page.
  running.catch(() => {});
  await asked;

  const ui = await startUi(t, box.dataDir);
  const browser = await launchChromium(t);
  const page = await browser.context.newPage();
  const pagesBefore = browser.context.pages().length;
  await page.goto(ui.url);
  const runRow = page.locator('tr[data-run]').first();
  await runRow.waitFor({ timeout: 10_000 });
  const runId = (await runRow.getAttribute('data-run'))!;
  await page.goto(`${ui.url}#/p/${encodeURIComponent(box.project)}/r/${encodeURIComponent(runId)}`);

  // Pending: at the top and in Main's lane, with the message and every field asked for.
  const banner = page.locator('.questions-pending');
  await banner.waitFor({ timeout: 10_000 });
  assert.match(
    (await banner.textContent()) ?? '',
    /Waiting for the operator.*trips__book: Which date should the trip to Oslo be\?/,
  );
  const asking = page.locator('tr[data-type="tool.asking"]');
  assert.equal(await asking.count(), 1);
  assert.match((await asking.textContent()) ?? '', /waiting for the operator/);
  assert.match(
    (await asking.locator('li[data-field="date"]').textContent()) ?? '',
    /date \(string; YYYY-MM-DD; required\)/,
  );
  assert.equal(await asking.locator('li[data-field="access_token"]').count(), 1);
  assert.equal(await page.locator('tr[data-type="tool.question"]').count(), 0, 'not answered yet');

  // The operator answers; the page follows the journal.
  answer!({ action: 'accept', content: { date: '2027-05-01', access_token: SECRET } });
  const result = await running;
  assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
  assert.match(result.output ?? '', /^booked Oslo on 2027-05-01 \/ /);
  await page.locator('tr[data-type="run.finished"]').waitFor({ timeout: 10_000 });
  assert.equal(await page.locator('.questions-pending').count(), 0, 'nothing waits any more');
  assert.equal(await page.locator('tr[data-type="tool.asking"]').count(), 0, 'the pending row gave way to the answer');
  const questions = page.locator('tr[data-type="tool.question"]');
  assert.equal(await questions.count(), 2);
  const booked = questions.nth(0);
  assert.match((await booked.textContent()) ?? '', /Which date should the trip to Oslo be\?/);
  assert.match((await booked.locator('.question-answer').textContent()) ?? '', /answer: accept \(policy operator\)/);
  assert.equal(await booked.locator('.question-answer li[data-field="date"]').textContent(), 'date: 2027-05-01');
  assert.equal(
    await booked.locator('.question-answer li[data-field="access_token"]').textContent(),
    'access_token: REDACTED',
  );

  // The URL question: shown as text, query value redacted as the journal has it, never a link.
  const visit = questions.nth(1);
  assert.match((await visit.textContent()) ?? '', /Sign in to cryo in your browser/);
  const url = (await visit.locator('.question-url code').textContent()) ?? '';
  assert.match(url, /^https:\/\/cryo\.example\/sign-in\?ticket=REDACTED$/);
  assert.match((await visit.locator('.question-answer').textContent()) ?? '', /answer: decline/);
  assert.equal(await page.locator('a[href*="cryo.example"]').count(), 0, 'no link to the URL');
  assert.equal(browser.context.pages().length, pagesBefore, 'no page was opened for the URL');
  assert.ok(!((await page.locator('main').textContent()) ?? '').includes(SECRET), 'the secret is not on the page');

  const events = result.events;
  assert.deepEqual(
    ofType(events, 'tool.asking').map((e) => [e.tool, e.mode]),
    [['trips__book', 'form']],
    'only the form question waited for the operator (a URL question is never put to anyone)',
  );
  await page.close();
  await assertNothingLeft(box.project, events);
});
