/** `scienceevolve ui`'s refusals, each with its exit code, before anything listens. */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../cli/runCli.js';
import { tempDir } from '../fixtures/store/tempDir.js';

test('ui refuses bad options with a usage error (exit 2) and a missing data dir with io_error (exit 1)', async (t) => {
  const dir = await tempDir(t);
  const newer = join(dir, 'newer');
  mkdirSync(newer);
  writeFileSync(join(newer, 'format.json'), JSON.stringify({ format: 999, createdBy: 'scienceevolve' }));
  const cases: Array<[args: string[], code: number, pattern: RegExp]> = [
    [['ui'], 2, /--data-dir is required/],
    [['ui', '--data-dir', dir, 'extra'], 2, /no positional arguments/],
    [['ui', '--data-dir', dir, '--host', '0.0.0.0'], 2, /--host takes only 127\.0\.0\.1/],
    [['ui', '--data-dir', dir, '--port', '0x50'], 2, /--port takes a whole number/],
    [['ui', '--data-dir', dir, '--port', '65536'], 2, /--port takes a port from 0 to 65535/],
    [['ui', '--data-dir', join(dir, 'nothing-here')], 1, /error \[io_error\]: the data dir .* does not exist/],
    [['ui', '--data-dir', newer], 1, /error \[data_dir_too_new\]: the data dir .* has format 999/],
  ];
  for (const [args, code, pattern] of cases) {
    const r = await runCli(args);
    assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, pattern, args.join(' '));
    assert.equal(r.stdout, '', `${args.join(' ')} printed no URL`);
  }
});
