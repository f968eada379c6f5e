/**
 * The coordinator's side of the queue backend: puts invocation jobs on a BullMQ queue in Redis and waits
 * for their results. BullMQ is loaded (dynamic import) only when a queue is opened, so a run without
 * `--queue` never loads it. Job contents are opaque here: the engine owns their shape.
 */
import { telemetry } from '../events/telemetry.js';
import type { Queue, QueueEvents } from 'bullmq';
import { SdkError } from '../errors.js';
import { redactUrlsIn } from '../redact.js';
import { loadBullmq } from './loadBullmq.js';
import { type RefusedError, refusalOf, shownReason } from './jobRefusal.js';
import { type QueueAddress, parseQueueUrl } from './queueUrl.js';

/** The BullMQ queue name both sides use unless told otherwise. */
export const DEFAULT_QUEUE_NAME = 'scienceevolve-invocations';

/** Seconds a finished job (its result) is kept in Redis, so a resumed coordinator can still read it: 7 days. */
export const KEEP_FINISHED_JOBS_S = 7 * 24 * 3600;

/** Where the queue is and how long to wait for it. @public */
export interface QueueSettings {
  /** `redis://…`, `rediss://…` or `unix:///…` (see `parseQueueUrl`). */
  url: string;
  /** The BullMQ queue name. Default `scienceevolve-invocations`. */
  name?: string | undefined;
  /**
   * Milliseconds Redis may stay unanswering (down, unreachable) before waiting for a job fails with
   * `queue_unreachable`. Default 30,000.
   */
  unreachableMs?: number | undefined;
  /** Receives one line per connection problem, credentials removed. Default: dropped. */
  onLog?: ((line: string) => void) | undefined;
}

/** How a job ended, as the coordinator sees it. */
export type JobOutcome =
  /** The worker returned this value. */
  | { status: 'completed'; value: unknown }
  /**
   * BullMQ failed the job (the processor threw, or the job stalled more often than allowed); `refused`
   * when a worker refused it with a coded error (never retried: every worker would refuse it).
   */
  | { status: 'failed'; reason: string; refused?: RefusedError | undefined }
  /** No such job (never added, or removed after it was kept long enough). */
  | { status: 'missing' };

/** The coordinator's connection to the queue. */
export class QueueClient {
  private lastAnswer = Date.now();
  private readonly timer: NodeJS.Timeout;
  private down: SdkError | undefined;
  private readonly downWaiters = new Set<(error: SdkError) => void>();
  private closed = false;

  private constructor(
    readonly address: QueueAddress,
    private readonly queue: Queue,
    private readonly events: QueueEvents,
    private readonly unreachableMs: number,
  ) {
    const every = Math.max(50, Math.min(1_000, Math.floor(unreachableMs / 3)));
    this.timer = setInterval(() => this.check(), every);
    this.timer.unref();
  }

  /** Connects to the queue (BullMQ loaded here); `queue_unreachable` when Redis does not answer in time. */
  static async open(settings: QueueSettings): Promise<QueueClient> {
    const address = parseQueueUrl(settings.url);
    const name = settings.name ?? DEFAULT_QUEUE_NAME;
    const unreachableMs = settings.unreachableMs ?? 30_000;
    const { Queue, QueueEvents } = await loadBullmq();
    const log = settings.onLog ?? (() => {});
    const queue = new Queue(name, { connection: { ...address.connection } });
    const events = new QueueEvents(name, { connection: { ...address.connection } });
    // An 'error' without a listener would end the process: each is reported, credentials removed.
    queue.on('error', (error) => log(`queue ${address.publicUrl}: ${redactUrlsIn(String(error.message))}`));
    events.on('error', (error) => log(`queue ${address.publicUrl}: ${redactUrlsIn(String(error.message))}`));
    const client = new QueueClient(address, queue, events, unreachableMs);
    try {
      await client.guard(Promise.all([queue.waitUntilReady(), events.waitUntilReady()]));
    } catch (error) {
      await client.close();
      throw error;
    }
    return client;
  }

  /** Adds a job under `jobId`; a job of that id that already exists is kept as it is (BullMQ ids are unique). */
  async submit(jobId: string, data: object): Promise<void> {
    const traced = telemetry();
    // With export on, the job carries the trace context (`traceContext`): the worker's spans join the run's trace.
    if (traced !== undefined) {
      return traced.inQueueSubmit(jobId, () => this.add(jobId, { ...data, traceContext: traced.carrier() }));
    }
    return this.add(jobId, data);
  }

