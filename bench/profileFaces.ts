/**
 * A CPU profile of the faces (not a benchmark row): `scienceevolve services serve` (stdio) and
 * `services serve --http`, each started under `node --cpu-prof`, take `--calls` (default 3,000)
 * sequential `tools/call` of the benchmark service's `echo` from the official v1 client, then end
 * normally so Node writes the profile. Prints, for each face, the profiled CPU per call, the top frames
 * by self time, the areas (packages) the time went to, and the share of a few named kinds of work.
 *
 *   npm run build && node --import tsx bench/profileFaces.ts [--calls 3000] [--keep DIR]
 *
 * What it found is written up in docs/decisions/faces-performance.md.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BENCH_RUN_ENV, type BenchContext, makeScratch, removeDir } from './lib/common.js';
import { cpuMsOf, exited, stopGroup } from './lib/processes.js';
import { now, percentile } from './lib/common.js';
import { type BenchProject, SERVICE, closeSupervisor, setupProject } from './lib/services.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ARGS = { text: 'hello from the profile' };
const TOOL = `${SERVICE}__echo`;
/** Where the profiles are written: the scratch directory, or `--keep DIR`. */
let profileRoot = '';

interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: CpuProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function areaOf(url: string, name: string): string {
  if (url === '') return name.startsWith('(') ? name : '(native)';
  if (url.startsWith('node:')) return 'Node internals';
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return modules[1]!;
  if (url.includes('/packages/sdk/')) return 'ours (packages/sdk)';
  if (url.includes('/packages/cli/')) return 'ours (packages/cli)';
  return 'other';
}

