/**
 * The forwarding limits of one service session: a timeout per request, a cap on requests in flight, a
 * size limit on results, and a rest after consecutive failures. Aliases of one definition share one
 * session and so one gate.
 */
import { isSdkError, SdkError } from '../errors.js';
import { type Abortable, CallCancel, listenAbort } from '../sessions/callCancel.js';
import { sizeBoundOf } from '../sessions/sizeBound.js';
import { DEFAULT_FORWARD_TIMEOUT_MS } from '../sessions/forwarding.js';
import { MAX_DURATION_MS } from '../workflow/workflowSchema.js';

/** The forwarding limits; every field has a default. */
export interface ForwardLimits {
  /** Milliseconds before a forwarded request is cancelled and answered `forward_timeout`. Default 60,000 (60 s). */
  timeoutMs: number;
  /** Requests in flight per service; one more is answered `service_busy` at once. Default 4. */
  maxInFlight: number;
  /** Bytes of a result (its JSON text, UTF-8) above which it is answered `result_too_large`. Default 1,048,576 (1 MiB). */
  maxResultBytes: number;
  /** Consecutive failed requests after which the service is rested. Default 3. */
  failuresBeforeRest: number;
  /** Milliseconds a rested service is answered `service_resting` without being asked. Default 60,000 (60 s). */
  restMs: number;
  /**
   * Milliseconds a tool call that reports progress may take in all: each progress notification starts
   * `timeoutMs` again, up to this hard maximum from the call's start. Default 10 × `timeoutMs` (600,000,
   * 10 min, with the default timeout); at least `timeoutMs`.
   */
  maxTotalTimeoutMs: number;
}

/**
 * The default {@link ForwardLimits}. The gate is the one owner of these limits: every forwarded request of
 * a surface gets its timeout from here (or from the surface's options), and hands it down to the session.
 */
export const DEFAULT_FORWARD_LIMITS: Readonly<ForwardLimits> = Object.freeze({
  timeoutMs: DEFAULT_FORWARD_TIMEOUT_MS,
  maxInFlight: 4,
  maxResultBytes: 1024 * 1024,
  failuresBeforeRest: 3,
  restMs: 60_000,
  maxTotalTimeoutMs: 10 * DEFAULT_FORWARD_TIMEOUT_MS,
});

/** Each limit's allowed range (integers only). */
const LIMIT_RANGES: Readonly<Record<keyof ForwardLimits, readonly [min: number, max: number]>> = {
  timeoutMs: [1, MAX_DURATION_MS],
  maxInFlight: [1, 1_000_000],
  maxResultBytes: [1, Number.MAX_SAFE_INTEGER],
  failuresBeforeRest: [1, 1_000_000],
  restMs: [0, MAX_DURATION_MS],
  maxTotalTimeoutMs: [1, MAX_DURATION_MS],
};

/**
 * The limits `given` names, the defaults for the rest. An `undefined` field takes its default.
 *
 * @throws SdkError `usage` for a limit that is not an integer in its range (durations at most 2^31 − 1 ms).
 */
export function resolveForwardLimits(given: Partial<ForwardLimits> = {}): ForwardLimits {
  const limits: ForwardLimits = { ...DEFAULT_FORWARD_LIMITS };
  for (const key of Object.keys(LIMIT_RANGES) as (keyof ForwardLimits)[]) {
    const value = given[key];
    if (value === undefined) continue;
    const [min, max] = LIMIT_RANGES[key];
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new SdkError('usage', `forwarding limit ${key} must be an integer from ${min} to ${max}, not ${value}`, {
        remedy: `Give ${key} as a whole number in that range, or leave it out for the default (${DEFAULT_FORWARD_LIMITS[key]}).`,
        data: { limit: key, value: String(value), min, max },
      });
    }
    limits[key] = value;
  }
  if (given.maxTotalTimeoutMs === undefined) {
    limits.maxTotalTimeoutMs = Math.min(limits.timeoutMs * 10, MAX_DURATION_MS);
  } else if (limits.maxTotalTimeoutMs < limits.timeoutMs) {
    throw new SdkError(
      'usage',
      `forwarding limit maxTotalTimeoutMs (${limits.maxTotalTimeoutMs}) is shorter than timeoutMs (${limits.timeoutMs})`,
      {
        remedy: 'Give maxTotalTimeoutMs at least timeoutMs, or leave it out for 10 × timeoutMs.',
        data: { limit: 'maxTotalTimeoutMs', value: String(limits.maxTotalTimeoutMs), min: limits.timeoutMs },
      },
    );
  }
  return limits;
}

/** What the gate reports as it works, for the invocation's events. */
export type GateEvent =
  /** The service failed `failures` requests in a row and is answered `service_resting` until `untilMs` (epoch ms). */
  | { kind: 'service_rested'; service: string; failures: number; untilMs: number }
  /** A request after a rest was answered: the service is used normally again. */
  | { kind: 'service_recovered'; service: string };

