/**
 * The spans and metrics of a run (docs/telemetry.md), loaded with `telemetryExport.ts` only when export
 * is on. Live spans: the run, each invocation (`invoke_agent <agent>`) and attempt, each call to a
 * service or a fixed tool (`tools/call <tool>` on the MCP semantic conventions), each queue job (send and
 * process). From the journal: each service start (`service.start <name>`, timed from its `service.ready`
 * or `service.failed` event, its wait at the admission gate as an attribute and an event), and span events
 * for rests, recoveries, catalog changes, retries and reconfigurations. No argument or result is recorded
 * unless the operator turned that on (`SCIENCEEVOLVE_OTEL_RECORD_CONTENT=true`), and then redacted.
 */
import {
  type Attributes,
  type Context,
  type Counter,
  context,
  type Histogram,
  type Meter,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
  type UpDownCounter,
} from '@opentelemetry/api';
import { redactUrlsIn } from '../redact.js';
import { errorType, recorded, recordFailure } from './telemetryRecords.js';
import type { AttemptOutcome, CallFacts, TelemetryEvent } from './telemetry.js';

/** The metric instruments; absent when metrics export is off. */
interface Instruments {
  callDuration: Histogram;
  inFlight: UpDownCounter;
  startDuration: Histogram;
  rests: Counter;
  tokens: Histogram;
}

function instruments(meter: Meter): Instruments {
  return {
    callDuration: meter.createHistogram('mcp.client.operation.duration', {
      unit: 's',
      description: 'Duration of an MCP request sent to a service, per service and tool',
    }),
    inFlight: meter.createUpDownCounter('scienceevolve.calls.in_flight', {
      unit: '{call}',
      description: 'Calls forwarded to services and not answered yet',
    }),
    startDuration: meter.createHistogram('scienceevolve.service.start.duration', {
      unit: 's',
      description: 'Time from launch to a service ready (initialized and listed), or failed',
    }),
    rests: meter.createCounter('scienceevolve.service.rests', {
      unit: '{rest}',
      description: 'Times a service was rested after failing calls in a row',
    }),
    tokens: meter.createHistogram('gen_ai.client.token.usage', {
      unit: '{token}',
      description: 'Tokens of a model call, by type (input, output)',
    }),
  };
}

function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Open spans by run and invocation, and what turns journal events into spans, events and metrics. */
export class SpanBook {
  private readonly runs = new Map<string, Span>();
  private readonly invocations = new Map<string, Span>();
  private readonly attempts = new Map<string, Span>();
  private readonly metrics: Instruments | undefined;

  constructor(
    private readonly tracer: Tracer,
    meter: Meter | undefined,
    private readonly recordContent: boolean,
  ) {
    this.metrics = meter === undefined ? undefined : instruments(meter);
  }

  startRun(run: string, resumed: boolean): string {
    this.runs.get(run)?.end();
    const span = this.tracer.startSpan(
      'scienceevolve.run',
      { kind: SpanKind.INTERNAL, attributes: { 'scienceevolve.run.id': run, 'scienceevolve.run.resumed': resumed } },
      context.active(),
    );
    this.runs.set(run, span);
    return span.spanContext().traceId;
  }

  async inRun<T>(run: string, fn: () => Promise<T>): Promise<T> {
    const span = this.runs.get(run);
    if (span === undefined) return fn();
    try {
      return await context.with(trace.setSpan(context.active(), span), fn);
    } catch (error) {
      recordFailure(span, error, true);
      throw error;
    } finally {
      span.end();
      this.runs.delete(run);
    }
  }

  async inAttempt<T extends AttemptOutcome>(
    facts: { run: string; invocation: string; agent: string; attempt: number },
    fn: () => Promise<T>,
  ): Promise<T> {
    let invocation = this.invocations.get(facts.invocation);
    if (invocation === undefined) {
      // Under the active span: the run's for Main, the `delegate` call's for a worker.
      invocation = this.tracer.startSpan(
        `invoke_agent ${facts.agent}`,
        {
          kind: SpanKind.INTERNAL,
          attributes: {
            'gen_ai.operation.name': 'invoke_agent',
            'gen_ai.agent.name': facts.agent,
            'scienceevolve.run.id': facts.run,
            'scienceevolve.invocation.id': facts.invocation,
          },
        },
        context.active(),
      );
      this.invocations.set(facts.invocation, invocation);
    }
    const parent = trace.setSpan(context.active(), invocation);
    const span = this.tracer.startSpan(
      'scienceevolve.attempt',
      {
        attributes: {
          'scienceevolve.invocation.id': facts.invocation,
          'gen_ai.agent.name': facts.agent,
          'scienceevolve.attempt': facts.attempt,
        },
      },
      parent,
    );
    this.attempts.set(facts.invocation, span);
    try {
      const result = await context.with(trace.setSpan(parent, span), fn);
      const { outcome, error } = result.attempt;
      span.setAttribute('scienceevolve.attempt.outcome', outcome ?? 'unknown');
      if (outcome === 'failed') {
        span.setStatus({ code: SpanStatusCode.ERROR });
        if (error !== null) span.setAttribute('error.type', error.code);
      }
      return result;
    } catch (error) {
      recordFailure(span, error, true);
      throw error;
    } finally {
      span.end();
      if (this.attempts.get(facts.invocation) === span) this.attempts.delete(facts.invocation);
    }
  }

