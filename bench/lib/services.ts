/**
 * Both sides of "a service to ready" on the same CommonJS service (`bench/fixtures/benchService.cjs`):
 *
 * - ours: the invocation path as users get it — `startInvocationServices` over a project loaded with
 *   `loadWorkflow` (copy, environment, spawn in its own process group registered with the host's
 *   supervisor, initialize, every list), from the built SDK (`packages/sdk/dist`);
 * - the baseline: a script using the official SDK v1 client (`StdioClientTransport` + `Client`) that
 *   does the same work with the same process layout — copy the same persistent source with `fs.cp`,
 *   give the same environment (including `NODE_PATH`), spawn `node <entrypoint>` (no shell), stderr to
 *   a log file, `initialize`, then every list the server offers, in parallel as ours does. The service
 *   is launched through `setsid` so that it leads its own session and process group, as ours does
 *   (Linux puts each session in its own scheduler autogroup: without it the baseline's services would
 *   share one CPU share against the rest of a busy machine, and ours would look faster than they are).
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { cp, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { closeHostSupervisor, hostSupervisor } from '../../packages/sdk/dist/invocation/hostSupervision.js';
import { type InvocationServices, startInvocationServices } from '../../packages/sdk/dist/invocation/invocation.js';
import type { ProcessRegistry } from '../../packages/sdk/dist/processes/processRegistry.js';
import { serviceNodePath } from '../../packages/sdk/dist/processes/serviceEnv.js';
import { type ProjectPaths, openProject } from '../../packages/sdk/dist/store/projectStore.js';
import { loadWorkflow } from '../../packages/sdk/dist/store/workflowLoad.js';
import { type WorkflowVersion, readAccepted } from '../../packages/sdk/dist/store/workflowVersions.js';
import { BENCH_RUN_ENV, type BenchContext, scratchDir } from './common.js';

/** The benchmark service's definition name; `bench-1` … `bench-8` are the same file with distinct args. */
export const SERVICE = 'bench';
/** How many distinct definitions the project has (for "8 services in parallel"). */
export const PARALLEL = 8;

/** A loaded project: its paths, accepted version, a workspace, and where the baseline puts its copies. */
export interface BenchProject {
  paths: ProjectPaths;
  version: WorkflowVersion;
  projectId: string;
  dataDir: string;
  workspace: string;
  /** Where the baseline script puts its per-start copies. */
  baselineRoot: string;
  /** The host's supervisor (started once, as a host does before its first service). */
  registry: ProcessRegistry;
}

/** The workflow every benchmark project loads: agents `solo` (1 service), `pair` (2), `eight` (8). */
export async function benchWorkflow(repo: string): Promise<Record<string, unknown>> {
  const source = await readFile(join(repo, 'bench', 'fixtures', 'benchService.cjs'), 'utf8');
  const definitions: Record<string, unknown> = {
    [SERVICE]: { command: 'node', entrypoint: 'server.cjs', files: { 'server.cjs': source } },
  };
  for (let i = 1; i <= PARALLEL; i++) {
    // Distinct args give distinct digests: eight definitions, eight processes (aliases would share one).
    definitions[`${SERVICE}-${i}`] = {
      command: 'node',
      entrypoint: 'server.cjs',
      args: ['--instance', String(i)],
      files: { 'server.cjs': source },
    };
  }
  const names = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ name: `s${i + 1}`, project: `${SERVICE}-${i + 1}` }));
  return {
    // Unsandboxed, like the baselines (the official SDK's client spawns its service directly): rows compare the
    // same work. Row 11 measures the sandbox's cost on its own project (`sandbox: "required"`).
    orchestration: { sandbox: 'off' },
    agents: {
      main: { instructions: 'Benchmark host.', mcpServers: [] },
      solo: { instructions: 'One service.', mcpServers: [{ name: SERVICE, project: SERVICE }] },
      pair: { instructions: 'Two services.', mcpServers: names(2) },
      eight: { instructions: 'Eight services.', mcpServers: names(PARALLEL) },
    },
    mcpDefinitions: definitions,
  };
}

/** Loads the benchmark workflow into a fresh data dir under the run's scratch directory. */
export async function setupProject(ctx: BenchContext, label: string): Promise<BenchProject> {
  const dataDir = await scratchDir(ctx, `data-${label}`);
  const projectId = `bench-${ctx.token}-${label}`;
  const workspace = join(dataDir, 'workspace');
  await mkdir(workspace, { recursive: true });
  const loaded = await loadWorkflow({ dataDir, project: projectId, workflow: await benchWorkflow(ctx.repo) });
  const paths = await openProject(dataDir, loaded.project);
  const version = await readAccepted(paths);
  if (version === undefined) throw new Error('the benchmark workflow was not accepted');
  const baselineRoot = join(dataDir, 'baseline');
  await mkdir(baselineRoot, { recursive: true });
  const registry = await hostSupervisor(paths);
  return { paths, version, projectId, dataDir, workspace, baselineRoot, registry };
}

