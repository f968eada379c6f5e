/**
 * The viewer shows a run's OpenTelemetry trace id (docs/telemetry.md), so a user can jump to the trace:
 * a scripted run through the built CLI with export on (to a test receiver), then its page in chromium.
 * One real service, the CLI, the viewer and chromium: 120 s.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startOtlpReceiver } from '../fixtures/otel/otlpReceiver.js';
import { assertNothingLeft, killLeftovers, labWorkflow, tempDir } from '../e2e/helpers.js';
import { runCliWith } from '../e2e/telemetryHelpers.js';
import { launchChromium, startUi } from './helpers.js';

test('the run page shows the trace id of a run exported with OpenTelemetry', { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t);
  t.after(() => killLeftovers({ dir }));
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  writeFileSync(join(dir, 'workflow.json'), JSON.stringify(labWorkflow()));
  writeFileSync(
    join(dir, 'script.json'),
    JSON.stringify({ agents: { main: [{ call: 'lab__echo', arguments: { text: 'x' } }, { final: 'done' }] } }),
  );
  mkdirSync(join(dir, 'ws'));
  const dataDir = join(dir, 'data');
  const r = await runCliWith(
    ['run', '--data-dir', dataDir, '--workflow', join(dir, 'workflow.json'), '--workspace', join(dir, 'ws')].concat([
      '--script',
      join(dir, 'script.json'),
      '--project',
      'traced',
      '--json',
      'r',
    ]),
    { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
  );
  assert.equal(r.code, 0, r.stderr);
  const run = (r.json as { run: string }).run;
  const record = JSON.parse(readFileSync(join(dataDir, 'projects/traced/runs', run, 'run.json'), 'utf8'));
  assert.match(record.traceId, /^[0-9a-f]{32}$/);
  assert.ok(
    receiver.spans.every((s) => s.traceId === record.traceId),
    'the id of the trace the receiver got',
  );
  await assertNothingLeft({ dir });

  const ui = await startUi(t, dataDir);
  const browser = await launchChromium(t);
  const page = await browser.context.newPage();
  await page.goto(`${ui.url}#/p/traced/r/${encodeURIComponent(run)}`);
  await page.locator('tr[data-type="run.finished"]').waitFor({ timeout: 10_000 });
  assert.match(
    (await page.locator('#main p.muted').first().textContent()) ?? '',
    new RegExp(`trace ${record.traceId}`),
  );
  assert.match(
    (await page.locator('tr[data-type="run.started"]').textContent()) ?? '',
    new RegExp(`trace ${record.traceId}`),
  );
});
