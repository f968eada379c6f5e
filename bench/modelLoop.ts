/**
 * Benchmark 8: the model-loop harness's overhead per turn (one model call and the tool calls it asks
 * for), against a local model server that speaks the OpenAI Chat Completions wire protocol
 * (`startModelServer` with `scriptedPolicy`, test/fixtures/modelServer/). Both sides run the same
 * conversation — the model asks for `echo` once per turn for `TOOL_TURNS` turns, then answers — against
 * the same server, in this process, alternating batches of conversations A B A B … after a warm-up:
 *
 * - ours: `createModelLoopHarness` (`openai`, `api: "chat"`) from the built SDK, its surface built as the
 *   engine builds it (`agentSurface` over an invocation's live session of the benchmark service), each
 *   checkpoint written by the engine's `CheckpointWriter` as the engine writes it (`append`: the first
 *   save of a conversation atomically to the checkpoint file (its log created empty beside it), each later
 *   one appended to the log with one synced write; docs/decisions/checkpoint-writes.md), since users pay
 *   for it;
 * - the baseline: the provider library's own tool loop — AI SDK `generateText` with the same provider
 *   (`@ai-sdk/openai` `.chat`), `stopWhen: stepCountIs(turns)`, and tools whose `execute` calls the same
 *   service directly through the official v1 client (`startBaseline`), offered under the same names with
 *   the same schemas.
 *
 * The figure is the difference of the medians per turn (a conversation's time divided by its model calls)
 * over every timed conversation of each side. When the goal is missed, the V8 CPU profiler (what
 * `node --cpu-prof` writes, taken here through `node:inspector` around ours alone) runs over a few hundred
 * more turns of ours, and the row's notes name the top frames by self time.
 */
import { Session } from 'node:inspector/promises';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, type ToolSet } from 'ai';
import { agentSurface } from '../packages/sdk/dist/engine/agentSurface.js';
import { CheckpointWriter, checkpointPath } from '../packages/sdk/dist/engine/checkpoints.js';
import { type HarnessInput, nothingJournaled } from '../packages/sdk/dist/harness/harness.js';
import { type ModelLoopConfig, createModelLoopHarness } from '../packages/sdk/dist/harness/modelLoop.js';
import { processFacts } from '../packages/sdk/dist/invocation/invocation.js';
import { type ModelServer, scriptedPolicy, startModelServer } from '../test/fixtures/modelServer/index.js';
import { type BenchContext, type ResultRow, median, ms, now, percentile, runPairs } from './lib/common.js';
import { cpuMsOf } from './lib/processes.js';
import { type BenchProject, SERVICE, startBaseline, startOurs } from './lib/services.js';

/** Model turns of one conversation that ask for a tool call; one more turn answers. */
const TOOL_TURNS = 10;
const TURNS = TOOL_TURNS + 1;
const TEXT = 'hello from the benchmark';
const EXPECTED = `final: ${Array.from({ length: TOOL_TURNS }, () => TEXT).join(' | ')}`;
const KEY = 'sk-bench-0123456789abcdef';
const GOAL_MS = 1;

const MEASURE = 'model-loop harness overhead per turn, against a local model server';
const GOAL = '≤ +1 ms per turn';

type Conversation = () => Promise<string>;

/** Runs `count` conversations one after another; returns each one's time per turn in ms. */
async function batch(conversation: Conversation, count: number): Promise<number[]> {
  const perTurn: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = now();
    const output = await conversation();
    perTurn.push((now() - start) / TURNS);
    if (output !== EXPECTED) throw new Error(`a conversation ended with ${JSON.stringify(output)}`);
  }
  return perTurn;
}

/** Collects what a benchmark started, in reverse order, even when one cleanup throws. */
async function withCleanups<T>(
  ctx: BenchContext,
  work: (defer: (cleanup: () => Promise<unknown>) => void) => Promise<T>,
): Promise<T> {
  const cleanups: Array<() => Promise<unknown>> = [];
  try {
    return await work((cleanup) => cleanups.push(cleanup));
  } finally {
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((error) => ctx.log(`  cleanup failed: ${String(error)}`));
    }
  }
}

