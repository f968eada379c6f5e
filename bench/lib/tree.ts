/** The test material of the copy and digest benchmarks: 100 text files × 500 KB (SPEC §3.4's per-definition limits). */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const TREE_FILES = 100;
export const TREE_FILE_BYTES = 500_000;

/** `bytes` characters of random base64 text in lines of 76, ending in a newline. */
export function textOfSize(bytes: number): string {
  const raw = randomBytes(Math.ceil((bytes * 3) / 4)).toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < raw.length; i += 76) lines.push(raw.slice(i, i + 76));
  return `${lines.join('\n')}\n`.slice(0, bytes - 1).padEnd(bytes - 1, 'x') + '\n';
}

/** The files of the tree, path → content (two levels, like a real service: `src/`, `data/`). */
export function treeFiles(count = TREE_FILES, bytes = TREE_FILE_BYTES): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    const dir = i % 2 === 0 ? 'src' : 'data';
    files[`${dir}/file-${String(i).padStart(3, '0')}.txt`] = textOfSize(bytes);
  }
  return files;
}

/** Writes `files` under `root`. */
export async function writeTree(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    const target = join(root, ...path.split('/'));
    await mkdir(join(target, '..'), { recursive: true });
    await writeFile(target, content);
  }
}
