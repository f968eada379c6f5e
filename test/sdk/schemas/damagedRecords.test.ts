/**
 * Every document read back from the data dir, damaged case by case: each reader refuses it with its code
 * (`store_tampered`, `invalid_checkpoint`, `io_error`), naming the file and the field that failed, never
 * the value; the era cache (a hint) reads a damaged record as damaged, never as a verdict.
 */
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { checkpointPath, readCheckpoint } from '../../../packages/sdk/src/engine/checkpoints.js';
import { readRunRecord, runRecordPath } from '../../../packages/sdk/src/engine/runRecord.js';
import { fileEraMemory } from '../../../packages/sdk/src/invocation/eraFile.js';
import { eraRecord } from '../../../packages/sdk/src/sessions/eraCache.js';
import { readFormatFile } from '../../../packages/sdk/src/store/dataDir.js';
import { openProject } from '../../../packages/sdk/src/store/projectStore.js';
import { readAccepted, readVersion } from '../../../packages/sdk/src/store/workflowVersions.js';
import { tempDir } from '../../fixtures/store/tempDir.js';
import { twoVersions } from '../../fixtures/store/twoVersions.js';

const SECRET = 'sk-do-not-print-me';

/** A case: a change to a good document (or the text itself), the code it must give, and what it names. */
type Case = [title: string, damage: (doc: Record<string, unknown>) => unknown, code: string, field: RegExp];

/** Asserts `error` has `code`, names `file` (in the message and `data.path`) and `field`, not the secret. */
function assertDamaged(error: unknown, code: string, file: string, field: RegExp): true {
  const e = error as { code?: string; message?: string; remedy?: string; data?: { path?: string } };
  assert.equal(e.code, code, e.message);
  assert.ok(e.message?.includes(file), `"${e.message}" names ${file}`);
  assert.equal(e.data?.path, file);
  assert.match(e.message ?? '', field);
  assert.ok((e.remedy ?? '').length > 0, 'a remedy');
  assert.doesNotMatch(e.message ?? '', new RegExp(SECRET));
  return true;
}

function text(doc: unknown): string {
  return typeof doc === 'string' ? doc : `${JSON.stringify(doc, null, 2)}\n`;
}

function runRecord(): Record<string, unknown> {
  return {
    format: 1,
    run: 'run-1',
    project: 'p',
    status: 'interrupted',
    requirement: 'r',
    workspace: '/w',
    version: 1,
    script: null,
    host: { pid: 1, start: '1' },
    startedAt: '2026-12-02T00:00:00.000Z',
    finishedAt: null,
    output: null,
    error: null,
    resumes: 0,
    invocations: [
      {
        id: 'inv-1',
        agent: 'main',
        parent: null,
        task: 't',
        state: 'running',
        restarted: false,
        workspace: '/w',
        git: null,
        attempts: [
          {
            attempt: 1,
            servicesId: 'inv-1',
            runtimePath: '/r',
            version: 1,
            restarted: false,
            startedAt: '2026-12-02T00:00:00.000Z',
            finishedAt: null,
            outcome: null,
            error: null,
          },
        ],
        startedAt: '2026-12-02T00:00:00.000Z',
        finishedAt: null,
        output: null,
        error: null,
      },
    ],
  };
}