/** Kinds of work named in the decision note, by the frames (self time or any caller) that mark them. */
const KINDS: [string, (node: CpuProfileNode) => boolean][] = [
  ['zod (schema parse of messages and results)', (n) => /node_modules\/zod\//.test(n.callFrame.url)],
  ['ajv (argument and output-schema validators)', (n) => /node_modules\/ajv/.test(n.callFrame.url)],
  [
    'server construction (createSurfaceServer, new Server, handler registration)',
    (n) =>
      /createSurfaceServer|^Server$|^Protocol$|setRequestHandler|_wrapHandler|assertRequestHandlerCapability/.test(
        n.callFrame.functionName,
      ) && !/node_modules\/(zod|ajv)/.test(n.callFrame.url),
  ],
  [
    'JSON.parse / JSON.stringify',
    (n) => /^(parse|stringify)$/.test(n.callFrame.functionName) && n.callFrame.url === '',
  ],
  ['garbage collector', (n) => n.callFrame.functionName === '(garbage collector)'],
];

interface Summary {
  face: string;
  calls: number;
  /** CPU ms per call of the face process from /proc (utime + stime), over the calls after a warm-up of 200. */
  procCpuMsPerCall: number;
  /** Round trip p50 and p99 in ms over the same calls, as the client sees them (under the profiler). */
  p50Ms: number;
  p99Ms: number;
  cpuMsPerCall: number;
  top: string[];
  callers: string[];
  areas: string[];
  kinds: string[];
}

interface Timed {
  procCpuMsPerCall: number;
  p50Ms: number;
  p99Ms: number;
}

/** Runs `calls` sequential calls after 200 warm-up calls, measuring the face process's CPU and the round trips. */
async function timedCalls(call: () => Promise<unknown>, calls: number, pid: number): Promise<Timed> {
  const check = (result: unknown) => {
    if ((result as { isError?: unknown }).isError) throw new Error(`a call failed: ${JSON.stringify(result)}`);
  };
  for (let i = 0; i < 200; i++) check(await call());
  const samples: number[] = [];
  const cpuBefore = cpuMsOf(pid);
  for (let i = 0; i < calls; i++) {
    const start = now();
    check(await call());
    samples.push(now() - start);
  }
  return {
    procCpuMsPerCall: (cpuMsOf(pid) - cpuBefore) / calls,
    p50Ms: percentile(samples, 50),
    p99Ms: percentile(samples, 99),
  };
}

function summarize(face: string, calls: number, profile: CpuProfile, timed: Timed): Summary {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const frames = new Map<string, number>();
  const areas = new Map<string, number>();
  const kinds = new Map<string, number>();
  const callers = new Map<string, number>();
  let total = 0;
  const label = (node: CpuProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url === '' ? '' : ` ${url.replace(/^file:\/\//, '').replace(`${repo}/`, '')}:${lineNumber + 1}`;
    return `${functionName || '(anonymous)'}${file}`;
  };
  profile.samples.forEach((id, i) => {
    const node = byNode.get(id);
    const delta = profile.timeDeltas[i] ?? 0;
    if (node === undefined || node.callFrame.functionName === '(idle)') return;
    total += delta;
    const frame = label(node);
    frames.set(frame, (frames.get(frame) ?? 0) + delta);
    const area = areaOf(node.callFrame.url, node.callFrame.functionName);
    areas.set(area, (areas.get(area) ?? 0) + delta);
    // A sample counts for a kind when its frame or any caller is of that kind (each kind once).
    const seen = new Set<string>();
    for (let n: CpuProfileNode | undefined = node; n !== undefined; ) {
      for (const [kind, test] of KINDS) if (!seen.has(kind) && test(n)) seen.add(kind);
      const up = parent.get(n.id);
      n = up === undefined ? undefined : byNode.get(up);
    }
    for (const kind of seen) kinds.set(kind, (kinds.get(kind) ?? 0) + delta);
    // Whose work it was: the first caller outside native code and Node's own modules.
    let owner: CpuProfileNode | undefined = node;
    while (
      owner !== undefined &&
      /^\(native\)$|^Node internals$/.test(areaOf(owner.callFrame.url, owner.callFrame.functionName))
    ) {
      const up = parent.get(owner.id);
      owner = up === undefined ? undefined : byNode.get(up);
    }
    const ownerLabel =
      owner === undefined ? frame : owner.callFrame.functionName === '(root)' ? '(event-loop callbacks)' : label(owner);
    callers.set(ownerLabel, (callers.get(ownerLabel) ?? 0) + delta);
  });
  const ranked = (m: Map<string, number>, n: number) =>
    [...m.entries()]
      .sort((x, y) => y[1] - x[1])
      .slice(0, n)
      .map(([key, us]) => `${((100 * us) / total).toFixed(1)} %  ${key}`);
  return {
    face,
    calls,
    ...timed,
    cpuMsPerCall: total / 1000 / calls,
    top: ranked(frames, 15),
    callers: ranked(callers, 15),
    areas: ranked(areas, 10),
    kinds: ranked(kinds, KINDS.length),
  };
}

function serveArgs(project: BenchProject, profileDir: string, extra: string[]): string[] {
  return [
    '--cpu-prof',
    '--cpu-prof-dir',
    profileDir,
    join(repo, 'packages', 'cli', 'bin', 'scienceevolve.js'),
    'services',
    'serve',
    '--data-dir',
    project.dataDir,
    '--project',
    project.projectId,
    '--workspace',
    project.workspace,
    '--agent',
    'solo',
    ...extra,
  ];
}

async function readProfile(dir: string): Promise<CpuProfile> {
  // The face's own profile: the largest one written (the CLI process).
  const files = (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile'));
  if (files.length === 0) throw new Error(`no profile in ${dir}`);
  let best: CpuProfile | undefined;
  for (const file of files) {
    const profile = JSON.parse(await readFile(join(dir, file), 'utf8')) as CpuProfile;
    if (best === undefined || profile.samples.length > best.samples.length) best = profile;
  }
  return best!;
}

async function profileStdio(ctx: BenchContext, project: BenchProject, calls: number): Promise<Summary> {
  const dir = join(profileRoot, 'profile-stdio');
  await mkdir(dir, { recursive: true });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: serveArgs(project, dir, []),
    env: { ...getDefaultEnvironment(), [BENCH_RUN_ENV]: ctx.token },
    cwd: project.workspace,
    stderr: 'pipe',
  });
  transport.stderr?.on('data', () => {});
  const client = new Client({ name: 'profile-stdio', version: '1.0.0' });
  await client.connect(transport);
  const pid = transport.pid;
  let timed: Timed;
  try {
    timed = await timedCalls(() => client.callTool({ name: TOOL, arguments: ARGS }), calls, pid!);
  } finally {
    await client.close().catch(() => {});
    // The face exits when its input ends; wait for it so the profile is complete.
    const until = Date.now() + 20_000;
    while (pid !== null && pid !== undefined && Date.now() < until) {
      try {
        process.kill(pid, 0);
        await new Promise((r) => setTimeout(r, 50));
      } catch {
        break;
      }
    }
  }
  return summarize('stdio face', calls, await readProfile(dir), timed);
}

