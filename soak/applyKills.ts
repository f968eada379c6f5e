/**
 * `applyWorkflow` killed at random points: a child applies in a loop to one project and is SIGKILLed at a
 * random moment (half while it starts, half 0–400 ms after it has accepted a version, i.e. inside a later
 * apply). After each kill the accepted version is read back and every definition it names is compared
 * file by file with its stored source; `scienceevolve workflow verify` checks the whole project every
 * fifth kill and at the end. Goal: 0 mixed or partial versions, every named source present in full.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { definitionDigest, openProject, readAccepted } from '../packages/sdk/dist/internal.js';
import { ROOT, type Rng, pool, runCli } from './common.js';

/** What the apply-kill part found. */
export interface ApplyKillReport {
  kills: number;
  versionsAccepted: number;
  verifyRuns: number;
  problems: string[];
}

/** `count` kills over two projects (one child per project at a time). */
export async function applyKills(rng: Rng, count: number): Promise<ApplyKillReport> {
  const dir = mkdtempSync(join(tmpdir(), 'se-soak-apply-'));
  const dataDir = join(dir, 'data');
  const report: ApplyKillReport = { kills: 0, versionsAccepted: 0, verifyRuns: 0, problems: [] };
  const plans = Array.from({ length: count }, (_, i) => ({
    project: `soak-apply-${i % 2}`,
    waitForVersion: rng.int(2) === 0,
    delay: rng.int(400),
    i,
  }));
  const byProject = [0, 1].map((p) => plans.filter((x) => x.project === `soak-apply-${p}`));
  const verify = async (project: string, when: string) => {
    report.verifyRuns++;
    const v = await runCli(['workflow', 'verify', '--data-dir', dataDir, '--project', project, '--json']);
    let ok = false;
    try {
      ok = (JSON.parse(v.stdout) as { ok?: boolean }).ok === true;
    } catch {
      // not JSON: reported below
    }
    if (!ok) report.problems.push(`${project} ${when}: workflow verify exit ${v.code}: ${v.stdout.slice(0, 400)}`);
  };
  try {
    await pool(byProject, 2, async (tries) => {
      for (const t of tries) {
        const child = spawn(
          process.execPath,
          [join(ROOT, 'soak/applyChild.mjs'), dataDir, t.project, String(t.i * 100_000)],
          { stdio: ['ignore', 'pipe', 'pipe'] },
        );
        let out = '';
        let err = '';
        child.stderr.setEncoding('utf8').on('data', (c: string) => {
          err += c;
        });
        const closed = new Promise((r) => child.once('close', r));
        const firstVersion = new Promise<void>((resolve) =>
          child.stdout.setEncoding('utf8').on('data', (c: string) => {
            out += c;
            resolve();
          }),
        );
        if (t.waitForVersion) await Promise.race([firstVersion, closed]);
        else await new Promise((r) => setTimeout(r, 500 + t.delay * 5));
        await new Promise((r) => setTimeout(r, t.delay));
        child.kill('SIGKILL');
        await closed;
        report.kills++;
        report.versionsAccepted += out.split('\n').filter(Boolean).length;
        if (err.trim() !== '')
          report.problems.push(`${t.project} try ${t.i}: the child wrote on stderr: ${err.slice(0, 300)}`);
        try {
          const paths = await openProject(dataDir, t.project);
          const accepted = await readAccepted(paths);
          const defs = (accepted?.workflow.mcpDefinitions ?? {}) as Record<string, { files: Record<string, string> }>;
          for (const [name, def] of Object.entries(defs)) {
            const digest = definitionDigest(def as never);
            const src = paths.sourceDir(digest, name);
            for (const [rel, content] of Object.entries(def.files)) {
              const file = join(src, ...rel.split('/'));
              if (!existsSync(file))
                report.problems.push(`${t.project} try ${t.i}: v${accepted?.version} ${name}: ${rel} missing`);
              else if (readFileSync(file, 'utf8') !== content)
                report.problems.push(`${t.project} try ${t.i}: v${accepted?.version} ${name}: ${rel} differs`);
            }
          }
        } catch (error) {
          const e = error as { code?: string; message?: string };
          report.problems.push(
            `${t.project} try ${t.i}: reading back: ${e.code ?? 'uncoded'}: ${e.message?.slice(0, 300)}`,
          );
        }
        if (t.i % 5 === 4) await verify(t.project, `after try ${t.i}`);
      }
      if (tries[0]) await verify(tries[0].project, 'at the end');
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return report;
}
