/**
 * The checkpoint log (engine/checkpointLog.ts, store/appendLog.ts): `CheckpointWriter.append` writes the
 * checkpoint file at its first save and appends every later state to `<invocation>.log` (one write and one
 * fdatasync); `readCheckpointFile` reads the two as one. A torn last record is left out, a damaged record
 * before the last is `invalid_checkpoint` naming the log, a log that continues another file is stale and
 * ignored, and the log is folded into the file when it grows. Every crash point of the writes reads as
 * the newest state that was reported durable, or a newer one: the states on disk at each point are built
 * from the writer's own files, snapshotted before and after each step.
 */
import assert from 'node:assert/strict';
import {
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import * as zlib from 'node:zlib';
import {
  checkpointLogPath,
  commonPrefix,
  fileDigest,
  logHeader,
  logRecord,
} from '../../../packages/sdk/src/engine/checkpointLog.ts';
import { CheckpointWriter, readCheckpointFile } from '../../../packages/sdk/src/engine/checkpoints.ts';
import { crc32, crc32Js, frameLine, splitLog } from '../../../packages/sdk/src/store/appendLog.ts';
import { writeJsonAtomic } from '../../../packages/sdk/src/store/atomicFile.ts';

function scratch(t: import('node:test').TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'se-ckptlog-'));
  t.after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  return dir;
}

const owner = { run: 'run-1', invocation: 'inv-1', agent: 'main' };

/** A writer of `inv-1.json` in a fresh directory, closed after the test. */
function writerIn(t: import('node:test').TestContext, dir = scratch(t)) {
  const path = join(dir, 'checkpoints', 'inv-1.json');
  const writer = new CheckpointWriter(path, owner);
  t.after(() => writer.close());
  return { dir: join(dir, 'checkpoints'), path, log: checkpointLogPath(path), writer };
}

/** A model-loop-like state after `turns` steps. */
function conversation(turns: number, extra = ''): { messages: unknown[]; turn: number; usage: object } {
  const messages: unknown[] = [];
  for (let i = 1; i <= turns; i++) {
    messages.push({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: `c${i}`, input: { i } }] });
    messages.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: `c${i}`, output: `r${i}${extra}` }] });
  }
  return { messages, turn: turns, usage: { inputTokens: turns * 10 } };
}

async function stateOf(path: string): Promise<unknown> {
  return ((await readCheckpointFile(path, 'inv-1')) as { state?: unknown } | undefined)?.state;
}

/** The error `readCheckpointFile` gives, checked as a coded `invalid_checkpoint` naming `file`. */
async function refused(path: string, file: string, problem: RegExp): Promise<void> {
  await assert.rejects(
    readCheckpointFile(path, 'inv-1'),
    (e: { code?: string; message?: string; data?: { path?: string } }) => {
      assert.equal(e.code, 'invalid_checkpoint', e.message);
      assert.ok(e.message?.includes(file), `"${e.message}" names ${file}`);
      assert.equal(e.data?.path, file);
      assert.match(e.message ?? '', problem);
      return true;
    },
  );
}

test('the first save writes the file; later saves append one record each to the log; both read as the newest', async (t) => {
  const { dir, path, log, writer } = writerIn(t);
  await writer.append(1, conversation(1));
  // A fresh invocation's log is created empty with the file (one directory sync for both).
  assert.deepEqual(readdirSync(dir).sort(), ['inv-1.json', 'inv-1.log']);
  assert.equal(statSync(log).size, 0);
  assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')).state, conversation(1));
  for (let turn = 2; turn <= 6; turn++) {
    await writer.append(1, conversation(turn));
    assert.deepEqual(await stateOf(path), conversation(turn), `turn ${turn} reads back`);
  }
  assert.deepEqual(readdirSync(dir).sort(), ['inv-1.json', 'inv-1.log']);
  // The file still holds the first state; the log its header and 5 records, the later ones small.
  assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')).state, conversation(1));
  const split = splitLog(readFileSync(log));
  assert.equal(split.damaged, undefined);
  assert.equal(split.lines?.length, 6);
  assert.deepEqual(JSON.parse(split.lines![0]!), { format: 1, base: fileDigest(readFileSync(path)) });
  const last = split.lines![5]!;
  assert.ok(last.length < JSON.stringify(conversation(6)).length / 3, `the last record is a delta (${last.length})`);
  assert.equal(statSync(log).mode & 0o777, 0o600);
  const file = (await readCheckpointFile(path, 'inv-1')) as Record<string, unknown>;
  assert.equal(file.attempt, 1);
  assert.equal(file.run, 'run-1');
  assert.match(String(file.savedAt), /^\d{4}-\d\d-\d\dT/);
  // latest() is the whole file, as the attempt's outcome carries it.
  assert.deepEqual(writer.latest()?.state, conversation(6));
});

