/**
 * `npm run soak [-- --quick] [--seed N] [--parts hostile,kills,apply,fuzz,paths,secrets] [--out FILE]`: the soak, fuzz
 * and chaos suite. Runs each part, then writes what it measured to docs/reliability.md (or `--out`).
 * Exit 1 when a goal was missed.
 */
import { execSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type ApplyKillReport, applyKills } from './applyKills.js';
import { ROOT, Rng } from './common.js';
import { pathEscapes, secrets } from './escapes.js';
import { fuzz } from './fuzz.js';
import { hostile } from './hostile.js';
import { type KillReport, hostKills } from './kills.js';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    seed: { type: 'string' },
    parts: { type: 'string', default: 'hostile,kills,apply,fuzz,paths,secrets' },
    out: { type: 'string', default: join(ROOT, 'docs/reliability.md') },
    counts: { type: 'string' },
  },
});
const quick = values.quick === true;
const seed = values.seed !== undefined ? Number(values.seed) : Date.now() % 2 ** 31;
const parts = new Set(values.parts.split(','));
const rng = new Rng(seed);
const runTag = `${process.pid}`;
const SIZES = quick
  ? { hostile: 50, concurrency: 4, budgetMs: 5000, kills: 10, apply: 25, fuzz: 1000, cliEvery: 100, secrets: 50 }
  : {
      hostile: 1000,
      concurrency: 4,
      budgetMs: 8000,
      kills: 200,
      apply: 500,
      fuzz: 10_000,
      cliEvery: 100,
      secrets: 200,
    };

// `--counts hostile=200,fuzz=10000`: a partial run between quick and full (the page says so).
const overridden: string[] = [];
for (const pair of values.counts?.split(',') ?? []) {
  const [key, value] = pair.split('=');
  const n = Number(value);
  if (key === undefined || !Object.hasOwn(SIZES, key) || !Number.isSafeInteger(n) || n < 1) {
    process.stderr.write(
      `soak: --counts takes name=whole number pairs of ${Object.keys(SIZES).join(', ')}; got "${pair}"\n`,
    );
    process.exit(2);
  }
  (SIZES as Record<string, number>)[key] = n;
  overridden.push(`${key}=${n}`);
}
const mode =
  overridden.length > 0
    ? `partial (${quick ? 'quick' : 'full'} sizes with ${overridden.join(', ')})`
    : quick
      ? 'quick'
      : 'full';

const started = new Date();
const loadBefore = loadavg();
const log = (s: string) => process.stderr.write(`[soak ${new Date().toISOString().slice(11, 19)}] ${s}\n`);
const timings: Record<string, number> = {};
async function timed<T>(name: string, f: () => Promise<T>): Promise<T> {
  log(`${name}…`);
  const t0 = performance.now();
  const out = await f();
  timings[name] = (performance.now() - t0) / 1000;
  log(`${name} done in ${timings[name].toFixed(0)} s`);
  return out;
}

const h = parts.has('hostile')
  ? await timed('hostile', () => hostile(rng, SIZES.hostile, SIZES.concurrency, SIZES.budgetMs, runTag))
  : undefined;
const k: KillReport | undefined = parts.has('kills')
  ? await timed('kills', () => hostKills(rng, SIZES.kills, 2, runTag))
  : undefined;
const a: ApplyKillReport | undefined = parts.has('apply')
  ? await timed('apply', () => applyKills(rng, SIZES.apply))
  : undefined;
const f = parts.has('fuzz') ? await timed('fuzz', () => fuzz(rng, SIZES.fuzz, SIZES.cliEvery)) : undefined;
const p = parts.has('paths') ? await timed('paths', () => pathEscapes(runTag, quick)) : undefined;
const s = parts.has('secrets') ? await timed('secrets', () => secrets(runTag, SIZES.secrets)) : undefined;
const loadAfter = loadavg();

