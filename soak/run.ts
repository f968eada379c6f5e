/**
 * `npm run soak [-- --quick] [--seed N] [--parts hostile,kills,runs,apply,fuzz,paths,secrets] [--counts k=n,…]
 * [--probe distinct|all] [--lanes N | --serial] [--out FILE]`: the soak, fuzz and chaos suite. Runs each
 * part (in N lanes at once, default 3; `--serial`: one), then writes what it measured to
 * docs/reliability.md (or `--out`).
 * Exit 1 when a goal was missed.
 */
import { execSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type ApplyKillReport, applyKills } from './applyKills.js';
import { ROOT, Rng, pool } from './common.js';
import { pathEscapes, secrets } from './escapes.js';
import { fuzz } from './fuzz.js';
import { hostile } from './hostile.js';
import { type KillReport, hostKills } from './kills.js';
import { RUN_PROGRESS_LINES, type RunKillReport, runKills } from './runKills.js';

const ALL_PARTS = ['hostile', 'kills', 'runs', 'apply', 'fuzz', 'paths', 'secrets'];
const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    seed: { type: 'string' },
    parts: { type: 'string', default: ALL_PARTS.join(',') },
    out: { type: 'string', default: join(ROOT, 'docs/reliability.md') },
    counts: { type: 'string' },
    probe: { type: 'string', default: 'distinct' },
    serial: { type: 'boolean', default: false },
    lanes: { type: 'string', default: '3' },
  },
});
const quick = values.quick === true;
const seed = values.seed !== undefined ? Number(values.seed) : Date.now() % 2 ** 31;
const parts = new Set(values.parts.split(','));
for (const part of parts)
  if (!ALL_PARTS.includes(part)) {
    process.stderr.write(`soak: --parts takes a comma-separated list of ${ALL_PARTS.join(', ')}; got "${part}"\n`);
    process.exit(2);
  }
