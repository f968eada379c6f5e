/**
 * The three reference servers from the registry (`@modelcontextprotocol/server-everything`,
 * `server-filesystem`, `server-memory`) as project services, each started through a definition whose
 * entrypoint (a two-line `.mjs`) imports the installed package's server entry by absolute path.
 *
 * For each server, what the MCP Inspector's CLI lists DIRECTLY from the server (stdio launch of the very
 * same entrypoint with the very same args) equals, entry for entry, what the official client lists
 * through `services serve --passthrough` (the service's own names), the plain stdio face and the HTTP face
 * (`<service>__<name>` for tools and prompts); one tools/call, resources/read and prompts/get (where the
 * server offers that kind) answers the same through both faces as directly.
 *
 * What the bridge sets on purpose, and so is left out of the comparison:
 * - the name of a tool or prompt on a prefixed face (`<service>__<name>`): compared after renaming the
 *   direct entry;
 * - the `scienceevolve/service` key the bridge adds to every entry's `_meta`, and the `scienceevolve/name`
 *   key (the service's own name) it adds to each tool's and prompt's; checked here to be exactly that,
 *   then removed;
 * - nothing else: titles, descriptions, schemas, annotations, the rest of `_meta`, URIs and MIME types are
 *   compared whole.
 *
 * Slow (about 30–50 s on 2 cores): 17 inspector runs, nine `services serve` (each with a supervisor and
 * the server).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { loadWorkflow } from '../../packages/sdk/src/store/workflowLoad.js';
import {
  assertGone,
  assertNothingLeft,
  BIN,
  inspector,
  killLeftovers,
  markedProcesses,
  processesMentioning,
  ROOT,
  spawnNode,
} from './helpers.js';

const requireFromRoot = createRequire(join(ROOT, 'package.json'));

/** The absolute path of a reference server's entry (its `bin`), resolved from the repo's installed packages. */
function serverEntry(pkg: string): string {
  const manifest = requireFromRoot.resolve(`${pkg}/package.json`);
  const bin = (JSON.parse(readFileSync(manifest, 'utf8')) as { bin: Record<string, string> }).bin;
  const first = Object.values(bin)[0];
  assert.ok(first !== undefined, `${pkg} has no bin`);
  return join(manifest, '..', first);
}

interface Reference {
  /** Service (and agent, and definition) name. */
  name: string;
  pkg: string;
  args(workspace: string): string[];
  /** Extra lines before the import (environment the server reads at load). */
  prelude(dir: string): string;
  call: { tool: string; args(workspace: string): Record<string, string> };
  read?: string;
  prompt?: string;
}

const REFERENCES: Reference[] = [
  {
    name: 'everything',
    pkg: '@modelcontextprotocol/server-everything',
    args: () => ['stdio'],
    prelude: () => '',
    call: { tool: 'echo', args: () => ({ message: 'through the bridge' }) },
    read: 'demo://resource/static/document/architecture.md',
    prompt: 'simple-prompt',
  },
  {
    name: 'filesystem',
    pkg: '@modelcontextprotocol/server-filesystem',
    args: (workspace) => [workspace],
    prelude: () => '',
    call: { tool: 'read_text_file', args: (workspace) => ({ path: join(workspace, 'notes.txt') }) },
  },
  {
    name: 'memory',
    pkg: '@modelcontextprotocol/server-memory',
    args: () => [],
    // Its default file is next to its dist/ in node_modules: kept in the test's directory instead.
    prelude: (dir) => `process.env.MEMORY_FILE_PATH = ${JSON.stringify(join(dir, 'memory.jsonl'))};\n`,
    call: { tool: 'read_graph', args: () => ({}) },
    read: 'memory://knowledge-graph',
  },
];

type Entry = Record<string, unknown>;
interface Lists {
  tools: Entry[];
  resources: Entry[];
  resourceTemplates: Entry[];
  prompts: Entry[];
}
interface Calls {
  call: Entry;
  read?: Entry;
  prompt?: Entry;
}

/** A project of one agent per reference server, each with its one service; cleanup registered at once. */
async function referenceProject(t: TestContext) {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'se-refs-')));
  const project = `refs-${Math.random().toString(16).slice(2, 10)}`;
  t.after(async () => {
    killLeftovers({ dir, projectId: project });
    const deadline = Date.now() + 5000;
    while (processesMentioning(dir).length + markedProcesses(project).length > 0 && Date.now() < deadline)
      await sleep(25);
    rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  });
  const dataDir = join(dir, 'data');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, 'notes.txt'), 'reference notes\n');
  const agents: Record<string, unknown> = {};
  const mcpDefinitions: Record<string, unknown> = {};
  const entries = new Map<string, string>();
  for (const ref of REFERENCES) {
    const source = `${ref.prelude(dir)}await import(${JSON.stringify(new URL(`file://${serverEntry(ref.pkg)}`).href)});\n`;
    const direct = join(dir, `${ref.name}.mjs`);
    writeFileSync(direct, source);
    entries.set(ref.name, direct);
    agents[ref.name] = { mcpServers: [{ name: ref.name, project: ref.name }] };
    mcpDefinitions[ref.name] = {
      command: 'node',
      entrypoint: 'server.mjs',
      files: { 'server.mjs': source },
      args: ref.args(workspace),
    };
  }
  agents.main = { instructions: 'Compare the reference servers.', mcpServers: [] };
  await loadWorkflow({ dataDir, project, workflow: { agents, mcpDefinitions } });
  return { dir, dataDir, workspace, project, entries };
}