test('a burst of appends shares one queued write; the newest wins; each record names its attempt', async (t) => {
  const { path, writer } = writerIn(t);
  await writer.append(1, { n: 0 });
  const first = writer.append(1, { n: 1 });
  await Promise.resolve();
  const queued = Array.from({ length: 20 }, (_, i) => writer.append(2, { n: i + 2 }));
  assert.equal(new Set(queued).size, 1);
  await Promise.all([first, ...queued]);
  const file = (await readCheckpointFile(path, 'inv-1')) as { state: unknown; attempt: number };
  assert.deepEqual(file.state, { n: 21 });
  assert.equal(file.attempt, 2);
  await assert.rejects(writer.append(2, { n: 1n }), { code: 'invalid_checkpoint' });
  assert.deepEqual(await stateOf(path), { n: 21 });
});

test('a torn last record is left out: the state before it reads back', async (t) => {
  const { path, log, writer } = writerIn(t);
  for (let turn = 1; turn <= 4; turn++) await writer.append(1, conversation(turn));
  await writer.close();
  const whole = readFileSync(log);
  const lastStart = whole.lastIndexOf(0x0a, whole.length - 2) + 1;
  const cases: Array<[string, Buffer]> = [
    ['cut in the middle', whole.subarray(0, lastStart + 20)],
    ['cut before its newline', whole.subarray(0, whole.length - 1)],
    [
      'a byte of it changed',
      Buffer.concat([whole.subarray(0, lastStart + 30), Buffer.from('X'), whole.subarray(lastStart + 31)]),
    ],
    [
      'its start lost, its end on disk',
      Buffer.concat([whole.subarray(0, lastStart), Buffer.alloc(40), whole.subarray(lastStart + 40)]),
    ],
  ];
  for (const [title, bytes] of cases) {
    writeFileSync(log, bytes);
    assert.deepEqual(await stateOf(path), conversation(3), title);
  }
  // Zeros after the last whole record (a size that reached the disk before the data): the last state.
  writeFileSync(log, Buffer.concat([whole, Buffer.alloc(64)]));
  assert.deepEqual(await stateOf(path), conversation(4));
  // A log cut inside its header holds nothing durable: the file's state.
  writeFileSync(log, whole.subarray(0, 30));
  assert.deepEqual(await stateOf(path), conversation(1));
  writeFileSync(log, '');
  assert.deepEqual(await stateOf(path), conversation(1));
});