/** The text a tool result hands back to the model, as ours does (`resultAsText`: the text blocks joined). */
function textOf(result: object): string {
  const content = (result as { content?: unknown }).content;
  const blocks = Array.isArray(content) ? (content as Array<{ type?: string; text?: string }>) : [];
  return blocks.map((b) => (b.type === 'text' ? (b.text ?? '') : JSON.stringify(b))).join('\n');
}

/** Benchmark 8's row. */
export function modelLoopBench(ctx: BenchContext, project: BenchProject): Promise<ResultRow> {
  return withCleanups(ctx, async (defer) => {
    const model: ModelServer = await startModelServer({
      requireApiKey: KEY,
      respond: scriptedPolicy(Array.from({ length: TOOL_TURNS }, () => ({ call: 'echo', arguments: { text: TEXT } }))),
    });
    defer(() => model.close());
    const baseURL = `${model.url}/v1`;

    // Ours: the harness over the surface the engine builds for an invocation of agent `solo`.
    const services = await startOurs(project, 'solo');
    defer(() => services.close());
    const surface = agentSurface(services.sessions);
    const config = {
      type: 'openai',
      api: 'chat',
      baseUrl: baseURL,
      model: 'test-model',
      maxTurns: 50,
      requestTimeoutMs: 600_000,
    } as ModelLoopConfig;
    const harness = createModelLoopHarness('main', config);
    let invocations = 0;
    const runId = `bench-model-loop-${ctx.token}`;
    const conversationOf =
      (checkpoints: 'written' | 'dropped'): Conversation =>
      async () => {
        const invocationId = `inv-${++invocations}`;
        const writer = new CheckpointWriter(checkpointPath(project.paths, runId, invocationId), {
          run: runId,
          invocation: invocationId,
          agent: 'main',
        });
        const input: HarnessInput = {
          agent: 'main',
          instructions: 'You are the benchmark host.',
          task: `Echo "${TEXT}" ${TOOL_TURNS} times.`,
          surface,
          workspace: project.workspace,
          signal: new AbortController().signal,
          invocationId,
          runtimePath: project.workspace,
          hostEnv: { OPENAI_API_KEY: KEY },
          registry: project.registry,
          graceMs: 2000,
          checkpoint: undefined,
          journaled: nothingJournaled(),
          // As the engine hands it to a harness (engine/attemptParts.ts): the first save writes the checkpoint
          // file, each later one is appended to its log; the writer is closed when the harness returns.
          saveCheckpoint: checkpoints === 'written' ? (state) => writer.append(1, state) : async () => {},
          report: () => {},
        };
        try {
          return (await harness.run(input)).output;
        } finally {
          await writer.close();
        }
      };
    const ours = conversationOf('written');

    // The baseline: the AI SDK's own loop, tools calling the service through the official v1 client.
    const direct = await startBaseline(project, SERVICE);
    defer(() => direct.close());
    const listed = await direct.client.listTools();
    const tools = Object.create(null) as ToolSet;
    for (const offered of surface.tools) {
      const route = surface.routes.find((r) => r.kind === 'tool' && r.name === offered.name);
      const serviceTool = listed.tools.find((t) => `${SERVICE}__${t.name}` === offered.name);
      if (route === undefined || serviceTool === undefined) throw new Error(`no direct tool for ${offered.name}`);
      tools[offered.name] = {
        ...(serviceTool.description === undefined ? {} : { description: serviceTool.description }),
        inputSchema: jsonSchema(serviceTool.inputSchema as Parameters<typeof jsonSchema>[0]),
        execute: async (args: unknown) =>
          textOf(await direct.client.callTool({ name: serviceTool.name, arguments: args as Record<string, unknown> })),
      } as ToolSet[string];
    }
    const provider = createOpenAI({ baseURL, apiKey: KEY }).chat('test-model');
    const baseline: Conversation = async () => {
      const result = await generateText({
        model: provider,
        system: 'You are the benchmark host.',
        messages: [{ role: 'user', content: `Echo "${TEXT}" ${TOOL_TURNS} times.` }],
        tools,
        stopWhen: stepCountIs(TURNS),
        maxRetries: 0,
      });
      return result.text;
    };

    const conversations = ctx.quick ? 4 : 10;
    const pairs = ctx.quick ? 5 : 10;
    const samples = { a: [] as number[], b: [] as number[] };
    const cpu = { a: { host: 0, service: 0 }, b: { host: 0, service: 0 } };
    const servicePid = { a: processFacts(services.sessions[0]).pid, b: direct.pid };
    let timed = false;
    let sides = 0;
    const side = async (which: 'a' | 'b', conversation: Conversation) => {
      const pid = servicePid[which];
      const hostBefore = process.cpuUsage();
      const serviceBefore = pid === undefined ? 0 : cpuMsOf(pid);
      const perTurn = await batch(conversation, conversations);
      const host = process.cpuUsage(hostBefore);
      if (timed) {
        samples[which].push(...perTurn);
        cpu[which].host += (host.user + host.system) / 1000;
        cpu[which].service += (pid === undefined ? 0 : cpuMsOf(pid)) - serviceBefore;
      }
      // The first pair runPairs runs is the warm-up: count from the next one.
      if (++sides === 2) timed = true;
      return percentile(perTurn, 50);
    };
    const requestsBefore = model.requests.length;
    const result = await runPairs(ctx, 'model loop per turn', {
      warmup: 1,
      pairs,
      a: () => side('a', ours),
      b: () => side('b', baseline),
    });
    const expectedRequests = (pairs + 1) * 2 * conversations * TURNS;
    if (model.requests.length - requestsBefore !== expectedRequests || model.rejected.length > 0) {
      throw new Error(
        `the model server saw ${model.requests.length - requestsBefore} requests (expected ${expectedRequests}) and rejected ${model.rejected.length}`,
      );
    }

    const p50a = percentile(samples.a, 50);
    const p50b = percentile(samples.b, 50);
    const diff = median(samples.a) - median(samples.b);
    const pairDiff = median(result.diffs);
    const turns = pairs * conversations * TURNS;
    const cpuPerTurn = {
      ours: { host: cpu.a.host / turns, service: cpu.a.service / turns },
      baseline: { host: cpu.b.host / turns, service: cpu.b.service / turns },
    };
    const met = diff <= GOAL_MS;
    let profileNote = '';
    let profile: ProfileSummary | undefined;
    let checkpointCost: number | undefined;
    let checkpointCpu: number | undefined;
    if (!met) {
      // Where the time goes: first the checkpoint writes (ours as measured vs. ours with a no-op writer),
      // then a CPU profile of ours.
      const splitCpu = { written: 0, dropped: 0 };
      const splitSide = async (checkpoints: 'written' | 'dropped') => {
        const before = process.cpuUsage();
        const perTurn = await batch(checkpoints === 'written' ? ours : conversationOf('dropped'), conversations);
        const used = process.cpuUsage(before);
        splitCpu[checkpoints] += (used.user + used.system) / 1000;
        return percentile(perTurn, 50);
      };
      const split = await runPairs(ctx, 'checkpoint writes per turn', {
        warmup: 0,
        pairs: ctx.quick ? 5 : 8,
        a: () => splitSide('written'),
        b: () => splitSide('dropped'),
      });
      checkpointCost = median(split.diffs);
      checkpointCpu = (splitCpu.written - splitCpu.dropped) / (split.diffs.length * conversations * TURNS);
      profile = await profileOurs(ctx, ours, ctx.quick ? 20 : 40);
      profileNote = `; where ours spends the difference: the checkpoint writes cost ${checkpointCost.toFixed(2)} ms per turn, ${checkpointCpu.toFixed(2)} ms of it CPU in this process (median over ${split.diffs.length} pairs of ours as measured vs. ours with a no-op checkpoint writer; the rest is waiting on the file system: the syncs); where ours spends its time (V8 CPU profile, as \`--cpu-prof\` writes, of ${profile.turns} turns of ours alone, self time): ${profile.top
        .map((f) => `${f.frame} ${f.percent.toFixed(1)} %`)
        .join(
          ', ',
        )}; native and Node-internal time counted for its nearest caller in a package or ours: ${profile.callers
        .map((f) => `${f.frame} ${f.percent.toFixed(1)} %`)
        .join(', ')}; by area: ${profile.areas.map((a) => `${a.area} ${a.percent.toFixed(1)} %`).join(', ')}`;
    }
    const f = (v: number) => `${v.toFixed(3)} ms`;
    return {
      id: '8',
      measure: MEASURE,
      baseline:
        'AI SDK `generateText` with `stopWhen: stepCountIs(11)`, tools calling the service with the official v1 client',
      ours: `p50 ${ms(p50a)} per turn, p99 ${ms(percentile(samples.a, 99))}`,
      theirs: `p50 ${ms(p50b)} per turn, p99 ${ms(percentile(samples.b, 99))}`,
      figure: `${diff >= 0 ? '+' : ''}${diff.toFixed(2)} ms per turn`,
      goal: GOAL,
      verdict: met ? 'met' : 'missed',
      notes:
        `the \`openai\` chat harness (\`createModelLoopHarness\`) over \`agentSurface\` of an invocation's session, each checkpoint written by the engine's \`CheckpointWriter\` as the engine writes it (1 write a turn, behind the conversation: the first save of a conversation to the checkpoint file atomically (its log created empty beside it), each later one appended to the log with 1 synced write; a step's calls wait only for the previous step's write), vs. the AI SDK's own loop; ` +
        `both against the same in-process local model server (OpenAI Chat Completions wire protocol, \`scriptedPolicy\`: ${TOOL_TURNS} turns calling \`echo\`, then the answer; ${TURNS} model calls a conversation, every answer checked); ` +
        `${pairs} A/B pairs of batches of ${conversations} conversations after a warm-up pair; figure: difference of the medians per turn over all ${pairs * conversations} timed conversations a side (median of the per-pair differences: ${pairDiff >= 0 ? '+' : ''}${pairDiff.toFixed(2)} ms); ` +
        `CPU per turn (load-independent): ours ${f(cpuPerTurn.ours.host)} in this process + ${f(cpuPerTurn.ours.service)} in the service, baseline ${f(cpuPerTurn.baseline.host)} + ${f(cpuPerTurn.baseline.service)} (this process includes the model server, the same for both)` +
        profileNote,
      data: {
        toolTurns: TOOL_TURNS,
        turnsPerConversation: TURNS,
        conversationsPerBatch: conversations,
        pairs,
        oursP50PerPair: result.a,
        baselineP50PerPair: result.b,
        diffsMsPerPair: result.diffs,
        oursP50: p50a,
        baselineP50: p50b,
        oursP99: percentile(samples.a, 99),
        baselineP99: percentile(samples.b, 99),
        diffOfMediansMs: diff,
        cpuMsPerTurn: cpuPerTurn,
        ...(checkpointCost === undefined
          ? {}
          : { checkpointWritesMsPerTurn: checkpointCost, checkpointCpuMsPerTurn: checkpointCpu }),
        ...(profile === undefined ? {} : { profile }),
      },
    };
  });
}

