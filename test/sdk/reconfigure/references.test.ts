/**
 * References in apply_workflow snapshots (SPEC §9): `{ "accepted": "<digest>" }` keeps an accepted
 * definition without its files; every bad reference is refused with its code, its JSON path and the fix;
 * a workflow file the operator loads never takes one.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { applyWorkflow } from '../../../packages/sdk/src/reconfigure/applyWorkflow.ts';
import { openProject } from '../../../packages/sdk/src/store/projectStore.ts';
import { loadWorkflow } from '../../../packages/sdk/src/store/workflowLoad.ts';
import { listVersions, readAccepted } from '../../../packages/sdk/src/store/workflowVersions.ts';
import { definitionDigest } from '../../../packages/sdk/src/workflow/digest.ts';
import { validateWorkflow } from '../../../packages/sdk/src/workflow/validate.ts';

const SERVER = "require('node:process').stdin.resume();";
const TOOLS = { entrypoint: 'server.cjs', files: { 'server.cjs': SERVER } };
const NOTES = { entrypoint: 'notes.cjs', files: { 'notes.cjs': `${SERVER}// notes` }, args: ['--quiet'] };
const TOOLS_DIGEST = definitionDigest(TOOLS);
const NOTES_DIGEST = definitionDigest(NOTES);
const OTHER_DIGEST = 'ab'.repeat(32);

type Snapshot = {
  orchestration: Record<string, unknown>;
  agents: Record<string, { mcpServers: Array<Record<string, string>> }>;
  mcpDefinitions?: Record<string, unknown>;
};

function accepted(): Snapshot {
  return {
    orchestration: { allowMainReconfiguration: true },
    agents: {
      main: { mcpServers: [{ name: 'tools', project: 'tools' }] },
      analyst: { mcpServers: [{ name: 'notes', project: 'notes' }] },
    },
    mcpDefinitions: { tools: TOOLS, notes: NOTES },
  };
}

/** The accepted workflow with every definition stated by reference. */
function byReference(): Snapshot & { mcpDefinitions: Record<string, unknown> } {
  return {
    ...accepted(),
    mcpDefinitions: { tools: { accepted: TOOLS_DIGEST }, notes: { accepted: NOTES_DIGEST } },
  };
}

