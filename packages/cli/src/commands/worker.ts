/** `scienceevolve worker`: takes invocation jobs from the queue and runs them here (scale-out). */
import { CONSUMER_RANGES, closeHostSupervisor, startQueueWorker } from '@scienceevolve/sdk';
import { parse, positiveInt, required } from '../args.js';
import { EXIT, type Io, printJson, usageError } from '../output.js';
import { queueUrlOption } from '../queueUrlOption.js';
import { untilSignal } from '../signals.js';

export const WORKER_HELP = [
  'worker (--queue redis://… | --queue-env VAR | --queue-file F) --data-dir D [--concurrency N] [--json]',
  '                                     take invocation jobs of `run --queue` and run them on this machine;',
  '                                     SIGTERM drains (jobs in hand finish); a second signal cancels them and puts',
  '                                     their jobs back in the queue for another worker; with no queue option,',
  '                                     the URL is read from SCIENCEEVOLVE_QUEUE_URL',
].join('\n');

export async function workerCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(argv, {
    queue: { type: 'string' },
    'queue-env': { type: 'string' },
    'queue-file': { type: 'string' },
    'queue-name': { type: 'string' },
    'data-dir': { type: 'string' },
    concurrency: { type: 'string' },
    'lock-duration-ms': { type: 'string' },
    'stalled-interval-ms': { type: 'string' },
    'max-stalled': { type: 'string' },
  });
  if (positionals.length > 0) throw usageError('worker takes no positional arguments');
  const url = required(
    queueUrlOption(values, { worker: true }),
    '--queue, --queue-env or --queue-file',
    'the Redis URL of the queue (redis://, rediss:// or unix://); with a password, in a variable (--queue-env VAR, or SCIENCEEVOLVE_QUEUE_URL) or a 0600 file (--queue-file F)',
  );
  const dataDir = required(values['data-dir'], '--data-dir', "this worker's own data directory");
  // The SDK's ranges (it checks the same): one owner, so the flags and the API cannot drift apart.
  const concurrency = positiveInt(values.concurrency, '--concurrency', CONSUMER_RANGES.concurrency);
  const lockDurationMs = positiveInt(values['lock-duration-ms'], '--lock-duration-ms', CONSUMER_RANGES.lockDurationMs);
  const stalledIntervalMs = positiveInt(
    values['stalled-interval-ms'],
    '--stalled-interval-ms',
    CONSUMER_RANGES.stalledIntervalMs,
  );
  const maxStalledCount = positiveInt(values['max-stalled'], '--max-stalled', CONSUMER_RANGES.maxStalledCount);
  // Installed before anything starts, so a signal during start-up is not lost.
  const stop = untilSignal();
  let worker: Awaited<ReturnType<typeof startQueueWorker>> | undefined;
  try {
    worker = await startQueueWorker({
      url,
      name: values['queue-name'],
      dataDir,
      concurrency,
      lockDurationMs,
      stalledIntervalMs,
      maxStalledCount,
      onLog: (line) => io.stderr(`${line}\n`),
    });
    io.stderr(`worker ${worker.id} ready\n`);
    await stop.wait();
    io.stderr(`received ${stop.signal}: draining (the jobs in hand finish; a second signal hands them back)\n`);
    const current = worker;
    const drained = current.close(false);
    // A second signal: cancel the attempts in hand (their services are collected) and put their jobs back
    // in the queue's waiting list, for another worker (no failure, no retry counted).
    const again = untilSignal();
    const forced = again.wait().then(() => {
      if (again.signal === undefined) return false;
      io.stderr(`received ${again.signal}: handing the jobs in hand back\n`);
      return current.close(true).then(() => true);
    });
    // Drained, or handed back: either way the jobs in hand have ended once the drain resolves.
    await drained;
    again.dispose();
    const how = await forced;
    if (values.json) printJson(io, { worker: current.id, stopped: how ? 'forced' : 'drained' });
    else io.stdout(`worker ${current.id} stopped (${how ? 'jobs handed back' : 'drained'})\n`);
    return EXIT.ok;
  } finally {
    stop.dispose();
    await closeHostSupervisor();
  }
}
