import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { ERROR_META_KEY, createSurface } from '../../../packages/sdk/src/surface/surface.js';
import { connectSession, createLabServer, createNamedToolsServer } from '../../fixtures/bridge/labService.js';

function textOf(result: CallToolResult): string {
  const block = result.content[0];
  return block?.type === 'text' ? block.text : '';
}

test('the surface lists every tool as <service>__<tool>, aliases included, with their fields kept', async (t) => {
  const lab = await connectSession('lab', createLabServer('lab'));
  t.after(() => lab.close());
  const shared = await connectSession('other', createLabServer('other'), { aliases: ['other', 'twin'] });
  t.after(() => shared.close());
  const surface = createSurface([lab, shared]);

  const names = surface.tools.map((tool) => tool.name);
  for (const service of ['lab', 'other', 'twin']) {
    for (const tool of ['echo', 'args', 'sleep', 'big'])
      assert.ok(names.includes(`${service}__${tool}`), `${service}__${tool}`);
  }
  const echo = surface.tools.find((tool) => tool.name === 'lab__echo')!;
  const original = lab.catalog.tools.find((tool) => tool.name === 'echo')!;
  assert.equal(echo.title, original.title);
  assert.equal(echo.description, original.description);
  assert.deepEqual(echo.inputSchema, original.inputSchema);
  assert.deepEqual(echo.outputSchema, original.outputSchema);
  assert.deepEqual(echo.annotations, original.annotations);
  assert.deepEqual(echo.icons, original.icons);
  assert.equal(echo._meta?.['scienceevolve/service'], 'lab');
  assert.equal(echo._meta?.['scienceevolve/name'], 'echo');

  // An alias routes to the shared session.
  const viaTwin = await surface.callTool('twin__echo', { text: 'hi' });
  assert.deepEqual(viaTwin.structuredContent, { echoed: 'hi' });

  // Prompts are named like tools; resources keep their URIs, listed once per session.
  assert.deepEqual(
    surface.prompts.map((p) => p.name),
    ['lab__greet', 'other__greet', 'twin__greet'],
  );
  assert.deepEqual(
    surface.resources.map((r) => r.uri),
    ['lab://readme', 'other://readme'],
  );
  assert.deepEqual(
    surface.resourceTemplates.map((r) => r.uriTemplate),
    ['lab://items/{id}', 'other://items/{id}'],
  );
  const read = await surface.readResource('other://items/42');
  assert.equal((read.contents[0] as { text: string }).text, 'other says: other://items/42');
  const prompt = await surface.getPrompt('twin__greet', { who: 'Ada' });
  assert.deepEqual(prompt.messages[0]?.content, { type: 'text', text: 'Hello, Ada!' });

  await assert.rejects(surface.callTool('nope__echo', {}), { code: 'unknown_tool' });
  await assert.rejects(surface.readResource('nowhere://x'), { code: 'unknown_reference' });
  // A URI with credentials is shown as every output shows a URL: no user information, query values hidden.
  await assert.rejects(surface.readResource('https://ada:pw-1@nowhere.example/x?sig=secret-1'), (error: unknown) => {
    const { code, message, data } = error as { code: string; message: string; data: unknown };
    assert.equal(code, 'unknown_reference');
    assert.match(message, /"https:\/\/nowhere\.example\/x\?sig=REDACTED"/);
    assert.deepEqual(data, { uri: 'https://nowhere.example/x?sig=REDACTED' });
    assert.ok(!JSON.stringify({ message, data }).includes('pw-1') && !message.includes('secret-1'));
    return true;
  });
  await assert.rejects(surface.getPrompt('nope', {}), { code: 'unknown_reference' });
});

test('the catalog digest is stable and changes with the listing', async (t) => {
  const a = await connectSession('lab', createLabServer('lab'));
  t.after(() => a.close());
  const b = await connectSession('lab', createLabServer('lab'));
  t.after(() => b.close());
  const c = await connectSession('lab2', createLabServer('lab'));
  t.after(() => c.close());
  assert.match(createSurface([a]).digest, /^[0-9a-f]{64}$/);
  assert.equal(createSurface([a]).digest, createSurface([b]).digest);
  assert.notEqual(createSurface([a]).digest, createSurface([c]).digest);
});

test('colliding names across services keep every tool callable', async (t) => {
  const a = await connectSession('a', createNamedToolsServer(['b__c', 'x']));
  t.after(() => a.close());
  const ab = await connectSession('a__b', createNamedToolsServer(['c']));
  t.after(() => ab.close());
  const surface = createSurface([a, ab]);
  assert.equal(surface.tools.length, 3);
  const routes = surface.routes.filter((r) => r.kind === 'tool');
  for (const route of routes) {
    const result = await surface.callTool(route.name, {});
    assert.equal(textOf(result), `called ${route.sourceName}`);
  }
  assert.ok(surface.tools.some((tool) => tool.name === 'a__x'));
});