  private async add(jobId: string, data: object): Promise<void> {
    await this.guard(
      this.queue.add('invocation', data, {
        jobId,
        attempts: 1,
        removeOnComplete: { age: KEEP_FINISHED_JOBS_S },
        removeOnFail: { age: KEEP_FINISHED_JOBS_S },
      }),
    );
  }

  /** A job's state: `completed`, `failed`, `active`, `waiting`, `delayed`, … or `missing`. */
  async state(jobId: string): Promise<string> {
    const job = await this.guard(this.queue.getJob(jobId));
    if (job === undefined) return 'missing';
    const state = await this.guard(job.getState());
    return state === 'unknown' ? 'missing' : state;
  }

  /**
   * Waits for a job to finish. Rejects with `queue_unreachable` when Redis stops answering for
   * `unreachableMs`, and with the signal's reason when `signal` aborts (the job itself goes on).
   */
  async wait(jobId: string, signal: AbortSignal): Promise<JobOutcome> {
    const job = await this.guard(this.queue.getJob(jobId));
    if (job === undefined) return { status: 'missing' };
    const finished = (job as unknown as { waitUntilFinished(e: QueueEvents): Promise<unknown> })
      .waitUntilFinished(this.events)
      .then(
        (value): JobOutcome => ({ status: 'completed', value }),
        (error: unknown): JobOutcome => {
          const reason = error instanceof Error ? error.message : String(error);
          const refused = refusalOf(reason);
          return { status: 'failed', reason: shownReason(reason), ...(refused === undefined ? {} : { refused }) };
        },
      );
    const outcome = await this.guard(finished, signal);
    if (outcome.status === 'completed') {
      // waitUntilFinished hands back the value as the event carried it; the job's own copy is parsed JSON.
      const fresh = await this.guard(this.queue.getJob(jobId));
      if (fresh !== undefined && fresh.returnvalue !== undefined)
        return { status: 'completed', value: fresh.returnvalue };
    }
    return outcome;
  }

  /** The lines the workers logged on a job, oldest first (the queue worker logs who took it). */
  async logs(jobId: string): Promise<string[]> {
    const { logs } = await this.guard(this.queue.getJobLogs(jobId, 0, -1, true));
    return logs;
  }

  /** Closes the connections (forcibly when Redis does not answer within a second). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    const polite = Promise.all([this.queue.close(), this.events.close()]).then(() => true);
    // Not unref'd: with Redis gone, the polite close waits on nothing that keeps the process alive.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), 1_000);
    });
    const done = await Promise.race([polite.catch(() => false), late]);
    clearTimeout(timer);
    if (!done) {
      const forced = Promise.allSettled([this.queue.disconnect(), this.events.disconnect()]);
      const gaveUp = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, 1_000);
      });
      await Promise.race([forced, gaveUp]);
      clearTimeout(timer);
    }
  }

  /** Pings Redis; after `unreachableMs` without an answer, every waiter fails with `queue_unreachable`. */
  private check(): void {
    if (this.closed) return;
    if (Date.now() - this.lastAnswer > this.unreachableMs && this.down === undefined) {
      this.down = new SdkError(
        'queue_unreachable',
        `the queue at ${this.address.publicUrl} did not answer for ${this.unreachableMs / 1000} s`,
        {
          remedy: 'start Redis (or restore the network to it), then continue the run with `scienceevolve resume`',
          data: { queue: this.address.publicUrl, unreachableMs: this.unreachableMs },
        },
      );
      for (const fail of this.downWaiters) fail(this.down);
      this.downWaiters.clear();
      return;
    }
    // Any cheap command answers the question "is Redis there": the waiting jobs' count.
    void this.queue.count().then(
      () => {
        this.lastAnswer = Date.now();
        this.down = undefined;
      },
      () => {},
    );
  }

  /** `work`, unless Redis is found unreachable or `signal` aborts first. */
  private guard<T>(work: Promise<T>, signal?: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.down !== undefined) return reject(this.down);
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => settle(() => reject(signal?.reason));
      const onDown = (error: SdkError) => settle(() => reject(error));
      let settled = false;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        this.downWaiters.delete(onDown);
        fn();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.downWaiters.add(onDown);
      work.then(
        (value) => {
          this.lastAnswer = Date.now();
          settle(() => resolve(value));
        },
        (error: unknown) =>
          settle(() =>
            reject(
              new SdkError(
                'queue_unreachable',
                `the queue at ${this.address.publicUrl} failed: ${redactUrlsIn(error instanceof Error ? error.message : String(error))}`,
                {
                  remedy: 'check that Redis runs and is reachable, then continue the run with `scienceevolve resume`',
                  data: { queue: this.address.publicUrl },
                },
              ),
            ),
          ),
      );
    });
  }
}
