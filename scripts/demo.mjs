#!/usr/bin/env node
// The offline demo (`npm run demo`): a scripted run of examples/workflows/demo in a temporary data dir.
// Main writes data with a workspace service, delegates a summary to the analyst (its own `stats` service),
// proposes a new `charts` service for the reporter with apply_workflow, and delegates the chart to the
// reporter, which uses it. The demo checks its own result and exits non-zero on any mismatch.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeHostSupervisor, startRun } from '@scienceevolve/sdk';
import { scanMarkedProcesses } from '@scienceevolve/supervisor';

const root = new URL('..', import.meta.url).pathname;
const example = join(root, 'examples', 'workflows', 'demo');
// The data dir is kept so the paths printed at the end can be read; `--clean` removes it.
const clean = process.argv.includes('--clean');
const base = mkdtempSync(join(tmpdir(), 'scienceevolve-demo-'));
const dataDir = join(base, 'data');
const workspace = join(base, 'workspace');
mkdirSync(workspace);
const started = Date.now();
const problems = [];
const check = (ok, what) => {
  if (!ok) problems.push(what);
};

function line(e) {
  const who = `[${e.agent ?? 'run'}]`.padEnd(11);
  switch (e.type) {
    case 'run.started':
      return `run ${e.run} (workflow version ${e.version})`;
    case 'invocation.started':
      return `${who} task started; services: ${e.services.join(', ') || '(none)'}`;
    case 'service.ready':
      return `${who} service ${e.service} ready (${e.tools} tools, ${e.startMs} ms)`;
    case 'tool.calling':
      return `${who} → ${e.tool}`;
    case 'workflow.reconfigured':
      return `${who} new workflow version ${e.version}: services +${e.changedMcps.join(', +')} for ${e.changedAgents.join(', ')}`;
    case 'invocation.finished':
      return `${who} ${e.status}`;
    default:
      return undefined;
  }
}

let project;
let result;
try {
  const handle = startRun({
    dataDir,
    workspace,
    // The workflow folder itself (workflow.yaml, services/<name>/): the run packs it.
    workflow: example,
    script: join(example, 'script.json'),
    requirement: 'Record the measurements 3, 5, 8, 13, summarize them and chart them.',
    graceMs: 1000,
  });
  for await (const event of handle.events()) {
    const text = line(event);
    if (text !== undefined) process.stderr.write(`${text}\n`);
  }
  result = await handle.result;
  project = result.project;
} finally {
  await closeHostSupervisor();
}

const expected = [
  'Measurements: 3 5 8 13',
  'Summary (analyst): n=4 mean=7.25 min=3 max=13',
  'Chart (reporter, with the charts service Main added):',
  '#1 ███ 3',
  '#2 █████ 5',
  '#3 ████████ 8',
  '#4 █████████████ 13',
].join('\n');
check(result.status === 'succeeded', `the run ${result.status}, expected succeeded`);
check(result.output === expected, `the answer differs:\n${result.output}\n--- expected ---\n${expected}`);
const types = new Set(result.events.map((e) => e.type));
for (const t of [
  'run.started',
  'invocation.started',
  'service.ready',
  'service.exited',
  'tool.called',
  'workflow.reconfigured',
  'invocation.finished',
  'run.finished',
]) {
  check(types.has(t), `no ${t} event`);
}
const reporterCall = result.events.find((e) => e.type === 'tool.called' && e.agent === 'reporter');
check(
  reporterCall?.tool === 'charts__bar_chart' && reporterCall.ok === true,
  'the reporter did not use the new charts service',
);
check(
  readFileSync(join(workspace, 'data', 'measurements.txt'), 'utf8') === '3 5 8 13\n',
  'the workspace file is missing',
);
const reconfigured = result.events.filter((e) => e.type === 'workflow.reconfigured');
check(reconfigured.at(-1)?.version === 2, 'the accepted version is not 2 after apply_workflow');
const left = scanMarkedProcesses((m) => m.split(':')[1] === project);
check(left.length === 0, `processes left running: ${left.map((p) => p.pid).join(', ')}`);
const seconds = ((Date.now() - started) / 1000).toFixed(1);
check(Date.now() - started < 30_000, `the demo took ${seconds} s (goal: under 30 s)`);

process.stdout.write(`\nFinal answer of Main:\n${result.output}\n\n`);
process.stdout.write(`events: ${result.eventsPath}\n`);
process.stdout.write(`logs:   ${join(result.runDir, 'invocations')}/<invocation>/mcp/<service>.stderr.log\n`);
process.stdout.write(`state:  ${join(result.runDir, 'run.json')}\n`);
if (problems.length > 0) {
  process.stderr.write(`\ndemo FAILED:\n- ${problems.join('\n- ')}\n(data kept in ${base})\n`);
  process.exit(1);
}
process.stdout.write(`\ndemo OK in ${seconds} s; nothing left running.\n`);
if (clean) rmSync(base, { recursive: true, force: true });
else process.stdout.write(`(the data dir ${base} is kept for a look; remove it when done)\n`);