describe('run.json: store_tampered naming the run, the file and the field', () => {
  const inv = (d: Record<string, unknown>) => (d.invocations as Record<string, unknown>[])[0]!;
  /** `d` with `change` made to its one invocation entry. */
  const withInvocation = (d: Record<string, unknown>, change: (i: Record<string, unknown>) => void) => {
    change(inv(d));
    return d;
  };
  const cases: Case[] = [
    ['not JSON', () => '{"format": 1, "run": "run-', 'store_tampered', /is not valid JSON/],
    ['an array', () => [], 'store_tampered', /the document is not an object/],
    ['another format', (d) => ({ ...d, format: 2 }), 'store_tampered', /field "format" is not 1/],
    ['a status of no list', (d) => ({ ...d, status: SECRET }), 'store_tampered', /field "status" is not "running"/],
    ['the host missing', ({ host, ...d }) => d, 'store_tampered', /field "host" is missing/],
    ['resumes negative', (d) => ({ ...d, resumes: -1 }), 'store_tampered', /field "resumes"/],
    ['another run', (d) => ({ ...d, run: 'run-2' }), 'store_tampered', /field "run" names another run/],
    [
      'an invocation in no state',
      (d) =>
        withInvocation(d, (i) => {
          i.state = SECRET;
        }),
      'store_tampered',
      /invocation 1 of 1 \(field "invocations\.0\.state"\) is not "starting"/,
    ],
    [
      "an attempt's outcome of no list",
      (d) =>
        withInvocation(d, (i) => {
          (i.attempts as Record<string, unknown>[])[0]!.outcome = 'running';
        }),
      'store_tampered',
      /field "invocations\.0\.attempts\.0\.outcome"/,
    ],
  ];
  test('a good record reads back', async (t) => {
    const paths = await openProject(join(await tempDir(t), 'data'), 'p');
    await mkdir(paths.runDir('run-1'), { recursive: true });
    await writeFile(runRecordPath(paths, 'run-1'), text(runRecord()));
    assert.deepEqual(await readRunRecord(paths, 'run-1'), runRecord());
  });
  for (const [title, damage, code, field] of cases) {
    test(title, async (t) => {
      const paths = await openProject(join(await tempDir(t), 'data'), 'p');
      await mkdir(paths.runDir('run-1'), { recursive: true });
      const file = runRecordPath(paths, 'run-1');
      await writeFile(file, text(damage(runRecord())));
      await assert.rejects(readRunRecord(paths, 'run-1'), (e) => assertDamaged(e, code, file, field));
    });
  }
});

describe('checkpoints: invalid_checkpoint naming the file and the field', () => {
  const good = () => ({
    format: 1,
    run: 'run-1',
    invocation: 'inv-1',
    agent: 'main',
    attempt: 1,
    savedAt: '2026-12-02T00:00:00.000Z',
    state: { any: 'json' },
  });
  const cases: Case[] = [
    ['not JSON', () => '{"format": 1,', 'invalid_checkpoint', /is not valid JSON/],
    ['another format', (d) => ({ ...d, format: 'x' }), 'invalid_checkpoint', /field "format" is not 1/],
    [
      'the attempt a string',
      (d) => ({ ...d, attempt: SECRET }),
      'invalid_checkpoint',
      /field "attempt" is not a number/,
    ],
    ['another invocation', (d) => ({ ...d, invocation: 'inv-2' }), 'invalid_checkpoint', /names another invocation/],
    ['another run', (d) => ({ ...d, run: 'run-2' }), 'invalid_checkpoint', /names another run/],
    ['no state', ({ state, ...d }) => d, 'invalid_checkpoint', /field "state" is missing/],
  ];
  test('a good checkpoint reads back; none is undefined', async (t) => {
    const paths = await openProject(join(await tempDir(t), 'data'), 'p');
    assert.equal(await readCheckpoint(paths, 'run-1', 'inv-1'), undefined);
    const file = checkpointPath(paths, 'run-1', 'inv-1');
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, text(good()));
    assert.deepEqual(await readCheckpoint(paths, 'run-1', 'inv-1'), { state: { any: 'json' } });
  });
  for (const [title, damage, code, field] of cases) {
    test(title, async (t) => {
      const paths = await openProject(join(await tempDir(t), 'data'), 'p');
      const file = checkpointPath(paths, 'run-1', 'inv-1');
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, text(damage(good())));
      await assert.rejects(readCheckpoint(paths, 'run-1', 'inv-1'), (e) => assertDamaged(e, code, file, field));
    });
  }
});