/** The four lists and the calls the Inspector CLI gets from the server launched directly. */
async function direct(t: TestContext, ref: Reference, entry: string, workspace: string, dir: string) {
  const launch = ['--', process.execPath, entry, ...ref.args(workspace)];
  const run = (method: string, extra: string[] = []) => inspector(t, ['--method', method, ...extra, ...launch], dir);
  const toolArgs = Object.entries(ref.call.args(workspace)).flatMap(([k, v]) => ['--tool-arg', `${k}=${v}`]);
  const [tools, resources, templates, prompts, call, read, prompt] = await Promise.all([
    run('tools/list'),
    run('resources/list'),
    run('resources/templates/list'),
    run('prompts/list'),
    run('tools/call', ['--tool-name', ref.call.tool, ...toolArgs]),
    ref.read === undefined ? undefined : run('resources/read', ['--uri', ref.read]),
    ref.prompt === undefined ? undefined : run('prompts/get', ['--prompt-name', ref.prompt]),
  ]);
  const lists: Lists = {
    tools: tools.tools as Entry[],
    resources: resources.resources as Entry[],
    resourceTemplates: templates.resourceTemplates as Entry[],
    prompts: prompts.prompts as Entry[],
  };
  return { lists, calls: { call, read, prompt } as Calls };
}

/** Every page of each list, and the calls, through a face the client is connected to. */
async function throughFace(
  client: Client,
  ref: Reference,
  prefix: string,
  workspace: string,
): Promise<{ lists: Lists; calls: Calls }> {
  const all = async <K extends keyof Lists>(key: K, list: (cursor?: string) => Promise<Entry>) => {
    const out: Entry[] = [];
    let cursor: string | undefined;
    do {
      const page = await list(cursor);
      out.push(...(page[key] as Entry[]));
      cursor = page.nextCursor as string | undefined;
    } while (cursor !== undefined);
    return out;
  };
  const caps = client.getServerCapabilities() ?? {};
  const lists: Lists = {
    tools: await all('tools', (cursor) => client.listTools({ cursor }) as Promise<Entry>),
    resources:
      caps.resources === undefined
        ? []
        : await all('resources', (cursor) => client.listResources({ cursor }) as Promise<Entry>),
    resourceTemplates:
      caps.resources === undefined
        ? []
        : await all('resourceTemplates', (cursor) => client.listResourceTemplates({ cursor }) as Promise<Entry>),
    prompts:
      caps.prompts === undefined
        ? []
        : await all('prompts', (cursor) => client.listPrompts({ cursor }) as Promise<Entry>),
  };
  const calls: Calls = {
    call: (await client.callTool({ name: `${prefix}${ref.call.tool}`, arguments: ref.call.args(workspace) })) as Entry,
  };
  if (ref.read !== undefined) calls.read = (await client.readResource({ uri: ref.read })) as Entry;
  if (ref.prompt !== undefined) calls.prompt = (await client.getPrompt({ name: `${prefix}${ref.prompt}` })) as Entry;
  return { lists, calls };
}

/** The direct lists as a face with `prefix` must show them: tools and prompts renamed, nothing else changed. */
function expected(lists: Lists, prefix: string): Lists {
  const rename = (e: Entry) => ({ ...e, name: `${prefix}${e.name as string}` });
  return {
    tools: lists.tools.map(rename),
    resources: lists.resources,
    resourceTemplates: lists.resourceTemplates,
    prompts: lists.prompts.map(rename),
  };
}

/**
 * Checks and removes what the bridge adds to an entry's `_meta` (`scienceevolve/name`, the service's own
 * name; `scienceevolve/service`), dropping `_meta` if nothing of the server's own is left.
 */
function withoutBridgeMeta(entries: Entry[], service: string, prefix: string | null, what: string): Entry[] {
  return entries.map((entry) => {
    const meta = { ...((entry._meta ?? {}) as Record<string, unknown>) };
    const name = (entry.name ?? entry.uri) as string;
    assert.equal(meta['scienceevolve/service'], service, `${what} ${name}: _meta scienceevolve/service`);
    if (prefix !== null)
      assert.equal(
        `${prefix}${meta['scienceevolve/name'] as string}`,
        name,
        `${what} ${name}: _meta scienceevolve/name`,
      );
    else assert.equal(meta['scienceevolve/name'], undefined, `${what} ${name}: no _meta scienceevolve/name`);
    delete meta['scienceevolve/service'];
    delete meta['scienceevolve/name'];
    const { _meta: _, ...rest } = entry;
    return Object.keys(meta).length === 0 ? rest : { ...rest, _meta: meta };
  });
}

