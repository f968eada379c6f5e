/** The safe-path rules for the keys of a definition's `files` (SPEC §3.1). */
import { LIMITS } from './limits.js';

/**
 * Why `path` is not a safe relative POSIX path, as a sentence that names the fix; `undefined` when it is
 * safe. Safe: not empty, not absolute, no backslash, no NUL, no empty, `.` or `..` segment, at most
 * {@link LIMITS.pathChars} characters and {@link LIMITS.pathSegmentBytes} bytes a segment.
 */
export function unsafePathReason(path: string): string | undefined {
  if (path.length === 0) return 'a file path may not be empty';
  if (path.includes('\0')) return 'a file path may not contain a NUL character';
  if (path.includes('\\')) return 'use "/" to separate directories: a file path may not contain a backslash';
  if (path.startsWith('/')) return 'a file path must be relative to the service directory: remove the leading "/"';
  if (path.length > LIMITS.pathChars) return `a file path may be at most ${LIMITS.pathChars} characters`;
  for (const segment of path.split('/')) {
    if (segment === '') return 'a file path may not have an empty segment ("//" or a trailing "/")';
    if (segment === '.') return 'a file path may not have a "." segment: write the path without it';
    if (segment === '..') return 'a file path may not leave the service directory: remove the ".." segment';
    if (Buffer.byteLength(segment) > LIMITS.pathSegmentBytes) {
      return `each part of a file path may be at most ${LIMITS.pathSegmentBytes} bytes`;
    }
  }
  return undefined;
}

/**
 * The paths that are both a file and a directory (`a` and `a/b`), each paired with one path below it.
 */
export function fileDirectoryConflicts(paths: readonly string[]): Array<{ file: string; below: string }> {
  const files = new Set(paths);
  const conflicts: Array<{ file: string; below: string }> = [];
  const seen = new Set<string>();
  for (const path of paths) {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const prefix = parts.slice(0, i).join('/');
      if (files.has(prefix) && !seen.has(prefix)) {
        seen.add(prefix);
        conflicts.push({ file: prefix, below: path });
      }
    }
  }
  return conflicts;
}