/**
 * A gate event as the fields of a public event: `service.rested` (with `failures` and `until`, ISO 8601)
 * or `service.recovered`, with the service name.
 */
export function gateEventFields(event: GateEvent): { type: string; service: string; [field: string]: unknown } {
  if (event.kind === 'service_recovered') return { type: 'service.recovered', service: event.service };
  return {
    type: 'service.rested',
    service: event.service,
    failures: event.failures,
    until: new Date(event.untilMs).toISOString(),
  };
}

/**
 * Lifecycle of a gate, for logs and tests:
 * - `open`: requests are forwarded (up to the in-flight cap);
 * - `resting`: requests are refused with `service_resting` until the rest ends;
 * - `probing`: the rest ended; the next answer decides (an answer closes the count, a failure rests again).
 * @public
 */
export type GateState = 'open' | 'resting' | 'probing';

/**
 * True when `error` is a JSON-RPC error answer from the service itself: it carries a numeric JSON-RPC
 * code, like the official SDKs' `ProtocolError`/`McpError`, as opposed to the request not being answered
 * at all. The gate counts both as failures; the surface passes an answer on to its client as the
 * JSON-RPC error it is. The v1 SDK's local codes -32000 (connection closed) and -32001 (request timeout) are
 * not answers.
 */
export function isServiceAnswer(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  const jsonRpcCode = (error as { data?: { jsonRpcCode?: unknown } }).data?.jsonRpcCode;
  const numeric = typeof code === 'number' ? code : typeof jsonRpcCode === 'number' ? jsonRpcCode : undefined;
  return numeric !== undefined && Number.isInteger(numeric) && numeric !== -32000 && numeric !== -32001;
}

/** Runs forwarded requests of one service under its limits. */
export class ServiceGate {
  readonly service: string;
  readonly limits: Readonly<ForwardLimits>;
  private inFlight = 0;
  private consecutiveFailures = 0;
  private restUntil = 0;
  private state: GateState = 'open';
  private readonly onEvent: ((event: GateEvent) => void) | undefined;
  private readonly now: () => number;

  constructor(
    service: string,
    limits: Readonly<ForwardLimits>,
    options: { onEvent?: (event: GateEvent) => void; now?: () => number } = {},
  ) {
    this.service = service;
    this.limits = limits;
    this.onEvent = options.onEvent;
    this.now = options.now ?? Date.now;
  }

  /** The gate's state now (a rest that has ended reads `probing`). */
  get currentState(): GateState {
    if (this.state === 'resting' && this.now() >= this.restUntil) this.state = 'probing';
    return this.state;
  }

  /** Requests in flight now. */
  get inFlightCount(): number {
    return this.inFlight;
  }

