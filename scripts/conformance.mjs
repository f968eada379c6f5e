#!/usr/bin/env node
// Runs the MCP conformance server suite (@modelcontextprotocol/conformance 0.1.13: its active suite plus
// the pending json-schema-2020-12 scenario) against two targets, both in front of the conformance fixture
// (test/fixtures/conformance/everythingService.cjs):
//   gateway    `scienceevolve gateway --stdio "node everythingService.cjs"` (supergateway, supervised);
//   http-face  `scienceevolve services serve --http --passthrough` of the agent `suite`, whose only
//              service is the fixture. The suite connects by URL only, so a small loopback proxy adds the
//              face's bearer token; it forwards a loopback Host as the face's own and any other Host as
//              is, so the face's Host/Origin checks still decide the DNS-rebinding scenario.
// A third target, `client`, runs the suite's client scenarios (all of `auth/*`, initialize, tools_call,
// sse-retry, elicitation-sep1034-client-defaults) against the SDK's own remote-service client through
// scripts/conformance-client.mjs (its browser: scripts/conformance-browser.mjs); the suite starts a test
// server (and authorization server) per scenario and runs the adapter with its URL.
// A scenario fails when any of its checks is a FAILURE or a WARNING (the suite's own baseline rule). The
// script exits 1 on a failure not listed in test/conformance/baseline.json, on a baseline entry that now
// passes (stale), on a scenario without results, or on a process left behind. Offline; needs
// `npx tsc --build` first. Options: --only gateway|http-face, --verbose (print the suite's output).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';

const ROOT = new URL('..', import.meta.url).pathname;
const BIN = join(ROOT, 'packages/cli/bin/scienceevolve.js');
const CONFORMANCE = join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const FIXTURE = join(ROOT, 'test/fixtures/conformance/everythingService.cjs');
const WORKFLOW = join(ROOT, 'test/fixtures/conformance/workflow.json');
const BASELINE = join(ROOT, 'test/conformance/baseline.json');
/** The pending scenarios run besides the active suite. */
const EXTRA_SCENARIOS = ['json-schema-2020-12'];
/** The whole run's limit: 5 minutes on 2 cores. */
const DEADLINE_MS = 5 * 60_000;

const { values: options } = parseArgs({
  options: { only: { type: 'string' }, verbose: { type: 'boolean', default: false } },
});
const TARGETS = ['gateway', 'http-face', 'client'];
const CLIENT_ADAPTER = join(ROOT, 'scripts/conformance-client.mjs');
/** Client scenarios run side by side (each is a test server and one adapter process). */
const CLIENT_CONCURRENCY = 3;
if (options.only !== undefined && !TARGETS.includes(options.only)) {
  console.error(`error [usage]: --only takes ${TARGETS.join(' or ')}, not "${options.only}"`);
  process.exit(2);
}
if (!existsSync(join(ROOT, 'packages/cli/dist/main.js'))) {
  console.error('error [usage]: the CLI is not built\n  fix: run `npx tsc --build` first');
  process.exit(2);
}

const work = mkdtempSync(join(tmpdir(), 'se-conformance-'));
/** Every child this script starts, for the final cleanup. */
const children = new Set();