async function project(t: { after: (fn: () => Promise<void>) => void }) {
  const dataDir = await mkdtemp(join(tmpdir(), 'se-refs-'));
  t.after(() => rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  await loadWorkflow({ dataDir, project: 'p', workflow: accepted() });
  return openProject(dataDir, 'p');
}

function errorsOf(error: unknown): Array<{ code: string; path: string; message: string }> {
  return (error as { data?: { errors?: Array<{ code: string; path: string; message: string }> } }).data?.errors ?? [];
}

test('a reference keeps an accepted definition: a new service lands beside it, the kept one unchanged', async (t) => {
  const paths = await project(t);
  const next = byReference();
  next.mcpDefinitions.stats = { entrypoint: 's.cjs', files: { 's.cjs': `${SERVER}// stats` } };
  next.agents.analyst!.mcpServers.push({ name: 'stats', project: 'stats' });
  assert.deepEqual(await applyWorkflow(paths, next), {
    version: 2,
    changedMcps: ['stats'],
    changedAgents: ['analyst'],
  });
  const now = await readAccepted(paths);
  assert.deepEqual(now?.workflow.mcpDefinitions.tools, { ...TOOLS, command: 'node', args: [], envFrom: {} });
  assert.deepEqual(now?.workflow.mcpDefinitions.notes, { ...NOTES, command: 'node', envFrom: {} });
  assert.equal(now?.digests.tools, TOOLS_DIGEST);
  assert.equal(now?.digests.notes, NOTES_DIGEST);
});

test('a snapshot of references only changes nothing; references and full definitions mix', async (t) => {
  const paths = await project(t);
  assert.deepEqual(await applyWorkflow(paths, byReference()), { version: 1, changedMcps: [], changedAgents: [] });
  const mixed = byReference();
  mixed.mcpDefinitions.tools = TOOLS;
  assert.deepEqual(await applyWorkflow(paths, mixed), { version: 1, changedMcps: [], changedAgents: [] });
  assert.deepEqual(await listVersions(paths), [1]);
});

test('the operator may use references through applyWorkflow too', async (t) => {
  const paths = await project(t);
  const next = byReference();
  next.mcpDefinitions.notes = { ...NOTES, args: [] };
  assert.deepEqual(await applyWorkflow(paths, next, { by: 'operator' }), {
    version: 2,
    changedMcps: ['notes'],
    changedAgents: ['analyst'],
  });
  assert.deepEqual((await readAccepted(paths))?.workflow.mcpDefinitions.tools?.files, TOOLS.files);
});

test('bad references: each refused with its code and JSON path and a message naming the fix; nothing written', async (t) => {
  const cases: Array<{
    name: string;
    mutate: (w: ReturnType<typeof byReference>) => void;
    expect: Array<{ code: string; path: string; message: RegExp }>;
  }> = [
    {
      name: 'a digest that is not the accepted digest of that name',
      mutate: (w) => {
        w.mcpDefinitions.tools = { accepted: OTHER_DIGEST };
      },
      expect: [
        {
          code: 'unknown_reference',
          path: '$.mcpDefinitions.tools.accepted',
          message: new RegExp(
            `not the accepted digest of "tools": to keep it, send "tools": \\{"accepted": "${TOOLS_DIGEST}"\\}`,
          ),
        },
      ],
    },
    {
      name: "an accepted name given another accepted definition's digest",
      mutate: (w) => {
        w.mcpDefinitions.tools = { accepted: NOTES_DIGEST };
      },
      expect: [
        {
          code: 'unknown_reference',
          path: '$.mcpDefinitions.tools.accepted',
          message: new RegExp(
            `digest of the accepted definition "notes", not of "tools".*"accepted": "${TOOLS_DIGEST}"`,
          ),
        },
      ],
    },
    {
      name: 'a reference under another name (the digest of "tools" as "tools2")',
      mutate: (w) => {
        w.mcpDefinitions.tools2 = { accepted: TOOLS_DIGEST };
        w.agents.analyst!.mcpServers.push({ name: 'tools2', project: 'tools2' });
      },
      expect: [
        {
          code: 'unknown_reference',
          path: '$.mcpDefinitions.tools2.accepted',
          message: /no accepted definition "tools2".*"name": "tools2", "project": "tools"/,
        },
      ],
    },
    {
      name: 'a reference to a name that is not accepted',
      mutate: (w) => {
        w.mcpDefinitions.ghost = { accepted: OTHER_DIGEST };
        w.agents.analyst!.mcpServers.push({ name: 'ghost', project: 'ghost' });
      },
      expect: [
        {
          code: 'unknown_reference',
          path: '$.mcpDefinitions.ghost.accepted',
          message:
            /no accepted definition "ghost" to refer to \(accepted: "tools", "notes"\); a new service is stated in full/,
        },
      ],
    },
    {
      name: 'a name of Object.prototype is no accepted definition',
      mutate: (w) => {
        Object.assign(w.mcpDefinitions, { constructor: { accepted: OTHER_DIGEST } });
      },
      expect: [{ code: 'unknown_reference', path: '$.mcpDefinitions.constructor.accepted', message: /no accepted/ }],
    },
    {
      name: 'a digest that is not 64 hex characters',
      mutate: (w) => {
        w.mcpDefinitions.tools = { accepted: TOOLS_DIGEST.toUpperCase() };
        w.mcpDefinitions.notes = { accepted: 7 };
      },
      expect: [
        {
          code: 'invalid_workflow',
          path: '$.mcpDefinitions.notes.accepted',
          message: new RegExp(`64-character hex digest .* "notes": \\{"accepted": "${NOTES_DIGEST}"\\}`),
        },
        {
          code: 'invalid_workflow',
          path: '$.mcpDefinitions.tools.accepted',
          message: new RegExp(`"tools": \\{"accepted": "${TOOLS_DIGEST}"\\}`),
        },
      ],
    },
    {
      name: 'a reference with other keys',
      mutate: (w) => {
        w.mcpDefinitions.tools = { accepted: TOOLS_DIGEST, files: TOOLS.files };
      },
      expect: [
        {
          code: 'invalid_workflow',
          path: '$.mcpDefinitions.tools.files',
          message: /a reference is \{"accepted": "<digest>"\} alone: remove "files"/,
        },
      ],
    },
    {
      name: "get_workflow's summary sent back with another definition's digest",
      mutate: (w) => {
        w.mcpDefinitions.tools = { digest: NOTES_DIGEST, entrypoint: 'server.cjs', fileBytes: { 'server.cjs': 1 } };
      },
      expect: [
        {
          code: 'immutable_definition',
          path: '$.mcpDefinitions.tools.digest',
          message: new RegExp(
            `"${NOTES_DIGEST}" is not the digest of the accepted definition "tools" \\(${TOOLS_DIGEST}\\).*or as \\{"accepted": "${TOOLS_DIGEST}"\\}; to change the service, add the new version under a new name`,
          ),
        },
      ],
    },
    {
      name: "get_workflow's summary with its digest but a changed setting",
      mutate: (w) => {
        w.mcpDefinitions.tools = { digest: TOOLS_DIGEST, entrypoint: 'server.cjs', command: 'python3' };
      },
      expect: [
        {
          code: 'immutable_definition',
          path: '$.mcpDefinitions.tools.command',
          message: /"command" differs from the accepted definition "tools".*cannot change/,
        },
      ],
    },
    {
      name: 'a summary for a name that is not accepted',
      mutate: (w) => {
        w.mcpDefinitions.fresh = { digest: TOOLS_DIGEST, entrypoint: 'server.cjs', fileBytes: { 'server.cjs': 1 } };
      },
      expect: [
        {
          code: 'unknown_reference',
          path: '$.mcpDefinitions.fresh.digest',
          message:
            /there is no accepted definition "fresh" for this summary to stand for: a new service is stated in full/,
        },
      ],
    },
    {
      name: 'a bad reference beside another error: both reported at once',
      mutate: (w) => {
        w.mcpDefinitions.tools = { accepted: OTHER_DIGEST };
        w.agents.analyst!.mcpServers.push({ name: 'x', project: 'nope' });
      },
      expect: [
        { code: 'unknown_reference', path: '$.agents.analyst.mcpServers[1].project', message: /no definition "nope"/ },
        { code: 'unknown_reference', path: '$.mcpDefinitions.tools.accepted', message: /not the accepted digest/ },
      ],
    },
  ];
  const paths = await project(t);
  for (const c of cases) {
    const next = byReference();
    c.mutate(next);
    await assert.rejects(applyWorkflow(paths, next), (error: unknown) => {
      assert.equal((error as { code: string }).code, 'invalid_workflow', c.name);
      const errors = errorsOf(error);
      assert.deepEqual(
        errors.map((e) => ({ code: e.code, path: e.path })),
        c.expect.map((e) => ({ code: e.code, path: e.path })),
        c.name,
      );
      for (const [i, e] of c.expect.entries()) assert.match(errors[i]!.message, e.message, c.name);
      return true;
    });
  }
  assert.deepEqual(await listVersions(paths), [1]);
});

test("get_workflow's view echoed back with one service added applies: summaries, full definitions, digests", async (t) => {
  const paths = await project(t);
  const summary = (definition: typeof TOOLS | typeof NOTES, digest: string) => {
    const { files, ...settings } = definition;
    const fileBytes = Object.fromEntries(Object.entries(files).map(([p, c]) => [p, Buffer.byteLength(c)]));
    return { digest, command: 'node', args: [], envFrom: {}, ...settings, fileBytes };
  };
  // 1. The summaries (get_workflow without sources), digests included, and a new service.
  const fresh = { entrypoint: 'fresh.cjs', files: { 'fresh.cjs': `${SERVER}// fresh` } };
  const first = {
    ...accepted(),
    mcpDefinitions: { tools: summary(TOOLS, TOOLS_DIGEST), notes: summary(NOTES, NOTES_DIGEST), fresh },
  };
  const v2 = await applyWorkflow(paths, first);
  assert.deepEqual([v2.version, v2.changedMcps], [2, ['fresh']]);
  // 2. In full (get_workflow with sources), each with its digest, and one more new service — itself sent
  //    with a digest field (ignored: a new definition's digest is computed).
  const more = { entrypoint: 'more.cjs', files: { 'more.cjs': `${SERVER}// more` } };
  const second = {
    ...accepted(),
    mcpDefinitions: {
      tools: { digest: TOOLS_DIGEST, command: 'node', args: [], envFrom: {}, ...TOOLS },
      notes: { digest: NOTES_DIGEST, command: 'node', envFrom: {}, ...NOTES },
      fresh: { digest: definitionDigest(fresh), ...fresh },
      more: { digest: 'not a digest', ...more },
    },
  };
  const v3 = await applyWorkflow(paths, second);
  assert.deepEqual([v3.version, v3.changedMcps], [3, ['more']]);
  const now = await readAccepted(paths);
  assert.deepEqual(Object.keys(now!.workflow.mcpDefinitions).sort(), ['fresh', 'more', 'notes', 'tools']);
  assert.equal(definitionDigest(now!.workflow.mcpDefinitions.tools!), TOOLS_DIGEST);
  assert.ok(!Object.hasOwn(now!.workflow.mcpDefinitions.more!, 'digest'), 'no "digest" is stored');
  // 3. A full definition with its accepted digest but changed files is still a change.
  const third = {
    ...second,
    mcpDefinitions: {
      ...second.mcpDefinitions,
      more: { digest: definitionDigest(more), ...more },
      tools: { digest: TOOLS_DIGEST, ...TOOLS, files: { 'server.cjs': `${SERVER}// v2` } },
    },
  };
  await assert.rejects(applyWorkflow(paths, third), (error: unknown) => {
    assert.deepEqual(
      errorsOf(error).map((e) => [e.code, e.path]),
      [['immutable_definition', '$.mcpDefinitions.tools']],
    );
    return true;
  });
  assert.deepEqual(await listVersions(paths), [1, 2, 3]);
});

test('limits are checked on the resolved snapshot: references that resolve past 1 MiB are refused', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'se-refs-'));
  t.after(() => rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  const big = (i: number) => ({ entrypoint: 'server.cjs', files: { 'server.cjs': `// ${i}\n${'x'.repeat(400_000)}` } });
  await loadWorkflow({
    dataDir,
    project: 'p',
    workflow: {
      orchestration: { allowMainReconfiguration: true },
      agents: { main: {} },
      mcpDefinitions: { a: big(1), b: big(2) },
    },
  });
  const paths = await openProject(dataDir, 'p');
  const snapshot = {
    orchestration: { allowMainReconfiguration: true },
    agents: { main: {} },
    mcpDefinitions: {
      a: { accepted: definitionDigest(big(1)) },
      b: { accepted: definitionDigest(big(2)) },
      c: big(3),
    },
  };
  assert.ok(JSON.stringify(snapshot).length < 500_000, 'the snapshot as sent is well under the limits');
  await assert.rejects(applyWorkflow(paths, snapshot), (error: unknown) => {
    assert.deepEqual(
      errorsOf(error).map((e) => [e.code, e.path]),
      [['limit_exceeded', '$.mcpDefinitions']],
    );
    return true;
  });
  assert.deepEqual(await listVersions(paths), [1]);
});