if (values.probe !== 'distinct' && values.probe !== 'all') {
  process.stderr.write(`soak: --probe takes distinct or all; got "${values.probe}"\n`);
  process.exit(2);
}
const probeMode: 'distinct' | 'all' = values.probe;
const lanes = values.serial ? 1 : Number(values.lanes);
if (!Number.isSafeInteger(lanes) || lanes < 1 || lanes > 7) {
  process.stderr.write(`soak: --lanes takes a whole number from 1 to 7; got "${values.lanes}"\n`);
  process.exit(2);
}
const runTag = `${process.pid}`;
// kills: host SIGKILLs of `services probe --hold`; runKills: of `run` (the issue's 200 = 100 + 100).
const SIZES = quick
  ? {
      hostile: 50,
      concurrency: 4,
      budgetMs: 5000,
      kills: 5,
      runKills: 5,
      apply: 25,
      fuzz: 1000,
      cliEvery: 100,
      probeConcurrency: 2,
      secrets: 50,
    }
  : {
      hostile: 1000,
      concurrency: 6,
      budgetMs: 8000,
      kills: 100,
      runKills: 100,
      apply: 500,
      fuzz: 10_000,
      cliEvery: 100,
      probeConcurrency: 2,
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
/** Seconds since the start at which each part started. */
const startedAt: Record<string, number> = {};
async function timed<T>(name: string, f: () => Promise<T>): Promise<T> {
  log(`${name}…`);
  const t0 = performance.now();
  startedAt[name] = (Date.now() - started.getTime()) / 1000;
  const out = await f();
  timings[name] = (performance.now() - t0) / 1000;
  log(`${name} done in ${timings[name].toFixed(0)} s`);
  return out;
}

// Each part draws from its own generator (seeded from the run's seed and the part), so the lanes'
// interleaving does not change what each part does: a run is replayed by its seed, serial or not.
const partRng = (part: string) => new Rng(seed ^ [...part].reduce((a, c) => Math.imul(a, 31) + c.charCodeAt(0), 7));
let h: Awaited<ReturnType<typeof hostile>> | undefined;
let k: KillReport | undefined;
let rk: RunKillReport | undefined;
let a: ApplyKillReport | undefined;
let f: Awaited<ReturnType<typeof fuzz>> | undefined;
let p: Awaited<ReturnType<typeof pathEscapes>> | undefined;
let s: Awaited<ReturnType<typeof secrets>> | undefined;
const steps: Record<string, () => Promise<void>> = {
  hostile: async () => {
    h = await hostile(partRng('hostile'), SIZES.hostile, SIZES.concurrency, SIZES.budgetMs, runTag);
  },
  kills: async () => {
    k = await hostKills(partRng('kills'), SIZES.kills, 2, runTag);
  },
  runs: async () => {
    rk = await runKills(partRng('runs'), SIZES.runKills, 2, runTag);
  },
  apply: async () => {
    a = await applyKills(partRng('apply'), SIZES.apply);
  },
  fuzz: async () => {
    f = await fuzz(partRng('fuzz'), SIZES.fuzz, SIZES.cliEvery, {
      mode: probeMode,
      concurrency: SIZES.probeConcurrency,
      runTag,
      budgetMs: SIZES.budgetMs,
    });
  },
  paths: async () => {
    p = await pathEscapes(runTag, quick);
  },
  secrets: async () => {
    s = await secrets(runTag, SIZES.secrets);
  },
};
// Parts run in `--lanes` lanes (default 3; `--serial` is 1): each lane takes the next part, longest
// first. Most parts spend their time waiting (hung services' budgets, kill delays, polls for survivors),
// so lanes share the 2 cores without changing what any part does; the page reports the load meanwhile.
const ORDER = ['hostile', 'apply', 'runs', 'fuzz', 'kills', 'paths', 'secrets'];
const loadSamples: number[] = [];
const sampler = setInterval(() => loadSamples.push(loadavg()[0] as number), 10_000);
await pool(
  ORDER.filter((part) => parts.has(part)),
  lanes,
  (part) => timed(part, steps[part] as () => Promise<void>),
);
clearInterval(sampler);
const loadAfter = loadavg();

/** `known`: a missed goal whose cause is a documented limit not fixed yet; it does not fail the exit code. */
const goals: Array<{ goal: string; met: boolean; figure: string; known?: string }> = [];
/** Findings that are no goal of the contract. */
const observations: string[] = [];
/** The mechanisms the probes' reports named, e.g. `cgroup (120 reports)`, or that none named one. */
const collectionText = (tally: Map<string, number>) =>
  tally.size === 0
    ? 'no report was printed'
    : [...tally]
        .map(([name, n]) => `${name === 'not reported' ? 'no `collection` field' : `\`${name}\``} (${n} reports)`)
        .join(', ');
/** True when some probe named a control-group mechanism. */
const cgroupNamed = (tally: Map<string, number> | undefined) =>
  [...(tally?.keys() ?? [])].some((m) => /cgroup/i.test(m));
if (h) {
  goals.push({
    goal: 'hostile invocations: 0 surviving marked processes',
    met: h.markedSurvivors === 0,
    figure: `${h.markedSurvivors} over ${h.invocations} invocations`,
  });
  goals.push({
    goal: 'hostile invocations: 0 surviving `setsid env -i` grandchildren',
    // Met only when such services ran: 0 survivors of none proves nothing (as for the fork bomb below).
    met: h.envClearedSurvivors === 0 && (h.perFixture['soak:clearsEnvDoubleFork.cjs']?.services ?? 0) > 0,
    figure: `${h.envClearedSurvivors} over ${h.perFixture['soak:clearsEnvDoubleFork.cjs']?.services ?? 0} such services; collection named by probe: ${collectionText(h.collection)}`,
    // Known only where no probe said it collects by control group: process groups and markers cannot find such a process.
    ...(cgroupNamed(h.collection)
      ? {}
      : {
          known:
            'a process that leaves its group and clears its environment carries neither group nor marker, so process-group collection cannot find it (docs/services.md); no probe of this run named a control-group collection',
        }),
  });
  goals.push({
    goal: 'hostile invocations: a bounded fork bomb (1,023 processes) leaves 0 processes behind',
    met: h.bombSurvivors === 0 && h.bombInvocations > 0,
    figure: `${h.bombSurvivors} over ${h.bombInvocations} invocations with it`,
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
if (rk) {
  goals.push({
    goal: 'host SIGKILLs during `run`: 0 leftovers after the supervisor collects, and after `resume`',
    met: rk.leftovers + rk.leftoversAfterResume === 0,
    figure: `${rk.leftovers} after the kill, ${rk.leftoversAfterResume} after resume, over ${rk.tries} kills`,
  });
  goals.push({
    goal: "host SIGKILLs during `run`: every interrupted run completed by `resume` (status succeeded, the script's answer)",
    met: rk.resumeCompleted === rk.neededResume && rk.problems.length === 0,
    figure: `${rk.resumeCompleted} of ${rk.neededResume} needing resume (${rk.killedBeforeRecorded} killed before the run was recorded, ${rk.finishedBeforeKill} finished before the kill); ${rk.problems.length} problems`,
  });
}
if (k && rk)
  goals.push({
    goal: 'host SIGKILLs in all (`services probe --hold` and `run`): 0 leftovers',
    met: k.leftovers + rk.leftovers + rk.leftoversAfterResume === 0,
    figure: `${k.leftovers + rk.leftovers + rk.leftoversAfterResume} over ${k.tries + rk.tries} kills`,
  });
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
  const fp = f.probe;
  goals.push({
    goal: `fuzz: accepted documents through \`services probe\` (${fp.mode === 'all' ? 'every one' : 'one per distinct set of what it starts'}): each answers with its document, every failure coded (never \`internal\`), no stack trace`,
    met: fp.problems.length - fp.problems.filter((x) => x.includes('marked processes left')).length === 0,
    figure: `${fp.probes} probes standing for ${fp.documentsCovered} of ${f.accepted} accepted documents; ${fp.problems.length} problems`,
  });
  goals.push({
    goal: 'fuzz: 0 marked processes left after each probe',
    met: fp.survivors === 0,
    figure: `${fp.survivors} over ${fp.probes} probes`,
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
      goals.push({
        goal: `secrets (sandbox ${run.sandbox}): measured`,
        met: false,
        figure: `the probe refused the workflow (${run.probeError})`,
      });
    else {
      goals.push({
        goal: `secrets (sandbox ${run.sandbox}, service ${run.sandboxed ? 'sandboxed' : 'not sandboxed'}): 0 unmapped secrets in the service's environment`,
        met: run.ownVisible.length === 0 && run.mappedSeen,
        figure: `${run.ownVisible.length} of ${s.secrets} visible; mapped one seen: ${run.mappedSeen}; probe exit ${run.exit}`,
      });
      if (run.sandboxed)
        goals.push({
          goal: `secrets (sandbox ${run.sandbox}, sandboxed): 0 secrets readable through \`/proc\` (every \`/proc/<pid>/environ\` the service can read)`,
          met: run.procSecretsVisible === 0,
          figure: `${run.procSecretsVisible} of ${s.secrets} visible in ${run.procEnvirons}`,
        });
    }
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
lines.push(
  `Options: \`--quick\`; \`--seed N\`; \`--parts ${ALL_PARTS.join(',')}\` (any of them); \`--counts name=n,…\` (${Object.keys(SIZES).join(', ')}; the page then says "partial"); \`--probe distinct|all\` (which accepted fuzzed documents go through \`services probe\`, default distinct); \`--lanes N\` (parts at once, default 3) or \`--serial\`; \`--out FILE\`.`,
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
const meanLoad = loadSamples.length > 0 ? loadSamples.reduce((x, y) => x + y, 0) / loadSamples.length : Number.NaN;
lines.push(
  `- parts in ${lanes} lane${lanes === 1 ? '' : 's'} at once (each lane takes the next part, longest first); each part's start: ${Object.entries(
    startedAt,
  )
    .map(([k, v]) => `${k} +${v.toFixed(0)} s`)
    .join(', ')}`,
);
lines.push(
  `- load average (1/5/15 min) at start ${fmtLoad(loadBefore)}, at end ${fmtLoad(loadAfter)}; 1-min load sampled every 10 s: mean ${meanLoad.toFixed(1)}, max ${loadSamples.length > 0 ? Math.max(...loadSamples).toFixed(1) : 'NaN'} (${loadSamples.length} samples). The soak loads the machine itself (and it may be shared), so durations here are not benchmarks`,
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
  lines.push('| fixture | services | ready | failed | invocations with it that left marked processes |');
  lines.push('| --- | --- | --- | --- | --- |');
  for (const [k, v] of Object.entries(h.perFixture).sort())
    lines.push(`| ${k} | ${v.services} | ${v.ready} | ${v.failed} | ${v.invocationsWithSurvivors} |`);
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
if (k || rk) {
  lines.push('## Host SIGKILLs');
  lines.push('');
}
if (k) {
  lines.push(
    `${k.tries} \`services probe --hold 60\` hosts (a setsid-grandchild spawner and a SIGTERM-ignoring service), 2 at once, each SIGKILLed at a random moment: a third within the first 1.5 s (while it loads, spawns and registers), a third 1.5–7.5 s after the start (wherever it then is), a third 0–2 s after its report (services up and held); then the project's marked processes polled for 15 s. Collection named by the reports printed before the kill: ${collectionText(k.collection)}.`,
  );
  if (k.triesWithLeftovers.length > 0) {
    lines.push('');
    lines.push('Kills that left processes behind:');
    list(k.triesWithLeftovers);
  }
  lines.push('');
}
/** Orders kill moments: the start first, then by progress line. */
const momentRank = (m: string) => (m.startsWith('within') ? 0 : Number(/\d+/.exec(m)?.[0] ?? 0));
if (rk) {
  lines.push(
    `${rk.tries} \`scienceevolve run\` hosts (scripted harness; Main with a setsid-grandchild spawner, a SIGTERM-ignoring service and a slow tool calls two tools, delegates to a worker with two such services of its own, calls again and answers), 2 at once, each SIGKILLed at a random moment: a third within the first 1.5 s (loading the workflow, spawning and registering Main's services), two thirds 0–300 ms after a random one of its first ${RUN_PROGRESS_LINES} progress lines on stderr (a service ready, a tool call, the delegation, the worker's services, the end), so the kills spread over the run however loaded the machine is. Then the project's marked processes polled for 15 s, \`status\` read, and each interrupted run continued by \`resume\`, which must end it \`succeeded\` with the script's answer; marked processes polled again after resume.`,
  );
  lines.push('');
  lines.push('| killed | runs |');
  lines.push('| --- | --- |');
  lines.push(`| before \`run.json\` was written (nothing to resume) | ${rk.killedBeforeRecorded} |`);
  lines.push(`| after the run had succeeded | ${rk.finishedBeforeKill} |`);
  lines.push(`| mid-run: needed \`resume\` | ${rk.neededResume} |`);
  lines.push(`| … of which \`resume\` completed | ${rk.resumeCompleted} |`);
  lines.push('');
  lines.push('| kill moment | before `run.json` | after success | resumed to success | a problem |');
  lines.push('| --- | --- | --- | --- | --- |');
  for (const [moment, row] of [...rk.byMoment].sort((x, y) => momentRank(x[0]) - momentRank(y[0])))
    lines.push(`| ${moment} | ${row['before run.json']} | ${row.finished} | ${row.resumed} | ${row.problem} |`);
  if (rk.problems.length > 0) {
    lines.push('');
    lines.push('Problems:');
    list(rk.problems);
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
  const fp = f.probe;
  const codes = (o: Record<string, number>) =>
    Object.entries(o)
      .sort()
      .map(([c, n]) => `\`${c}\` ${n}`)
      .join(', ') || 'none';
  lines.push(
    fp.mode === 'all'
      ? `**Through \`services probe\`: every accepted document** (${fp.probes} probes, ${fp.concurrency} at once, ${fp.seconds.toFixed(0)} s; ${fp.distinct} distinct sets of what a probe starts among them).`
      : `**Through \`services probe\`: one document per distinct set of what a probe starts**, not every accepted document: ${fp.probes} probes (${fp.concurrency} at once, ${fp.seconds.toFixed(0)} s) for the ${fp.distinct} distinct sets among the ${f.accepted} accepted documents, standing for ${fp.documentsCovered} of them. Two documents share a set when the probed agent (\`main\`, else the first), each of its services in order (name, URL or definition name and the whole definition) and the whole \`orchestration\` block are the same (\`soak/probeKey.ts\`); the rest (other agents, unused definitions, instructions, harness settings) is what a probe does not start. \`--probe all\` probes every accepted document.`,
  );
  lines.push(
    `Each probe: \`scienceevolve services probe --workflow <doc> --agent <agent> --json\` (grace 300 ms, startup budget ${SIZES.budgetMs / 1000} s, the mapped host variable set), then the project's marked processes polled for 5 s. Services ready: ${fp.servicesReady}; failed, by code: ${codes(fp.servicesFailedByCode)}; probes refused as a whole, by code: ${codes(fp.refusedByCode)}. Collection named: ${collectionText(fp.collection)}.`,
  );
  lines.push('');
  const sections: Array<[string, string[]]> = [
    ['Throws that escaped `validate`', f.escapedThrows],
    ['Uncoded refusals', f.uncoded],
    ['`internal` refusals', f.internal],
    ['Accepted documents the independent checker says break a rule', f.disagreements],
    ['CLI and API disagreements', f.cliDisagreements],
    ['Accepted but not loaded', f.loadFailures],
    ['Accepted but not applied', f.applyFailures],
    ['`services probe` problems', f.probe.problems],
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
    `A host environment with ${s.secrets} secret-looking variables (\`AWS_SECRET_ACCESS_KEY\`, \`GITHUB_TOKEN\`, … \`SOAK_SECRET_n_TOKEN\`); one service maps one other variable as \`API_KEY\` and dumps its own environment, \`/proc/<parent>/environ\` and the variable names of every other \`/proc/<pid>/environ\` it can read; probed with \`orchestration.sandbox\` \`off\`, \`auto\` (the operator's own definition) and \`required\`.`,
  );
  lines.push('');
  lines.push(
    '| `orchestration.sandbox` | service sandboxed (reason) | probe exit | secrets in its own environment | mapped one seen | parent environ | secrets visible there | other processes in /proc | secrets visible in any /proc environ |',
  );
  lines.push('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const r of s.runs.filter((x) => !x.probeError))
    lines.push(
      `| ${r.sandbox} | ${r.sandboxed} (${r.sandboxReason}) | ${r.exit} | ${r.ownVisible.length} | ${r.mappedSeen} | ${r.parentEnviron} | ${r.parentSecretsVisible} | ${r.procEnvirons} | ${r.procSecretsVisible} |`,
    );
  lines.push('');
  lines.push(
    'An unsandboxed service runs as the same user as its host, so it can read the host\'s `/proc/<pid>/environ`: the "parent environ" and "/proc" columns of its rows show what it finds there. That is the documented limit of unsandboxed services (`auto` leaves an operator\'s own definition unsandboxed), not a miss of the goal about the environment the SDK gives the service. A sandboxed service sees only its own sandbox in `/proc`: its goal covers `/proc` too.',
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
if (!cgroupNamed(h?.collection)) {
  lines.push('## Not measured by this run');
  lines.push('');
  lines.push(
    'A run where `services probe` names a control-group collection: no probe of this run did (the host does not let the SDK manage control groups), so `setsid env -i` grandchildren are expected to survive, see above.',
  );
  lines.push('');
}
lines.push('## Scale');
lines.push('');
lines.push(
  'The scale figures (64 concurrent invocations × 2 services against 1 × 2, 32 services in one invocation, time and host memory per invocation, and their growth curves) are measured by `npm run bench` and published in [benchmarks.md](benchmarks.md).',
);
lines.push('');
writeFileSync(values.out, lines.join('\n'));
log(`wrote ${values.out}`);
const missed = goals.filter((g) => !g.met);
for (const g of missed) log(`missed${g.known ? ' (known)' : ''}: ${g.goal}: ${g.figure}`);
process.exitCode = missed.some((g) => !g.known) ? 1 : 0;
