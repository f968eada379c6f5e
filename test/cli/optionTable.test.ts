/**
 * The CLI from one table (architecture item 5): every command's `--help` lists exactly the options the
 * table declares, docs/cli.md's option lists are the table's, the table's copies of SDK-owned ranges and
 * lists equal their owners, every duration names its unit, the engine block (`--forward-timeout-ms`
 * among it) reaches the SDK options of `run`, `resume`, `services probe` and `services serve`,
 * `--version` prints the package's version and `SCIENCEEVOLVE_DATA_DIR` is the data dir when `--data-dir`
 * is not given.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { CONSUMER_RANGES } from '../../packages/sdk/src/queue/queueConsumer.js';
import { HARNESS_CONFIG_FORMATS } from '../../packages/sdk/src/harness/harnessConfig.js';
import { MAX_PIDS_MAX, MIN_PIDS_MAX } from '../../packages/sdk/src/processes/processGroup.js';
import { INIT_HARNESSES } from '../../packages/sdk/src/workflow/initFolder.js';
import { MAX_DURATION_MS } from '../../packages/sdk/src/workflow/workflowSchema.js';
import { parseCommand, sdkOptions } from '../../packages/cli/src/args.ts';
import { runEngineOptions } from '../../packages/cli/src/commands/run.ts';
import { updateCliDocs } from '../../packages/cli/src/help.ts';
import { run } from '../../packages/cli/src/main.ts';
import {
  COMMANDS,
  COMMON_OPTIONS,
  type CommandSpec,
  ENGINE_OPTIONS,
  MAX_TIMER_MS,
  RANGES,
  command,
} from '../../packages/cli/src/optionTable.ts';
import { tempDir } from '../fixtures/store/tempDir.js';
import { ROOT, assertErrorJson, runCli } from './runCli.js';

const ALL: readonly CommandSpec[] = COMMANDS;

/** Runs the CLI in this process with a capturing Io. */
async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}

/** The option names a help text lists in its "Options:" section, in order. */
function listedOptions(help: string): string[] {
  const section = help.split('\nOptions:\n')[1];
  assert.ok(section !== undefined, `no Options section in:\n${help}`);
  return [...section.matchAll(/^ {2}--([a-z][a-z0-9-]*)/gm)].map((m) => m[1]!);
}

test('--help of every command lists every option the table declares for it, and no other', async () => {
  for (const spec of ALL) {
    const help = await cli([...spec.name.split(' '), '--help']);
    assert.equal(help.code, 0, `${spec.name} --help: ${help.stderr}`);
    assert.ok(help.stdout.startsWith(`Usage: scienceevolve ${spec.name} [options]`), help.stdout);
    assert.deepEqual(
      listedOptions(help.stdout),
      [...Object.keys(spec.options), ...Object.keys(COMMON_OPTIONS)],
      `${spec.name} --help`,
    );
    // -h is the same, wherever it stands.
    assert.equal((await cli([...spec.name.split(' '), '-h'])).stdout, help.stdout);
  }
  // A group's help is each subcommand's.
  const services = await cli(['services', '--help']);
  assert.match(services.stdout, /Usage: scienceevolve services probe/);
  assert.match(services.stdout, /Usage: scienceevolve services serve/);
  // The top-level help names every command.
  const top = await cli(['--help']);
  for (const spec of ALL) assert.ok(top.stdout.includes(`  ${spec.name}`), spec.name);
});

test("--help through the bin: exit 0 and the command's options", async () => {
  const help = await runCli(['run', '--help']);
  assert.equal(help.code, 0, help.stderr);
  assert.deepEqual(listedOptions(help.stdout), [
    ...Object.keys(command('run').options),
    ...Object.keys(COMMON_OPTIONS),
  ]);
  assert.match(
    help.stdout,
    /--forward-timeout-ms N +milliseconds a forwarded call .*\(ms, 1–2147483647; default 60000\)/,
  );
});