describe('the workflow store: store_tampered naming the file and the field', () => {
  const pointerCases: Case[] = [
    ['the digest missing', ({ digest, ...d }) => d, 'store_tampered', /field "digest" is missing/],
    ['a digest that is no sha256', (d) => ({ ...d, digest: SECRET }), 'store_tampered', /field "digest"/],
    ['version 0', (d) => ({ ...d, version: 0 }), 'store_tampered', /field "version"/],
    ['an extra key', (d) => ({ ...d, by: 'main' }), 'store_tampered', /unexpected keys "by"/],
  ];
  for (const [title, damage, code, field] of pointerCases) {
    test(`accepted.json: ${title}`, async (t) => {
      const paths = await twoVersions(t);
      const pointer = JSON.parse(await readFile(paths.acceptedPath, 'utf8'));
      await writeFile(paths.acceptedPath, text(damage(pointer)));
      await assert.rejects(readAccepted(paths), (e) => assertDamaged(e, code, paths.acceptedPath, field));
    });
  }
  const versionCases: Case[] = [
    ['"by" of no list', (d) => ({ ...d, by: SECRET }), 'store_tampered', /field "by" is not "operator" or "main"/],
    ['acceptedAt no time', (d) => ({ ...d, acceptedAt: 'yesterday' }), 'store_tampered', /field "acceptedAt"/],
    ['previous no digest', (d) => ({ ...d, previous: 'abc' }), 'store_tampered', /field "previous"/],
    [
      'changedMcps a string',
      (d) => ({ ...d, changedMcps: 'x' }),
      'store_tampered',
      /field "changedMcps" is not an array/,
    ],
    ['a key missing', ({ workflowDigest, ...d }) => d, 'store_tampered', /field "workflowDigest" is missing/],
    ['the workflow no object', (d) => ({ ...d, workflow: [] }), 'store_tampered', /field "workflow"/],
  ];
  for (const [title, damage, code, field] of versionCases) {
    test(`versions/2.json: ${title}`, async (t) => {
      const paths = await twoVersions(t);
      const file = paths.versionPath(2);
      await writeFile(file, text(damage(JSON.parse(await readFile(file, 'utf8')))));
      await assert.rejects(readAccepted(paths), (e) => assertDamaged(e, code, file, field));
      await assert.rejects(readVersion(paths, 2), (e) => assertDamaged(e, code, file, field));
    });
  }
});

describe('format.json: io_error naming the file and the field', () => {
  const cases: Case[] = [
    ['not JSON', () => 'garbage', 'io_error', /is damaged/],
    ['no format number', () => ({ createdBy: 'x' }), 'io_error', /field "format" is missing/],
    ['a format string', () => ({ format: '2' }), 'io_error', /field "format" is not a number/],
    ['an array', () => [2], 'io_error', /the document is not an object/],
  ];
  for (const [title, damage, code, field] of cases) {
    test(title, async (t) => {
      const file = join(await tempDir(t), 'format.json');
      await writeFile(file, text(damage({})));
      await assert.rejects(readFormatFile(file), (e) => assertDamaged(e, code, file, field));
    });
  }
});

test('the era cache: every damaged record reads as damaged (a hint), a good one as its verdict', async (t) => {
  const dir = await tempDir(t);
  const digest = 'd'.repeat(64);
  const path = join(dir, `${digest}.json`);
  const listed = { tools: 2, resources: 0, resourceTemplates: 0, prompts: 1 };
  const memory = fileEraMemory(path, digest);
  assert.deepEqual(await memory.read(), { found: undefined, damaged: false });
  const modern = { kind: 'modern' as const, discover: { supportedVersions: ['2026-07-28'], capabilities: {} } };
  await memory.remember(modern, listed);
  assert.deepEqual(await memory.read(), { found: modern, listed });
  const good = eraRecord(digest, modern, listed);
  const damaged: Array<[string, unknown]> = [
    ['not JSON', '{"format":2,'],
    ['format 1', { ...good, format: 1 }],
    ['another digest', { ...good, digest: 'e'.repeat(64) }],
    ['an era of no list', { ...good, era: 'future' }],
    ['modern without discover', { ...good, discover: undefined }],
    ['no supported version', { ...good, discover: { supportedVersions: [], capabilities: {} } }],
    ['a negative count', { ...good, listed: { ...listed, tools: -1 } }],
  ];
  for (const [title, record] of damaged) {
    await writeFile(path, typeof record === 'string' ? record : JSON.stringify(record));
    assert.deepEqual(await memory.read(), { found: undefined, damaged: true }, title);
  }
});
