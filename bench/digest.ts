/**
 * Benchmark 4: the digest of a definition — `definitionDigest` (canonical JSON, then sha256, in
 * process) vs. `sha256sum` over the same canonical bytes, read from a file by a spawned `sha256sum`
 * (its spawn is in its figure). Throughput = canonical bytes / time; the figure is ours / sha256sum's.
 * Two definitions: one at the workflow's 1 MiB `mcpDefinitions` limit, and 100 files × 500 KB (the
 * per-file and file-count limits, beyond the JSON limit: a pure throughput test).
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { canonicalDefinitionJson, definitionDigest } from '../packages/sdk/dist/workflow/digest.js';
import {
  type BenchContext,
  type ResultRow,
  median,
  ms,
  now,
  ratio,
  removeDir,
  runPairs,
  scratchDir,
} from './lib/common.js';
import { TREE_FILES, textOfSize, treeFiles } from './lib/tree.js';

const GOAL = 0.8;
const run = promisify(execFile);

interface Case {
  label: string;
  files: Record<string, string>;
}

async function oneCase(ctx: BenchContext, root: string, c: Case, index: number): Promise<ResultRow> {
  const definition = {
    command: 'node',
    entrypoint: 'server.cjs',
    files: { 'server.cjs': '// a service\n', ...c.files },
  };
  const canonical = canonicalDefinitionJson(definition);
  const bytes = Buffer.byteLength(canonical);
  const path = join(root, `canonical-${index}.json`);
  await writeFile(path, canonical);
  // The two must agree, or the comparison means nothing.
  const ours = definitionDigest(definition);
  const { stdout } = await run('sha256sum', [path]);
  const theirs = stdout.split(' ')[0];
  if (ours !== theirs) throw new Error(`digest mismatch: ${ours} vs sha256sum ${theirs}`);

  const pairs = ctx.quick ? 5 : 10;
  const result = await runPairs(ctx, `digest ${c.label}`, {
    warmup: 1,
    pairs,
    a: async () => {
      const start = now();
      definitionDigest(definition);
      return now() - start;
    },
    b: async () => {
      const start = now();
      await run('sha256sum', [path]);
      return now() - start;
    },
  });
  // Throughput ratio = (bytes / ours) / (bytes / theirs) = theirs / ours, per pair.
  const throughput = result.ratios.map((r) => 1 / r);
  const figure = median(throughput);
  // Where our time goes: the canonical JSON vs. the hash.
  const splitStart = now();
  canonicalDefinitionJson(definition);
  const stringifyMs = now() - splitStart;
  const mbps = (t: number) => `${(bytes / 2 ** 20 / (t / 1000)).toFixed(0)} MiB/s`;
  return {
    id: '4',
    measure: `digest of a definition, ${c.label} (${(bytes / 2 ** 20).toFixed(1)} MiB canonical)`,
    baseline: '`sha256sum` over the same bytes (spawned, from a file)',
    ours: `${ms(median(result.a))} (${mbps(median(result.a))})`,
    theirs: `${ms(median(result.b))} (${mbps(median(result.b))})`,
    figure: ratio(figure),
    goal: `≥ ${GOAL.toFixed(2)}× throughput`,
    verdict: figure >= GOAL ? 'met' : 'missed',
    notes: `median of ${pairs} A/B pairs after 1 warm-up pair; ours includes building the canonical JSON (${ms(stringifyMs)} of it, once measured); sha256sum includes its spawn`,
    data: {
      bytes,
      oursMs: result.a,
      sha256sumMs: result.b,
      throughputRatios: throughput,
      medianThroughputRatio: figure,
      stringifyMs,
    },
  };
}

export async function digestBench(ctx: BenchContext): Promise<ResultRow[]> {
  const root = await scratchDir(ctx, 'digest');
  try {
    const atLimit: Case = {
      label: 'at the 1 MiB limit',
      files: { 'data/a.txt': textOfSize(500_000), 'data/b.txt': textOfSize(500_000) },
    };
    // --quick hashes 20 of the files (10 MB) to stay within its two minutes; the full run all 100.
    const count = ctx.quick ? 20 : TREE_FILES;
    const large: Case = { label: `${count} files × 500 KB`, files: treeFiles(count) };
    return [await oneCase(ctx, root, atLimit, 0), await oneCase(ctx, root, large, 1)];
  } finally {
    await removeDir(root);
  }
}
