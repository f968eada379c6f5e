/**
 * The dispatch room of a surface: a request by surface name or URI goes to the session (under its gate)
 * or in-process handler the catalog routes it to; `tools/call` arguments are checked against the tool's
 * input schema first; the bridge's refusals of a tool call come back as tool results with `isError`.
 * Dispatch reads the catalog through a getter, so a rebuilt catalog takes effect at the next request.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { ERROR_CODES, type ErrorCode, isSdkError, SdkError } from '../errors.js';
import { redactUrlsIn } from '../redact.js';
import { checkImageLimits } from './resultLimits.js';
import type { ForwardOptions } from '../sessions/serviceSession.js';
import { holdingWhileAsked } from '../sessions/elicitation.js';
import { takeAnswer, taskOptions } from './surfaceTasks.js';
import { isServiceAnswer } from './serviceGate.js';
import { callCancelOf } from '../sessions/callCancel.js';
import type { Surface } from './surfaceTypes.js';
import {
  type RemovedTool,
  type ResourceOwner,
  type SurfaceCatalog,
  type ToolTarget,
  unknownResource,
} from './surfaceCatalog.js';

/** The `_meta` key of a bridge refusal in a tool result: `{ code, message, remedy?, data? }`. */
export const ERROR_META_KEY = 'scienceevolve/error';

/** A tool result carrying a bridge refusal. */
export function refusalResult(error: SdkError): CallToolResult {
  const text = error.remedy === undefined ? error.message : `${error.message}. ${error.remedy}`;
  return { content: [{ type: 'text', text }], isError: true, _meta: { [ERROR_META_KEY]: error.toJSON() } };
}

const REFUSED_AS_TOOL_ERROR: ReadonlySet<string> = new Set([
  'service_busy',
  'service_resting',
  'forward_timeout',
  'result_too_large',
  'image_too_large',
]);

/** The three requests a surface dispatches. */
export type SurfaceDispatch = Pick<Surface, 'callTool' | 'readResource' | 'getPrompt'>;

/**
 * Dispatches requests by the catalog `catalog()` returns at each request (read once per request).
 *
 * @param removedTools - surface names a list change took away, answered `tool_removed`
 */
