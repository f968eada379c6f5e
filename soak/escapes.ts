/**
 * Path escapes and secrets.
 *
 * Paths: a sentinel directory tree beside the data dir, the workspace and the output folders; workflows
 * whose file paths carry `..` in every position go through `workflow load`, `workflow unpack` and
 * `services probe`; a workflow folder whose service files are symlinks pointing into the sentinel goes
 * through `workflow pack`; a workspace that is itself a symlink to elsewhere and holds a symlink to the
 * sentinel serves a probe. Goal: the sentinel tree is byte for byte the same afterwards (0 writes outside).
 *
 * Secrets: a host environment with many secret-looking variables; a service that maps one of them dumps
 * its own environment, what `/proc/<parent>/environ` shows and the variable names of every other
 * `/proc/<pid>/environ` it can read. Measured with `orchestration.sandbox` `off` (not sandboxed), `auto`
 * (sandboxed: every project service), `auto` with the operator's opt-out (`"sandbox": false`: not
 * sandboxed) and `required` (sandboxed). Goal: 0 unmapped secrets in its own environment,
 * and for a sandboxed service 0 through `/proc` too; for an unsandboxed one what `/proc` shows is
 * reported (the documented limit of unsandboxed services).
 */
import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixtureDefinition, killAll, markedPids, runCli, survivorsAfter } from './common.js';

/** path → sha256 of content (files), `link:<target>` (symlinks) or `dir` — the whole tree under `root`. */
function snapshot(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir).sort()) {
      const abs = join(dir, name);
      const key = rel ? `${rel}/${name}` : name;
      const st = lstatSync(abs);
      if (st.isSymbolicLink()) out.set(key, `link:${readlinkSync(abs)}`);
      else if (st.isDirectory()) {
        out.set(key, 'dir');
        walk(abs, key);
      } else out.set(key, createHash('sha256').update(readFileSync(abs)).digest('hex'));
    }
  };
  walk(root, '');
  return out;
}

function differences(a: Map<string, string>, b: Map<string, string>): string[] {
  const diffs: string[] = [];
  for (const [k, v] of b) if (a.get(k) !== v) diffs.push(a.has(k) ? `changed ${k}` : `created ${k}`);
  for (const k of a.keys()) if (!b.has(k)) diffs.push(`removed ${k}`);
  return diffs;
}

/** The `..` file paths tried, each aimed at the sentinel from wherever the files land. */
export const DOTDOT_PATHS = [
  '..',
  '../x',
  '../../sentinel/pwned',
  '../../../sentinel/pwned',
  '../../../../sentinel/pwned',
  '../../../../../../../../tmp/se-soak-pwned',
  'a/../../sentinel/pwned',
  'a/..',
  'a/../b',
  'a/b/../../../c',
  './../x',
  'a/./../x',
  '..\\x',
  'a/..\\..\\x',
];

/** Paths that only look like escapes: ordinary names, to be accepted and written inside. */
export const LOOKALIKE_PATHS = ['%2e%2e/x', '..%2fx', '.. /x', '\u2025/x', '...', '..a/b', 'a..'];

/** What the path part found. */
export interface EscapeReport {
  cases: number;
  refused: number;
  accepted: string[];
  uncoded: string[];
  /** Look-alike paths (ordinary names) that load or unpack refused. */
  lookalikesRefused: string[];
  lookalikes: number;
  writesOutside: string[];
  packSymlinkRefused: boolean | string;
  probeThroughSymlinkedWorkspace: string;
}