interface ProfileSummary {
  turns: number;
  totalMs: number;
  top: Array<{ frame: string; percent: number }>;
  areas: Array<{ area: string; percent: number }>;
  /** Self time of native and Node-internal frames counted for the nearest caller in a package or in ours. */
  callers: Array<{ frame: string; percent: number }>;
}

interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** Where a frame's code lives, for the "by area" line. */
function areaOf(url: string, name: string): string {
  if (url === '') return name.startsWith('(') ? name : '(native)';
  if (url.startsWith('node:')) return 'Node internals';
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return modules[1]!;
  if (url.includes('/packages/sdk/')) return 'ours (packages/sdk)';
  if (url.includes('/test/fixtures/modelServer/')) return 'the model server (fixture)';
  if (url.includes('/bench/')) return 'the benchmark';
  return 'other';
}

/** Runs `count` conversations of ours under the V8 CPU profiler and sums self time per frame and area. */
async function profileOurs(ctx: BenchContext, ours: Conversation, count: number): Promise<ProfileSummary> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
    for (let i = 0; i < count; i++) await ours();
    const { profile } = (await session.post('Profiler.stop')) as unknown as {
      profile: { nodes: CpuProfileNode[]; samples: number[]; timeDeltas: number[] };
    };
    const byNode = new Map<number, CpuProfileNode>(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
    const frames = new Map<string, number>();
    const areas = new Map<string, number>();
    const callers = new Map<string, number>();
    const label = (node: CpuProfileNode) => {
      const { functionName, url, lineNumber } = node.callFrame;
      const file = url === '' ? '' : ` ${url.replace(/^file:\/\//, '').replace(`${ctx.repo}/`, '')}:${lineNumber + 1}`;
      return `${functionName || '(anonymous)'}${file}`;
    };
    const internal = (node: CpuProfileNode) => {
      const area = areaOf(node.callFrame.url, node.callFrame.functionName);
      return area === '(native)' || area === 'Node internals';
    };
    let total = 0;
    profile.samples.forEach((id, i) => {
      const node = byNode.get(id);
      const delta = profile.timeDeltas[i] ?? 0;
      if (node === undefined) return;
      const { functionName, url } = node.callFrame;
      if (functionName === '(idle)') return;
      total += delta;
      const frame = label(node);
      frames.set(frame, (frames.get(frame) ?? 0) + delta);
      const area = areaOf(url, functionName);
      areas.set(area, (areas.get(area) ?? 0) + delta);
      // Whose work it was: the first caller outside native code and Node's own modules.
      let owner: CpuProfileNode | undefined = node;
      while (owner !== undefined && internal(owner)) {
        const up = parent.get(owner.id);
        owner = up === undefined ? undefined : byNode.get(up);
      }
      // `(root)`: work no JavaScript frame called (callbacks from the event loop: I/O completions, timers).
      // The inspector session's own dispatch shows under the function that started the profiler.
      const ownerLabel =
        owner === undefined
          ? frame
          : owner.callFrame.functionName === '(root)'
            ? '(event-loop callbacks: I/O completions, timers)'
            : owner.callFrame.functionName === 'profileOurs'
              ? '(the profiler session itself)'
              : label(owner);
      callers.set(ownerLabel, (callers.get(ownerLabel) ?? 0) + delta);
    });
    const ranked = (m: Map<string, number>, n: number) =>
      [...m.entries()]
        .sort((x, y) => y[1] - x[1])
        .slice(0, n)
        .map(([key, us]) => ({ key, percent: total > 0 ? (100 * us) / total : 0 }));
    return {
      turns: count * TURNS,
      totalMs: total / 1000,
      top: ranked(frames, 8).map(({ key, percent }) => ({ frame: key, percent })),
      areas: ranked(areas, 8).map(({ key, percent }) => ({ area: key, percent })),
      callers: ranked(callers, 8).map(({ key, percent }) => ({ frame: key, percent })),
    };
  } finally {
    await session.post('Profiler.disable').catch(() => {});
    session.disconnect();
  }
}

/** The label of benchmark 8 in `run.ts`. */
export const MODEL_LOOP_MEASURE = MEASURE;
export const MODEL_LOOP_GOAL = GOAL;
