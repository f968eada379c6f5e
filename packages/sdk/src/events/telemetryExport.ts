/**
 * OpenTelemetry export, loaded by `telemetry.ts` only when export is on (docs/telemetry.md): the official
 * OpenTelemetry JS SDK's tracer and meter providers with OTLP/HTTP exporters (`http/protobuf` by default,
 * `http/json` on `OTEL_EXPORTER_OTLP_PROTOCOL`), the W3C trace-context propagator, and an
 * AsyncLocalStorage context manager so that the active span follows a run's calls (and the AI SDK's own
 * model-call spans find their parent). Spans are batched in a bounded queue; a flush never takes longer
 * than the flush bound, and spans that could not be exported are counted and reported once on stderr.
 */
import {
  type Context,
  context,
  SpanKind,
  trace,
  type Tracer,
  defaultTextMapGetter,
  defaultTextMapSetter,
  isSpanContextValid,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ExportResultCode, W3CTraceContextPropagator, type ExportResult } from '@opentelemetry/core';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import type { AttemptOutcome, CallFacts, Telemetry, TelemetryEvent, TraceCarrier } from './telemetry.js';
import { SpanBook } from './telemetrySpans.js';
import { errorText, redactText, redactUrlsIn } from '../redact.js';

/** Milliseconds a flush may take before the rest is given up (and counted as dropped): 2,000. */
export const FLUSH_BOUND_MS = 2000;
/** Spans held for export at most; past it new spans are dropped (and counted): 2,048. */
export const SPAN_QUEUE_SIZE = 2048;

/** What the OTLP protocol variables ask for, per signal: `http/protobuf` (default) or `http/json`. */
function protocolOf(env: NodeJS.ProcessEnv, signal: 'TRACES' | 'METRICS'): 'http/protobuf' | 'http/json' {
  const asked = (env[`OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`] ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? '').trim();
  if (asked === '' || asked === 'http/protobuf') return 'http/protobuf';
  if (asked === 'http/json') return 'http/json';
  process.stderr.write(
    `scienceevolve: OTEL_EXPORTER_OTLP_PROTOCOL "${asked}" is not supported (http/protobuf or http/json); using http/protobuf\n`,
  );
  return 'http/protobuf';
}

function wants(env: NodeJS.ProcessEnv, signal: 'TRACES' | 'METRICS'): boolean {
  const exporter = (env[`OTEL_${signal}_EXPORTER`] ?? '').trim().toLowerCase();
  if (exporter === 'none') return false;
  return (
    (env.OTEL_EXPORTER_OTLP_ENDPOINT ?? '').trim() !== '' ||
    (env[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`] ?? '').trim() !== ''
  );
}

/**
 * The URL of a signal's export: `OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT` as it is, else
 * `OTEL_EXPORTER_OTLP_ENDPOINT` with `/v1/traces` or `/v1/metrics` appended (the specification's rule).
 */
function signalUrl(env: NodeJS.ProcessEnv, signal: 'TRACES' | 'METRICS'): { url: string } {
  const own = (env[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`] ?? '').trim();
  if (own !== '') return { url: own };
  const base = (env.OTEL_EXPORTER_OTLP_ENDPOINT ?? '').trim();
  return { url: `${base.endsWith('/') ? base : `${base}/`}v1/${signal.toLowerCase()}` };
}

/** The request timeout of an exporter: the operator's, else the flush bound (a hanging collector holds nothing). */
function exporterTimeout(env: NodeJS.ProcessEnv, signal: 'TRACES' | 'METRICS'): { timeoutMillis?: number } {
  const set = env[`OTEL_EXPORTER_OTLP_${signal}_TIMEOUT`] ?? env.OTEL_EXPORTER_OTLP_TIMEOUT;
  return set !== undefined && set.trim() !== '' ? {} : { timeoutMillis: FLUSH_BOUND_MS };
}

/** `OTEL_METRIC_EXPORT_INTERVAL` (decimal ms, 1,000 … 3,600,000), else 60,000. */
function metricInterval(env: NodeJS.ProcessEnv): number {
  const text = (env.OTEL_METRIC_EXPORT_INTERVAL ?? '').trim();
  const value = /^\d{1,7}$/.test(text) ? Number(text) : Number.NaN;
  return value >= 1000 && value <= 3_600_000 ? value : 60_000;
}

/** Counts what was handed to the exporter and what it delivered; the difference is what was dropped. */
class CountingExporter implements SpanExporter {
  delivered = 0;
  constructor(private readonly inner: SpanExporter) {}
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) this.delivered += spans.length;
      done(result);
    });
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** Counts every sampled span that ended (before the batch queue, which may drop it). */
class EndedCounter implements SpanProcessor {
  ended = 0;
  onStart(): void {}
  onEnd(span: ReadableSpan): void {
    if ((span.spanContext().traceFlags & 1) === 1) this.ended += 1;
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** Resolves when `work` settles or after `ms`, whichever is first (never rejects). */
function bounded(work: Promise<unknown>, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
    work.then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      () => {
        clearTimeout(timer);
        resolve();
      },
    );
  });
}

/**
 * Starts export as `env` configures it (see the module comment). A setting the exporters refuse throws
 * an error whose message shows no URL credentials and no header value.
 */
export function createTelemetry(env: NodeJS.ProcessEnv = process.env): Telemetry {
  try {
    return create(env);
  } catch (error) {
    const headers = [
      'OTEL_EXPORTER_OTLP_HEADERS',
      'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
      'OTEL_EXPORTER_OTLP_METRICS_HEADERS',
    ]
      .map((name) => env[name] ?? '')
      .flatMap((value) => value.split(',').map((pair) => pair.slice(pair.indexOf('=') + 1)));
    throw new Error(redactText(redactUrlsIn(errorText(error)), { values: headers }));
  }
}

