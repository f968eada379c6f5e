/**
 * What a real service lists and answers reaches both faces unchanged (tool title, annotations, icons,
 * outputSchema, _meta; results with structuredContent, isError, image, audio, resource links, embedded
 * resources), compared with a client connected to the same service directly; per-assignment tool
 * filters decide what each alias offers; the result and image limits refuse with a code, never trim.
 *
 * Real processes: the service (`richContent.cjs`) started directly and by the SDK, and the stdio face as
 * `scienceevolve services serve` (the built CLI). About 5 s on 2 cores; the timeout is 60 s for that.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type CallToolResult, Client, StreamableHTTPClientTransport, type Tool } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { createBridgeToken, serveHttp } from '../../../packages/sdk/src/faces/httpFace.js';
import { serveAgentServices } from '../../../packages/sdk/src/engine/agentServices.js';
import { serviceNodePath } from '../../../packages/sdk/src/processes/serviceEnv.js';
import { assertGone, assertNothingLeft, BIN } from '../../e2e/helpers.js';
import { fixtureDefinition, killMarked, tempDir } from '../invocation/helpers.ts';

const FIXTURE = fileURLToPath(new URL('../../fixtures/services/richContent.cjs', import.meta.url));
const OWN_META = ['scienceevolve/service', 'scienceevolve/name'];
const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

/** The worker sees one definition under three names: unfiltered, an include list and an exclude glob. */
function workflow() {
  return {
    agents: {
      main: {},
      worker: {
        mcpServers: [
          { name: 'rich', project: 'rich' },
          { name: 'viewer', project: 'rich', tools: { include: ['media', 're*t'] } },
          { name: 'safe', project: 'rich', tools: { exclude: ['refuse', 'b*', 'pic*'] } },
        ],
      },
    },
    mcpDefinitions: { rich: { ...fixtureDefinition('richContent.cjs'), files: { 'server.cjs': fixtureSource() } } },
  };
}

function fixtureSource(): string {
  return fixtureDefinition('richContent.cjs').files['server.cjs'];
}

/** A listed tool as the service itself lists it: the face's name and the bridge's own `_meta` keys taken off. */
function asService(tool: Tool, name: string): Tool {
  const meta = { ...(tool._meta ?? {}) };
  for (const key of OWN_META) delete meta[key];
  const { _meta: _, ...rest } = tool;
  return { ...rest, name, ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}) };
}

/**
 * A result without what the 2026-07-28 era adds to every result of the answering server (the bridge):
 * `_meta["io.modelcontextprotocol/serverInfo"]`, and on reads the cache hints `ttlMs`/`cacheScope`. They
 * are the protocol's, not content; in the 2025-11-25 era nothing may be added at all.
 */
function withoutEnvelope<T extends { _meta?: Record<string, unknown> }>(result: T, modern: boolean): T {
  if (!modern) return result;
  const { _meta, ttlMs: _ttl, cacheScope: _scope, ...rest } = result as T & { ttlMs?: unknown; cacheScope?: unknown };
  if (_meta === undefined) return rest as T;
  assert.deepEqual(_meta[SERVER_INFO], { name: 'scienceevolve-bridge', version: '0.1.0' });
  const { [SERVER_INFO]: _, ...meta } = _meta;
  return (Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest) as T;
}

async function directClient(t: TestContext): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [FIXTURE],
    env: { ...process.env, NODE_PATH: serviceNodePath() } as Record<string, string>,
    stderr: 'ignore',
  });
  const client = new Client({ name: 'direct', version: '1.0.0' });
  await client.connect(transport);
  const pid = transport.pid!;
  t.after(async () => {
    await client.close();
    await assertGone(pid);
  });
  return client;
}

const CALLS: Array<{ name: string; arguments: Record<string, unknown> }> = [
  { name: 'report', arguments: { quarter: 3 } },
  { name: 'media', arguments: {} },
  { name: 'refuse', arguments: {} },
  { name: 'picture', arguments: { format: 'png', width: 640, height: 480 } },
];

