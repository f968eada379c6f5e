/**
 * The workflow.json fuzzer: mutations of valid documents through `validateWorkflowText` (API; a sample
 * through the CLI's `validate --json`), and every accepted one through `loadWorkflow` and
 * `applyWorkflow` (by operator), each accepted one also checked by the independent checker. Then the
 * accepted documents go through `scienceevolve services probe` (a real start of the probed agent's
 * services): every one, or (`probe: 'distinct'`) one per distinct {@link probeKey} — what the probe
 * would start — with the number of documents each stands for.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadWorkflow } from '../packages/sdk/dist/index.js';
import { applyWorkflow } from '../packages/sdk/dist/reconfigure/applyWorkflow.js';
import { openProject, validateWorkflowText } from '../packages/sdk/dist/internal.js';
import { independentCheck } from './checker.js';
import {
  BIN,
  type Rng,
  SERVICE_FIXTURES,
  killAll,
  markedPids,
  runCli,
  survivorsAfter,
  tallyCollection,
} from './common.js';
import { probeKey, probedAgent } from './probeKey.js';

/** The seed's service: a real MCP server (the fixtures' shared body), so a probe of it gets to `ready`. */
const SEED_SERVER =
  "const { makeServer, serveStdio } = require('./lib/makeServer.cjs');\nserveStdio(makeServer('fuzz'));\n";
const MAKE_SERVER = readFileSync(join(SERVICE_FIXTURES, 'lib/makeServer.cjs'), 'utf8');

const PROTO_NAMES = Object.getOwnPropertyNames(Object.prototype);
const HOSTILE_STRINGS = [
  '',
  '..',
  '../x',
  'a/../b',
  'a/..',
  '/etc/passwd',
  'a\\b',
  'a//b',
  './a',
  'a/./b',
  'a\0b',
  '\ud800',
  'x\udc00y',
  '名前',
  'e\u0301',
  '\u202eevil',
  'A'.repeat(65),
  'a'.repeat(64),
  'a'.repeat(65),
  '-lead',
  '_lead',
  'UPPER',
  'sp ace',
  'x'.repeat(4097),
];
const HUGE_NUMBERS = [
  '1e400',
  '-1e400',
  '9007199254740993',
  '123456789012345678901234567890',
  '-0',
  '1.5',
  '-1',
  '1e-400',
];