/** `known`: a missed goal whose cause is a documented limit not fixed yet; it does not fail the exit code. */
const goals: Array<{ goal: string; met: boolean; figure: string; known?: string }> = [];
/** Findings that are no goal of the contract. */
const observations: string[] = [];
if (h) {
  goals.push({
    goal: 'hostile invocations: 0 surviving marked processes',
    met: h.markedSurvivors === 0,
    figure: `${h.markedSurvivors} over ${h.invocations} invocations`,
  });
  goals.push({
    goal: 'hostile invocations: 0 surviving `setsid env -i` grandchildren',
    met: h.envClearedSurvivors === 0,
    figure: `${h.envClearedSurvivors} over ${h.perFixture['soak:clearsEnvDoubleFork.cjs']?.services ?? 0} such services`,
    known:
      'a process that leaves its group and clears its environment carries neither group nor marker, so process-group collection cannot find it (docs/services.md); the control-group collection that would is not built yet',
  });
  goals.push({
    goal: 'hostile invocations: every probe answers with its document, no stack trace',
    met: h.problems.length === 0,
    figure: `${h.problems.length} problems`,
  });
}
if (k) {
  goals.push({
    goal: 'host SIGKILLs during `services probe --hold`: 0 leftovers after the supervisor collects',
    met: k.leftovers === 0,
    figure: `${k.leftovers} over ${k.tries} kills (${k.killedBeforeReport} before the report, ${k.killedAfterReport} after)`,
  });
}
if (a) {
  goals.push({
    goal: '`apply_workflow` killed at random points: 0 mixed or partial versions, every named source in full, `workflow verify` ok',
    met: a.problems.length === 0,
    figure: `${a.problems.length} problems over ${a.kills} kills (${a.versionsAccepted} versions accepted meanwhile, ${a.verifyRuns} verify runs)`,
  });
}
if (f) {
  goals.push({
    goal: 'fuzz: no throw escapes `validate`',
    met: f.escapedThrows.length === 0,
    figure: `${f.escapedThrows.length}`,
  });
  goals.push({
    goal: 'fuzz: every refusal coded (code, path, message; never `internal`)',
    met: f.uncoded.length + f.internal.length === 0,
    figure: `${f.uncoded.length} uncoded, ${f.internal.length} internal`,
  });
  goals.push({
    goal: 'fuzz: the independent checker agrees with every accepted document',
    met: f.disagreements.length === 0,
    figure: `${f.disagreements.length} of ${f.accepted} accepted break a rule`,
  });
  observations.push(
    `${f.acceptedWithLoneSurrogates} accepted documents hold a lone UTF-16 surrogate in a string or key (the contract has no rule against one; each loaded and applied).`,
    `${f.acceptedWithDuplicateKeys} of ${f.kinds['duplicate-key']?.total ?? 0} documents with a duplicate key in their JSON text were accepted, read as JSON.parse reads them (the last one wins) everywhere; the contract has no rule against duplicate keys.`,
  );
  goals.push({
    goal: 'fuzz: the CLI `validate --json` agrees with the API on the sample',
    met: f.cliDisagreements.length === 0,
    figure: `${f.cliDisagreements.length} of ${f.cliSample}`,
  });
  goals.push({
    goal: 'fuzz: every accepted document loads (`loadWorkflow`) and applies (`applyWorkflow`, by operator)',
    met: f.loadFailures.length + f.applyFailures.length === 0,
    figure: `${f.loaded}/${f.accepted} loaded, ${f.applied}/${f.accepted} applied`,
  });
}
if (p) {
  goals.push({
    goal: 'paths: 0 writes outside',
    met: p.writesOutside.length === 0,
    figure: `${p.writesOutside.length}`,
  });
  goals.push({
    goal: `paths: every \`..\` path refused by load, unpack${quick ? '' : ' and probe'}, with a code`,
    met: p.accepted.length === 0 && p.uncoded.length === 0,
    figure: `${p.refused} of ${p.cases} refused by all; ${p.uncoded.length} uncoded`,
  });
  goals.push({
    goal: 'paths: look-alike names (`%2e%2e`, `.. `, `‥`, `...`) accepted as the ordinary names they are',
    met: p.lookalikesRefused.length === 0,
    figure: `${p.lookalikes - p.lookalikesRefused.length} of ${p.lookalikes}`,
  });
  goals.push({
    goal: 'paths: `workflow pack` refuses a symlinked service file',
    met: p.packSymlinkRefused === true,
    figure: String(p.packSymlinkRefused),
  });
}
if (s) {
  for (const run of s.runs)
    if (run.probeError)
      observations.push(
        `secrets with sandbox ${run.sandbox}: not measured, the probe refused the workflow (${run.probeError}) — the sandbox is not in this build.`,
      );
    else
      goals.push({
        goal: `secrets (sandbox ${run.sandbox}): 0 unmapped secrets in the service's environment`,
        met: run.ownVisible.length === 0 && run.mappedSeen,
        figure: `${run.ownVisible.length} of ${s.secrets} visible; mapped one seen: ${run.mappedSeen}; probe exit ${run.exit}`,
      });
}