test("docs/cli.md's option lists are the table's (regenerate: npm run build && node scripts/cli-docs.mjs)", async () => {
  const text = await readFile(join(ROOT, 'docs/cli.md'), 'utf8');
  assert.equal(
    updateCliDocs(text),
    text,
    'docs/cli.md is out of date: run `npm run build && node scripts/cli-docs.mjs`',
  );
  assert.throws(() => updateCliDocs('<!-- options: nothing -->\n<!-- /options -->'), /no command/);
  assert.throws(() => updateCliDocs(''), /no options block for validate/);
});

test("the table's copies of SDK-owned ranges and lists equal their owners", () => {
  assert.equal(MAX_TIMER_MS, MAX_DURATION_MS);
  assert.deepEqual(RANGES.pidsMax, { min: MIN_PIDS_MAX, max: MAX_PIDS_MAX });
  assert.deepEqual(RANGES.concurrency, CONSUMER_RANGES.concurrency);
  assert.deepEqual(RANGES.maxStalled, CONSUMER_RANGES.maxStalledCount);
  assert.deepEqual(command('worker').options['lock-duration-ms'].range, CONSUMER_RANGES.lockDurationMs);
  assert.deepEqual(command('worker').options['stalled-interval-ms'].range, CONSUMER_RANGES.stalledIntervalMs);
  assert.deepEqual(command('harness-config').options.format.choices, HARNESS_CONFIG_FORMATS);
  assert.deepEqual(command('init').options.harness.choices, INIT_HARNESSES);
});

test('every whole number has a range and a unit, and every duration names its unit', () => {
  for (const spec of ALL) {
    for (const [name, option] of Object.entries(spec.options)) {
      const where = `${spec.name} --${name}`;
      assert.ok(option.help.length > 0, `${where} has a help line`);
      if (option.type !== 'int') {
        assert.equal(option.range, undefined, `${where}: a range on a non-number`);
        continue;
      }
      assert.ok(option.range !== undefined && option.unit !== undefined, `${where} has a range and a unit`);
      assert.ok(option.range.max <= MAX_TIMER_MS, `${where}: within a timer's ceiling`);
      if (option.unit === 'ms') assert.match(name, /-ms$/, `${where}: milliseconds in its name`);
      if (option.unit === 's') {
        assert.ok(
          /-sec$/.test(name) || option.deprecated !== undefined,
          `${where}: seconds in its name, or deprecated`,
        );
      }
      if (option.deprecated !== undefined) {
        assert.ok(Object.hasOwn(spec.options, option.deprecated), `${where}: its replacement exists`);
      }
    }
  }
});

