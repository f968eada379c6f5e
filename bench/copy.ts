/**
 * Benchmark 3: the per-invocation copy of a 100 files × 500 KB source — `copySource` (the SDK's copy,
 * in process) vs. `cp -r` of the same tree, spawned as a process and awaited (so `cp`'s spawn cost is in
 * its figure, as it would be for a runtime that shelled out to it). Each target is removed, untimed,
 * after its sample.
 */
import { join } from 'node:path';
import { copySource } from '../packages/sdk/dist/invocation/copySource.js';
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
import { runQuiet } from './lib/processes.js';
import { TREE_FILES, TREE_FILE_BYTES, treeFiles, writeTree } from './lib/tree.js';

const GOAL = 1.2;

export async function copyBench(ctx: BenchContext): Promise<ResultRow> {
  const root = await scratchDir(ctx, 'copy');
  const source = join(root, 'source');
  await writeTree(source, treeFiles());
  let n = 0;
  const pairs = ctx.quick ? 5 : 10;
  try {
    const result = await runPairs(ctx, 'copy', {
      warmup: 2,
      pairs,
      a: async () => {
        const target = join(root, `ours-${n++}`);
        const start = now();
        await copySource(source, target);
        const elapsed = now() - start;
        await removeDir(target);
        return elapsed;
      },
      b: async () => {
        const target = join(root, `cp-${n++}`);
        const start = now();
        const code = await runQuiet('cp', ['-r', source, target]);
        const elapsed = now() - start;
        if (code !== 0) throw new Error(`cp -r exited with ${code}`);
        await removeDir(target);
        return elapsed;
      },
    });
    // What a spawn alone costs here, to read the cp figure with.
    const spawnOnly: number[] = [];
    for (let i = 0; i < 5; i++) {
      const start = now();
      await runQuiet('true', []);
      spawnOnly.push(now() - start);
    }
    const r = median(result.ratios);
    return {
      id: '3',
      measure: `per-invocation copy, ${TREE_FILES} files × ${TREE_FILE_BYTES / 1000} KB`,
      baseline: '`cp -r` of the same tree (spawned)',
      ours: ms(median(result.a)),
      theirs: ms(median(result.b)),
      figure: ratio(r),
      goal: `≤ ${GOAL.toFixed(2)}×`,
      verdict: r <= GOAL ? 'met' : 'missed',
      notes: `median of ${pairs} A/B pairs after 2 warm-up pairs; cp -r is timed as a spawned process (spawn + exit; a bare spawn of \`true\` costs ${ms(median(spawnOnly))} here); ext4, no reflink, page cache warm`,
      data: { oursMs: result.a, cpMs: result.b, ratios: result.ratios, medianRatio: r, spawnTrueMs: spawnOnly },
    };
  } finally {
    await removeDir(root);
  }
}
