/**
 * `scienceevolve ui`'s refusals, each with its exit code and message, before anything listens: the table
 * runs in process through the CLI's `run` (fast; nothing is started), and one case through the built bin
 * to show the same in a real process.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { run } from '../../packages/cli/src/main.js';
import { runCli } from '../cli/runCli.js';
import { tempDir } from '../fixtures/store/tempDir.js';

test('ui refuses bad options (exit 2), a missing data dir and one of a newer format (exit 1)', async (t) => {
  const dir = await tempDir(t);
  const newer = join(dir, 'newer');
  mkdirSync(newer);
  writeFileSync(join(newer, 'format.json'), JSON.stringify({ format: 999, createdBy: 'scienceevolve' }));
  const cases: Array<[args: string[], code: number, pattern: RegExp]> = [
    [['ui'], 2, /--data-dir is required/],
    [['ui', '--data-dir', dir, 'extra'], 2, /no positional arguments/],
    [['ui', '--data-dir', dir, '--host', '0.0.0.0'], 2, /--host takes only 127\.0\.0\.1/],
    [['ui', '--data-dir', dir, '--host', 'localhost'], 2, /--host takes only 127\.0\.0\.1/],
    [['ui', '--data-dir', dir, '--port', '0x50'], 2, /--port takes a whole number/],
    [['ui', '--data-dir', dir, '--port', '65536'], 2, /--port takes a whole number from 0 to 65535, not 65536/],
    [['ui', '--data-dir', dir, '--bogus'], 2, /bogus/],
    [['ui', '--data-dir', join(dir, 'nothing-here')], 1, /error \[io_error\]: the data dir .* does not exist/],
    [['ui', '--data-dir', newer], 1, /error \[data_dir_too_new\]: the data dir .* has format 999/],
  ];
  for (const [args, code, pattern] of cases) {
    let stdout = '';
    let stderr = '';
    const exit = await run(args, {
      stdout: (s) => {
        stdout += s;
      },
      stderr: (s) => {
        stderr += s;
      },
    });
    assert.equal(exit, code, `${args.join(' ')}: ${stderr}`);
    assert.match(stderr, pattern, args.join(' '));
    assert.match(stderr, /fix: /, `${args.join(' ')} names a remedy`);
    assert.equal(stdout, '', `${args.join(' ')} printed no URL`);
  }
  const real = await runCli(['ui', '--data-dir', join(dir, 'nothing-here')]);
  assert.equal(real.code, 1, real.stderr);
  assert.match(real.stderr, /error \[io_error\]: the data dir .* does not exist/);
  assert.equal(real.stdout, '');
});