test('the table module is plain data: it imports nothing but the SDK harness name lists, which import nothing', async () => {
  const source = await readFile(join(ROOT, 'packages/cli/src/optionTable.ts'), 'utf8');
  const imports = [...source.matchAll(/^\s*import\b.*$/gm)].map((m) => m[0].trim());
  assert.deepEqual(imports, ["import { HARNESS_PRESETS, INIT_HARNESSES } from '@scienceevolve/sdk/harness-names';"]);
  assert.doesNotMatch(source, /\bimport\(|\brequire\(/);
  const names = await readFile(join(ROOT, 'packages/sdk/src/schemas/harnessNames.ts'), 'utf8');
  assert.doesNotMatch(names, /^\s*import\b|\bimport\(|\brequire\(/m);
});

test('one engine block: run, resume, services probe and serve take it, and it reaches their SDK options', () => {
  for (const name of ['run', 'resume', 'services probe', 'services serve'] as const) {
    const options = command(name).options as Record<string, unknown>;
    for (const [flag, spec] of Object.entries(ENGINE_OPTIONS)) assert.equal(options[flag], spec, `${name} --${flag}`);
  }
  const engine = ['--forward-timeout-ms', '250', '--startup-budget-ms', '4000', '--grace-ms', '0'];
  const expected = { forwardTimeoutMs: 250, startupBudgetMs: 4000, graceMs: 0 };
  const ran = runEngineOptions(parseCommand(command('run'), [...engine, '--no-prestart', 'req']).values);
  assert.deepEqual({ ...ran, queue: undefined }, { ...expected, prestart: false, queue: undefined });
  const resumed = runEngineOptions(parseCommand(command('resume'), [...engine, '--prestart-idle-ms', '5']).values);
  assert.deepEqual(resumed, { ...expected, prestartIdleMs: 5, prestart: true, queue: undefined });
  for (const name of ['services probe', 'services serve'] as const) {
    const { values } = parseCommand(command(name), engine);
    assert.deepEqual(sdkOptions(ENGINE_OPTIONS, values), expected, name);
  }
});

test('parsing from the table: strict numbers, choices, the deprecated --hold, unknown options', () => {
  const probe = command('services probe');
  assert.equal(parseCommand(probe, ['--hold', '3']).values.hold, 3);
  assert.equal(parseCommand(probe, ['--hold-ms', '3']).values['hold-ms'], 3);
  const cases: Array<[CommandSpec, string[], RegExp]> = [
    [probe, ['--hold', '3', '--hold-ms', '3000'], /--hold and --hold-ms are one setting; give --hold-ms alone/],
    [probe, ['--hold-ms', '1e3'], /--hold-ms takes a whole number in decimal digits from 0 to 2147483647, not "1e3"/],
    [probe, ['--forward-timeout-ms', '0'], /--forward-timeout-ms takes a whole number from 1 to 2147483647, not 0/],
    [probe, ['--forward-timeout-ms'], /argument missing/],
    [command('gateway'), ['--log-level', 'loud'], /--log-level takes info, debug or none, not "loud"/],
    [command('harness-config'), ['--format', 'x'], /--format takes one of claude, codex, gemini, opencode, pi/],
    [command('harness-config'), ['--opencode-layout', 'v3'], /--opencode-layout takes v1 or v2, not "v3"/],
    [command('validate'), ['--constructor'], /Unknown option '--constructor'/],
  ];
  for (const [spec, argv, message] of cases) {
    assert.throws(
      () => parseCommand(spec, argv),
      (error: { code?: string; message?: string }) => error.code === 'usage' && message.test(error.message ?? ''),
      `${spec.name} ${argv.join(' ')}`,
    );
  }
});

test('scienceevolve --version prints the CLI package version (and --json a document)', async () => {
  const manifest = JSON.parse(await readFile(join(ROOT, 'packages/cli/package.json'), 'utf8')) as { version: string };
  const plain = await runCli(['--version']);
  assert.equal(plain.code, 0, plain.stderr);
  assert.equal(plain.stdout, `${manifest.version}\n`);
  const json = await runCli(['--version', '--json']);
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(json.json, { version: manifest.version });
});

test('SCIENCEEVOLVE_DATA_DIR is the data dir when --data-dir is not given; the option wins', async (t) => {
  const dir = await tempDir(t);
  const fromEnv = join(dir, 'from-env');
  const fromFlag = join(dir, 'from-flag');
  const env = { ...process.env, SCIENCEEVOLVE_DATA_DIR: fromEnv };
  const byEnv = await runCli(['status', '--json'], { env });
  assert.equal(byEnv.code, 0, byEnv.stderr);
  assert.equal((byEnv.json as { dataDir: string }).dataDir, fromEnv);
  const byFlag = await runCli(['status', '--data-dir', fromFlag, '--json'], { env });
  assert.equal(byFlag.code, 0, byFlag.stderr);
  assert.equal((byFlag.json as { dataDir: string }).dataDir, fromFlag);
  // Empty counts as unset: the usage error names both ways to give it.
  const unset = await runCli(['status', '--json'], { env: { ...process.env, SCIENCEEVOLVE_DATA_DIR: '' } });
  assert.equal(unset.code, 2);
  assert.match(
    assertErrorJson(unset.json, 'usage').message,
    /--data-dir is required \(or set SCIENCEEVOLVE_DATA_DIR\)/,
  );
});