function setOwn(o: Record<string, unknown>, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

/** A valid seed workflow with `n` definitions. */
function seed(rng: Rng): Record<string, unknown> {
  const defs: Record<string, unknown> = {};
  const servers: unknown[] = [];
  const n = 1 + rng.int(3);
  for (let i = 0; i < n; i++) {
    defs[`tools-${i}`] = {
      command: 'node',
      entrypoint: 'server.cjs',
      files: { 'server.cjs': SEED_SERVER, 'lib/makeServer.cjs': MAKE_SERVER, 'lib/util.cjs': 'module.exports = 1;\n' },
      args: ['--flag'],
      envFrom: { API_KEY: 'SOAK_API_KEY' },
    };
    servers.push({ name: `svc-${i}`, project: `tools-${i}` });
  }
  return {
    orchestration: { allowMainReconfiguration: true, git: false, invocationRetries: 1 },
    agents: {
      main: { harness: { type: 'scripted' }, instructions: 'work', mcpServers: servers },
      analyst: { instructions: 'read', mcpServers: [{ name: 'remote', url: 'http://127.0.0.1:8000/mcp' }] },
    },
    mcpDefinitions: defs,
  };
}

function randomValue(rng: Rng): unknown {
  return rng.pick<unknown>([null, true, 0, -1, 1.5, '', 'x', [], {}, ['a'], { a: 1 }, rng.pick(HOSTILE_STRINGS)]);
}

/** Every (container, key) pair of the document, for a random type change. */
function slots(v: unknown, out: Array<[Record<string, unknown> | unknown[], string | number]> = []) {
  if (Array.isArray(v))
    v.forEach((x, i) => {
      out.push([v, i]);
      slots(x, out);
    });
  else if (v && typeof v === 'object')
    for (const k of Object.keys(v)) {
      out.push([v as Record<string, unknown>, k]);
      slots((v as Record<string, unknown>)[k], out);
    }
  return out;
}

function renameKey(o: Record<string, unknown>, from: string, to: string): void {
  const v = o[from];
  delete o[from];
  setOwn(o, to, v);
}

/** One mutated document as JSON text, and the kind of mutation. */
export function mutate(rng: Rng): { kind: string; text: string } {
  const doc = seed(rng);
  const defs = doc.mcpDefinitions as Record<string, Record<string, unknown>>;
  const main = (doc.agents as Record<string, Record<string, unknown>>).main as Record<string, unknown>;
  const servers = main.mcpServers as Array<Record<string, unknown>>;
  const def0 = defs['tools-0'] as Record<string, unknown>;
  const kind = rng.pick([
    'type',
    'type',
    'length',
    'path',
    'path',
    'unicode',
    'nesting',
    'number',
    'duplicate-key',
    'proto-name',
    'proto-name',
    'count',
    'valid',
  ]);
  switch (kind) {
    case 'type': {
      const all = slots(doc);
      for (let i = 0, n = 1 + rng.int(3); i < n; i++) {
        const [c, k] = rng.pick(all);
        (c as Record<string | number, unknown>)[k] = randomValue(rng);
      }
      break;
    }
    case 'length': {
      const which = rng.int(5);
      if (which === 0) (def0.files as Record<string, string>)['server.cjs'] = 'x'.repeat(500_000 + rng.int(2));
      else if (which === 1) def0.args = Array.from({ length: 64 + rng.int(2) }, () => 'a');
      else if (which === 2) def0.args = ['y'.repeat(4096 + rng.int(2))];
      else if (which === 3) renameKey(defs, 'tools-0', 'a'.repeat(64 + rng.int(2)));
      else (def0.files as Record<string, string>)['big.txt'] = 'z'.repeat(400_000);
      if (which === 3) for (const s of servers) if (s.project === 'tools-0') s.project = Object.keys(defs).at(-1);
      break;
    }
    case 'path': {
      const p = rng.pick([
        '..',
        '../x',
        'a/../b',
        'a/..',
        '/abs',
        'a\\b',
        'a//b',
        './a',
        'a/./b',
        'a\0b',
        'lib',
        'lib/util.cjs/x',
        '',
        'ok/fine.txt',
      ]);
      const files = def0.files as Record<string, string>;
      setOwn(files, p, 'content');
      if (rng.int(2) === 0) def0.entrypoint = p;
      break;
    }
    case 'unicode': {
      const s = rng.pick(HOSTILE_STRINGS.slice(11, 16));
      const where = rng.int(4);
      if (where === 0) (main as Record<string, unknown>).instructions = s;
      else if (where === 1) setOwn(def0.files as Record<string, unknown>, `f${s}.txt`, s);
      else if (where === 2) servers[0] = { ...servers[0], name: s };
      else def0.args = [s];
      break;
    }
    case 'nesting': {
      const depth = rng.pick([100, 1000, 10_000, 100_000]);
      const text = JSON.stringify(doc).replace(
        '"instructions":"work"',
        `"instructions":${'['.repeat(depth)}${']'.repeat(depth)}`,
      );
      return { kind, text };
    }
    case 'number': {
      const n = rng.pick(HUGE_NUMBERS);
      return { kind, text: JSON.stringify(doc).replace('"invocationRetries":1', `"invocationRetries":${n}`) };
    }
    case 'duplicate-key': {
      const text = JSON.stringify(doc);
      const variant = rng.int(3);
      if (variant === 0)
        return {
          kind,
          text: text.replace('"mcpDefinitions":', '"mcpDefinitions":{"evil":{"files":{}}},"mcpDefinitions":'),
        };
      if (variant === 1)
        return { kind, text: text.replace('"command":"node"', '"command":"node","command":"rm -rf /"') };
      return { kind, text: text.replace('"agents":{', '"agents":{"main":{"mcpServers":[]},') };
    }
    case 'proto-name': {
      const name = rng.pick(PROTO_NAMES);
      const where = rng.pick(['definition', 'agent', 'file', 'env', 'service', 'project-ref', 'entrypoint']);
      if (where === 'definition') {
        renameKey(defs, 'tools-0', name);
        servers[0] = { name: 'svc-0', project: name };
      } else if (where === 'agent') setOwn(doc.agents as Record<string, unknown>, name, { instructions: 'x' });
      else if (where === 'file') setOwn(def0.files as Record<string, unknown>, name, 'x');
      else if (where === 'env') setOwn(def0.envFrom as Record<string, unknown>, name, rng.int(2) ? name : 'HOME');
      else if (where === 'service') servers[0] = { name, project: 'tools-0' };
      else if (where === 'project-ref') servers[0] = { name: 'svc-0', project: name };
      else def0.entrypoint = name;
      return { kind: `proto-name/${where}`, text: JSON.stringify(doc) };
    }
    case 'count': {
      const which = rng.int(3);
      if (which === 0)
        for (let i = 3; i < 33 + rng.int(2); i++) defs[`tools-${i}`] = { entrypoint: 'a.cjs', files: { 'a.cjs': 'x' } };
      else if (which === 1)
        for (let i = 0; i < 33 + rng.int(2) - servers.length; i++)
          servers.push({ name: `r-${i}`, url: 'http://127.0.0.1:1/mcp' });
      else def0.files = Object.fromEntries(Array.from({ length: 100 + rng.int(2) }, (_, i) => [`f${i}.cjs`, 'x']));
      if (which === 2) def0.entrypoint = 'f0.cjs';
      break;
    }
    default:
      break;
  }
  return { kind, text: JSON.stringify(doc) };
}

/** What the fuzz part found. */
export interface FuzzReport {
  documents: number;
  accepted: number;
  refused: number;
  kinds: Record<string, { total: number; accepted: number }>;
  escapedThrows: string[];
  uncoded: string[];
  internal: string[];
  disagreements: string[];
  acceptedWithLoneSurrogates: number;
  acceptedWithDuplicateKeys: number;
  cliSample: number;
  cliDisagreements: string[];
  loaded: number;
  loadFailures: string[];
  applied: number;
  applyFailures: string[];
  probe: ProbeFigures;
}

/** What went through `services probe` and what it left. */
export interface ProbeFigures {
  /** `all`: every accepted document; `distinct`: one per distinct probe key. */
  mode: 'all' | 'distinct';
  /** Distinct probe keys among the accepted documents. */
  distinct: number;
  /** Probes run. */
  probes: number;
  /** Accepted documents those probes stand for (each probe stands for the documents sharing its key). */
  documentsCovered: number;
  /** Probes that answered with their document and a whole-probe error, by code. */
  refusedByCode: Record<string, number>;
  /** Services started: ready, and failed by code. */
  servicesReady: number;
  servicesFailedByCode: Record<string, number>;
  /** Marked processes left after probes returned (polled 5 s). */
  survivors: number;
  /** Throws or answers that broke the contract: no JSON document, stack trace, uncoded or `internal` error. */
  problems: string[];
  collection: Map<string, number>;
  concurrency: number;
  seconds: number;
}

/** How the accepted documents go through `services probe`. */
export interface ProbeOptions {
  mode: 'all' | 'distinct';
  /** Probes at once. */
  concurrency: number;
  /** Distinguishes this soak's projects (markers) from others'. */
  runTag: string;
  /** Each probe's startup budget, in ms. */
  budgetMs: number;
}

function bump(o: Record<string, number>, k: string): void {
  o[k] = (Object.hasOwn(o, k) ? (o[k] as number) : 0) + 1;
}

/** One probe of an accepted document through the CLI, in worker `w`'s data dir; adds to `f`. */
async function probeDocument(
  f: ProbeFigures,
  dir: string,
  w: number,
  n: number,
  item: { kind: string; text: string },
  options: ProbeOptions,
): Promise<void> {
  const agent = probedAgent(JSON.parse(item.text)) ?? 'main';
  const file = join(dir, `probe-${w}-${n}.json`);
  writeFileSync(file, item.text);
  const project = `soak-${options.runTag}-fz${w}`;
  const ws = join(dir, `ws-${w}`);
  mkdirSync(ws, { recursive: true });
  const at = `${item.kind} (probe ${n}, agent ${JSON.stringify(agent)})`;
  const run = await runCli(
    ['services', 'probe', '--data-dir', join(dir, `probe-data-${w}`), '--project', project, '--workflow', file].concat([
      '--workspace',
      ws,
      '--agent',
      agent,
      '--grace-ms',
      '300',
      '--startup-budget-ms',
      String(options.budgetMs),
      '--json',
    ]),
    { env: { ...process.env, SOAK_API_KEY: 'soak-api-key' }, timeoutMs: 120_000 },
  );
  rmSync(file, { force: true });
  f.probes++;
  tallyCollection(f.collection, run.stdout);
  if (/^\s+at .*:\d+:\d+\)?$/m.test(run.stderr))
    f.problems.push(`${at}: stack trace on stderr: ${run.stderr.slice(0, 300)}`);
  let doc: {
    services?: Array<{ state: string; error: { code?: string } | null }>;
    error?: { code?: string; message?: string };
  };
  try {
    doc = JSON.parse(run.stdout) as typeof doc;
  } catch {
    f.problems.push(`${at}: no JSON document (exit ${run.code}, signal ${run.signal}): ${run.stderr.slice(0, 200)}`);
    doc = {};
  }
  if (run.code !== 0 && run.code !== 1) f.problems.push(`${at}: exit ${run.code} (signal ${run.signal})`);
  if (doc.error) {
    const code = doc.error.code;
    if (!code || code === 'internal')
      f.problems.push(`${at}: probe error ${code ?? 'without a code'}: ${doc.error.message?.slice(0, 200)}`);
    bump(f.refusedByCode, code ?? 'uncoded');
  }
  for (const s of doc.services ?? []) {
    if (s.state === 'ready') f.servicesReady++;
    else {
      const code = s.error?.code;
      if (!code || code === 'internal') f.problems.push(`${at}: a service failed ${code ?? 'without a code'}`);
      bump(f.servicesFailedByCode, code ?? 'uncoded');
    }
  }
  const left = await survivorsAfter(() => markedPids(project), 5000);
  if (left.length > 0) {
    f.survivors += left.length;
    f.problems.push(`${at}: ${left.length} marked processes left`);
    killAll(left);
  }
}