test('both faces list and answer exactly what the service does; filters decide what each alias offers', {
  timeout: 60_000,
}, async (t) => {
  const dir = tempDir(t, 'se-rich-');
  const project = `rich-${process.pid}`;
  t.after(() => killMarked(project));
  const dataDir = join(dir, 'data');
  const workspace = join(dir, 'ws');

  const direct = await directClient(t);
  const directTools = (await direct.listTools()).tools;
  assert.deepEqual(
    directTools.map((tool) => tool.name),
    ['report', 'media', 'refuse', 'picture', 'bulky'],
  );
  const directResults = new Map<string, CallToolResult>();
  for (const call of CALLS) directResults.set(call.name, (await direct.callTool(call)) as CallToolResult);
  const directResources = (await direct.listResources()).resources;
  const directRead = await direct.readResource({ uri: 'rich://logo.png' });

  const served = await serveAgentServices({
    dataDir,
    project,
    workspace,
    workflow: workflow(),
    agent: 'worker',
    graceMs: 300,
  });
  t.after(() => served.close());
  const token = createBridgeToken();
  const face = await serveHttp(served.surface, { token, port: 0 });
  t.after(() => face.close());
  const httpClient = async (mode: 'legacy' | 'auto') => {
    const client = new Client({ name: `over-http-${mode}`, version: '1.0.0' }, { versionNegotiation: { mode } });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(face.url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    t.after(() => client.close());
    return client;
  };
  const httpLegacy = await httpClient('legacy');
  const httpModern = await httpClient('auto');
  assert.equal(httpLegacy.getNegotiatedProtocolVersion(), '2025-11-25');
  assert.equal(httpModern.getNegotiatedProtocolVersion(), '2026-07-28');

  const stdioTransport = new StdioClientTransport({
    command: process.execPath,
    args: [
      BIN,
      'services',
      'serve',
      '--data-dir',
      dataDir,
      '--workspace',
      workspace,
      '--project',
      project,
      '--agent',
      'worker',
      '--grace-ms',
      '300',
    ],
    stderr: 'ignore',
  });
  const stdio = new Client({ name: 'over-stdio', version: '1.0.0' });
  await stdio.connect(stdioTransport);
  const stdioPid = stdioTransport.pid!;
  t.after(() => stdio.close());

  for (const [label, client] of [
    ['http 2025-11-25', httpLegacy],
    ['http 2026-07-28', httpModern],
    ['stdio', stdio],
  ] as const) {
    const modern = client.getNegotiatedProtocolVersion() === '2026-07-28';
    const listed = (await client.listTools()).tools;
    // Filters: only the tools that pass are offered, under each alias.
    assert.deepEqual(
      listed.map((tool) => tool.name),
      [
        ...directTools.map((tool) => `rich__${tool.name}`),
        'viewer__report',
        'viewer__media',
        'safe__report',
        'safe__media',
      ],
      label,
    );
    // Every listed field, unchanged.
    for (const tool of listed) {
      const own = tool._meta?.['scienceevolve/name'] as string;
      assert.deepEqual(
        asService(tool, own),
        directTools.find((d) => d.name === own),
        `${label}: ${tool.name}`,
      );
    }
    // Every result, unchanged (no result _meta is added by the bridge).
    for (const call of CALLS) {
      for (const alias of ['rich', 'viewer', 'safe']) {
        const name = `${alias}__${call.name}`;
        if (!listed.some((tool) => tool.name === name)) continue;
        const result = withoutEnvelope(await client.callTool({ name, arguments: call.arguments }), modern);
        assert.deepEqual(result, directResults.get(call.name), `${label}: ${name}`);
      }
    }
    // A withheld tool is not callable under the alias that withholds it.
    for (const name of ['viewer__refuse', 'safe__bulky', 'safe__picture']) {
      await assert.rejects(
        client.callTool({ name, arguments: {} }),
        new RegExp(`no tool "${name}"`),
        `${label}: ${name}`,
      );
    }
    const resources = (await client.listResources()).resources;
    assert.deepEqual(
      resources.map((r) => asService(r as unknown as Tool, r.name)),
      directResources,
      label,
    );
    assert.deepEqual(withoutEnvelope(await client.readResource({ uri: 'rich://logo.png' }), modern), directRead, label);

    // Limits: refused with a code, never trimmed; an image exactly at 50 megapixels passes unchanged.
    const picture = (args: Record<string, unknown>) => client.callTool({ name: 'rich__picture', arguments: args });
    const atLimit = (await picture({ format: 'png', width: 10_000, height: 5_000 })) as CallToolResult;
    assert.equal(atLimit.isError, undefined, label);
    assert.equal(atLimit.content[0]?.type, 'image', label);
    for (const [format, width, height] of [
      ['png', 7072, 7071],
      ['jpeg', 10_000, 5_001],
      ['gif', 65_535, 800],
      ['webp', 100_000, 600],
      ['webp-lossless', 16_384, 16_384],
      ['webp-lossy', 16_383, 16_383],
    ] as const) {
      for (const as of ['image', 'resource']) {
        const refused = (await picture({ format, width, height, as })) as CallToolResult;
        assert.equal(refused.isError, true, `${label}: ${format} as ${as}`);
        const error = refused._meta?.['scienceevolve/error'] as
          | { code: string; data: Record<string, unknown> }
          | undefined;
        assert.equal(error?.code, 'image_too_large', `${label}: ${format} as ${as}`);
        assert.equal(error?.data.pixels, width * height, `${label}: ${format} as ${as}`);
        assert.equal(refused.content.length, 1, 'the image is not passed on in part');
        assert.match((refused.content[0] as { text: string }).text, /over the 50000000 \(50 megapixel\) limit/);
      }
    }
    const bulky = (await client.callTool({ name: 'rich__bulky', arguments: { chars: 1_100_000 } })) as CallToolResult;
    assert.equal(bulky.isError, true, label);
    assert.equal(
      (bulky._meta?.['scienceevolve/error'] as { code?: string } | undefined)?.code,
      'result_too_large',
      label,
    );
    const fits = (await client.callTool({ name: 'rich__bulky', arguments: { chars: 1_000_000 } })) as CallToolResult;
    assert.equal((fits.content[0] as { text: string }).text.length, 1_000_000, `${label}: whole, not trimmed`);
  }

  await stdio.close();
  await assertGone(stdioPid);
  await httpLegacy.close();
  await httpModern.close();
  await face.close();
  await served.close();
  await assertNothingLeft({ dir, projectId: project });
});