test('Main may still not change an accepted definition: a full restatement that differs is immutable_definition', async (t) => {
  const paths = await project(t);
  const next = byReference();
  next.mcpDefinitions.tools = { ...TOOLS, files: { 'server.cjs': `${SERVER}// v2` } };
  await assert.rejects(applyWorkflow(paths, next), (error: unknown) => {
    assert.deepEqual(
      errorsOf(error).map((e) => [e.code, e.path]),
      [['immutable_definition', '$.mcpDefinitions.tools']],
    );
    return true;
  });
});

test('a workflow file the operator loads never takes a reference: said at its path, without the schema noise', async (t) => {
  const result = validateWorkflow({
    ...accepted(),
    mcpDefinitions: { tools: { accepted: TOOLS_DIGEST }, notes: NOTES },
  });
  assert.equal(result.ok, false);
  assert.deepEqual(
    result.errors.map((e) => [e.code, e.path]),
    [['invalid_workflow', '$.mcpDefinitions.tools.accepted']],
  );
  assert.match(result.errors[0]!.message, /valid only in an apply_workflow snapshot, never in a workflow file/);

  const dataDir = await mkdtemp(join(tmpdir(), 'se-refs-'));
  t.after(() => rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  await assert.rejects(
    loadWorkflow({
      dataDir,
      project: 'p',
      workflow: { ...accepted(), mcpDefinitions: { tools: { accepted: TOOLS_DIGEST } } },
    }),
    (error: unknown) => {
      assert.deepEqual(
        errorsOf(error).map((e) => [e.code, e.path]),
        [
          ['unknown_reference', '$.agents.analyst.mcpServers[0].project'],
          ['invalid_workflow', '$.mcpDefinitions.tools.accepted'],
        ],
      );
      return true;
    },
  );
});
