/**
 * The input limits of every face, in one place: the stdio face (and `bridge http-to-stdio`) applies them
 * to each line, the HTTP face to each request body. A message over the size limit, nested deeper than the
 * depth limit (checked before parsing), a JSON-RPC batch, unparsable JSON and a value that is not a
 * JSON-RPC message are each refused with a JSON-RPC error (`id: null`, or the request's id when it had
 * one) and never reach the MCP server.
 */
import { type JSONRPCMessage, parseJSONRPCMessage } from '@modelcontextprotocol/server';
import { isPlainObject } from '../plainObject.js';

/** The limits of one incoming message. */
export interface InputLimits {
  /** Bytes of one message (a stdio line without its newline, or an HTTP body). Default 4,194,304 (4 MiB). */
  maxMessageBytes: number;
  /** Nesting of arrays and objects in one message. Default 64. */
  maxDepth: number;
}

/** The default {@link InputLimits}: 4 MiB, 64 levels. */
export const DEFAULT_INPUT_LIMITS: Readonly<InputLimits> = Object.freeze({
  maxMessageBytes: 4 * 1024 * 1024,
  maxDepth: 64,
});

/** JSON-RPC's "invalid request" and "parse error" codes. */
export const INVALID_REQUEST = -32600;
export const PARSE_ERROR = -32700;

/** Why a message was refused: the JSON-RPC error to answer with. */
export interface InputRefusal {
  code: number;
  message: string;
  id: string | number | null;
}

/** The deepest nesting of `[`/`{` in `text`, outside strings; stops counting past `limit`. */
export function jsonDepth(text: string, limit = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > max) {
        max = depth;
        if (max > limit) return max;
      }
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}

/**
 * Whether `text` holds at most `limit` opening brackets (`[` and `{`, in strings or not), so that it cannot
 * nest deeper than `limit`: found with the native `indexOf`, without walking the text a character at a time.
 */
function fewBrackets(text: string, limit: number): boolean {
  let count = 0;
  for (const bracket of ['{', '[']) {
    for (let at = text.indexOf(bracket); at !== -1; at = text.indexOf(bracket, at + 1)) {
      if (++count > limit) return false;
    }
  }
  return true;
}

/** The refusal of a message of `size` bytes over `limits.maxMessageBytes`. */
export function oversized(size: number, limits: InputLimits): InputRefusal {
  return {
    code: INVALID_REQUEST,
    message: `message of ${size} bytes refused: a message may hold at most ${limits.maxMessageBytes} bytes`,
    id: null,
  };
}

/** `_meta` keys the SDK's request schema checks beyond `progressToken` (and may rewrite). */
const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task';

/**
 * Whether `value` is a JSON-RPC request that the SDK's message schema accepts and returns unchanged:
 * exactly `jsonrpc: "2.0"`, `id` (a string or a safe integer), `method` (a string) and optionally `params`
 * (an object whose `_meta`, when present, is an object with a string or safe-integer `progressToken` or
 * none, and no related-task key). Narrower than the schema: whatever this refuses goes through it.
 */
export function isPlainRequest(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  const { jsonrpc, id, method, params } = value;
  if (jsonrpc !== '2.0' || typeof method !== 'string') return false;
  if (typeof id !== 'string' && !(typeof id === 'number' && Number.isSafeInteger(id))) return false;
  const keys = Object.keys(value).length;
  if (params === undefined) return keys === 3 && !Object.hasOwn(value, 'params');
  if (keys !== 4 || !isPlainObject(params)) return false;
  if (!Object.hasOwn(params, '_meta')) return true;
  const meta = params._meta;
  if (!isPlainObject(meta) || Object.hasOwn(meta, RELATED_TASK_META_KEY)) return false;
  const token = meta.progressToken;
  return (
    !Object.hasOwn(meta, 'progressToken') ||
    typeof token === 'string' ||
    (typeof token === 'number' && Number.isSafeInteger(token))
  );
}

/**
 * Checks one message's text (already within the size limit) against `limits`: its depth, that it is JSON,
 * not a batch, and a JSON-RPC 2.0 message. Returns the message or why it is refused.
 */
export function checkMessage(
  text: string,
  limits: InputLimits = DEFAULT_INPUT_LIMITS,
): { message: JSONRPCMessage } | { refusal: InputRefusal } {
  if (!fewBrackets(text, limits.maxDepth) && jsonDepth(text, limits.maxDepth) > limits.maxDepth) {
    return {
      refusal: {
        code: INVALID_REQUEST,
        message: `message refused: it is nested deeper than ${limits.maxDepth} levels`,
        id: null,
      },
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return {
      refusal: {
        code: PARSE_ERROR,
        message: `parse error: ${error instanceof Error ? error.message : String(error)}`,
        id: null,
      },
    };
  }
  if (Array.isArray(value)) {
    return {
      refusal: { code: INVALID_REQUEST, message: 'JSON-RPC batches are refused: send one message at a time', id: null },
    };
  }
  // The common request is recognised without the schema (which would return it unchanged).
  if (isPlainRequest(value)) return { message: value as JSONRPCMessage };
  try {
    return { message: parseJSONRPCMessage(value) };
  } catch {
    const id = (value as { id?: unknown } | null)?.id;
    return {
      refusal: {
        code: INVALID_REQUEST,
        message: 'invalid request: not a JSON-RPC 2.0 message',
        id: typeof id === 'string' || typeof id === 'number' ? id : null,
      },
    };
  }
}