  async inCall<T>(facts: CallFacts, fn: () => Promise<T>): Promise<T> {
    // A resource URI may carry credentials (user info, a signed query): shown as every output shows a URL.
    const target = facts.method === 'resources/read' ? redactUrlsIn(facts.target) : facts.target;
    const attributes: Attributes = {
      'mcp.method.name': facts.method,
      'scienceevolve.service': facts.service,
      'scienceevolve.service.kind': facts.kind,
    };
    if (facts.method === 'tools/call') {
      attributes['gen_ai.tool.name'] = facts.target;
      attributes['gen_ai.operation.name'] = 'execute_tool';
    } else if (facts.method === 'prompts/get') attributes['gen_ai.prompt.name'] = facts.target;
    else if (facts.method === 'resources/read') attributes['mcp.resource.uri'] = target;
    if (facts.protocolVersion !== undefined) attributes['mcp.protocol.version'] = facts.protocolVersion;
    if (facts.sessionId !== undefined) attributes['mcp.session.id'] = facts.sessionId;
    if (this.recordContent && facts.arguments !== undefined) {
      attributes['gen_ai.tool.call.arguments'] = recorded(facts.arguments);
    }
    const span = this.tracer.startSpan(
      `${facts.method} ${target}`,
      { kind: SpanKind.CLIENT, attributes },
      context.active(),
    );
    const metricAttributes: Attributes = {
      'mcp.method.name': facts.method,
      'scienceevolve.service': facts.service,
      ...(facts.method === 'tools/call' ? { 'gen_ai.tool.name': facts.target } : {}),
    };
    this.metrics?.inFlight.add(1, metricAttributes);
    const started = performance.now();
    let failure: string | undefined;
    try {
      const result = await context.with(trace.setSpan(context.active(), span), fn);
      if ((result as { isError?: unknown } | null)?.isError === true) failure = 'tool_error';
      if (this.recordContent) span.setAttribute('gen_ai.tool.call.result', recorded(result));
      return result;
    } catch (error) {
      failure = errorType(error);
      recordFailure(span, error);
      throw error;
    } finally {
      if (failure !== undefined) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.setAttribute('error.type', failure);
      }
      span.end();
      this.metrics?.inFlight.add(-1, metricAttributes);
      this.metrics?.callDuration.record((performance.now() - started) / 1000, {
        ...metricAttributes,
        ...(failure === undefined ? {} : { 'error.type': failure }),
      });
    }
  }

  async inMessage<T>(
    operation: 'send' | 'process',
    job: string,
    parent: Context,
    kind: SpanKind,
    fn: () => Promise<T>,
  ): Promise<T> {
    const span = this.tracer.startSpan(
      `${operation} invocations`,
      {
        kind,
        attributes: {
          'messaging.system': 'bullmq',
          'messaging.operation.type': operation,
          'messaging.destination.name': 'invocations',
          'messaging.message.id': job,
        },
      },
      parent,
    );
    try {
      return await context.with(trace.setSpan(parent, span), fn);
    } catch (error) {
      recordFailure(span, error, true);
      throw error;
    } finally {
      span.end();
    }
  }

  onEvent(journaled: TelemetryEvent): void {
    const event = journaled as TelemetryEvent & Record<string, unknown>;
    const invocation = str(event.invocation);
    const attempt = invocation === undefined ? undefined : this.attempts.get(invocation);
    const at = Date.parse(event.time);
    const time = Number.isNaN(at) ? undefined : at;
    switch (event.type) {
      case 'run.finished': {
        const span = this.runs.get(event.run);
        const status = str(event.status) ?? 'unknown';
        span?.setAttribute('scienceevolve.run.status', status);
        if (status === 'failed') span?.setStatus({ code: SpanStatusCode.ERROR });
        return;
      }
      case 'invocation.finished': {
        if (invocation === undefined) return;
        const span = this.invocations.get(invocation);
        if (span === undefined) return;
        const status = str(event.status) ?? 'unknown';
        span.setAttribute('scienceevolve.invocation.status', status);
        if (status === 'failed') span.setStatus({ code: SpanStatusCode.ERROR });
        span.end(time);
        this.invocations.delete(invocation);
        return;
      }
      case 'invocation.attempt_failed':
        this.invocations
          .get(invocation ?? '')
          ?.addEvent(
            'retry',
            { 'scienceevolve.attempt': num(event.attempt) ?? 0, 'scienceevolve.will_retry': event.willRetry === true },
            time,
          );
        return;
      case 'service.ready':
      case 'service.failed':
        this.serviceStart(event, attempt, time);
        return;
      case 'service.rested':
        this.metrics?.rests.add(1, { 'scienceevolve.service': str(event.service) ?? '' });
        attempt?.addEvent('rest', { 'scienceevolve.service': str(event.service) ?? '' }, time);
        return;
      case 'service.recovered':
        attempt?.addEvent('recovery', { 'scienceevolve.service': str(event.service) ?? '' }, time);
        return;
      case 'service.catalog_changed':
        attempt?.addEvent('catalog change', { 'scienceevolve.service': str(event.service) ?? '' }, time);
        return;
      case 'service.exited':
        if (event.expected !== true) {
          attempt?.addEvent('service exited', { 'scienceevolve.service': str(event.service) ?? '' }, time);
        }
        return;
      case 'model.retry':
        attempt?.addEvent(
          'retry',
          { 'gen_ai.request.model': str(event.model) ?? '', 'scienceevolve.retry': num(event.attempt) ?? 0 },
          time,
        );
        return;
      case 'workflow.reconfigured':
        attempt?.addEvent('workflow.reconfigured', { 'scienceevolve.workflow.version': num(event.version) ?? 0 }, time);
        return;
      case 'model.called': {
        const usage = (event.usage ?? {}) as Record<string, unknown>;
        const model = str(event.model) ?? '';
        const input = num(usage.inputTokens);
        const output = num(usage.outputTokens);
        attempt?.addEvent(
          'model.called',
          {
            'gen_ai.request.model': model,
            ...(input === undefined ? {} : { 'gen_ai.usage.input_tokens': input }),
            ...(output === undefined ? {} : { 'gen_ai.usage.output_tokens': output }),
          },
          time,
        );
        if (input !== undefined) {
          this.metrics?.tokens.record(input, { 'gen_ai.token.type': 'input', 'gen_ai.request.model': model });
        }
        if (output !== undefined) {
          this.metrics?.tokens.record(output, { 'gen_ai.token.type': 'output', 'gen_ai.request.model': model });
        }
        return;
      }
      default:
        return;
    }
  }

  /** A service start's span, timed back from its ready (or failed) event. */
  private serviceStart(event: Record<string, unknown>, attempt: Span | undefined, end: number | undefined): void {
    const service = str(event.service) ?? '';
    const startMs = num(event.startMs);
    const queuedMs = num(event.queuedMs);
    // The span covers the wait at the admission gate (before the start) and the start itself.
    const start = end !== undefined && startMs !== undefined ? end - startMs - (queuedMs ?? 0) : end;
    const parent = attempt === undefined ? context.active() : trace.setSpan(context.active(), attempt);
    const attributes: Attributes = {
      'scienceevolve.service': service,
      'scienceevolve.service.kind': str(event.kind) ?? '',
      ...(str(event.digest) === undefined ? {} : { 'scienceevolve.service.digest': str(event.digest) }),
      ...(queuedMs === undefined ? {} : { 'scienceevolve.service.queued_ms': queuedMs }),
      ...(event.prestarted === true ? { 'scienceevolve.service.prestarted': true } : {}),
      ...(str(event.protocolVersion) === undefined ? {} : { 'mcp.protocol.version': str(event.protocolVersion) }),
    };
    const span = this.tracer.startSpan(
      `service.start ${service}`,
      { kind: SpanKind.INTERNAL, attributes, ...(start === undefined ? {} : { startTime: start }) },
      parent,
    );
    if (queuedMs !== undefined && queuedMs > 0 && start !== undefined) {
      span.addEvent('admitted', { 'scienceevolve.service.queued_ms': queuedMs }, start + queuedMs);
    }
    if (event.type === 'service.failed') {
      const code = str((event.error as { code?: unknown } | undefined)?.code) ?? 'start_failed';
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.setAttribute('error.type', code);
    }
    span.end(end);
    if (startMs !== undefined) {
      this.metrics?.startDuration.record(startMs / 1000, {
        'scienceevolve.service': service,
        ...(event.type === 'service.failed' ? { 'error.type': 'start_failed' } : {}),
      });
    }
  }
}
