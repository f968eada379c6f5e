/** `scienceevolve validate` (SPEC §13): its `--json` shape and exit codes, run as the built bin. */
import assert from 'node:assert/strict';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { tempDir } from '../fixtures/store/tempDir.js';
import { assertErrorJson, runCli, workflowFixture } from './runCli.js';

describe('scienceevolve validate', { concurrency: 2 }, () => {
  test('a valid workflow: exit 0, {"ok": true, "errors": []}, and nothing written', async (t) => {
    const dir = await tempDir(t);
    const file = join(dir, 'workflow.json');
    await writeFile(file, await readFile(workflowFixture('minimal.json')));
    const r = await runCli(['validate', file, '--json'], { cwd: dir });
    assert.equal(r.code, 0);
    assert.deepEqual(r.json, { ok: true, errors: [] });
    assert.equal(r.stderr, '');
    assert.deepEqual(await readdir(dir), ['workflow.json'], 'validate touches nothing');
  });

  test('an invalid workflow: exit 1, {"ok": false, "errors": [{code, path, message}]} with every fault', async () => {
    const r = await runCli(['validate', workflowFixture('severalFaults.json'), '--json']);
    assert.equal(r.code, 1);
    const doc = r.json as { ok: boolean; errors: Array<Record<string, string>> };
    assert.deepEqual(Object.keys(doc).sort(), ['errors', 'ok']);
    assert.equal(doc.ok, false);
    for (const e of doc.errors) {
      assert.deepEqual(Object.keys(e).sort(), ['code', 'message', 'path']);
      assert.ok(e.message!.length > 0);
    }
    assert.deepEqual(
      doc.errors.map((e) => [e.code, e.path]),
      [
        ['reserved_name', '$.agents.main.mcpServers[0].name'],
        ['unknown_reference', '$.agents.main.mcpServers[1].project'],
        ['invalid_workflow', '$.agents.main.mcpServers[2]'],
        ['invalid_workflow', '$.extra'],
        ['invalid_command', '$.mcpDefinitions.echo.command'],
        ['reserved_name', '$.mcpDefinitions.echo.envFrom.NODE_PATH'],
        ['unsafe_path', '$.mcpDefinitions.echo.files["../escape.cjs"]'],
      ],
    );
  });

  test('not JSON: exit 1, invalid_json at $', async () => {
    const r = await runCli(['validate', workflowFixture('notJson.txt'), '--json']);
    assert.equal(r.code, 1);
    const doc = r.json as { ok: boolean; errors: Array<Record<string, string>> };
    assert.equal(doc.ok, false);
    assert.deepEqual(
      doc.errors.map((e) => [e.code, e.path]),
      [['invalid_json', '$']],
    );
  });

  test('human output: one line a fault with code and path, on stdout', async () => {
    const ok = await runCli(['validate', workflowFixture('minimal.json')]);
    assert.equal(ok.code, 0);
    assert.match(ok.stdout, /^ok: .*minimal\.json is a valid workflow/);
    const bad = await runCli(['validate', workflowFixture('severalFaults.json')]);
    assert.equal(bad.code, 1);
    assert.match(bad.stdout, /7 errors/);
    assert.match(bad.stdout, /unsafe_path at \$\.mcpDefinitions\.echo\.files\["\.\.\/escape\.cjs"\]: /);
  });

  test('a file that cannot be read: exit 1, io_error, code and remedy on stderr', async (t) => {
    const missing = join(await tempDir(t), 'missing.json');
    const r = await runCli(['validate', missing, '--json']);
    assert.equal(r.code, 1);
    const error = assertErrorJson(r.json, 'io_error');
    assert.ok(error.remedy);
    assert.match(r.stderr, /^error \[io_error\]: .*missing\.json/m);
    assert.match(r.stderr, /^ {2}fix: /m);
  });

  for (const [title, args] of [
    ['no file', ['validate', '--json']],
    ['an unknown option', ['validate', 'a.json', '--strict', '--json']],
  ] as const) {
    test(`usage error (${title}): exit 2, code usage`, async () => {
      const r = await runCli([...args]);
      assert.equal(r.code, 2);
      assertErrorJson(r.json, 'usage');
      assert.match(r.stderr, /^error \[usage\]: /m);
    });
  }
});
