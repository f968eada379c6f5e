/** `scienceevolve worker`: takes invocation jobs from the queue and runs them here (scale-out). */
import { closeHostSupervisor } from '@scienceevolve/sdk';
import { startQueueWorker } from '@scienceevolve/sdk/internal';
import { parseCommand, required } from '../args.js';
import { command } from '../optionTable.js';
import { EXIT, type Io, printJson, usageError } from '../output.js';
import { queueUrlOption } from '../queueUrlOption.js';
import { untilSignal } from '../signals.js';

export async function workerCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(command('worker'), argv);
  if (positionals.length > 0) throw usageError('worker takes no positional arguments');
  const url = required(
    queueUrlOption(values, { worker: true }),
    '--queue, --queue-env or --queue-file',
    'the Redis URL of the queue (redis://, rediss:// or unix://); with a password, in a variable (--queue-env VAR, or SCIENCEEVOLVE_QUEUE_URL) or a 0600 file (--queue-file F)',
  );
  const dataDir = required(values['data-dir'], '--data-dir', "this worker's own data directory");
  // The table's ranges are the SDK's CONSUMER_RANGES (test/cli/optionTable.test.ts holds them equal).
  const concurrency = values.concurrency;
  const lockDurationMs = values['lock-duration-ms'];
  const stalledIntervalMs = values['stalled-interval-ms'];
  const maxStalledCount = values['max-stalled'];
  // Installed before anything starts, so a signal during start-up is not lost. No time bound: the drain waits
  // for the jobs in hand; the second signal hands them back, a third exits at once.
  const stop = untilSignal({ exitOnSignal: 3, exitAfterMs: null });
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
    const again = untilSignal({ exitOnSignal: 3, exitAfterMs: null });
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