  /**
   * Forwards one request: refuses at once when resting or at the cap, otherwise runs `send` with a
   * cancellation that aborts at the timeout (or when `callerSignal` aborts) and checks the result's size.
   * `send` is given it as `cancel` and as `signal`, a getter of its lazy `AbortSignal`
   * (sessions/callCancel.ts: a signal is built only for a session that reads one).
   * Throws an {@link SdkError} (`service_resting`, `service_busy`, `forward_timeout`,
   * `result_too_large`) or the service's own error.
   *
   * @param what - the request, for messages (`tool "search"`, `resource "file:///a"`).
   * @param send - is given `progressed`: calling it (at each progress notification of the request) starts
   *   the timeout again, never past `maxTotalTimeoutMs` from the start; `polling`: calling it (the
   *   service answered with an MCP task) stops the timeout for good; and `holding`: `holding(true)` while
   *   a person answers a question of the service stops the timeout, `holding(false)` starts it again (the
   *   time held does not count towards `maxTotalTimeoutMs`).
   */
  async run<T>(
    what: string,
    send: (options: {
      timeoutMs: number;
      readonly signal: AbortSignal;
      cancel: CallCancel;
      maxTotalTimeoutMs: number;
      progressed: () => void;
      /** The service answered with a task: the timeout stops for good (the task has its own deadline). */
      polling: () => void;
      /** A person is (true) or is no longer (false) answering a question of the service: the timeout waits. */
      holding: (on: boolean) => void;
    }) => Promise<T>,
    callerSignal?: Abortable,
  ): Promise<T> {
    if (this.currentState === 'resting') {
      const seconds = Math.ceil((this.restUntil - this.now()) / 1000);
      throw new SdkError(
        'service_resting',
        `service "${this.service}" failed ${this.consecutiveFailures} requests in a row and is resting for ${seconds} s more; ${what} was not sent`,
        {
          remedy: `Retry after ${seconds} s, or check the service's stderr log for why it fails.`,
          data: { service: this.service, retryAfterMs: this.restUntil - this.now() },
        },
      );
    }
    if (this.inFlight >= this.limits.maxInFlight) {
      throw new SdkError(
        'service_busy',
        `service "${this.service}" already has ${this.inFlight} requests in flight (the limit is ${this.limits.maxInFlight}); ${what} was not sent`,
        {
          remedy: 'Wait for an earlier call to this service to finish, then retry.',
          data: { service: this.service, maxInFlight: this.limits.maxInFlight },
        },
      );
    }
    this.inFlight++;
    const cancel = new CallCancel();
    let timedOut = false;
    // Ends the call at once, whatever `send` does: its timeout fired, or the caller gave up.
    let stop: (reason: unknown) => void = () => {};
    const onCallerAbort = () => {
      cancel.abort(callerSignal?.reason);
      stop(callerSignal?.reason);
    };
    let timer: NodeJS.Timeout | undefined;
    const startedAt = Date.now();
    const { timeoutMs, maxTotalTimeoutMs } = this.limits;
    let polled = false;
    // While a person answers a question the timeout waits; the time held is not the service's.
    let heldSince: number | undefined;
    let heldMs = 0;
    const fire = (hardMaximum: boolean) => {
      timedOut = true;
      const error = new SdkError(
        'forward_timeout',
        hardMaximum
          ? `service "${this.service}" reported progress but did not answer ${what} within the ${maxTotalTimeoutMs / 1000} s maximum; the request was cancelled`
          : `service "${this.service}" did not answer ${what} within ${timeoutMs / 1000} s; the request was cancelled`,
        {
          remedy: 'Retry with a smaller request, or raise the forwarding timeout if the service is just slow.',
          data: { service: this.service, timeoutMs, ...(hardMaximum ? { maxTotalTimeoutMs } : {}) },
        },
      );
      cancel.abort(error);
      stop(error);
    };
    // Armed at the start and again at each progress: timeoutMs from now, never past the hard maximum.
    const arm = () => {
      if (timedOut || polled || heldSince !== undefined) return;
      clearTimeout(timer);
      const left = maxTotalTimeoutMs - (Date.now() - startedAt - heldMs);
      timer = setTimeout(() => fire(left < timeoutMs), Math.max(0, Math.min(timeoutMs, left)));
      timer.unref();
    };
    let unlisten: (() => void) | undefined;
    try {
      const result = await new Promise<T>((resolve, reject) => {
        stop = reject;
        arm();
        if (callerSignal?.aborted) onCallerAbort();
        else unlisten = listenAbort(callerSignal, onCallerAbort);
        send({
          timeoutMs,
          get signal() {
            return cancel.signal;
          },
          cancel,
          maxTotalTimeoutMs,
          progressed: arm,
          polling: () => {
            polled = true;
            clearTimeout(timer);
          },
          holding: (on) => {
            if (on && heldSince === undefined) {
              heldSince = Date.now();
              clearTimeout(timer);
            } else if (!on && heldSince !== undefined) {
              heldMs += Date.now() - heldSince;
              heldSince = undefined;
              arm();
            }
          },
        }).then(resolve, reject);
      });
      this.answered();
      // A result whose line bounds its size within the limit is not serialized again (sessions/sizeBound.ts).
      const bound = sizeBoundOf(result);
      const bytes =
        bound !== undefined && bound <= this.limits.maxResultBytes
          ? 0
          : Buffer.byteLength(JSON.stringify(result) ?? '', 'utf8');
      if (bytes > this.limits.maxResultBytes) {
        throw new SdkError(
          'result_too_large',
          `service "${this.service}" answered ${what} with ${bytes} bytes, over the ${this.limits.maxResultBytes}-byte limit`,
          {
            remedy: 'Ask for less (a narrower query, a page, a range), or raise the result limit.',
            data: { service: this.service, bytes, maxResultBytes: this.limits.maxResultBytes },
          },
        );
      }
      return result;
    } catch (error) {
      if (timedOut) this.failed();
      else if (callerSignal?.aborted) {
        // The caller gave up: says nothing about the service.
      } else if (isSdkError(error) && error.code === 'result_too_large') {
        // Counted as answered above.
      } else if (isSdkError(error) && (error.code === 'question_asked' || error.code === 'question_unanswered')) {
        // The service asked a question (sessions/elicitation.ts): it answered, it did not fail.
        this.answered();
      } else {
        // Not answered (a crash, a lost connection) or answered with a JSON-RPC error (the service's
        // handler threw on a request that passed the bridge's own checks): both fail the request and
        // count towards a rest. A tool result with `isError: true` is an answer and was counted above.
        this.failed();
      }
      throw error;
    } finally {
      clearTimeout(timer);
      unlisten?.();
      this.inFlight--;
    }
  }

  private answered(): void {
    const wasProbing = this.state === 'probing';
    this.consecutiveFailures = 0;
    this.state = 'open';
    if (wasProbing) this.onEvent?.({ kind: 'service_recovered', service: this.service });
  }

  private failed(): void {
    this.consecutiveFailures++;
    if (this.state === 'probing' || this.consecutiveFailures >= this.limits.failuresBeforeRest) {
      this.restUntil = this.now() + this.limits.restMs;
      this.state = 'resting';
      this.onEvent?.({
        kind: 'service_rested',
        service: this.service,
        failures: this.consecutiveFailures,
        untilMs: this.restUntil,
      });
    }
  }
}