function connectClient(): Client {
  const client = new Client({ name: 'refs-e2e', version: '1.0.0' }, { capabilities: {} });
  client.onerror = () => {};
  return client;
}

async function stdioFace(t: TestContext, serveArgs: string[]) {
  const transport = new StdioClientTransport({ command: process.execPath, args: serveArgs, stderr: 'pipe' });
  const client = connectClient();
  t.after(() => client.close().catch(() => {}));
  await client.connect(transport);
  const pid = transport.pid;
  assert.ok(pid !== null);
  return {
    client,
    close: async () => {
      await client.close();
      await assertGone(pid);
    },
  };
}

async function httpFace(t: TestContext, serveArgs: string[], tokenFile: string) {
  const serve = spawnNode(t, [...serveArgs, '--http', '--port', '0', '--token-file', tokenFile, '--json']);
  const { url } = await serve.json<{ url: string }>();
  const token = readFileSync(tokenFile, 'utf8');
  const client = connectClient();
  t.after(() => client.close().catch(() => {}));
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  );
  return {
    client,
    close: async () => {
      await client.close();
      serve.child.kill('SIGTERM');
      assert.deepEqual(await serve.exited, { code: 0, signal: null });
      await assertGone(serve.pid);
    },
  };
}

test('the reference servers offer through both faces what they offer the inspector directly', async (t) => {
  const lab = await referenceProject(t);
  await Promise.all(
    REFERENCES.map(async (ref) => {
      const serveArgs = (extra: string[] = []) => [
        BIN,
        'services',
        'serve',
        '--data-dir',
        lab.dataDir,
        '--workspace',
        lab.workspace,
        '--project',
        lab.project,
        '--agent',
        ref.name,
        '--grace-ms',
        '300',
        ...extra,
      ];
      const entry = lab.entries.get(ref.name);
      assert.ok(entry !== undefined);
      const want = await direct(t, ref, entry, lab.workspace, lab.dir);
      assert.ok(want.lists.tools.length > 0, `${ref.name} lists tools directly`);
      if (ref.name === 'everything') {
        // It offers get-roots-list only to a client that declares roots: the inspector does, and so must
        // the bridge's client, or the faces' lists would lack it.
        assert.ok(want.lists.tools.some((tool) => tool.name === 'get-roots-list'));
        for (const key of ['resources', 'resourceTemplates', 'prompts'] as const)
          assert.ok(want.lists[key].length > 0, `everything lists ${key} directly`);
      }
      if (ref.name === 'filesystem') assert.match(JSON.stringify(want.calls.call), /reference notes/);
      const prefix = `${ref.name}__`;
      const faces = [
        { face: 'passthrough', prefix: '', open: () => stdioFace(t, serveArgs(['--passthrough'])) },
        { face: 'stdio', prefix, open: () => stdioFace(t, serveArgs()) },
        { face: 'http', prefix, open: () => httpFace(t, serveArgs(), join(lab.dir, `${ref.name}.token`)) },
      ];
      for (const { face, prefix: p, open } of faces) {
        const opened = await open();
        const got = await throughFace(opened.client, ref, p, lab.workspace);
        await opened.close();
        const wanted = expected(want.lists, p);
        got.lists.tools = withoutBridgeMeta(got.lists.tools, ref.name, p, `${ref.name} tool through ${face}`);
        got.lists.prompts = withoutBridgeMeta(got.lists.prompts, ref.name, p, `${ref.name} prompt through ${face}`);
        got.lists.resources = withoutBridgeMeta(
          got.lists.resources,
          ref.name,
          null,
          `${ref.name} resource through ${face}`,
        );
        got.lists.resourceTemplates = withoutBridgeMeta(
          got.lists.resourceTemplates,
          ref.name,
          null,
          `${ref.name} template through ${face}`,
        );
        if (ref.name === 'everything') {
          // It offers its elicitation tools only to a client that declares elicitation: the bridge's client
          // does (it answers a service's questions by the agent's policy), the inspector's does not.
          const askers = ['trigger-elicitation-request', 'trigger-url-elicitation'].map((n) => `${p}${n}`);
          const names = got.lists.tools.map((tool) => (tool as { name: string }).name);
          for (const name of askers) assert.ok(names.includes(name), `${name} through ${face}`);
          got.lists.tools = got.lists.tools.filter((tool) => !askers.includes((tool as { name: string }).name));
        }
        for (const key of ['tools', 'resources', 'resourceTemplates', 'prompts'] as const) {
          assert.deepEqual(got.lists[key], wanted[key], `${ref.name} ${key} through ${face}`);
        }
        assert.notEqual(got.calls.call.isError, true, `${ref.name} tools/call through ${face}`);
        assert.deepEqual(got.calls.call, want.calls.call, `${ref.name} tools/call through ${face}`);
        assert.deepEqual(got.calls.read, want.calls.read, `${ref.name} resources/read through ${face}`);
        assert.deepEqual(got.calls.prompt, want.calls.prompt, `${ref.name} prompts/get through ${face}`);
      }
    }),
  );
  await assertNothingLeft({ dir: lab.dir, projectId: lab.project });
});
