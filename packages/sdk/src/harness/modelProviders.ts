/**
 * The model APIs a model-loop harness speaks (SPEC §10.2), through the AI SDK's providers: which
 * endpoint and key variable each harness type uses by default, how its language model is made, and
 * how a failed model call becomes a coded {@link SdkError} or a retry. No HTTP is written here: the
 * providers speak each wire protocol.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { APICallError, type LanguageModel } from 'ai';
import { SdkError } from '../errors.js';
import { DEFAULT_API_KEY_ENVS, DEFAULT_BASE_URLS, type ModelLoopConfig } from './modelLoopLight.js';

export {
  type ModelLoopConfig,
  MODEL_LOOP_TYPES,
  DEFAULT_BASE_URLS,
  DEFAULT_API_KEY_ENVS,
  isModelLoopConfig,
} from './modelLoopLight.js';

/** What a model loop talks to: the language model, and how to name the endpoint in messages. */
export interface ModelEndpoint {
  model: LanguageModel;
  /** e.g. `OpenAI Chat Completions at https://api.openai.com` (origin only: never userinfo or a key). */
  label: string;
  /** Provider options of every call (the Responses API is used statelessly). */
  providerOptions: Record<string, Record<string, string | boolean>>;
}

/**
 * The API key of `config`, read from `hostEnv`. Throws `missing_env` naming the variable (never a
 * value) when it is unset or empty, before any request is made.
 */
export function readApiKey(
  agent: string,
  config: ModelLoopConfig,
  hostEnv: Readonly<Record<string, string | undefined>>,
): string {
  const variable = config.apiKeyEnv ?? DEFAULT_API_KEY_ENVS[config.type];
  const value = Object.hasOwn(hostEnv, variable) ? hostEnv[variable] : undefined;
  if (value === undefined || value === '') {
    throw new SdkError(
      'missing_env',
      `agent "${agent}" uses the "${config.type}" harness, whose API key variable ${variable} is not set on the host`,
      {
        remedy: `export ${variable}=<your API key> before the run${
          config.apiKeyEnv === undefined ? ', or name another variable in "apiKeyEnv"' : ''
        } (a local server that takes no key accepts any value)`,
        data: { agent, harness: config.type, variable },
      },
    );
  }
  return value;
}

/** The language model of `config`, with the key passed explicitly (no provider reads the host's environment). */
export function createEndpoint(agent: string, config: ModelLoopConfig, apiKey: string): ModelEndpoint {
  const baseURL = (config.baseUrl ?? DEFAULT_BASE_URLS[config.type]).replace(/\/+$/, '');
  const url = new URL(baseURL);
  if (url.username !== '' || url.password !== '') {
    // fetch refuses such a URL with a message that repeats it, credentials included.
    throw new SdkError(
      'invalid_workflow',
      `the "baseUrl" of agent "${agent}" carries a user name or password (${url.origin})`,
      {
        remedy: 'remove the userinfo from "baseUrl" and put the key in the variable named by "apiKeyEnv"',
        data: { agent, harness: config.type },
      },
    );
  }
  const origin = url.origin;
  switch (config.type) {
    case 'openai': {
      const provider = createOpenAI({ baseURL, apiKey });
      if (config.api === 'responses') {
        return {
          model: provider.responses(config.model),
          label: `OpenAI Responses API at ${origin}`,
          // Stateless: every request carries the whole conversation, so a checkpoint can be resumed
          // anywhere and a server that stores nothing (vLLM, a gateway) understands it.
          providerOptions: { openai: { store: false } },
        };
      }
      return { model: provider.chat(config.model), label: `OpenAI Chat Completions at ${origin}`, providerOptions: {} };
    }
    case 'anthropic':
      return {
        model: createAnthropic({ baseURL, apiKey })(config.model),
        label: `Anthropic Messages API at ${origin}`,
        providerOptions: {},
      };
    case 'gemini':
      return {
        model: createGoogleGenerativeAI({ baseURL, apiKey })(config.model),
        label: `Gemini API at ${origin}`,
        providerOptions: {},
      };
  }
}

/** How a failed model call is handled. */
export type CallFailure =
  /** Worth another attempt (429, 408, 409, 5xx, no connection, request timeout); `delayMs` from the provider's headers when given. */
  | { retry: true; status?: number; message: string; retryAfterMs?: number }
  /** Final: the coded error to throw. */
  | { retry: false; error: SdkError };

/** Everything needed to describe a failed call without leaking the key. */
export interface FailureContext {
  agent: string;
  config: ModelLoopConfig;
  label: string;
  apiKey: string;
}

/** Replaces the key, wherever it appears, by `[redacted]`. */
export function redact(text: string, apiKey: string): string {
  return apiKey.length >= 4 ? text.split(apiKey).join('[redacted]') : text;
}

