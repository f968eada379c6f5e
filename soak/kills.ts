/**
 * Host SIGKILLs at random moments of `services probe --hold`: the host is killed at a random moment, a
 * third within the first 1.5 s (where spawn-before-register lies), a third 1.5–7.5 s after the start
 * (wherever the host then is), a third 0–2 s after its report (services up and held), then the marked
 * processes of its project are counted once the supervisor had time to collect (grace 300 ms; polled 15 s).
 * Goal: 0 left.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BIN,
  type Rng,
  fixtureDefinition,
  killAll,
  markedPids,
  pool,
  survivorsAfter,
  tallyCollection,
} from './common.js';

/** What the kill part found. */
export interface KillReport {
  tries: number;
  killedBeforeReport: number;
  killedAfterReport: number;
  leftovers: number;
  triesWithLeftovers: string[];
  /** The collection mechanism each report (printed before the kill) named: name → reports. */
  collection: Map<string, number>;
}

/** `count` held probes, each SIGKILLed at a random moment; `concurrency` at once. */
export async function hostKills(rng: Rng, count: number, concurrency: number, runTag: string): Promise<KillReport> {
  const delays = Array.from({ length: count }, () => {
    const third = rng.int(3);
    return {
      afterReport: third === 2,
      ms: third === 0 ? rng.int(1500) : third === 1 ? 1500 + rng.int(6000) : rng.int(2000),
    };
  });
  const report: KillReport = {
    tries: count,
    killedBeforeReport: 0,
    killedAfterReport: 0,
    leftovers: 0,
    triesWithLeftovers: [],
    collection: new Map(),
  };
  await pool(delays, concurrency, async (delay, i) => {
    const dir = mkdtempSync(join(tmpdir(), 'se-soak-kill-'));
    const project = `soak-${runTag}-k${i}`;
    try {
      const wf = join(dir, 'wf.json');
      writeFileSync(
        wf,
        JSON.stringify({
          agents: {
            main: {
              mcpServers: [
                { name: 'spawner', project: 'spawner' },
                { name: 'stubborn', project: 'stubborn' },
              ],
            },
          },
          mcpDefinitions: {
            spawner: fixtureDefinition('spawnsGrandchildren.cjs', { args: [join(dir, 'pids.json')] }),
            stubborn: fixtureDefinition('ignoresSigterm.cjs'),
          },
        }),
      );
      const child = spawn(
        process.execPath,
        [BIN, 'services', 'probe', '--data-dir', join(dir, 'data'), '--project', project, '--workflow', wf].concat([
          '--workspace',
          join(dir, 'ws'),
          '--agent',
          'main',
          '--grace-ms',
          '300',
          '--hold',
          '60',
          '--json',
        ]),
        { stdio: ['ignore', 'pipe', 'ignore'] },
      );
      let reported = false;
      let stdout = '';
      let onReport = () => {};
      const reportSeen = new Promise<void>((r) => {
        onReport = r;
      });
      child.stdout.setEncoding('utf8').on('data', (c: string) => {
        reported = true;
        stdout += c;
        onReport();
      });
      const closed = new Promise((r) => child.once('close', r));
      if (delay.afterReport) await Promise.race([reportSeen, closed]);
      await new Promise((r) => setTimeout(r, delay.ms));
      child.kill('SIGKILL');
      await closed;
      if (reported) {
        report.killedAfterReport++;
        tallyCollection(report.collection, stdout);
      } else report.killedBeforeReport++;
      const left = await survivorsAfter(() => markedPids(project), 15_000);
      if (left.length > 0) {
        report.leftovers += left.length;
        report.triesWithLeftovers.push(
          `killed ${delay.ms} ms after ${delay.afterReport ? 'the report' : 'the start'} (${reported ? 'after' : 'before'} the report): ${left.length} left`,
        );
        killAll(left);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  return report;
}
