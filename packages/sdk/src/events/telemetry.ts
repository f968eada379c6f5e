/**
 * The telemetry seam (SPEC §11, docs/telemetry.md): what every layer calls to trace its work, and the only
 * telemetry file a layer imports. It imports nothing at run time: with OpenTelemetry export off (no
 * `OTEL_EXPORTER_OTLP_ENDPOINT`, `_TRACES_ENDPOINT` or `_METRICS_ENDPOINT`), {@link telemetry} is
 * `undefined` and a hot path pays one check of it. {@link startTelemetry} loads the implementation
 * (`telemetryExport.ts`, which loads the OpenTelemetry packages) by dynamic import, only when export is on.
 */

/** W3C trace context as carried in `params._meta`, in HTTP headers, or in a queue job. */
export interface TraceCarrier {
  traceparent?: string;
  tracestate?: string;
}

/** What a traced call to a service or a fixed tool is. */
export interface CallFacts {
  /** `tools/call`, `resources/read`, `prompts/get`. */
  method: string;
  /** The tool or prompt name, or the resource URI. */
  target: string;
  /** The service (or `scienceevolve` for the fixed catalog). */
  service: string;
  kind: 'project' | 'remote' | 'fixed';
  protocolVersion?: string | undefined;
  sessionId?: string | undefined;
  /** The call's arguments: recorded only when the operator turned it on, and then redacted. */
  arguments?: unknown;
}

/** How an attempt ended, as far as its span needs. */
export interface AttemptOutcome {
  attempt: { outcome: string | null; error: { code: string } | null };
}

/** A run event as the telemetry takes it (see events/runEvents.ts); its other fields are read as unknown. */
export interface TelemetryEvent {
  type: string;
  time: string;
  run: string;
}

/** The loaded implementation (events/telemetryExport.ts). */
export interface Telemetry {
  /** Starts the run's span (the active context's child, if any); returns its trace id. */
  runStarted(run: string, resumed: boolean): string;
  /** Runs `fn` with the run's span active, then ends the span and flushes (bounded). */
  inRun<T>(run: string, fn: () => Promise<T>): Promise<T>;
  /** Runs one attempt of `invocation` in its own span (under the invocation's span, created at its first attempt). */
  inAttempt<T extends AttemptOutcome>(
    facts: { run: string; invocation: string; agent: string; attempt: number },
    fn: () => Promise<T>,
  ): Promise<T>;
  /** Runs a call in a client span on the MCP conventions; the span is active while it runs (so it propagates). */
  inCall<T>(facts: CallFacts, fn: () => Promise<T>): Promise<T>;
  /** Runs `fn` in the context a client sent (a face's request), if it sent a valid `traceparent`. */
  continueFrom<T>(carrier: TraceCarrier | undefined, fn: () => T): T;
  /** The active context as a carrier, or undefined when no span is active. */
  carrier(): TraceCarrier | undefined;
  /** Runs a queue job's attempt in a consumer span under the context the job carries. */
  inQueueJob<T>(job: string, carrier: TraceCarrier | undefined, fn: () => Promise<T>): Promise<T>;
  /** Runs the submission of a queue job in a producer span. */
  inQueueSubmit<T>(job: string, fn: () => Promise<T>): Promise<T>;
  /** A journaled run event: spans of service starts, span events, metrics. */
  onEvent(event: TelemetryEvent): void;
  /**
   * A runner that runs a function in the context active now, unless a span is active where it is called
   * (a call that continues a client's trace keeps it).
   */
  contextRunner(): <T>(fn: () => T) => T;
  /** The AI SDK's `experimental_telemetry` setting for a model call. */
  aiTelemetry(agent: string): Record<string, unknown>;
  /** Flushes spans and metrics within the flush bound; reports dropped spans once on stderr. */
  flush(): Promise<void>;
}

let loaded: Telemetry | undefined;
let loading: Promise<Telemetry | undefined> | undefined;

/** The loaded telemetry, or undefined while export is off (the one check of a hot path). */
export function telemetry(): Telemetry | undefined {
  return loaded;
}

/**
 * Whether OTLP export is on in `env`: an `OTEL_EXPORTER_OTLP_ENDPOINT` (or its `_TRACES_`/`_METRICS_`
 * variant) that is not empty, and `OTEL_SDK_DISABLED` not `true`.
 */
