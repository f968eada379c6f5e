/**
 * A log of framed lines, appended and synced one at a time: each line is `<crc32, 8 hex digits>\t<payload>\n`
 * (the CRC-32 of the payload's UTF-8 bytes; the payload holds no newline). A line is durable once
 * {@link appendLine} resolved: the log is opened `O_DSYNC`, so each `write` returns once its data and the
 * file's new size are on disk, as `write` then `fdatasync` would (one system call and one trip through
 * libuv's pool instead of two); where `O_DSYNC` does not exist, `fdatasync` follows each write. Only the
 * directory entry of a new log needs a directory sync, done once when the log is created ({@link createLog}).
 *
 * Reading back ({@link splitLog}): a bad last line — cut short, or whose checksum fails — is a *torn tail*,
 * a write that was never reported durable (a power cut in the middle of it), and is left out; a bad line
 * followed by more lines cannot come from a cut write (a newline ends only a whole line, and only one
 * write is in flight at a time) and makes the log damaged.
 */
import { close, constants, fdatasync, write } from 'node:fs';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';
import { SdkError } from '../errors.js';
import { closeQuietly, makePrivateDir, openFreshSync, openNewSync } from '../fileModes.js';
import { syncDirectory } from './atomicFile.js';

const writeAsync = promisify(write);
/** `O_DSYNC` where the platform has it (Linux, macOS): each write synced as `fdatasync` would. */
const DSYNC = (constants as { O_DSYNC?: number }).O_DSYNC;
const fdatasyncAsync = promisify(fdatasync);
const closeAsync = promisify(close);

/** CRC-32 (IEEE, zlib's) of `bytes`: `node:zlib`'s where it has one (Node 20.15+, 22.2+), else {@link crc32Js}. */
export const crc32: (bytes: Uint8Array) => number =
  typeof (zlib as { crc32?: unknown }).crc32 === 'function'
    ? (bytes) => (zlib as unknown as { crc32(data: Uint8Array): number }).crc32(bytes)
    : crc32Js;

let table: Uint32Array | undefined;

/** CRC-32 (IEEE) in JavaScript, for Node versions whose `node:zlib` has none. @internal */
export function crc32Js(bytes: Uint8Array): number {
  if (table === undefined) {
    table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) crc = (table[(crc ^ (bytes[i] as number)) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

const TAB = 0x09;
const NEWLINE = 0x0a;
/** The checksum's 8 hex digits and the tab after them. */
const FRAME = 9;

/** One framed line for `payload` (which must not hold a newline), ready to append. */
export function frameLine(payload: string): Buffer {
  const length = Buffer.byteLength(payload, 'utf8');
  const line = Buffer.allocUnsafe(FRAME + length + 1);
  line.write(payload, FRAME, 'utf8');
  const crc = crc32(line.subarray(FRAME, FRAME + length));
  line.write(crc.toString(16).padStart(8, '0'), 0, 'latin1');
  line[8] = TAB;
  line[FRAME + length] = NEWLINE;
  return line;
}

/** What a log's bytes hold: its good lines' payloads, whether a torn tail was left out, or where it is damaged. */
export type SplitLog =
  | { lines: string[]; torn: boolean; damaged?: undefined }
  /** Line `line` (0-based) is bad and more follow it. */
  | { damaged: { line: number; offset: number; problem: string }; lines?: undefined; torn?: undefined };

/** Splits a log's bytes into its lines' payloads, each checked ({@link SplitLog}). */
export function splitLog(bytes: Uint8Array): SplitLog {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const lines: string[] = [];
  let offset = 0;
  while (offset < buffer.length) {
    const end = buffer.indexOf(NEWLINE, offset);
    // Cut short: the last write never finished.
    if (end === -1) return { lines, torn: true };
    const problem = lineProblem(buffer, offset, end);
    if (problem !== undefined) {
      if (end + 1 >= buffer.length) return { lines, torn: true };
      return { damaged: { line: lines.length, offset, problem } };
    }
    lines.push(buffer.toString('utf8', offset + FRAME, end));
    offset = end + 1;
  }
  return { lines, torn: false };
}

/** Why the line `buffer[start, end)` is not a good framed line, or undefined. */
function lineProblem(buffer: Buffer, start: number, end: number): string | undefined {
  if (end - start < FRAME || buffer[start + 8] !== TAB) return 'it is not a checksummed line';
  const digits = buffer.toString('latin1', start, start + 8);
  if (!/^[0-9a-f]{8}$/.test(digits)) return 'it is not a checksummed line';
  if (Number.parseInt(digits, 16) !== crc32(buffer.subarray(start + FRAME, end))) return 'its checksum does not match';
  return undefined;
}

/**
 * Creates the log at `path` afresh (whatever was there is removed, never followed: `openFreshSync`) holding
 * `bytes`, synced, and its directory synced so the new entry survives a power cut. Returns its descriptor,
 * open for {@link appendLine}. Throws `io_error`.
 */
export async function createLog(path: string, bytes: Uint8Array): Promise<number> {
  let fd: number | undefined;
  try {
    await makePrivateDir(dirname(path));
    fd = openFreshSync(path, DSYNC ?? 0);
    await writeAll(fd, bytes);
    if (DSYNC === undefined) await fdatasyncAsync(fd);
  } catch (error) {
    if (fd !== undefined) closeQuietly(fd);
    throw ioError(path, error);
  }
  await syncDirectory(dirname(path));
  return fd;
}

/**
 * Creates the log at `path` empty, open for {@link appendLine}, when nothing is at the path; undefined
 * otherwise (nothing is removed). Its directory entry is not synced: the caller syncs the directory next
 * (a rename in the same directory), and until then an empty log holds nothing.
 */
export async function createEmptyLog(path: string): Promise<number | undefined> {
  try {
    await makePrivateDir(dirname(path));
  } catch {
    return undefined;
  }
  return openNewSync(path, DSYNC ?? 0);
}

/** Appends `bytes` to the log open as `fd` (at its end: it is the log's only writer) and syncs it. Throws `io_error`. */
export async function appendLine(path: string, fd: number, bytes: Uint8Array): Promise<void> {
  try {
    // The data and the file's new size: what a reader after a power cut needs (fdatasync(2)); `O_DSYNC`
    // makes the write itself wait for them.
    await writeAll(fd, bytes);
    if (DSYNC === undefined) await fdatasyncAsync(fd);
  } catch (error) {
    throw ioError(path, error);
  }
}

/** Closes a log's descriptor (errors ignored: it holds nothing unsynced). */
export async function closeLog(fd: number): Promise<void> {
  await closeAsync(fd).catch(() => {});
}

/** Writes all of `bytes` at the descriptor's position (a write may take fewer bytes than given). */
async function writeAll(fd: number, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.byteLength) {
    offset += (await writeAsync(fd, bytes, offset, bytes.byteLength - offset, null)).bytesWritten;
  }
}

function ioError(path: string, error: unknown): SdkError {
  if (error instanceof SdkError) return error;
  return new SdkError('io_error', `could not write ${path}: ${(error as Error).message}`, {
    remedy: 'check that the data dir is writable and has free space',
    data: { path },
    cause: error,
  });
}