test('tools/call arguments are checked against the schema before dispatch', async (t) => {
  const lab = await connectSession('lab', createLabServer('lab'));
  t.after(() => lab.close());
  const surface = createSurface([lab]);
  const refusals: { tool: string; args: Record<string, unknown>; message: RegExp; why: string }[] = [
    { why: 'missing required', tool: 'lab__echo', args: {}, message: /must have required property 'text'/ },
    { why: 'wrong type', tool: 'lab__echo', args: { text: 5 }, message: /text must be string/ },
    {
      why: 'extra property',
      tool: 'lab__echo',
      args: { text: 'a', more: 1 },
      message: /must NOT have additional properties/,
    },
    {
      why: 'no coercion of "5" to an integer',
      tool: 'lab__args',
      args: { count: '5' },
      message: /count must be integer/,
    },
    {
      why: 'no coercion of "true" to a boolean',
      tool: 'lab__args',
      args: { flag: 'true' },
      message: /flag must be boolean/,
    },
    {
      why: 'draft-07 dependencies apply when declared',
      tool: 'lab__draft7',
      args: { a: 1 },
      message: /must have property b when property a is present/,
    },
    {
      why: '2020-12 dependentRequired applies by default',
      tool: 'lab__modern',
      args: { a: 1 },
      message: /must have property b when property a is present/,
    },
    {
      why: '2020-12 prefixItems applies by default',
      tool: 'lab__modern',
      args: { pair: [1] },
      message: /pair\/0 must be string/,
    },
  ];
  for (const r of refusals) {
    const result = await surface.callTool(r.tool, r.args);
    assert.equal(result.isError, true, r.why);
    assert.match(textOf(result), r.message, r.why);
    assert.equal((result._meta?.[ERROR_META_KEY] as { code?: string } | undefined)?.code, 'invalid_arguments', r.why);
  }
  // No defaults are inserted: the service receives exactly what was sent.
  assert.equal(textOf(await surface.callTool('lab__args', { flag: true })), '{"flag":true}');
  assert.equal(textOf(await surface.callTool('lab__draft7', { a: 1, b: 2 })), '{"a":1,"b":2}');
  // A tool error from the service passes through as is.
  const oops = await surface.callTool('lab__oops', {});
  assert.equal(oops.isError, true);
  assert.equal(textOf(oops), 'the tool failed on purpose');
  // A JSON-RPC error from the service is passed on with its code.
  await assert.rejects(surface.callTool('lab__reject', {}), { code: -32602 });
});

test('passthrough keeps names and needs exactly one service', async (t) => {
  const lab = await connectSession('lab', createLabServer('lab'));
  t.after(() => lab.close());
  const other = await connectSession('other', createLabServer('other'));
  t.after(() => other.close());
  const twin = await connectSession('twin', createLabServer('twin'), { aliases: ['twin', 'twin2'] });
  t.after(() => twin.close());
  const surface = createSurface([lab], { passthrough: true });
  assert.ok(surface.tools.some((tool) => tool.name === 'echo'));
  assert.deepEqual(
    surface.prompts.map((p) => p.name),
    ['greet'],
  );
  assert.throws(() => createSurface([lab, other], { passthrough: true }), { code: 'usage' });
  assert.throws(() => createSurface([twin], { passthrough: true }), { code: 'usage' });
  assert.throws(() => createSurface([], { passthrough: true }), { code: 'usage' });
});

test('a duplicated resource URI is kept by the first service and reported', async (t) => {
  const first = await connectSession('first', createLabServer('same'));
  t.after(() => first.close());
  const second = await connectSession('second', createLabServer('same'));
  t.after(() => second.close());
  const surface = createSurface([first, second]);
  assert.deepEqual(
    surface.resources.map((r) => [r.uri, r._meta?.['scienceevolve/service']]),
    [['same://readme', 'first']],
  );
  assert.deepEqual(surface.duplicates, [
    { kind: 'resource', uri: 'same://readme', service: 'second', keptBy: 'first' },
    { kind: 'resourceTemplate', uri: 'same://items/{id}', service: 'second', keptBy: 'first' },
  ]);
});

test('local services are listed and called like sessions, arguments checked', async () => {
  const surface = createSurface([
    {
      name: 'scienceevolve',
      tools: [
        {
          tool: {
            name: 'get_workflow',
            description: 'The workflow.',
            inputSchema: { type: 'object', properties: { version: { type: 'integer' } }, additionalProperties: false },
          },
          handler: (args) => ({ content: [{ type: 'text', text: `workflow ${JSON.stringify(args)}` }] }),
        },
      ],
    },
  ]);
  assert.deepEqual(
    surface.tools.map((tool) => tool.name),
    ['scienceevolve__get_workflow'],
  );
  assert.equal(textOf(await surface.callTool('scienceevolve__get_workflow', { version: 2 })), 'workflow {"version":2}');
  const refused = await surface.callTool('scienceevolve__get_workflow', { version: 'two' });
  assert.equal(refused.isError, true);
});
