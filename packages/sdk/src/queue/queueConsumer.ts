/**
 * The worker machine's side of the queue backend: takes invocation jobs from the BullMQ queue and hands
 * each to a processor. BullMQ is loaded (dynamic import) only here. A job's lock is renewed while it runs;
 * a worker that dies loses it, and another worker's stalled-job check puts the job back to be taken again.
 */
import { carrierOfMeta, type TraceCarrier, telemetry } from '../events/telemetry.js';
import type { Queue, Worker } from 'bullmq';
import { SdkError } from '../errors.js';
import { JobRefusal, refusalReason, shownReason } from './jobRefusal.js';
import { DEFAULT_QUEUE_NAME } from './queueClient.js';
import { redactUrlsIn } from '../redact.js';
import { loadBullmq } from './loadBullmq.js';
import { parseQueueUrl } from './queueUrl.js';

/** How a worker takes jobs. */
export interface ConsumerSettings {
  /** `redis://…`, `rediss://…` or `unix:///…`. */
  url: string;
  /** The BullMQ queue name. Default `scienceevolve-invocations`. */
  name?: string | undefined;
  /** Jobs run at once, 1 to 256. Default 1. */
  concurrency?: number | undefined;
  /**
   * Milliseconds a job's lock lasts without renewal (renewed every half of it while the job runs): how soon
   * a dead worker's job can be taken by another. Default 30,000.
   */
  lockDurationMs?: number | undefined;
  /** Milliseconds between this worker's checks for stalled jobs (of dead workers). Default 30,000. */
  stalledIntervalMs?: number | undefined;
  /** How many times a job may stall (its worker died) and be taken again before it fails, 0 to 1,000. Default 1. */
  maxStalledCount?: number | undefined;
  /** Receives one line per event worth logging, credentials removed. Default: dropped. */
  onLog?: ((line: string) => void) | undefined;
  /** How the job's log names this worker when it hands a job back. Default `a stopping worker`. */
  workerId?: string | undefined;
}

/** The trace context a job carries (`traceContext`, set by the queue client's `submit`), if any. */
function carrierOfJob(data: unknown): TraceCarrier | undefined {
  const carried = (data as { traceContext?: unknown } | null)?.traceContext;
  return typeof carried === 'object' && carried !== null ? carrierOfMeta({ _meta: carried }) : undefined;
}

/** One job as the processor sees it. */
export interface ConsumedJob {
  id: string;
  data: unknown;
  /** Appends a line to the job's log in Redis (the coordinator reads it). */
  log(line: string): Promise<void>;
  /** The lines logged on the job so far, oldest first (by every worker that took it). */
  logs(): Promise<string[]>;
}

/**
 * Thrown by a processor whose job must go back to the queue (its worker is stopping): the job is moved
 * back to the waiting list under this worker's lock (BullMQ's `moveToWait`), for another worker to take as
 * if it had never been taken — no failure, no stall counted.
 */
export class JobHandBack extends Error {
  constructor() {
    super('the job is handed back to the queue');
  }
}

/** A running consumer. */
export interface QueueConsumer {
  /** The queue address without credentials. */
  readonly publicUrl: string;
  /**
   * Stops taking jobs and resolves once the jobs in hand ended (finished, failed, or handed back: see
   * {@link JobHandBack}), then closes the connections.
   */
  close(): Promise<void>;
}

/**
 * The ranges of a consumer's counts and durations (both ends included): `concurrency` 1 to 256,
 * `maxStalledCount` 0 to 1,000, `lockDurationMs` and `stalledIntervalMs` 1 ms to 2^31 − 1 ms.
 */
export const CONSUMER_RANGES = {
  concurrency: { min: 1, max: 256 },
  maxStalledCount: { min: 0, max: 1_000 },
  lockDurationMs: { min: 1, max: 2 ** 31 - 1 },
  stalledIntervalMs: { min: 1, max: 2 ** 31 - 1 },
} as const;