function create(env: NodeJS.ProcessEnv): Telemetry {
  // The active context follows async work; an embedding application's own manager is kept if it has one.
  const manager = new AsyncLocalStorageContextManager();
  if (!context.setGlobalContextManager(manager.enable())) manager.disable();
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': 'scienceevolve' }))
    .merge(detectResources({ detectors: [envDetector] }));
  const recordContent = (env.SCIENCEEVOLVE_OTEL_RECORD_CONTENT ?? '').trim().toLowerCase() === 'true';

  const counter = new EndedCounter();
  let exporter: CountingExporter | undefined;
  const processors: SpanProcessor[] = [counter];
  if (wants(env, 'TRACES')) {
    const options = { ...exporterTimeout(env, 'TRACES'), ...signalUrl(env, 'TRACES') };
    exporter = new CountingExporter(
      protocolOf(env, 'TRACES') === 'http/json' ? new JsonTraceExporter(options) : new ProtoTraceExporter(options),
    );
    processors.push(
      new BatchSpanProcessor(exporter, {
        maxQueueSize: SPAN_QUEUE_SIZE,
        maxExportBatchSize: 512,
        scheduledDelayMillis: 1000,
        exportTimeoutMillis: FLUSH_BOUND_MS,
      }),
    );
  }
  const tracerProvider = new BasicTracerProvider({ resource, spanProcessors: processors });
  const tracer: Tracer = tracerProvider.getTracer('scienceevolve');

  let meterProvider: MeterProvider | undefined;
  if (wants(env, 'METRICS')) {
    const options = { ...exporterTimeout(env, 'METRICS'), ...signalUrl(env, 'METRICS') };
    const metricExporter: PushMetricExporter =
      protocolOf(env, 'METRICS') === 'http/json' ? new JsonMetricExporter(options) : new ProtoMetricExporter(options);
    meterProvider = new MeterProvider({
      resource,
      readers: [
        new PeriodicExportingMetricReader({
          exporter: metricExporter,
          exportIntervalMillis: metricInterval(env),
          exportTimeoutMillis: FLUSH_BOUND_MS,
        }),
      ],
    });
  }
  const book = new SpanBook(tracer, meterProvider?.getMeter('scienceevolve'), recordContent);
  const propagator = new W3CTraceContextPropagator();
  let reported = false;

  const carrier = (): TraceCarrier | undefined => {
    const active = context.active();
    const span = trace.getSpan(active);
    if (span === undefined || !isSpanContextValid(span.spanContext())) return undefined;
    const out: TraceCarrier = {};
    propagator.inject(active, out, defaultTextMapSetter);
    return out.traceparent === undefined ? undefined : out;
  };
  const extract = (from: TraceCarrier | undefined): Context | undefined => {
    if (typeof from?.traceparent !== 'string') return undefined;
    const ctx = propagator.extract(context.active(), from, defaultTextMapGetter);
    const sc = trace.getSpanContext(ctx);
    return sc !== undefined && isSpanContextValid(sc) ? ctx : undefined;
  };
  const flush = async (): Promise<void> => {
    await bounded(
      Promise.all([tracerProvider.forceFlush(), meterProvider?.forceFlush() ?? Promise.resolve()]),
      FLUSH_BOUND_MS,
    );
    const dropped = counter.ended - (exporter?.delivered ?? counter.ended);
    if (dropped > 0 && !reported) {
      reported = true;
      process.stderr.write(
        `scienceevolve: OpenTelemetry: ${dropped} span${dropped === 1 ? '' : 's'} could not be exported (the collector is down or refused them); the run is not affected\n`,
      );
    }
  };

  return {
    runStarted: (run, resumed) => book.startRun(run, resumed),
    inRun: async (run, fn) => {
      try {
        return await book.inRun(run, fn);
      } finally {
        await flush();
      }
    },
    inAttempt: <T extends AttemptOutcome>(
      facts: { run: string; invocation: string; agent: string; attempt: number },
      fn: () => Promise<T>,
    ) => book.inAttempt(facts, fn),
    inCall: <T>(facts: CallFacts, fn: () => Promise<T>) => book.inCall(facts, fn),
    continueFrom: <T>(from: TraceCarrier | undefined, fn: () => T): T => {
      const ctx = extract(from);
      return ctx === undefined ? fn() : context.with(ctx, fn);
    },
    carrier,
    contextRunner: () => {
      const captured = context.active();
      return <T>(fn: () => T): T => (trace.getSpan(context.active()) === undefined ? context.with(captured, fn) : fn());
    },
    inQueueSubmit: <T>(job: string, fn: () => Promise<T>) =>
      book.inMessage('send', job, context.active(), SpanKind.PRODUCER, fn),
    inQueueJob: async <T>(job: string, from: TraceCarrier | undefined, fn: () => Promise<T>) => {
      try {
        return await book.inMessage('process', job, extract(from) ?? context.active(), SpanKind.CONSUMER, fn);
      } finally {
        // In the background: the job's result is not held up by the collector (the worker's close waits).
        void flush();
      }
    },
    onEvent: (event: TelemetryEvent) => {
      try {
        book.onEvent(event);
      } catch {
        // Telemetry never breaks the run's journal.
      }
    },
    aiTelemetry: (agent: string) => ({
      isEnabled: true,
      tracer,
      functionId: agent,
      recordInputs: recordContent,
      recordOutputs: recordContent,
    }),
    flush,
  };
}