export function exportConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false;
  return [
    'OTEL_EXPORTER_OTLP_ENDPOINT',
    'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT',
  ].some((name) => (env[name] ?? '').trim() !== '');
}

/**
 * Loads and starts the telemetry once per process when export is configured in `env` (default
 * `process.env`); otherwise loads nothing and resolves undefined. A bad setting never fails the caller:
 * it is reported once on stderr and export stays off.
 */
export function startTelemetry(env: NodeJS.ProcessEnv = process.env): Promise<Telemetry | undefined> {
  if (loaded !== undefined) return Promise.resolve(loaded);
  if (!exportConfigured(env)) return Promise.resolve(undefined);
  loading ??= import('./telemetryExport.js')
    .then((m) => {
      loaded = m.createTelemetry(env);
      return loaded;
    })
    .catch((error: unknown) => {
      process.stderr.write(
        `scienceevolve: OpenTelemetry export is off: ${error instanceof Error ? error.message : String(error)}\n`,
      );
      return undefined;
    });
  return loading;
}

/** `message` with the active trace context in `params._meta` when it is a request and a span is active. */
export function withTraceMeta<M extends object>(message: M): M {
  const carrier = loaded?.carrier();
  if (carrier === undefined) return message;
  const m = message as { method?: unknown; id?: unknown; params?: unknown };
  if (typeof m.method !== 'string' || m.id === undefined) return message;
  if (m.params !== undefined && (typeof m.params !== 'object' || m.params === null || Array.isArray(m.params))) {
    return message;
  }
  const params = (m.params ?? {}) as Record<string, unknown>;
  const meta = typeof params._meta === 'object' && params._meta !== null ? (params._meta as object) : {};
  return { ...message, params: { ...params, _meta: { ...meta, ...carrier } } };
}

/** The trace context a face's client sent in `params._meta`, if any (never throws). */
export function carrierOfMeta(params: unknown): TraceCarrier | undefined {
  const meta = (params as { _meta?: unknown } | null | undefined)?._meta;
  if (typeof meta !== 'object' || meta === null) return undefined;
  const { traceparent, tracestate } = meta as { traceparent?: unknown; tracestate?: unknown };
  if (typeof traceparent !== 'string') return undefined;
  return typeof tracestate === 'string' ? { traceparent, tracestate } : { traceparent };
}

/**
 * A `fetch` that adds the active trace context as `traceparent`/`tracestate` headers to each request
 * (per call, not per connection), or undefined while export is off.
 */
export function tracingFetch(): typeof fetch | undefined {
  if (loaded === undefined) return undefined;
  return (input, init) => {
    const carrier = loaded?.carrier();
    if (carrier === undefined) return fetch(input, init);
    const headers = new Headers(init?.headers);
    for (const [key, value] of Object.entries(carrier)) headers.set(key, value);
    return fetch(input, { ...init, headers });
  };
}

/** Runs `fn` continuing the trace a face's client sent (`_meta` or headers), when export is on and it sent one. */
export function continueTrace<T>(carrier: TraceCarrier | undefined, fn: () => T): T {
  return loaded === undefined || carrier === undefined ? fn() : loaded.continueFrom(carrier, fn);
}

/** {@link continueTrace} from a request's `params._meta`; with export off, one check and `fn()`. */
export function continueTraceOfMeta<T>(params: unknown, fn: () => T): T {
  return loaded === undefined ? fn() : continueTrace(carrierOfMeta(params), fn);
}

/** {@link continueTrace} from HTTP request headers; with export off, one check and `fn()`. */
export function continueTraceOfHeaders<T>(headers: Record<string, string | string[] | undefined>, fn: () => T): T {
  return loaded === undefined ? fn() : continueTrace(carrierOfHeaders(headers), fn);
}

/** The trace context in HTTP request headers (`traceparent`, `tracestate`), if any. */
export function carrierOfHeaders(headers: Record<string, string | string[] | undefined>): TraceCarrier | undefined {
  const traceparent = headers.traceparent;
  const tracestate = headers.tracestate;
  if (typeof traceparent !== 'string') return undefined;
  return typeof tracestate === 'string' ? { traceparent, tracestate } : { traceparent };
}