/** Ends the host's supervisor (after every service was collected). */
export function closeSupervisor(): Promise<void> {
  return closeHostSupervisor();
}

/** Ours: one invocation of `agent`, every service ready. Throws (everything collected) when any fails. */
export async function startOurs(
  project: BenchProject,
  agent: string,
  options: { startupBudgetMs?: number } = {},
): Promise<InvocationServices> {
  const services = await startInvocationServices({
    paths: project.paths,
    version: project.version,
    agent,
    runId: 'bench',
    workspace: project.workspace,
    registry: project.registry,
    ...(options.startupBudgetMs === undefined ? {} : { startupBudgetMs: options.startupBudgetMs }),
  });
  if (services.failures.length > 0) {
    await services.close();
    throw services.failures[0];
  }
  return services;
}

/** A service started by the baseline script. */
export interface BaselineService {
  client: Client;
  transport: StdioClientTransport;
  pid: number | undefined;
  close(): Promise<void>;
}

/** The definitions an agent's entries name, in order. */
export function definitionsOf(project: BenchProject, agent: string): string[] {
  const agentDef = project.version.workflow.agents[agent];
  if (agentDef === undefined) throw new Error(`no agent ${agent}`);
  return agentDef.mcpServers.flatMap((entry) => ('project' in entry && entry.project ? [entry.project] : []));
}

/** The baseline: the official v1 client on a copy of the same persistent source, same environment. */
export async function startBaseline(project: BenchProject, definition: string): Promise<BaselineService> {
  const def = project.version.workflow.mcpDefinitions[definition];
  const digest = project.version.digests[definition];
  if (def === undefined || digest === undefined) throw new Error(`no definition ${definition}`);
  const runtime = join(project.baselineRoot, `inv-${randomBytes(6).toString('hex')}`);
  const sourceDir = join(runtime, 'mcp', definition);
  await mkdir(join(runtime, 'mcp'), { recursive: true });
  await cp(project.paths.sourceDir(digest, definition), sourceDir, { recursive: true });
  const env: Record<string, string> = {
    ...getDefaultEnvironment(),
    SCIENCEEVOLVE_WORKSPACE: project.workspace,
    SCIENCEEVOLVE_MCP_SOURCE_DIR: sourceDir,
    SCIENCEEVOLVE_PROJECT_ROOT: project.paths.serviceDataDir,
    NODE_PATH: serviceNodePath(),
    [BENCH_RUN_ENV]: process.env[BENCH_RUN_ENV] ?? '',
  };
  // `setsid` (which execs, no extra process) gives the service its own session and process group, as
  // ours has: the same layout, and the same scheduler treatment where autogroups are on.
  const transport = new StdioClientTransport({
    command: 'setsid',
    args: [process.execPath, join(sourceDir, ...def.entrypoint.split('/')), ...def.args],
    env,
    cwd: project.workspace,
    stderr: 'pipe',
  });
  const log = createWriteStream(join(runtime, 'mcp', `${definition}.stderr.log`));
  transport.stderr?.pipe(log);
  const client = new Client({ name: 'baseline', version: '1.0.0' });
  const close = async () => {
    await client.close().catch(() => {});
    await transport.close().catch(() => {});
    log.end();
  };
  try {
    await client.connect(transport);
    const caps = client.getServerCapabilities() ?? {};
    await Promise.all([
      caps.tools ? client.listTools() : undefined,
      caps.resources ? client.listResources() : undefined,
      caps.resources ? client.listResourceTemplates() : undefined,
      caps.prompts ? client.listPrompts() : undefined,
    ]);
  } catch (error) {
    await close();
    throw error;
  }
  return { client, transport, pid: transport.pid ?? undefined, close };
}

/** Starts several baseline services in parallel; on any failure, every started one is closed first. */
export async function startBaselines(
  project: BenchProject,
  definitions: readonly string[],
): Promise<BaselineService[]> {
  const settled = await Promise.allSettled(definitions.map((d) => startBaseline(project, d)));
  const started = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await Promise.all(started.map((s) => s.close()));
    throw failed.reason;
  }
  return started;
}