/** Starts `node ...args` with its output collected. */
function start(args, name) {
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c) => {
    stdout += c;
  });
  child.stderr.setEncoding('utf8').on('data', (c) => {
    stderr += c;
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return {
    child,
    name,
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
    /** The first JSON document printed on stdout. */
    async json(timeoutMs = 90_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        try {
          return JSON.parse(stdout);
        } catch {
          // not complete yet
        }
        if (child.exitCode !== null || child.signalCode !== null) {
          throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${stderr}`);
        }
        if (Date.now() > deadline) throw new Error(`${name} was not ready within ${timeoutMs} ms:\n${stderr}`);
        await sleep(25);
      }
    },
  };
}

/** SIGTERM, then the exit; SIGKILL if it does not exit within 10 s. */
async function stop(run) {
  if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGTERM');
  const timer = setTimeout(() => run.child.kill('SIGKILL'), 10_000);
  const result = await run.exited;
  clearTimeout(timer);
  return result;
}

/** A loopback proxy to the HTTP face that adds its bearer token (the suite cannot send headers). */
async function authProxy(faceUrl, token) {
  const face = new URL(faceUrl);
  let own = new Set();
  const server = createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${token}` };
    if (own.has(String(headers.host ?? '').toLowerCase())) headers.host = face.host;
    const upstream = request(
      { host: face.hostname, port: face.port, method: req.method, path: req.url, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`proxy: ${error.message}`);
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  own = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  return {
    url: `http://127.0.0.1:${port}${face.pathname}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Runs the suite (and the extra scenarios) against `url`, results into `outDir`. */
async function runSuite(target, url, outDir) {
  const runs = [
    ['server', '--url', url, '-o', outDir],
    ...EXTRA_SCENARIOS.map((scenario) => ['server', '--url', url, '--scenario', scenario, '-o', outDir]),
  ];
  let output = '';
  for (const args of runs) {
    const run = start([CONFORMANCE, ...args], `conformance (${target})`);
    await run.exited;
    output += run.stdout() + run.stderr();
  }
  writeFileSync(join(outDir, 'output.txt'), output);
  if (options.verbose) console.log(output);
}

/** scenario → { failed, checks } from the suite's result directories (`server-<scenario>-<timestamp>/checks.json`). */
function readResults(outDir) {
  const results = new Map();
  for (const entry of readdirSync(outDir)) {
    const match = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry);
    if (match === null) continue;
    const checks = JSON.parse(readFileSync(join(outDir, entry, 'checks.json'), 'utf8'));
    const bad = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
    results.set(match[1], { failed: bad.length > 0, bad });
  }
  return results;
}

/** The scenarios the suite runs: its active list plus the extras. */
async function scenarioList() {
  const run = start([CONFORMANCE, 'list', '--server'], 'conformance list');
  await run.exited;
  const listed = [...run.stdout().matchAll(/^\s+- (\S+)$/gm)].map((m) => m[1]);
  // The active suite excludes the pending scenarios; `list` shows them all.
  const pending = new Set(['json-schema-2020-12', 'server-sse-polling']);
  return [...listed.filter((s) => !pending.has(s)), ...EXTRA_SCENARIOS];
}

async function gatewayTarget(outDir) {
  const gateway = start(
    [
      BIN,
      'gateway',
      '--stdio',
      `${JSON.stringify(process.execPath)} ${JSON.stringify(FIXTURE)}`,
      '--port',
      '0',
      '--log-dir',
      join(work, 'gateway-logs'),
      '--grace-ms',
      '300',
      '--json',
    ],
    'gateway',
  );
  let failure;
  try {
    const { url } = await gateway.json();
    await runSuite('gateway', url, outDir);
  } catch (error) {
    failure = error;
  }
  const { code } = await stop(gateway);
  if (failure !== undefined) throw failure;
  if (code !== 0) throw new Error(`gateway exited ${code} on SIGTERM:\n${gateway.stderr()}`);
}

async function httpFaceTarget(outDir) {
  const workflow = JSON.parse(readFileSync(WORKFLOW, 'utf8'));
  workflow.mcpDefinitions.everything.files['server.cjs'] = readFileSync(FIXTURE, 'utf8');
  const workflowPath = join(work, 'workflow.json');
  writeFileSync(workflowPath, JSON.stringify(workflow));
  const workspace = join(work, 'workspace');
  mkdirSync(workspace, { recursive: true });
  const tokenFile = join(work, 'token');
  const serve = start(
    [
      BIN,
      'services',
      'serve',
      '--http',
      '--port',
      '0',
      '--token-file',
      tokenFile,
      '--passthrough',
      '--data-dir',
      join(work, 'data'),
      '--workflow',
      workflowPath,
      '--workspace',
      workspace,
      '--project',
      'conformance',
      '--agent',
      'suite',
      '--grace-ms',
      '300',
      '--json',
    ],
    'services serve --http',
  );
  let proxy;
  let failure;
  try {
    const { url } = await serve.json();
    proxy = await authProxy(url, readFileSync(tokenFile, 'utf8'));
    await runSuite('http-face', proxy.url, outDir);
  } catch (error) {
    failure = error;
  }
  await proxy?.close();
  const { code } = await stop(serve);
  if (failure !== undefined) throw failure;
  if (code !== 0) throw new Error(`services serve exited ${code} on SIGTERM:\n${serve.stderr()}`);
}

/** The suite's client scenarios (every one it lists). */
async function clientScenarioList() {
  const run = start([CONFORMANCE, 'list', '--client'], 'conformance list --client');
  await run.exited;
  return [...run.stdout().matchAll(/^\s+- (\S+)$/gm)].map((m) => m[1]);
}

/** Each client scenario into its own directory `<outDir>/<n>` (the suite names results by scenario and time). */
async function clientTarget(outDir) {
  const scenarios = await clientScenarioList();
  let next = 0;
  let output = '';
  const worker = async () => {
    while (next < scenarios.length) {
      const index = next++;
      const dir = join(outDir, String(index));
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'scenario'), scenarios[index]);
      const run = start(
        [
          CONFORMANCE,
          'client',
          '--command',
          `${JSON.stringify(process.execPath)} ${JSON.stringify(CLIENT_ADAPTER)}`,
          '--scenario',
          scenarios[index],
          '--timeout',
          '60000',
          '-o',
          dir,
        ],
        `conformance client ${scenarios[index]}`,
      );
      await run.exited;
      output += `== ${scenarios[index]}\n${run.stdout()}${run.stderr()}`;
    }
  };
  await Promise.all(Array.from({ length: CLIENT_CONCURRENCY }, worker));
  writeFileSync(join(outDir, 'output.txt'), output);
  if (options.verbose) console.log(output);
  return scenarios;
}

/** The checks.json files under `dir`. */
function checkFiles(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...checkFiles(path));
    else if (entry.name === 'checks.json') found.push(path);
  }
  return found;
}

/** scenario → { failed, bad } for the client target. */
function readClientResults(outDir) {
  const results = new Map();
  for (const entry of readdirSync(outDir)) {
    if (!/^\d+$/.test(entry)) continue;
    const dir = join(outDir, entry);
    const scenario = readFileSync(join(dir, 'scenario'), 'utf8');
    const files = checkFiles(dir);
    if (files.length !== 1) continue;
    const checks = JSON.parse(readFileSync(files[0], 'utf8'));
    const bad = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
    results.set(scenario, { failed: bad.length > 0 || checks.length === 0, bad });
  }
  return results;
}

/** Live processes whose command line mentions the work directory (ours, if any are left). */
function leftovers() {
  const found = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z') continue;
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(work)) found.push(pid);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

async function main() {
  const started = performance.now();
  const baseline = JSON.parse(readFileSync(BASELINE, 'utf8'));
  const targets = options.only === undefined ? TARGETS : [options.only];
  const serverScenarios = await scenarioList();
  let clientScenarios = [];
  const outDirs = Object.fromEntries(targets.map((t) => [t, join(work, `results-${t}`)]));
  for (const dir of Object.values(outDirs)) mkdirSync(dir, { recursive: true });
  const run = {
    gateway: gatewayTarget,
    'http-face': httpFaceTarget,
    client: async (dir) => {
      clientScenarios = await clientTarget(dir);
    },
  };
  // The two targets are independent and mostly wait on processes: run them side by side.
  const outcomes = await Promise.allSettled(targets.map((t) => run[t](outDirs[t])));

  let problems = 0;
  for (const [i, target] of targets.entries()) {
    const outcome = outcomes[i];
    console.log(`\n== ${target} ==`);
    if (outcome.status === 'rejected') {
      console.log(`  ✗ the target could not be run: ${outcome.reason?.message ?? outcome.reason}`);
      problems += 1;
      continue;
    }
    const allowed = baseline[target] ?? {};
    const expected = target === 'client' ? clientScenarios : serverScenarios;
    const results = target === 'client' ? readClientResults(outDirs[target]) : readResults(outDirs[target]);
    for (const scenario of expected) {
      const result = results.get(scenario);
      const reason = allowed[scenario];
      if (result === undefined) {
        console.log(`  ✗ ${scenario}: no results (see ${join(outDirs[target], 'output.txt')})`);
        problems += 1;
      } else if (!result.failed && reason === undefined) {
        console.log(`  ✓ ${scenario}`);
      } else if (result.failed && reason !== undefined) {
        console.log(`  ~ ${scenario}: expected (baseline: ${reason})`);
      } else if (!result.failed) {
        console.log(`  ✗ ${scenario}: passes but is in the baseline (stale entry: remove it)`);
        problems += 1;
      } else {
        problems += 1;
        console.log(`  ✗ ${scenario}: unexpected failure`);
        for (const check of result.bad) console.log(`      ${check.status} ${check.id}: ${check.errorMessage ?? ''}`);
      }
    }
    for (const scenario of Object.keys(allowed)) {
      if (!expected.includes(scenario)) {
        console.log(`  ✗ baseline names "${scenario}", which the suite does not run`);
        problems += 1;
      }
    }
  }

  const deadline = Date.now() + 10_000;
  let left = leftovers();
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(50);
    left = leftovers();
  }
  if (left.length > 0) {
    console.log(`\n✗ processes left behind: ${left.join(' ')}`);
    problems += 1;
  }
  console.log(
    `\n${problems === 0 ? 'conformance: ok' : `conformance: ${problems} problem(s)`} ` +
      `(${targets.join(', ')}; ${Math.round((performance.now() - started) / 1000)} s)`,
  );
  return problems === 0 ? 0 : 1;
}

const guard = setTimeout(() => {
  console.error(`error: the conformance run exceeded ${DEADLINE_MS / 1000} s`);
  for (const child of children) child.kill('SIGKILL');
  process.exit(1);
}, DEADLINE_MS);
guard.unref();

let code = 1;
try {
  code = await main();
} catch (error) {
  console.error(`error: ${error?.stack ?? error}`);
} finally {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  rmSync(work, { recursive: true, force: true });
}
process.exit(code);