test('a damaged record before the last is refused with invalid_checkpoint naming the log', async (t) => {
  const { path, log, writer } = writerIn(t);
  for (let turn = 1; turn <= 5; turn++) await writer.append(1, conversation(turn));
  await writer.close();
  const whole = readFileSync(log);
  const lines = whole.toString('utf8').split('\n');
  const secondRecord = lines[0]!.length + 1 + lines[1]!.length + 1;
  const flipped = Buffer.from(whole);
  flipped[secondRecord + 40] = flipped[secondRecord + 40] === 0x41 ? 0x42 : 0x41;
  writeFileSync(log, flipped);
  await refused(path, log, /line 3 \(at byte \d+\) is damaged: its checksum does not match/);
  // A record cut short in the middle (a newline inside it) is damage too, not a torn tail.
  writeFileSync(
    log,
    Buffer.concat([whole.subarray(0, secondRecord + 20), Buffer.from('\n'), whole.subarray(secondRecord)]),
  );
  await refused(path, log, /line 3 .* is damaged/);
  // Lines whose checksums are right but which do not say what a log says: each refused, naming the field.
  const header = logHeader(fileDigest(readFileSync(path)));
  const good = logRecord(undefined, JSON.stringify({ a: 1 }), 1, '2026-12-02T00:00:00.000Z');
  const table: Array<[string, Buffer[], RegExp]> = [
    ['a header that is not JSON', [frameLine('{"format":1,'), good], /line 1 is not JSON/],
    ['a header of another format', [frameLine(`{"format":2,"base":"${'0'.repeat(64)}"}`), good], /field "format"/],
    ['a record with no tab', [header, frameLine('{"keep":0,"attempt":1,"savedAt":"x"}')], /line 2 is not a record/],
    ['a record whose fields are not JSON', [header, frameLine('{"keep":0\t{}')], /line 2 is not JSON/],
    [
      'a record with an extra field',
      [header, frameLine('{"keep":0,"attempt":1,"savedAt":"x","__proto__":{"polluted":1}}\t{}')],
      /unexpected keys? "__proto__"/,
    ],
    [
      'a record keeping more than there is',
      [header, good, frameLine('{"keep":999,"attempt":1,"savedAt":"x"}\t}')],
      /keeps 999 characters of a state of 7/,
    ],
    [
      'records that replay to no JSON',
      [header, good, frameLine('{"keep":3,"attempt":1,"savedAt":"x"}\t')],
      /records do not give a JSON state/,
    ],
  ];
  for (const [title, parts, problem] of table) {
    writeFileSync(log, Buffer.concat(parts));
    await refused(path, log, problem);
    assert.equal(({} as Record<string, unknown>).polluted, undefined, title);
  }
  // A log that cannot be read at all.
  rmSync(log);
  mkdirSync(log);
  await refused(path, log, /could not be read/);
  // … which matters only beside a file: without one there is no checkpoint.
  rmSync(path);
  assert.equal(await readCheckpointFile(path, 'inv-1'), undefined);
});

test('a log that continues another file is stale and ignored: the file rewritten, edited or removed', async (t) => {
  const { path, log, writer } = writerIn(t);
  for (let turn = 1; turn <= 3; turn++) await writer.append(1, conversation(turn));
  await writer.close();
  // As the coordinator writes the attempt's outcome (pretty JSON), before it removes the log.
  const outcome = { format: 1, ...owner, attempt: 1, savedAt: new Date().toISOString(), state: conversation(9) };
  await writeJsonAtomic(path, outcome);
  assert.ok(existsSync(log));
  assert.deepEqual(await stateOf(path), conversation(9));
  // The file removed (the documented way to restart an invocation): no checkpoint, whatever the log holds.
  rmSync(path);
  assert.equal(await readCheckpointFile(path, 'inv-1'), undefined);
});