/** Runs every path case; returns the writes seen in the sentinel (goal none). */
export async function pathEscapes(runTag: string, quick: boolean): Promise<EscapeReport> {
  const dir = mkdtempSync(join(tmpdir(), 'se-soak-paths-'));
  const r: EscapeReport = {
    cases: 0,
    refused: 0,
    accepted: [],
    uncoded: [],
    lookalikesRefused: [],
    lookalikes: 0,
    writesOutside: [],
    packSymlinkRefused: false,
    probeThroughSymlinkedWorkspace: '',
  };
  try {
    const sentinel = join(dir, 'sentinel');
    mkdirSync(join(sentinel, 'deep/er'), { recursive: true });
    writeFileSync(join(sentinel, 'keep.txt'), 'keep');
    writeFileSync(join(sentinel, 'deep/er/keep.txt'), 'keep');
    const before = snapshot(sentinel);
    const tmpPwned = '/tmp/se-soak-pwned';
    const tmpBefore = existsSync(tmpPwned);
    const cases = [
      ...DOTDOT_PATHS.map((p) => ({ p, escapes: true })),
      ...LOOKALIKE_PATHS.map((p) => ({ p, escapes: false })),
    ];
    for (const [i, { p, escapes }] of cases.entries()) {
      for (const asEntrypoint of quick ? [false] : [false, true]) {
        const files: Record<string, string> = { 'server.cjs': 'process.stdin.resume();\n' };
        Object.defineProperty(files, p, { value: 'pwned', enumerable: true, writable: true, configurable: true });
        const workflow = {
          agents: { main: { mcpServers: [{ name: 's', project: 'd' }] } },
          mcpDefinitions: { d: { entrypoint: asEntrypoint ? p : 'server.cjs', files } },
        };
        const wf = join(dir, `wf-${i}-${asEntrypoint}.json`);
        writeFileSync(wf, JSON.stringify(workflow));
        const data = join(dir, 'data');
        const project = `soak-${runTag}-p`;
        const results: Record<string, Awaited<ReturnType<typeof runCli>>> = {
          load: await runCli(['workflow', 'load', wf, '--data-dir', data, '--project', project, '--json']),
          unpack: await runCli(['workflow', 'unpack', wf, join(dir, 'out', `u${i}-${asEntrypoint}`), '--json']),
        };
        if (escapes && !quick)
          results.probe = await runCli(
            ['services', 'probe', '--data-dir', data, '--project', project, '--workflow', wf].concat([
              '--workspace',
              join(dir, 'ws'),
              '--agent',
              'main',
              '--grace-ms',
              '300',
              '--json',
            ]),
            { timeoutMs: 60_000 },
          );
        killAll(await survivorsAfter(() => markedPids(project), 3000));
        const label = `${JSON.stringify(p)}${asEntrypoint ? ' (entrypoint)' : ''}`;
        const exits = Object.entries(results)
          .map(([k, x]) => `${k} exit ${x.code}`)
          .join(', ');
        if (!escapes) {
          r.lookalikes++;
          if (results.load?.code !== 0 || results.unpack?.code !== 0) r.lookalikesRefused.push(`${label}: ${exits}`);
          continue;
        }
        r.cases++;
        if (Object.values(results).every((x) => x.code === 1)) r.refused++;
        else r.accepted.push(`${label}: ${exits}`);
        for (const [k, x] of Object.entries(results)) {
          if (x.code !== 1) continue;
          try {
            const doc = JSON.parse(x.stdout) as { error?: { code?: string } };
            if (!doc.error?.code || doc.error.code === 'internal')
              r.uncoded.push(`${label} ${k}: ${x.stdout.slice(0, 150)}`);
          } catch {
            r.uncoded.push(`${label} ${k}: no JSON error document`);
          }
        }
      }
    }
    // A workflow folder whose service file is a symlink into the sentinel (and one whose folder is).
    const folder = join(dir, 'folder');
    mkdirSync(join(folder, 'services/d'), { recursive: true });
    writeFileSync(
      join(folder, 'workflow.base.json'),
      JSON.stringify({ agents: { main: { mcpServers: [{ name: 's', project: 'd' }] } } }),
    );
    writeFileSync(join(folder, 'services/d/service.json'), JSON.stringify({ entrypoint: 'server.cjs' }));
    symlinkSync(join(sentinel, 'keep.txt'), join(folder, 'services/d/server.cjs'));
    const pack = await runCli(['workflow', 'pack', folder, '--out', join(dir, 'packed.json'), '--json']);
    r.packSymlinkRefused = pack.code === 1 ? true : `exit ${pack.code}: ${pack.stdout.slice(0, 200)}`;
    // A workspace that is a symlink, holding a symlink to the sentinel; a probe runs there.
    const realWs = join(dir, 'real-ws');
    mkdirSync(realWs);
    symlinkSync(sentinel, join(realWs, 'escape'));
    symlinkSync(realWs, join(dir, 'ws-link'));
    const wf = join(dir, 'ok.json');
    writeFileSync(
      wf,
      JSON.stringify({
        agents: { main: { mcpServers: [{ name: 's', project: 'd' }] } },
        mcpDefinitions: { d: fixtureDefinition('plain.cjs') },
      }),
    );
    const probe = await runCli(
      [
        'services',
        'probe',
        '--data-dir',
        join(dir, 'data2'),
        '--workflow',
        wf,
        '--workspace',
        join(dir, 'ws-link'),
      ].concat(['--agent', 'main', '--grace-ms', '300', '--json']),
      { timeoutMs: 60_000 },
    );
    r.probeThroughSymlinkedWorkspace = `exit ${probe.code}`;
    r.writesOutside = differences(before, snapshot(sentinel));
    if (!tmpBefore && existsSync(tmpPwned)) r.writesOutside.push(`created ${tmpPwned}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return r;
}

/** What the secrets part found. */
export interface SecretsReport {
  secrets: number;
  runs: Array<{
    sandbox: string;
    exit: number | null;
    /** The probe's error as a whole, if it failed before the service ran. */
    probeError: string;
    ownVisible: string[];
    mappedSeen: boolean;
    parentEnviron: string;
    parentSecretsVisible: number;
    /** Whether the probe reported the service sandboxed, and why (its `sandbox.reason`). */
    sandboxed: boolean;
    sandboxReason: string;
    /** How many other processes the service saw in /proc and could read the environ of. */
    procEnvirons: string;
    /** Secrets found in any /proc/<pid>/environ the service could read. */
    procSecretsVisible: number;
  }>;
}

/** A host with `count` secret-looking variables; a service maps one. */
export async function secrets(runTag: string, count: number): Promise<SecretsReport> {
  const names = [
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
    'GITHUB_TOKEN',
    'OPENAI_API_KEY',
    'ANTHROPIC_API_KEY',
    'NPM_TOKEN',
    'DATABASE_URL',
    'SSH_AUTH_SOCK',
    'PGPASSWORD',
    'SLACK_WEBHOOK_URL',
  ];
  for (let i = names.length; i < count; i++) names.push(`SOAK_SECRET_${i}_TOKEN`);
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const n of names) env[n] = `soak-secret-value-${n}`;
  env.SOAK_MAPPED_SECRET = 'soak-mapped-value';
  const report: SecretsReport = { secrets: names.length, runs: [] };
  const cases = [
    { sandbox: 'off', policy: 'off', optOut: false },
    { sandbox: 'auto', policy: 'auto', optOut: false },
    { sandbox: 'auto, opted out', policy: 'auto', optOut: true },
    { sandbox: 'required', policy: 'required', optOut: false },
  ];
  for (const { sandbox, policy, optOut } of cases) {
    const dir = mkdtempSync(join(tmpdir(), 'se-soak-secrets-'));
    const project = `soak-${runTag}-sec-${policy}${optOut ? '-optout' : ''}`;
    try {
      const dump = join(dir, 'ws', 'env.json');
      mkdirSync(join(dir, 'ws'));
      const wf = join(dir, 'wf.json');
      writeFileSync(
        wf,
        JSON.stringify({
          orchestration: { sandbox: policy },
          agents: { main: { mcpServers: [{ name: 's', project: 'd' }] } },
          mcpDefinitions: {
            d: {
              ...fixtureDefinition('soak:dumpsEnv.cjs', { args: [dump], envFrom: { API_KEY: 'SOAK_MAPPED_SECRET' } }),
              ...(optOut ? { sandbox: false } : {}),
            },
          },
        }),
      );
      const probe = await runCli(
        ['services', 'probe', '--data-dir', join(dir, 'data'), '--project', project, '--workflow', wf].concat([
          '--workspace',
          join(dir, 'ws'),
          '--agent',
          'main',
          '--grace-ms',
          '300',
          '--json',
        ]),
        { env, timeoutMs: 60_000 },
      );
      killAll(await survivorsAfter(() => markedPids(project), 3000));
      let own: string[] = [];
      let parent: unknown = 'no dump written';
      let procs = { seen: 0, readable: 0, names: [] as string[] };
      if (existsSync(dump)) {
        const d = JSON.parse(readFileSync(dump, 'utf8')) as { own: string[]; parent: unknown; procs: typeof procs };
        own = d.own;
        parent = d.parent;
        procs = d.procs;
      }
      const parentVisible = Array.isArray(parent)
        ? names.filter((n) => (parent as string[]).some((l) => l.startsWith(`${n}=`))).length
        : 0;
      let probeError = '';
      let sandboxed = false;
      let sandboxReason = 'not reported';
      try {
        const doc = JSON.parse(probe.stdout) as {
          error?: { code: string; message: string };
          services?: Array<{ sandbox: { sandboxed: boolean; reason: string } | null }>;
        };
        if (doc.error) probeError = `${doc.error.code}: ${doc.error.message.split('\n').at(-1)?.trim()}`;
        const sb = doc.services?.[0]?.sandbox;
        if (sb) {
          sandboxed = sb.sandboxed;
          sandboxReason = sb.reason;
        }
      } catch {
        probeError = `no JSON document: ${probe.stderr.slice(0, 200)}`;
      }
      report.runs.push({
        sandbox,
        exit: probe.code,
        probeError,
        ownVisible: own.filter((n) => names.includes(n)),
        mappedSeen: own.includes('API_KEY'),
        parentEnviron: Array.isArray(parent) ? `readable (${parent.length} variables)` : String(parent),
        parentSecretsVisible: parentVisible,
        sandboxed,
        sandboxReason,
        procEnvirons: `${procs.readable} of ${procs.seen} other processes' environ readable`,
        procSecretsVisible: names.filter((n) => procs.names.includes(n)).length,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return report;
}