const git = (cmd: string) => {
  try {
    return execSync(cmd, { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
};
const fmtLoad = (l: number[]) => l.map((x) => x.toFixed(1)).join(' / ');
const lines: string[] = [];
const list = (items: string[], max = 20) => {
  for (const i of items.slice(0, max)) lines.push(`  - ${i.replace(/\n/g, ' ')}`);
  if (items.length > max) lines.push(`  - … and ${items.length - max} more`);
};
lines.push('# Reliability: the soak, fuzz and chaos figures');
lines.push('');
lines.push(
  'Written by `npm run soak` (this page is generated: run it again rather than editing). `--quick` is what CI runs; the full run is the published figure. Re-run a failing soak with its `--seed`.',
);
lines.push('');
lines.push('## This run');
lines.push('');
lines.push(`- mode: **${mode}**, seed ${seed}, parts: ${[...parts].join(', ')}`);
lines.push(
  `- date: ${started.toISOString()}, took ${((Date.now() - started.getTime()) / 1000).toFixed(0)} s (${Object.entries(
    timings,
  )
    .map(([k, v]) => `${k} ${v.toFixed(0)} s`)
    .join(', ')})`,
);
lines.push(
  `- machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ${process.platform} ${git('uname -r')}; node ${process.version}; commit ${git('git rev-parse --short HEAD')}`,
);
lines.push(
  `- load average (1/5/15 min) at start ${fmtLoad(loadBefore)}, at end ${fmtLoad(loadAfter)}: the machine was shared with other test runs, so durations here are not benchmarks`,
);
lines.push('');
lines.push('## Goals');
lines.push('');
lines.push('| goal | figure | met |');
lines.push('| --- | --- | --- |');
for (const g of goals)
  lines.push(
    `| ${g.goal} | ${g.figure} | ${g.met ? 'yes' : g.known ? `**missed** (known: ${g.known})` : '**missed**'} |`,
  );
lines.push('');
if (observations.length > 0) {
  lines.push('Observations (no goal):');
  lines.push('');
  for (const o of observations) lines.push(`- ${o}`);
  lines.push('');
}
if (h) {
  lines.push('## Hostile invocations');
  lines.push('');
  lines.push(
    `${h.invocations} invocations (\`services probe\` of 1–3 services drawn at random), ${h.concurrency} at once, grace 300 ms, startup budget ${SIZES.budgetMs / 1000} s; median ${(h.medianMs / 1000).toFixed(1)} s each. After each, marked processes were counted (polled 5 s) and env-cleared grandchildren by a token on their command line (polled 2 s); survivors were then killed.`,
  );
  lines.push('');
  lines.push('| fixture | services | ready | failed |');
  lines.push('| --- | --- | --- | --- |');
  for (const [k, v] of Object.entries(h.perFixture)) lines.push(`| ${k} | ${v.services} | ${v.ready} | ${v.failed} |`);
  lines.push('');
  lines.push(
    '"failed" is the expected outcome for `exitsAtStart`, `neverAnswersInitialize` (and sometimes the non-UTF-8 one); what matters is what is left behind.',
  );
  if (h.invocationsWithSurvivors.length > 0) {
    lines.push('');
    lines.push('Invocations that left processes behind:');
    list(h.invocationsWithSurvivors);
  }
  if (h.problems.length > 0) {
    lines.push('');
    lines.push('Problems:');
    list(h.problems);
  }
  lines.push('');
}
if (k) {
  lines.push('## Host SIGKILLs');
  lines.push('');
  lines.push(
    `${k.tries} \`services probe --hold 60\` hosts (a setsid-grandchild spawner and a SIGTERM-ignoring service), 2 at once, each SIGKILLed after a random delay: half within the first 1.5 s (while it loads, spawns and registers), half up to 7.5 s; then the project's marked processes polled for 15 s.`,
  );
  if (k.triesWithLeftovers.length > 0) {
    lines.push('');
    lines.push('Kills that left processes behind:');
    list(k.triesWithLeftovers);
  }
  lines.push('');
}
if (a) {
  lines.push('## `apply_workflow` killed');
  lines.push('');
  lines.push(
    `${a.kills} children applying workflows (three definitions of 21 files each, every version different) in a loop to one of two projects, each SIGKILLed at a random moment: half while starting, half 0–400 ms after a version was accepted (inside the next apply). After each kill the accepted version was read back and every file of every definition it names compared with its stored source; \`workflow verify\` ran on the project every fifth kill and at the end.`,
  );
  if (a.problems.length > 0) {
    lines.push('');
    lines.push('Problems:');
    list(a.problems);
  }
  lines.push('');
}
if (f) {
  lines.push('## Fuzzed workflow.json');
  lines.push('');
  lines.push(
    `${f.documents} documents (mutations of valid ones), ${f.accepted} accepted, ${f.refused} refused; one in ${SIZES.cliEvery} also through \`scienceevolve validate --json\` (${f.cliSample}). Every accepted one went through the independent checker (\`soak/checker.ts\`, written from the limits table, not importing the SDK's validator), \`loadWorkflow\` and \`applyWorkflow\` (by operator).`,
  );
  lines.push('');
  lines.push('| mutation | documents | accepted |');
  lines.push('| --- | --- | --- |');
  for (const [k, v] of Object.entries(f.kinds).sort()) lines.push(`| ${k} | ${v.total} | ${v.accepted} |`);
  lines.push('');
  const sections: Array<[string, string[]]> = [
    ['Throws that escaped `validate`', f.escapedThrows],
    ['Uncoded refusals', f.uncoded],
    ['`internal` refusals', f.internal],
    ['Accepted documents the independent checker says break a rule', f.disagreements],
    ['CLI and API disagreements', f.cliDisagreements],
    ['Accepted but not loaded', f.loadFailures],
    ['Accepted but not applied', f.applyFailures],
  ];
  for (const [title, items] of sections) {
    if (items.length === 0) continue;
    lines.push(`${title} (${items.length}):`);
    list(items);
    lines.push('');
  }
}
if (p) {
  lines.push('## Path escapes');
  lines.push('');
  lines.push(
    `${p.cases} workflows with a \`..\` file path (${quick ? 'each path as a plain file' : 'each path as a plain file and as the entrypoint'}) through \`workflow load\`, \`workflow unpack\`${quick ? '' : ' and `services probe`'}, and ${p.lookalikes} with a name that only looks like one through load and unpack; a workflow folder with a symlinked service file through \`workflow pack\`; a probe in a workspace that is a symlink and holds a symlink to the sentinel (${p.probeThroughSymlinkedWorkspace}). A sentinel tree beside them was hashed before and after.`,
  );
  lines.push('');
  if (p.accepted.length > 0) {
    lines.push('Not refused by all three:');
    list(p.accepted, 40);
    lines.push('');
  }
  if (p.lookalikesRefused.length > 0) {
    lines.push('Look-alike names refused:');
    list(p.lookalikesRefused);
    lines.push('');
  }
  if (p.uncoded.length > 0) {
    lines.push('Refused without a code:');
    list(p.uncoded);
    lines.push('');
  }
  if (p.writesOutside.length > 0) {
    lines.push('Writes outside:');
    list(p.writesOutside);
    lines.push('');
  }
}
if (s) {
  lines.push('## Secrets');
  lines.push('');
  lines.push(
    `A host environment with ${s.secrets} secret-looking variables (\`AWS_SECRET_ACCESS_KEY\`, \`GITHUB_TOKEN\`, … \`SOAK_SECRET_n_TOKEN\`); one service maps one other variable as \`API_KEY\` and dumps its own environment and \`/proc/<parent>/environ\`.`,
  );
  lines.push('');
  lines.push(
    '| sandbox | probe exit | secrets in its own environment | mapped one seen | parent environ | secrets visible there |',
  );
  lines.push('| --- | --- | --- | --- | --- | --- |');
  for (const r of s.runs.filter((x) => !x.probeError))
    lines.push(
      `| ${r.sandbox} | ${r.exit} | ${r.ownVisible.length} | ${r.mappedSeen} | ${r.parentEnviron} | ${r.parentSecretsVisible} |`,
    );
  lines.push('');
  lines.push(
    'An unsandboxed service runs as the same user as its host, so it can read the host\'s `/proc/<pid>/environ`: the "parent environ" columns show what it finds there. That is the limit of unsandboxed services, not a miss of the goal above (which is about the environment the SDK gives the service). A sandboxed row appears once the sandbox is in the build.',
  );
  lines.push('');
}
lines.push('## Failures found while the suite was built');
lines.push('');
lines.push('- Before the security fixes were merged (branch `secinput`), the fuzzer (quick run, `--seed 1`) found 2');
lines.push('  accepted documents with an agent named `__proto__`, which breaks the name rule and validation did not');
lines.push(
  '  report (the prototype-keys hole of the security work). Fixed there (keys from input without a prototype); the',
);
lines.push('  same seed now finds 0 of 363 accepted documents breaking a rule.');
lines.push('');
lines.push('## Not measured yet');
lines.push('');
lines.push(
  'These parts of the suite are not built yet, so they have no figures: host SIGKILLs during `run` (and every `resume` completing), accepted fuzzed documents through `services probe`, the control-group collection (so `setsid env -i` grandchildren still survive collection, see above) with its bounded fork bomb, and the scale rows (64 concurrent invocations × 2 services, 32 services in one invocation). Host SIGKILLs land wherever the host is when its delay runs out: on a loaded machine most land before the report, i.e. while the host loads, spawns and registers.',
);
lines.push('');
writeFileSync(values.out, lines.join('\n'));
log(`wrote ${values.out}`);
const missed = goals.filter((g) => !g.met);
for (const g of missed) log(`missed${g.known ? ' (known)' : ''}: ${g.goal}: ${g.figure}`);
process.exitCode = missed.some((g) => !g.known) ? 1 : 0;