/** The provider's own message of an API error: its JSON `error.message` (or `message`), else the SDK's. */
function providerMessage(error: APICallError): string {
  const body = error.responseBody;
  if (typeof body === 'string' && body.length > 0) {
    try {
      const parsed = JSON.parse(body) as unknown;
      const candidates = Array.isArray(parsed) ? parsed : [parsed];
      for (const item of candidates) {
        if (typeof item !== 'object' || item === null) continue;
        const inner = (item as { error?: unknown }).error;
        if (
          typeof inner === 'object' &&
          inner !== null &&
          typeof (inner as { message?: unknown }).message === 'string'
        ) {
          return (inner as { message: string }).message;
        }
        if (typeof inner === 'string') return inner;
        if (typeof (item as { message?: unknown }).message === 'string') return (item as { message: string }).message;
      }
    } catch {
      // Not JSON: the SDK's message (the status text) below.
    }
  }
  return error.message;
}

/** Milliseconds the provider asks to wait: `retry-after-ms`, else `retry-after` (seconds or an HTTP date). */
export function retryAfterMs(
  headers: Readonly<Record<string, string>> | undefined,
  now = Date.now(),
): number | undefined {
  if (headers === undefined) return undefined;
  const ms = headers['retry-after-ms'];
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms.trim()));
  const after = headers['retry-after'];
  if (after === undefined) return undefined;
  if (/^\d+(\.\d+)?$/.test(after.trim())) return Math.ceil(Number(after.trim()) * 1000);
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * The delay a Gemini error body asks for: `error.details[]` of type `google.rpc.RetryInfo` with
 * `retryDelay` such as `"37s"` (the Gemini API says it there rather than in `retry-after`).
 */
export function retryInfoDelayMs(body: string | undefined): number | undefined {
  if (body === undefined || !body.includes('RetryInfo')) return undefined;
  try {
    const parsed = JSON.parse(body) as unknown;
    const error = (Array.isArray(parsed) ? parsed[0] : parsed) as { error?: { details?: unknown } } | undefined;
    const details = error?.error?.details;
    if (!Array.isArray(details)) return undefined;
    for (const detail of details) {
      const type = (detail as { '@type'?: unknown })?.['@type'];
      const delay = (detail as { retryDelay?: unknown })?.retryDelay;
      if (typeof type !== 'string' || !type.endsWith('google.rpc.RetryInfo') || typeof delay !== 'string') continue;
      const match = /^(\d+(?:\.\d+)?)s$/.exec(delay.trim());
      if (match !== null) return Math.ceil(Number(match[1]) * 1000);
    }
  } catch {
    // Not JSON: no delay named.
  }
  return undefined;
}

/**
 * Classifies a failed model call. 429, 408, 409, 5xx and a failed connection are retried; 401/403 are
 * `model_auth_failed`; any other 4xx is `model_request_failed`; an answer the provider library could not
 * read is `model_request_failed` too. Messages name the provider's own message, never the key.
 */
export function classifyFailure(error: unknown, context: FailureContext): CallFailure {
  const { agent, config, label, apiKey } = context;
  const data = { agent, harness: config.type, model: config.model };
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    const message = redact(providerMessage(error), apiKey);
    if (status === undefined || error.isRetryable) {
      const retryAfter = retryAfterMs(error.responseHeaders) ?? retryInfoDelayMs(error.responseBody);
      return {
        retry: true,
        ...(status === undefined ? {} : { status }),
        message:
          status === undefined
            ? `could not reach ${label}: ${message}`
            : `${label} answered HTTP ${status}: ${message}`,
        ...(retryAfter === undefined ? {} : { retryAfterMs: retryAfter }),
      };
    }
    if (status === 401 || status === 403) {
      return {
        retry: false,
        error: new SdkError(
          'model_auth_failed',
          `agent "${agent}": ${label} refused the API key (HTTP ${status}): ${message}`,
          {
            remedy: `check the key in ${config.apiKeyEnv ?? DEFAULT_API_KEY_ENVS[config.type]} and that it may use model "${config.model}"`,
            data: { ...data, status },
          },
        ),
      };
    }
    return {
      retry: false,
      error: new SdkError(
        'model_request_failed',
        `agent "${agent}": ${label} refused the request for model "${config.model}" (HTTP ${status}): ${message}`,
        {
          remedy:
            status === 404
              ? `check "model" and "baseUrl" of agents.${agent}.harness (the endpoint or the model does not exist there)`
              : `check "model" and the options of agents.${agent}.harness against what the provider accepts`,
          data: { ...data, status },
        },
      ),
    };
  }
  const message = redact(error instanceof Error ? error.message : String(error), apiKey);
  return {
    retry: false,
    error: new SdkError(
      'model_request_failed',
      `agent "${agent}": ${label} gave an answer that could not be used: ${message}`,
      {
        remedy: `check that "baseUrl" of agents.${agent}.harness points at a server that speaks this API`,
        data,
        cause: error,
      },
    ),
  };
}