async function profileHttp(ctx: BenchContext, project: BenchProject, calls: number): Promise<Summary> {
  const dir = join(profileRoot, 'profile-http');
  await mkdir(dir, { recursive: true });
  const tokenFile = join(project.dataDir, 'profile-token');
  const child: ChildProcess = spawn(
    process.execPath,
    serveArgs(project, dir, ['--http', '--token-file', tokenFile, '--json']),
    { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, [BENCH_RUN_ENV]: ctx.token } },
  );
  child.stderr?.resume();
  let timed: Timed;
  try {
    let text = '';
    const info = await new Promise<{ url: string }>((resolveInfo, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        try {
          resolveInfo(JSON.parse(text) as { url: string });
        } catch {
          // Not complete yet.
        }
      });
      exited(child).then(() => reject(new Error('services serve --http exited early')));
    });
    const token = (await readFile(tokenFile, 'utf8')).trim();
    const transport = new StreamableHTTPClientTransport(new URL(info.url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const client = new Client({ name: 'profile-http', version: '1.0.0' });
    await client.connect(transport);
    timed = await timedCalls(() => client.callTool({ name: TOOL, arguments: ARGS }), calls, child.pid!);
    await client.close();
    child.kill('SIGTERM');
    await exited(child);
  } finally {
    await stopGroup(child);
  }
  return summarize('HTTP face', calls, await readProfile(dir), timed);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { calls: { type: 'string', default: '3000' }, only: { type: 'string' }, keep: { type: 'string' } },
  });
  const calls = Number(values.calls);
  const token = randomBytes(6).toString('hex');
  process.env[BENCH_RUN_ENV] = token;
  const scratch = await makeScratch(token);
  const ctx: BenchContext = { quick: true, token, repo, scratch, log: (m) => console.error(m) };
  profileRoot = values.keep ?? scratch;
  try {
    const project = await setupProject(ctx, 'profile');
    const summaries: Summary[] = [];
    if (values.only !== 'http') summaries.push(await profileStdio(ctx, project, calls));
    if (values.only !== 'stdio') summaries.push(await profileHttp(ctx, project, calls));
    for (const s of summaries) {
      console.log(`\n## ${s.face}: ${s.calls} calls (after 200 warm-up calls)`);
      console.log(
        `face process CPU (/proc) ${s.procCpuMsPerCall.toFixed(3)} ms per call; round trip p50 ${s.p50Ms.toFixed(3)} ms, p99 ${s.p99Ms.toFixed(3)} ms (under the profiler); profile samples ${s.cpuMsPerCall.toFixed(3)} ms per call (start-up included)`,
      );
      console.log('\ntop frames by self time:');
      for (const line of s.top) console.log(`  ${line}`);
      console.log('\nnative and Node-internal time counted for its nearest JavaScript caller:');
      for (const line of s.callers) console.log(`  ${line}`);
      console.log('\nby area (self time):');
      for (const line of s.areas) console.log(`  ${line}`);
      console.log('\nkinds of work (inclusive: the frame or a caller):');
      for (const line of s.kinds) console.log(`  ${line}`);
    }
  } finally {
    await closeSupervisor().catch(() => {});
    await removeDir(scratch);
  }
}

await main();