export function createDispatch(
  catalog: () => SurfaceCatalog,
  removedTools: ReadonlyMap<string, RemovedTool> = new Map(),
): SurfaceDispatch {
  // URIs first seen in a tool result (resource links) are routed to the service that returned them.
  const learnedOwners = new Map<string, ResourceOwner>();

  const resourceOwnerFor = (uri: string): ResourceOwner => {
    const current = catalog();
    const owner = current.listedOwnerFor(uri) ?? learnedOwners.get(uri) ?? current.soleResourceOwner;
    if (owner === undefined) throw unknownResource(uri);
    return owner;
  };

  const learnLinks = (result: CallToolResult, owner: ResourceOwner): void => {
    const current = catalog();
    for (const block of result.content ?? []) {
      if (block.type === 'resource_link' && !current.lists(block.uri) && !learnedOwners.has(block.uri)) {
        learnedOwners.set(block.uri, owner);
      }
    }
  };

  return {
    async callTool(name, args, requestOptions = {}) {
      const target = catalog().toolTargets.get(name);
      const removed = target === undefined ? removedTools.get(name) : undefined;
      if (removed !== undefined) {
        throw new SdkError(
          'tool_removed',
          `tool "${name}" was removed at ${removed.at}: service "${removed.service}" no longer lists tool "${removed.sourceName}" (it announced a list change)`,
          {
            remedy: 'List the tools again (tools/list) and call one that is listed now.',
            data: { tool: name, service: removed.service, sourceName: removed.sourceName, removedAt: removed.at },
          },
        );
      }
      if (target === undefined) {
        throw new SdkError('unknown_tool', `this surface has no tool "${name}"`, {
          remedy: 'Call a tool by a name from tools/list.',
          data: { tool: name },
        });
      }
      const { input, answer } = takeAnswer(target.tool.inputSchema, args ?? {});
      const refusal = checkArguments(target, input);
      if (refusal !== undefined) return refusalResult(refusal);
      if (target.local !== undefined) {
        const signal = requestOptions.signal ?? new AbortController().signal;
        try {
          return await target.local.handler(input, { signal, surfaceName: name });
        } catch (error) {
          if (signal.aborted) throw error;
          return refusalResult(asSdkError(error, `tool "${name}" failed`));
        }
      }
      const { session, gate } = target.session!;
      const onProgress = requestOptions.onProgress;
      // The caller's cancellation: a face's CallCancel (sessions/callCancel.ts; its `signal` is a getter
      // that would build an AbortSignal, so it is not read here), or the caller's signal.
      const caller = callCancelOf(requestOptions) ?? requestOptions.signal;
      // A call journaled as an accepted task by an earlier host re-attaches to it (never calls again).
      const resume = requestOptions.task?.resume;
      const forwardTo = (forward: ForwardOptions) =>
        resume !== undefined && session.resumeTask !== undefined
          ? session.resumeTask(target.route.sourceName, resume, forward)
          : session.callTool(target.route.sourceName, input, forward);
      try {
        const what = `tool "${target.route.sourceName}"`;
        const result = checkImageLimits(
          await gate.run(
            what,
            ({ timeoutMs, cancel, maxTotalTimeoutMs, progressed, polling, holding }) =>
              forwardTo({
                timeoutMs,
                cancel,
                get signal() {
                  return cancel.signal;
                },
                task: taskOptions(requestOptions, target.route.service, target.route.sourceName, polling),
                ...(requestOptions.question === undefined && answer === undefined
                  ? {}
                  : {
                      // While the operator answers, the gate's timeout waits (a person is not a slow service).
                      question: holdingWhileAsked(
                        { ...requestOptions.question, ...(answer === undefined ? {} : { answer }) },
                        holding,
                      ),
                    }),
                ...(onProgress === undefined
                  ? {}
                  : {
                      maxTotalTimeoutMs,
                      onProgress: (progress) => {
                        progressed();
                        onProgress(progress);
                      },
                    }),
              }),
            caller,
          ),
          target.route.service,
          what,
        );
        learnLinks(result, { service: session.name, session, gate });
        return result;
      } catch (error) {
        if (caller?.aborted) throw error;
        if (isSdkError(error) && REFUSED_AS_TOOL_ERROR.has(error.code)) return refusalResult(error as SdkError);
        if (isServiceAnswer(error)) throw error;
        return refusalResult(
          asSdkError(error, `service "${target.route.service}" did not answer tool "${target.route.sourceName}"`),
        );
      }
    },

    async readResource(uri, requestOptions = {}) {
      const owner = resourceOwnerFor(uri);
      const what = `resource "${redactUrlsIn(uri)}"`;
      const result = await owner.gate.run(
        what,
        (forward) => owner.session.readResource(uri, forward),
        requestOptions.signal,
      );
      return checkImageLimits(result, owner.service, what);
    },

    async getPrompt(name, args, requestOptions = {}) {
      const target = catalog().promptTargets.get(name);
      if (target === undefined) {
        throw new SdkError('unknown_reference', `this surface has no prompt "${name}"`, {
          remedy: 'Get a prompt by a name from prompts/list.',
          data: { prompt: name },
        });
      }
      const what = `prompt "${target.route.sourceName}"`;
      const result = await target.gate.run(
        what,
        (forward) => target.session.getPrompt(target.route.sourceName, args, forward),
        requestOptions.signal,
      );
      return checkImageLimits(result, target.route.service, what);
    },
  };
}

function checkArguments(target: ToolTarget, input: Record<string, unknown>): SdkError | undefined {
  if (target.validate === undefined) {
    try {
      const validator = target.validatorSource.getValidator(target.tool.inputSchema as never);
      target.validate = (value) => validator(value);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return new SdkError(
        'invalid_arguments',
        `the input schema of tool "${target.route.name}" cannot be used to check arguments: ${reason}`,
        {
          remedy:
            'Fix the tool\'s inputSchema at its service (JSON Schema 2020-12, or draft-07 declared by "$schema").',
          data: { tool: target.route.name },
        },
      );
    }
  }
  const outcome = target.validate(input);
  if (outcome.valid) return undefined;
  return new SdkError(
    'invalid_arguments',
    `arguments of tool "${target.route.name}" do not match its input schema: ${outcome.errorMessage ?? 'invalid'}`,
    {
      remedy: 'Call the tool again with arguments that match its inputSchema from tools/list.',
      data: { tool: target.route.name },
    },
  );
}

function asSdkError(error: unknown, context: string): SdkError {
  if (isSdkError(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  const sdkCode: ErrorCode =
    typeof code === 'string' && (ERROR_CODES as readonly string[]).includes(code) ? (code as ErrorCode) : 'internal';
  return new SdkError(sdkCode, `${context}: ${message}`, { cause: error });
}