function runCliValidate(file: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'validate', file, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Runs `count` documents; `cliEvery`: one in this many goes through the CLI too; then the accepted ones
 * through `services probe` as `probe` says.
 */
export async function fuzz(rng: Rng, count: number, cliEvery: number, probe: ProbeOptions): Promise<FuzzReport> {
  const dir = mkdtempSync(join(tmpdir(), 'se-soak-fuzz-'));
  const r: FuzzReport = {
    documents: 0,
    accepted: 0,
    refused: 0,
    kinds: Object.create(null),
    escapedThrows: [],
    uncoded: [],
    internal: [],
    disagreements: [],
    acceptedWithLoneSurrogates: 0,
    acceptedWithDuplicateKeys: 0,
    cliSample: 0,
    cliDisagreements: [],
    loaded: 0,
    loadFailures: [],
    applied: 0,
    applyFailures: [],
    probe: {
      mode: probe.mode,
      distinct: 0,
      probes: 0,
      documentsCovered: 0,
      refusedByCode: Object.create(null),
      servicesReady: 0,
      servicesFailedByCode: Object.create(null),
      survivors: 0,
      problems: [],
      collection: new Map(),
      concurrency: probe.concurrency,
      seconds: 0,
    },
  };
  /** Accepted documents to probe: by probe key, the first document and how many share the key. */
  const toProbe = new Map<string, { kind: string; text: string; documents: number }>();
  const allAccepted: Array<{ kind: string; text: string; documents: number }> = [];
  const applyPaths = await openProject(join(dir, 'data'), 'soak-apply');
  try {
    for (let i = 0; i < count; i++) {
      const { kind, text } = mutate(rng);
      r.documents++;
      r.kinds[kind] ??= { total: 0, accepted: 0 };
      const k = r.kinds[kind];
      k.total++;
      let result: ReturnType<typeof validateWorkflowText>;
      try {
        result = validateWorkflowText(text);
      } catch (error) {
        r.escapedThrows.push(`${kind}: ${(error as Error)?.message ?? String(error)}`.slice(0, 300));
        continue;
      }
      if (i % cliEvery === 0) {
        const file = join(dir, `doc-${i}.json`);
        writeFileSync(file, text);
        const cli = await runCliValidate(file);
        r.cliSample++;
        let ok: unknown;
        try {
          ok = (JSON.parse(cli.stdout) as { ok?: unknown }).ok;
        } catch {
          ok = `unparsable stdout (exit ${cli.code})`;
        }
        if (ok !== result.ok || /^\s+at .*:\d+:\d+\)?$/m.test(cli.stderr))
          r.cliDisagreements.push(`${kind}: API ok=${result.ok}, CLI ok=${String(ok)} exit ${cli.code}`);
        rmSync(file, { force: true });
      }
      if (!result.ok) {
        r.refused++;
        for (const e of result.errors) {
          if (!e.code || !e.path || !e.message) r.uncoded.push(`${kind}: ${JSON.stringify(e).slice(0, 200)}`);
          if ((e.code as string) === 'internal') r.internal.push(`${kind}: ${e.message.slice(0, 200)}`);
        }
        continue;
      }
      r.accepted++;
      k.accepted++;
      const doc = JSON.parse(text) as unknown;
      const key = probeKey(doc);
      const same = toProbe.get(key);
      if (same) same.documents++;
      else toProbe.set(key, { kind, text, documents: 1 });
      if (probe.mode === 'all') allAccepted.push({ kind, text, documents: 1 });
      const check = independentCheck(doc);
      if (check.broken.length > 0) r.disagreements.push(`${kind}: ${check.broken.slice(0, 3).join('; ')}`);
      if (check.surrogates.length > 0) r.acceptedWithLoneSurrogates++;
      if (kind === 'duplicate-key') r.acceptedWithDuplicateKeys++;
      try {
        await loadWorkflow({
          dataDir: join(dir, 'data'),
          project: `soak-load-${i % 4}`,
          workflow: doc as Record<string, unknown>,
        });
        r.loaded++;
      } catch (error) {
        const code = (error as { code?: string }).code;
        r.loadFailures.push(`${kind}: ${code ?? 'uncoded'}: ${(error as Error).message.slice(0, 200)}`);
      }
      try {
        await applyWorkflow(applyPaths, doc, { by: 'operator' });
        r.applied++;
      } catch (error) {
        const code = (error as { code?: string }).code;
        r.applyFailures.push(`${kind}: ${code ?? 'uncoded'}: ${(error as Error).message.slice(0, 200)}`);
      }
    }
    r.probe.distinct = toProbe.size;
    const items = probe.mode === 'all' ? allAccepted : [...toProbe.values()];
    const t0 = performance.now();
    // Worker w of the pool probes in its own data dir and project, so probes at once never share a project.
    let worker = 0;
    const queue = items.map((item, n) => ({ item, n }));
    await Promise.all(
      Array.from({ length: Math.min(probe.concurrency, queue.length) }, async () => {
        const w = worker++;
        for (let next = queue.shift(); next; next = queue.shift()) {
          await probeDocument(r.probe, dir, w, next.n, next.item, probe);
          r.probe.documentsCovered += next.item.documents;
        }
      }),
    );
    r.probe.seconds = (performance.now() - t0) / 1000;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return r;
}
