/**
 * Issue 13, item 6 (numbers): every numeric option of the CLI is a decimal integer in a stated range, or a
 * usage error (exit 2) that names the option and the range — never `internal`, never `0x50` read as 80 or
 * `1e3` as 1000, never a timer past 2^31 − 1 ms that fires at once. Each case fails before anything starts.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { positiveInt, RANGES } from '../../packages/cli/src/args.ts';
import { assertErrorJson, runCli, workflowFixture } from './runCli.js';

const MAX = 2_147_483_647;
const BAD_SPELLINGS = ['0x50', '1e3', '+5', '-1', ' 5', '5 ', '1.5', '', '٣', '0b1', 'Infinity', 'NaN'];

test('numeric options: decimal digits only, within the stated range, else exit 2 naming both', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'se-numbers-'));
  t.after(() => rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  const dataDir = join(dir, 'data');
  const workspace = join(dir, 'ws');
  const url = 'http://127.0.0.1:1/mcp';
  const serve = ['services', 'serve', '--data-dir', dataDir, '--workspace', workspace, '--agent', 'main'];
  // The command with the option in place, the option, its range, and values outside that range.
  const options: Array<{ argv: (option: string) => string[]; flag: string; range: [number, number]; over: string[] }> =
    [
      {
        argv: (o) => ['gateway', '--stdio', 'node x.js', o],
        flag: '--port',
        range: [0, 65_535],
        over: ['99999', '65536'],
      },
      {
        argv: (o) => [...serve, '--http', '--token-file', join(dir, 'tok'), o],
        flag: '--port',
        range: [0, 65_535],
        over: ['99999'],
      },
      {
        argv: (o) => ['gateway', '--stdio', 'node x.js', o],
        flag: '--grace-ms',
        range: [0, MAX],
        over: ['3000000000'],
      },
      {
        argv: (o) => ['gateway', '--stdio', 'node x.js', o],
        flag: '--ready-timeout-ms',
        // From 1, as the SDK takes it (a 0 ms timeout would fail every call).
        range: [1, MAX],
        over: ['2147483648'],
      },
      {
        argv: (o) => ['services', 'probe', '--data-dir', dataDir, '--workspace', workspace, '--agent', 'main', o],
        flag: '--hold',
        range: [0, 2_147_483],
        // 3,000,000 s is 3e9 ms: past a timer's ceiling, it used to collect after 1 ms.
        over: ['3000000', '2147484'],
      },
      {
        argv: (o) => ['services', 'probe', '--data-dir', dataDir, '--workspace', workspace, '--agent', 'main', o],
        flag: '--pids-max',
        range: [8, 4_194_304],
        // Below the SDK's smallest limit: a shell prelude and a service could not start.
        over: ['7', '4194305'],
      },
      {
        argv: (o) => [...serve, o],
        flag: '--pids-max',
        range: [8, 4_194_304],
        over: ['4194305'],
      },
      {
        argv: (o) => ['bridge', 'http-to-stdio', '--url', url, o],
        flag: '--timeout-ms',
        // From 1, as the SDK takes it (a 0 ms timeout would fail every call).
        range: [1, MAX],
        over: ['99999999999999999999'],
      },
      {
        argv: (o) => ['bridge', 'http-to-stdio', '--url', url, o],
        flag: '--connect-timeout-ms',
        // From 1, as the SDK takes it (a 0 ms timeout would fail every call).
        range: [1, MAX],
        over: ['2147483648'],
      },
      {
        argv: (o) => [
          'run',
          '--data-dir',
          dataDir,
          '--workflow',
          workflowFixture('minimal.json'),
          '--workspace',
          workspace,
          o,
          'req',
        ],
        flag: '--grace-ms',
        range: [0, MAX],
        over: ['3000000000'],
      },
      {
        argv: (o) => ['resume', '--data-dir', dataDir, '--project', 'p', o],
        flag: '--startup-budget-ms',
        // From 1, as the SDK takes it: 0 used to pass the CLI and fail in the engine with another message.
        range: [1, MAX],
        over: ['2147483648', '0'],
      },
      // The engine block's forwarding timeout, on all four commands that start services.
      {
        argv: (o) => [
          'run',
          '--data-dir',
          dataDir,
          '--workflow',
          workflowFixture('minimal.json'),
          '--workspace',
          workspace,
          o,
          'req',
        ],
        flag: '--forward-timeout-ms',
        range: [1, MAX],
        over: ['0'],
      },
      {
        argv: (o) => ['resume', '--data-dir', dataDir, '--project', 'p', o],
        flag: '--forward-timeout-ms',
        range: [1, MAX],
        over: ['2147483648'],
      },
      {
        argv: (o) => ['services', 'probe', '--data-dir', dataDir, '--workspace', workspace, '--agent', 'main', o],
        flag: '--forward-timeout-ms',
        range: [1, MAX],
        over: ['3000000000'],
      },
      {
        argv: (o) => [...serve, o],
        flag: '--forward-timeout-ms',
        range: [1, MAX],
        over: ['0'],
      },
      {
        argv: (o) => ['services', 'probe', '--data-dir', dataDir, '--workspace', workspace, '--agent', 'main', o],
        flag: '--hold-ms',
        range: [0, MAX],
        over: ['2147483648'],
      },
      {
        argv: (o) => ['worker', '--queue', 'redis://127.0.0.1:1', '--data-dir', dataDir, o],
        flag: '--concurrency',
        range: [1, 256],
        over: ['257', '0'],
      },
      {
        argv: (o) => ['ui', '--data-dir', dataDir, o],
        flag: '--port',
        range: [0, 65_535],
        over: ['65536'],
      },
      {
        argv: (o) => ['harness-config', '--format', 'codex', '--http', '--url', url, '--token-env', 'T', o],
        flag: '--tool-timeout-sec',
        range: [1, 2_147_483],
        over: ['0', '2147484'],
      },
      {
        argv: (o) => ['workflow', 'show', '--data-dir', dataDir, '--project', 'p', o],
        flag: '--version',
        range: [1, MAX],
        over: ['0'],
      },
    ];
  // One CLI run per option (each costs a process start): the value the issue reproduced, or one past the range.
  const runs = options.map(async (option) => {
    const value = option.over[0] as string;
    const result = await runCli([...option.argv(`${option.flag}=${value}`), '--json']);
    const shown = `${option.argv(`${option.flag}=${value}`).join(' ')}`;
    assert.equal(result.code, 2, `${shown}: exit ${result.code}\n${result.stdout}${result.stderr}`);
    // `bridge http-to-stdio` keeps stdout for the protocol from the first byte: its errors go to stderr.
    const message = result.json === undefined ? result.stderr : assertErrorJson(result.json, 'usage').message;
    if (result.json === undefined) assert.match(result.stderr, /\[usage\]/, shown);
    assert.ok(message.includes(option.flag), `${shown}: ${message}`);
    assert.ok(message.includes(`from ${option.range[0]} to ${option.range[1]}`), `${shown}: ${message}`);
  });
  await Promise.all(runs);
});

test('the option parser: decimal digits in range, nothing else', () => {
  for (const value of BAD_SPELLINGS) {
    assert.throws(
      () => positiveInt(value, '--port', RANGES.port),
      (error: { code?: string; message?: string }) =>
        error.code === 'usage' &&
        /--port takes a whole number in decimal digits from 0 to 65535, not/.test(error.message ?? ''),
      JSON.stringify(value),
    );
  }
  assert.equal(positiveInt('0', '--port', RANGES.port), 0);
  assert.equal(positiveInt('65535', '--port', RANGES.port), 65_535);
  assert.equal(positiveInt('0080', '--port', RANGES.port), 80);
  assert.equal(positiveInt(undefined, '--port', RANGES.port), undefined);
  assert.throws(() => positiveInt('65536', '--port', RANGES.port), /from 0 to 65535/);
  assert.equal(positiveInt(String(MAX), '--grace-ms'), MAX);
  assert.throws(
    () => positiveInt(String(MAX + 1), '--grace-ms'),
    /--grace-ms takes a whole number from 0 to 2147483647/,
  );
  assert.throws(() => positiveInt('9'.repeat(400), '--grace-ms'), /from 0 to 2147483647/);
  // Seconds whose milliseconds fit a timer.
  assert.equal(positiveInt('2147483', '--hold', RANGES.sec), 2_147_483);
  assert.throws(() => positiveInt('2147484', '--hold', RANGES.sec), /--hold takes a whole number from 0 to 2147483/);
});