/** `usage` for a count or duration outside {@link CONSUMER_RANGES}. */
function checkRanges(settings: ConsumerSettings): void {
  for (const key of Object.keys(CONSUMER_RANGES) as (keyof typeof CONSUMER_RANGES)[]) {
    const value = settings[key];
    const { min, max } = CONSUMER_RANGES[key];
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= min && value <= max)) {
      throw new SdkError(
        'usage',
        `the queue worker's ${key} must be a whole number from ${min} to ${max}, not ${value}`,
        {
          remedy: `give ${key} within ${min}..${max}`,
          data: { option: key },
        },
      );
    }
  }
}

/**
 * Starts taking jobs; resolves once connected. A processor that throws a {@link JobRefusal} fails its job
 * at once, for good, with the refusal's coded error as the job's failed reason (see `refusalOf`). `usage` for a setting out of {@link CONSUMER_RANGES}. */
export async function startQueueConsumer(
  settings: ConsumerSettings,
  processor: (job: ConsumedJob) => Promise<unknown>,
): Promise<QueueConsumer> {
  checkRanges(settings);
  const address = parseQueueUrl(settings.url);
  const log = settings.onLog ?? (() => {});
  const { Queue, Worker, UnrecoverableError, WaitingError } = await loadBullmq();
  const name = settings.name ?? DEFAULT_QUEUE_NAME;
  // Reads jobs' logs (a job taken again reads what its earlier takers logged); opened on first use.
  let reader: Queue | undefined;
  const logsOf = async (id: string): Promise<string[]> => {
    if (reader === undefined) {
      reader = new Queue(name, { connection: { ...address.connection } });
      reader.on('error', (error) => log(`queue ${address.publicUrl}: ${redactUrlsIn(String(error.message))}`));
    }
    return (await reader.getJobLogs(id, 0, -1, true)).logs;
  };
  const worker: Worker = new Worker(
    name,
    async (job, token) => {
      if (job.id === undefined) throw new Error('a job without an id');
      const id = job.id;
      try {
        const consumed = {
          id,
          data: job.data,
          log: async (line: string) => void (await job.log(line)),
          logs: () => logsOf(id),
        };
        const traced = telemetry();
        return await (traced === undefined
          ? processor(consumed)
          : traced.inQueueJob(id, carrierOfJob(job.data), () => processor(consumed)));
      } catch (error) {
        if (error instanceof JobHandBack && token !== undefined) {
          // Back to waiting under this worker's lock; WaitingError tells BullMQ the job moved on its own.
          await job.log(`handed back by ${settings.workerId ?? 'a stopping worker'}`);
          await job.moveToWait(token);
          log(`job ${id} handed back to the queue`);
          throw new WaitingError();
        }
        // Refused: failed at once and for good (BullMQ never retries it), the coded error in its reason.
        if (error instanceof JobRefusal) throw new UnrecoverableError(refusalReason(error.refused));
        throw error;
      }
    },
    {
      // BullMQ takes blocking commands on this connection: no retry limit per request.
      connection: { ...address.connection, maxRetriesPerRequest: null },
      concurrency: settings.concurrency ?? 1,
      lockDuration: settings.lockDurationMs ?? 30_000,
      stalledInterval: settings.stalledIntervalMs ?? 30_000,
      maxStalledCount: settings.maxStalledCount ?? 1,
      autorun: false,
    },
  );
  // An 'error' without a listener would end the process: each is reported, credentials removed.
  worker.on('error', (error) => log(`queue ${address.publicUrl}: ${redactUrlsIn(String(error.message))}`));
  worker.on('failed', (job, error) => log(`job ${job?.id ?? '?'} failed: ${shownReason(String(error.message))}`));
  worker.on('stalled', (jobId) => log(`job ${jobId} stalled (its worker stopped renewing the lock): taken again`));
  await worker.waitUntilReady();
  void worker.run().catch((error: unknown) => log(`worker stopped: ${redactUrlsIn(String(error))}`));
  return {
    publicUrl: address.publicUrl,
    close: async () => {
      try {
        await worker.close(false);
      } finally {
        await reader?.close();
      }
    },
  };
}