test('keys named __proto__ in the file, the state or a record stay plain data', async (t) => {
  const { path, writer } = writerIn(t);
  const state = JSON.parse('{"messages":[],"__proto__":{"polluted":"state"},"n":1}') as Record<string, unknown>;
  await writer.append(1, state);
  await writer.append(1, { ...state, n: 2 });
  const file = (await readCheckpointFile(path, 'inv-1')) as { state: Record<string, unknown> };
  assert.equal(Object.getPrototypeOf(file.state), Object.prototype);
  assert.ok(Object.hasOwn(file.state, '__proto__'));
  assert.equal(file.state.n, 2);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  // A file whose own top level has a __proto__ key keeps it as data when its log is applied.
  await writer.close();
  const text = readFileSync(path, 'utf8').replace('{"format":1', '{"__proto__":{"polluted":"file"},"format":1');
  writeFileSync(path, text);
  const log = checkpointLogPath(path);
  writeFileSync(
    log,
    Buffer.concat([logHeader(fileDigest(Buffer.from(text))), logRecord(undefined, '{"n":3}', 1, 'now')]),
  );
  const merged = (await readCheckpointFile(path, 'inv-1')) as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(merged), Object.prototype);
  assert.ok(Object.hasOwn(merged, '__proto__'));
  assert.deepEqual(merged.state, { n: 3 });
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test('a change inside a surrogate pair is written whole: the text reads back exactly', async (t) => {
  assert.equal(commonPrefix('"a\u{1F600}"', '"a\u{1F601}"'), 2, 'never between the halves of a pair');
  assert.equal(commonPrefix('abc', 'abd'), 2);
  assert.equal(commonPrefix('x'.repeat(5000), `${'x'.repeat(4500)}y`), 4500);
  const { path, writer } = writerIn(t);
  for (const text of ['a\u{1F600}', 'a\u{1F601}', 'a\u{1F601}\u{1F602}', 'a\u{1F601}b', 'é\u2028\t\n"']) {
    await writer.append(1, { text });
    assert.deepEqual(await stateOf(path), { text });
  }
});

test('the checksum is CRC-32 (IEEE): the JavaScript one agrees with zlib', () => {
  assert.equal(crc32Js(Buffer.from('123456789')), 0xcbf43926);
  assert.equal(crc32Js(new Uint8Array()), 0);
  const zlibCrc = (zlib as { crc32?: (data: Uint8Array) => number }).crc32;
  for (const text of ['', 'a', 'hello world', 'é😀'.repeat(300)]) {
    const bytes = Buffer.from(text);
    assert.equal(crc32(bytes), crc32Js(bytes));
    if (zlibCrc !== undefined) assert.equal(zlibCrc(bytes), crc32Js(bytes));
  }
});

test('a log larger than twice the state and 1 MiB is folded into the file; the next save starts a new log', async (t) => {
  const { dir, path, log, writer } = writerIn(t);
  // Each state changes near its start, so every record holds nearly all of it (~300 KB).
  const big = (n: number) => ({ n, blob: 'z'.repeat(300_000) });
  await writer.append(1, big(0));
  let folded = -1;
  for (let n = 1; n <= 6; n++) {
    await writer.append(1, big(n));
    assert.deepEqual(await stateOf(path), big(n));
    if (folded === -1 && !existsSync(log)) folded = n;
  }
  assert.ok(folded > 1, `folded at save ${folded}`);
  // After the fold the file held that state; the saves after it went to a new log naming the new file.
  const split = splitLog(readFileSync(log));
  assert.equal(JSON.parse(split.lines![0]!).base, fileDigest(readFileSync(path)));
  assert.deepEqual(readdirSync(dir).sort(), ['inv-1.json', 'inv-1.log']);
});

test('after close, a save writes the file itself', async (t) => {
  const { dir, path, writer } = writerIn(t);
  await writer.append(1, { n: 1 });
  await writer.append(1, { n: 2 });
  await writer.close();
  await writer.append(1, { n: 3 });
  assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')).state, { n: 3 });
  assert.deepEqual(readdirSync(dir), ['inv-1.json'], 'the stale log is removed once the file is written');
  assert.deepEqual(await stateOf(path), { n: 3 });
});

test('a log that cannot be created fails its save with io_error; the file keeps the last durable state', async (t) => {
  const { dir, path, log, writer } = writerIn(t);
  // Something at the log's path that is not a log: not removed with the first save, nor written through.
  mkdirSync(log, { recursive: true });
  writeFileSync(join(log, 'keep'), 'x');
  await writer.append(1, { n: 1 });
  assert.deepEqual(readdirSync(dir).sort(), ['inv-1.json', 'inv-1.log']);
  await assert.rejects(writer.append(1, { n: 2 }), { code: 'io_error' });
  assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')).state, { n: 1 });
});

/** The files of a checkpoint directory, by name. */
type Snapshot = Map<string, Buffer>;

function snapshot(dir: string): Snapshot {
  return new Map(readdirSync(dir).map((name) => [name, readFileSync(join(dir, name))]));
}

function restore(dir: string, files: Snapshot): void {
  for (const name of readdirSync(dir)) rmSync(join(dir, name), { recursive: true });
  for (const [name, bytes] of files) writeFileSync(join(dir, name), bytes);
}

test('every crash point of the writes reads as the last durable state or the new one', async (t) => {
  const { dir, path, writer } = writerIn(t);
  const log = 'inv-1.log';
  const json = 'inv-1.json';
  const tmp = `.inv-1.json.${process.pid}.0123456789ab.tmp`;

  // An earlier attempt: its file (state 1) and its log (states 2, 3). Its first save created the log
  // empty (a fresh invocation): the log's entry and the file's are synced by the one directory sync.
  mkdirSync(dir, { recursive: true });
  const beforeFirst = snapshot(dir);
  await writer.append(1, conversation(1));
  const firstFile = snapshot(dir);
  assert.deepEqual(firstFile.get(log)?.length, 0);
  await writer.append(1, conversation(2));
  const earlierAfterSecond = snapshot(dir);
  await writer.append(1, conversation(3));
  const earlier = snapshot(dir);
  await writer.close();

  // The next attempt's writer: its first save (state 4) writes the file; the earlier log, now stale, stays
  // until this writer's own log replaces it.
  const next = new CheckpointWriter(path, { ...owner });
  t.after(() => next.close());
  await next.append(2, conversation(4));
  const rebased = snapshot(dir);
  assert.deepEqual([...rebased.keys()].sort(), [json, log]);
  assert.deepEqual(rebased.get(log), earlier.get(log));
  // Its second save (state 5) creates a log; its third (state 6) appends.
  await next.append(2, conversation(5));
  const created = snapshot(dir);
  await next.append(2, conversation(6));
  const appended = snapshot(dir);
  const newLog = appended.get(log)!;
  const cut = (bytes: Buffer, n: number) => bytes.subarray(0, bytes.length - n);

  const points: Array<[string, Snapshot, unknown]> = [
    // The first save of a writer: a new file renamed over the old one (the old log is then stale).
    [
      'first save: the new file written, not renamed',
      new Map([...earlier, [tmp, rebased.get(json)!]]),
      conversation(3),
    ],
    ['first save: renamed', rebased, conversation(4)],
    // The log's creation: the stale log removed, a new one created, its header and first record in one
    // synced write, then the directory synced.
    ['log creation: the stale log removed', new Map([[json, rebased.get(json)!]]), conversation(4)],
    ['log created, nothing written yet', new Map([...rebased, [log, Buffer.alloc(0)]]), conversation(4)],
    [
      'log created, its write cut in the header',
      new Map([...rebased, [log, created.get(log)!.subarray(0, 20)]]),
      conversation(4),
    ],
    ['log created, its first record cut', new Map([...rebased, [log, cut(created.get(log)!, 5)]]), conversation(4)],
    ['log created and synced', created, conversation(5)],
    // An append: one write, one fdatasync.
    ['append cut', new Map([...created, [log, cut(newLog, 3)]]), conversation(5)],
    ['append synced', appended, conversation(6)],
    // A fresh invocation's first save: the empty log created, then the file written and renamed.
    [
      'fresh: the empty log created, the file not written',
      new Map([...beforeFirst, [log, Buffer.alloc(0)]]),
      undefined,
    ],
    [
      'fresh: the file written, not renamed',
      new Map([...beforeFirst, [log, Buffer.alloc(0)], [tmp, firstFile.get(json)!]]),
      undefined,
    ],
    ['fresh: renamed', firstFile, conversation(1)],
    // Its second save: the header and first record in one synced write.
    [
      'fresh: the second save cut',
      new Map([...firstFile, [log, cut(earlierAfterSecond.get(log)!, 4)]]),
      conversation(1),
    ],
    ['fresh: the second save synced', earlierAfterSecond, conversation(2)],
  ];
  for (const [title, files, expected] of points) {
    restore(dir, files);
    assert.deepEqual(await stateOf(path), expected, title);
  }

  // The fold: the file rewritten (new file, renamed), then the log removed. Driven on the writer's state
  // before the fold (states 4 + log 5, 6) and the fold's result (state 7 in the file).
  restore(dir, appended);
  const folding = new CheckpointWriter(path, { ...owner });
  t.after(() => folding.close());
  await folding.save(2, conversation(7));
  const foldedFile = snapshot(dir).get(json)!;
  const foldPoints: Array<[string, Snapshot, unknown]> = [
    ['fold: the new file written, not renamed', new Map([...appended, [tmp, foldedFile]]), conversation(6)],
    ['fold: renamed, the log not removed yet', new Map([...appended, [json, foldedFile]]), conversation(7)],
    ['fold: the log removed', new Map([[json, foldedFile]]), conversation(7)],
  ];
  for (const [title, files, expected] of foldPoints) {
    restore(dir, files);
    assert.deepEqual(await stateOf(path), expected, title);
  }
});

test('the log is written O_DSYNC: each record is on disk when its write returns', {
  skip: process.platform !== 'linux' && 'reads /proc',
}, async (t) => {
  const { log, writer } = writerIn(t);
  await writer.append(1, { n: 1 });
  await writer.append(1, { n: 2 });
  // The writer's descriptor of the log, found through /proc; its open flags (octal) include O_DSYNC.
  const fd = readdirSync('/proc/self/fd').find((name) => {
    try {
      return readlinkSync(`/proc/self/fd/${name}`) === log;
    } catch {
      return false;
    }
  });
  assert.ok(fd !== undefined, 'the log is open');
  const flags = Number.parseInt(/^flags:\s*([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))![1]!, 8);
  assert.equal(flags & constants.O_DSYNC, constants.O_DSYNC);
  assert.equal(flags & constants.O_APPEND, 0, 'the only writer writes at its end: no O_APPEND needed');
  await writer.close();
  assert.equal(
    readdirSync('/proc/self/fd').some((name) => {
      try {
        return readlinkSync(`/proc/self/fd/${name}`) === log;
      } catch {
        return false;
      }
    }),
    false,
    'close() closed it',
  );
});

test('a log of another file is ignored even when a record of it is damaged: the file is read', async (t) => {
  const { path, log, writer } = writerIn(t);
  for (let turn = 1; turn <= 4; turn++) await writer.append(1, conversation(turn));
  await writer.close();
  const whole = readFileSync(log);
  const lines = whole.toString('utf8').split('\n');
  const secondRecord = lines[0]!.length + 1 + lines[1]!.length + 1;
  const damaged = Buffer.from(whole);
  damaged[secondRecord + 40] = damaged[secondRecord + 40] === 0x41 ? 0x42 : 0x41;
  writeFileSync(log, damaged);
  // Beside the file it continues, the damage is reported.
  await refused(path, log, /line 3 \(at byte \d+\) is damaged/);
  // The file rewritten (as the attempt's end writes it, before it removes the log): the log names the old
  // file, so none of its records applies, damaged or not.
  const outcome = { format: 1, ...owner, attempt: 1, savedAt: new Date().toISOString(), state: conversation(9) };
  await writeJsonAtomic(path, outcome);
  assert.deepEqual(await stateOf(path), conversation(9));
  // A damaged header is still refused: whether the log applies cannot be told.
  const header = Buffer.from(whole);
  header[20] = header[20] === 0x41 ? 0x42 : 0x41;
  writeFileSync(log, header);
  await refused(path, log, /line 1 \(at byte 0\) is damaged/);
});
