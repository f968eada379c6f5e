/**
 * `tools/call` with the service's result kept as it arrived: the client's era codec still decodes the
 * wire form, but the result is not parsed into the SDK's schema (which would drop fields it does not know,
 * such as a content block's vendor fields, and rebuild every object). What the bridge relies on is
 * checked: the result is an object, `content` (when present) an array of objects, `isError` (when
 * present) a boolean; and, as the SDK client does, `structuredContent` is checked against the tool's
 * listed output schema.
 */
import {
  type CallToolResult,
  type Client,
  ProtocolError,
  ProtocolErrorCode,
  type RequestOptions,
  SdkError as McpSdkError,
  SdkErrorCode,
  type StandardSchemaV1,
  type Tool,
} from '@modelcontextprotocol/client';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv';
import type { DirectRequestOptions, DirectRequests } from './directRequests.js';
import { isPlainObject } from '../plainObject.js';

function shapeProblem(value: unknown): string | undefined {
  if (!isPlainObject(value)) return 'the result is not an object';
  if (value.content !== undefined) {
    if (!Array.isArray(value.content)) return '`content` is not an array';
    if (value.content.some((block) => !isPlainObject(block) || typeof block.type !== 'string')) {
      return '`content` holds a block that is not an object with a `type`';
    }
  }
  if (value.isError !== undefined && typeof value.isError !== 'boolean') return '`isError` is not a boolean';
  return undefined;
}

/** The result "schema" of a kept result: the shape checks above, the value itself unchanged (also read by sessions/tasks.ts). */
export const KEPT_RESULT: StandardSchemaV1<unknown, CallToolResult> = {
  '~standard': {
    version: 1,
    vendor: 'scienceevolve',
    validate(value) {
      const problem = shapeProblem(value);
      return problem === undefined ? { value: value as CallToolResult } : { issues: [{ message: problem }] };
    },
  },
};

type OutputCheck = (value: unknown) => { valid: boolean; errorMessage?: string | undefined };

/** Output-schema checks of one client's tools, compiled at first use, one validator per client. */
export class OutputSchemaChecks {
  private readonly validator = new AjvJsonSchemaValidator();
  private readonly compiled = new WeakMap<object, OutputCheck | Error>();

  /** Throws as the SDK client does when `result` does not match `tool`'s output schema. */
  check(tool: Tool | undefined, result: CallToolResult): void {
    const schema = tool?.outputSchema;
    if (schema === undefined || result.isError) return;
    let check = this.compiled.get(schema);
    if (check === undefined) {
      try {
        check = this.validator.getValidator(schema as never) as OutputCheck;
      } catch (error) {
        check = error instanceof Error ? error : new Error(String(error));
      }
      this.compiled.set(schema, check);
    }
    if (check instanceof Error) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Tool '${tool?.name}' has an invalid outputSchema: ${check.message.slice(0, 200)}`,
      );
    }
    if (result.structuredContent === undefined) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidRequest,
        `Tool ${tool?.name} has an output schema but did not return structured content`,
      );
    }
    const outcome = check(result.structuredContent);
    if (!outcome.valid) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Structured content does not match the tool's output schema: ${outcome.errorMessage}`,
      );
    }
  }
}

/** Calls `name` on `client`, the result kept as received (see the module comment). */
export async function callToolKept(
  client: Client,
  params: { name: string; arguments?: Record<string, unknown>; _meta?: { progressToken: string | number } },
  tool: Tool | undefined,
  checks: OutputSchemaChecks,
  options: RequestOptions,
): Promise<CallToolResult> {
  const result = await client.request({ method: 'tools/call', params }, KEPT_RESULT, options);
  checks.check(tool, result);
  return result;
}

/**
 * {@link callToolKept} sent beside the client (sessions/directRequests.ts): the same checks, the same
 * errors (an invalid result fails `INVALID_RESULT` with the client's words), the result as received.
 */
export async function callToolDirect(
  direct: DirectRequests,
  params: { name: string; arguments?: Record<string, unknown>; _meta?: { progressToken: string | number } },
  tool: Tool | undefined,
  checks: OutputSchemaChecks,
  options: DirectRequestOptions,
): Promise<CallToolResult> {
  const value = await direct.request('tools/call', params, options);
  const problem = shapeProblem(value);
  if (problem !== undefined)
    throw new McpSdkError(SdkErrorCode.InvalidResult, `Invalid result for tools/call: ${problem}`);
  const result = value as CallToolResult;
  checks.check(tool, result);
  return result;
}
