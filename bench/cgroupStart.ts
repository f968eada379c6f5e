/**
 * The start cost of collection by control group: a leader spawned directly against one spawned through the
 * `/bin/sh` prelude that joins its cgroup (create the cgroup, spawn, exit, remove), alternating, N trials
 * each. Prints p50/p95 in milliseconds; the figure is in docs/decisions/cgroup-collection.md.
 *
 * Run (as root, or in a delegated cgroup v2 subtree): node --import tsx bench/cgroupStart.ts [N]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { cgroupSupport, createServiceCgroup, joinCgroupCommand, removeCgroup } from '@scienceevolve/supervisor/cgroup';
import { processStartTime } from '@scienceevolve/supervisor/procfs';

const trials = Number(process.argv[2] ?? 40);
const support = cgroupSupport();
if (support.mechanism === 'process-group') {
  console.error(`no control groups here: ${support.detail}`);
  process.exit(1);
}
const hostStart = processStartTime(process.pid) ?? '0';

async function run(file: string, args: string[]): Promise<void> {
  const child = spawn(file, args, { stdio: 'ignore', detached: true });
  await once(child, 'exit');
}

async function direct(command: string, args: string[]): Promise<number> {
  const t0 = performance.now();
  await run(command, args);
  return performance.now() - t0;
}

async function inCgroup(command: string, args: string[], i: number): Promise<number> {
  const t0 = performance.now();
  const ref = createServiceCgroup({ hostPid: process.pid, hostStart, invocation: 'bench', service: `s-${i}` });
  if (ref === undefined) throw new Error('cgroup not created');
  const launch = joinCgroupCommand(ref, command, args);
  await run(launch.file, launch.args);
  removeCgroup(ref);
  return performance.now() - t0;
}

const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};

for (const [label, command, args] of [
  ['/bin/true', '/bin/true', []],
  ['node -e ""', process.execPath, ['-e', '']],
] as Array<[string, string, string[]]>) {
  const plain: number[] = [];
  const joined: number[] = [];
  for (let i = 0; i < trials; i++) {
    plain.push(await direct(command, args));
    joined.push(await inCgroup(command, args, i));
  }
  const fmt = (v: number) => v.toFixed(1);
  console.log(
    `${support.mechanism} ${label}: direct p50 ${fmt(pct(plain, 50))} p95 ${fmt(pct(plain, 95))} ms; ` +
      `in a cgroup p50 ${fmt(pct(joined, 50))} p95 ${fmt(pct(joined, 95))} ms; ` +
      `added p50 ${fmt(pct(joined, 50) - pct(plain, 50))} ms (${trials} trials each, load ${(await import('node:os')).loadavg()[0]?.toFixed(1)})`,
  );
}
