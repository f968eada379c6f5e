/** The CLI's failure text (issue 27, item 1): the end of a service's stderr, bounded, and a fix for every code. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ERROR_CODES, ERROR_FIXES, remedyOf } from '../../packages/sdk/src/errors.js';
import { SCREEN_TAIL_BYTES, SCREEN_TAIL_LINES, failureText, screenTail } from '../../packages/cli/src/output.js';
import { progressLine } from '../../packages/cli/src/commands/run.js';
import type { RunEvent } from '../../packages/sdk/src/index.js';

test('every code has a fix, and an error of its own keeps its remedy', () => {
  for (const code of ERROR_CODES) {
    assert.ok(ERROR_FIXES[code].length > 10, `${code} has a fix`);
    assert.equal(remedyOf({ code }), ERROR_FIXES[code]);
  }
  assert.equal(remedyOf({ code: 'missing_env', remedy: 'export X=…' }), 'export X=…');
  // A code no copy of the SDK knows (a newer SDK's) still gets a fix line; a key of Object.prototype is no code.
  assert.equal(remedyOf({ code: 'constructor' }), ERROR_FIXES.internal);
});

test('screenTail folds stack frames, drops blank lines and keeps the cause of a Node crash', () => {
  const crash = [
    "Error: Cannot find module './config.json'",
    'Require stack:',
    '- /x/server.cjs',
    ...Array.from({ length: 11 }, (_, i) => `    at frame${i} (node:internal/modules/cjs/loader:${i}:1)`),
    '  code: ...',
    '',
    'Node.js v20.20.2',
  ];
  assert.deepEqual(screenTail(crash), [
    "Error: Cannot find module './config.json'",
    'Require stack:',
    '- /x/server.cjs',
    '    … 11 stack frames',
    '  code: ...',
    'Node.js v20.20.2',
  ]);
});

test('screenTail is bounded in lines, bytes and line length', () => {
  const many = Array.from({ length: 50 }, (_, i) => `line ${i}`);
  assert.deepEqual(screenTail(many), many.slice(-SCREEN_TAIL_LINES));
  const wide = Array.from({ length: 12 }, () => 'é'.repeat(1000));
  const shown = screenTail(wide);
  assert.ok(shown.length > 0 && shown.length < 12);
  assert.ok(shown.every((l) => l.length <= 301 && l.endsWith('…')));
  assert.ok(Buffer.byteLength(shown.join('\n')) <= SCREEN_TAIL_BYTES);
  assert.deepEqual(screenTail([42, null, 'ok']), ['ok']);
});

test('failureText: error line, each failed service tail (aggregates too), and the fix last', () => {
  const text = failureText({
    code: 'service_exited',
    message: '2 services failed to start:\n  - a\n  - b',
    data: {
      failures: [
        { code: 'service_exited', message: 'a', data: { service: 'a', stderrTail: ['boom a'] } },
        { code: 'startup_timeout', message: 'b', data: { service: 'b', stderrTail: [] } },
      ],
    },
  });
  assert.equal(
    text,
    [
      'error [service_exited]: 2 services failed to start:',
      '  - a',
      '  - b',
      '  stderr of a (its last lines):',
      '    | boom a',
      `  fix: ${ERROR_FIXES.service_exited}`,
      '',
    ].join('\n'),
  );
  assert.equal(
    failureText({ code: 'usage', message: 'm', remedy: 'r' }, { indent: '  ', head: 'x: failed' }),
    '  x: failed [usage]: m\n    fix: r\n',
  );
});

test('screenTail shows the control characters a service wrote as \\xNN: no escape sequence reaches the terminal', () => {
  const hostile = [
    '\u001b]52;c;ZWNobyBwd25lZA==\u0007clipboard',
    '\u001b[2J\u001b[Hcleared',
    'bell\u0007 and C1 \u009b31m',
    'tab\tkept',
  ];
  const shown = screenTail(hostile);
  assert.deepEqual(shown, [
    '\\x1b]52;c;ZWNobyBwd25lZA==\\x07clipboard',
    '\\x1b[2J\\x1b[Hcleared',
    'bell\\x07 and C1 \\x9b31m',
    'tab\tkept',
  ]);
  const text = failureText({ code: 'service_exited', message: 'm', data: { service: 's', stderrTail: hostile } });
  assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(text), JSON.stringify(text));
});

test("progress lines show a service's or a model's text with its control characters made visible", () => {
  const base = { time: '2026-12-02T00:00:00.000Z', run: 'r', agent: 'main', invocation: 'i', attempt: 1 };
  // A tool's error text is the service's: an escape sequence in it (here OSC 52, which sets the clipboard)
  // must not reach the terminal.
  const called = progressLine({
    ...base,
    type: 'tool.called',
    tool: 'svc__t',
    arguments: {},
    ok: false,
    durationMs: 1,
    summary: 'bad \u001b]52;c;ZXZpbA==\u0007 input\nsecond line',
  } as RunEvent);
  assert.equal(called, '[main] svc__t answered an error: bad \\x1b]52;c;ZXZpbA==\\x07 input');
  const retry = progressLine({
    ...base,
    type: 'model.retry',
    turn: 2,
    attempt: 1,
    delayMs: 10,
    status: 500,
    message: 'upstream \u009b31m said no',
  } as RunEvent);
  assert.match(retry ?? '', /model call failed \(500: upstream \\x9b31m said no\)/);
  assert.doesNotMatch(`${called}${retry}`, /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/);
});

test("failure text shows the error's message with its control characters made visible, line by line", () => {
  // A message can quote what a service answered (run.json's error, printed by `run` and `resume`).
  const text = failureText({ code: 'tool_failed', message: 'the service said \u001b[2J\u001b]0;pwned\u0007\nsecond' });
  assert.equal(text.split('\n')[0], 'error [tool_failed]: the service said \\x1b[2J\\x1b]0;pwned\\x07');
  assert.equal(text.split('\n')[1], 'second');
  assert.doesNotMatch(text.replaceAll('\n', ''), /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/);
});
