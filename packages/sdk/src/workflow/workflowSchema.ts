/**
 * The `workflow.json` model (SPEC §3): zod schemas, strict objects everywhere, defaults filled. The types
 * are written once in `workflowTypes.ts` (public, documented there); each schema is checked against its type
 * at compile time (end of this file). Cross-field rules (references, file paths, entrypoint, size of the
 * JSON) are checked in `validate.ts`, which is the entry point callers use.
 */
import * as z from 'zod';
import { SdkError } from '../errors.js';
import type { Assert, SameShape } from '../schemas/sameShape.js';
import { ElicitationPolicySchema, HarnessFormatSchema } from '../schemas/states.js';
import { COMMAND_PATTERN, ENV_NAME_PATTERN, LIMITS, NAME_PATTERN } from './limits.js';
import type {
  CommandHarness,
  Harness,
  McpDefinition,
  McpServerEntry,
  ModelLoopOptions,
  RemoteOAuth,
  ToolFilter,
  Workflow,
  WorkflowAgent,
  WorkflowOrchestration,
} from './workflowTypes.js';

// The written types, for the modules that import them with their schemas from here.
export type * from './workflowTypes.js';

/**
 * A value built on its first use and kept. The parts of the workflow schema a small document never reaches
 * (a harness, orchestration, a tool filter, a remote entry's headers and OAuth: ~60 % of its zod objects)
 * are built only when a document has them (`z.lazy`, and this for the pieces they share): building the
 * whole schema at load was most of what `scienceevolve validate` spends in zod (docs/decisions/cli-light-bundle.md).
 * What the schema accepts, its messages and its JSON Schema are the same.
 */
function lazily<T>(build: () => T): () => T {
  let built: T | undefined;
  return () => {
    built ??= build();
    return built;
  };
}

const nameMessage = `must be 1–${LIMITS.nameChars} characters of a-z 0-9 - _, starting with a letter or digit; rename it`;

/** A service, definition or agent name. */
export const NameSchema = z.string().regex(NAME_PATTERN, { error: nameMessage });

/** An environment variable name. */
export const EnvNameSchema = z.string().regex(ENV_NAME_PATTERN, {
  error: 'must be an environment variable name (letters, digits, _; not starting with a digit)',
});

/** One entry of `mcpDefinitions` (SPEC §3.1). @internal */
export const McpDefinitionSchema = z.strictObject({
  files: z.record(
    z.string(),
    z.string().max(LIMITS.charsPerFile, {
      error: `a file may hold at most ${LIMITS.charsPerFile} characters; split it or trim it`,
    }),
  ),
  entrypoint: z.string().min(1, { error: 'name the file to run: a key of files' }),
  command: z
    .string()
    .min(1, { error: 'give an executable name such as "node" or "python3"', abort: true })
    .regex(COMMAND_PATTERN, {
      error:
        'must be one executable name or path, not a shell command line: no spaces or shell characters; put arguments in "args"',
    })
    .default('node'),
  args: z
    .array(
      z.string().max(LIMITS.charsPerArg, { error: `an argument may hold at most ${LIMITS.charsPerArg} characters` }),
    )
    .max(LIMITS.args, { error: `at most ${LIMITS.args} arguments; pass the rest in a file of the service` })
    .default([]),
  envFrom: z.record(EnvNameSchema, EnvNameSchema).default({}),
  /**
   * `false`: no network inside the sandbox (a sandboxed service only, see `orchestration.sandbox`).
   * Default `true`, left absent when not written: the stored form of every definition written before the
   * setting existed stays the same, and so does its digest.
   */
  network: z.boolean().optional(),
  /**
   * `false`: the operator's opt-out of the sandbox under `orchestration.sandbox: "auto"` (the service then
   * runs as the host user, with the data dir in reach). Main can never propose it; `required` ignores it.
   * Default `true`, left absent when not written, like `network` (part of the digest only when `false`).
   */
  sandbox: z.boolean().optional(),
});
/** One entry of `mcpDefinitions` as written (defaults may be missing). @internal */
export type McpDefinitionInput = z.input<typeof McpDefinitionSchema>;

/** One tool pattern: an exact tool name, or a glob where `*` stands for any run of characters. */
const toolPatternSchema = lazily(() =>
  z
    .string()
    .min(1, { error: 'an empty pattern matches no tool; write a tool name or a glob such as "search_*"' })
    .max(LIMITS.toolPatternChars, {
      error: `a pattern may hold at most ${LIMITS.toolPatternChars} characters; shorten it or use *`,
    }),
);

const toolPatterns = lazily(() =>
  z
    .array(toolPatternSchema())
    .max(LIMITS.toolPatterns, { error: `at most ${LIMITS.toolPatterns} patterns; combine names with * globs` }),
);

/**
 * What is wrong with the keys of a `tools` filter (both or neither of include/exclude), or undefined.
 * Validation asks this of the raw document too, so it is reported beside problems inside the lists.
 */
export function toolFilterShapeProblem(filter: object): string | undefined {
  const include = Object.hasOwn(filter, 'include');
  const exclude = Object.hasOwn(filter, 'exclude');
  if (include && exclude) {
    return 'give "include" or "exclude", never both: keep "include" to name the tools offered, or "exclude" to name the tools withheld';
  }
  if (!include && !exclude) {
    return 'give "include" (the tools to offer) or "exclude" (the tools to withhold), or remove "tools"';
  }
  return undefined;
}

/**
 * Which of a service's tools an agent is offered (SPEC §3.2): `include` (only the tools that match a
 * pattern) or `exclude` (every tool but those that match), never both. Patterns match the service's own
 * tool names, before the surface prefixes them.
 * @internal
 */
export const ToolFilterSchema = z.lazy(() =>
  z
    .strictObject({
      include: toolPatterns()
        .min(1, {
          error:
            'an empty include offers no tool at all: list the tools to offer, or remove "tools" to offer every tool',
        })
        .optional(),
      exclude: toolPatterns().optional(),
    })
    .superRefine((filter, ctx) => {
      const problem = toolFilterShapeProblem(filter);
      if (problem !== undefined)
        ctx.addIssue({ code: 'custom', params: { code: 'invalid_workflow' }, message: problem });
    }),
);

/** An HTTP header name a remote entry may set. */
export const HEADER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/;

/**
 * A header value template: one host variable, alone or after one scheme word (`Bearer ${VAR}`,
 * `Token ${VAR}`). Nothing else: a literal secret can never be written into a workflow (which is stored).
 */
export const HEADER_TEMPLATE_PATTERN = /^(?:[A-Za-z][A-Za-z0-9_-]{0,31} )?\$\{[A-Za-z_][A-Za-z0-9_]*\}$/;

/** The host variables (`${VAR}`) named by a remote entry's header templates, in order. */
export function headerVariables(templates: Readonly<Record<string, string>>): string[] {
  return Object.values(templates).flatMap((t) => [...t.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]!));
}

/** Headers the MCP transport sets itself: a remote entry may not name them. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'accept',
  'connection',
  'transfer-encoding',
  'mcp-session-id',
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
  'last-event-id',
  'cookie',
]);

/** An absolute path of a file that holds one secret (0600, the user's own). */
const secretFileSchema = lazily(() => z.string().regex(/^\/[^\0]*$/, { error: 'must be an absolute path' }));

/**
 * A remote entry's OAuth 2.1 settings (SPEC §8). Without it, a remote that answers 401 is signed in to with
 * `scienceevolve auth login` (dynamic registration or a client ID metadata document). With it:
 * - `clientId` (+ `clientSecretEnv` / `clientSecretFile`): a pre-registered client;
 * - `grant: "client_credentials"`: unattended sign-in with that client's secret
 *   (`authMethod` `client_secret_basic`, the default, or `client_secret_post`) or private key
 *   (`private_key_jwt`: `privateKeyEnv` / `privateKeyFile`, PEM, signed with `algorithm`, default `RS256`);
 * - `scope`: the scope to ask for when the server names none;
 * - `clientMetadataUrl`: an https URL of this client's metadata document, used where the server supports it.
 * Secrets are read from host variables or 0600 files when the service is connected, never stored.
 */
export const RemoteOAuthSchema = z.lazy(() =>
  z
    .strictObject({
      grant: z.enum(['authorization_code', 'client_credentials']).optional(),
      clientId: z.string().min(1).max(512).optional(),
      clientSecretEnv: EnvNameSchema.optional(),
      clientSecretFile: secretFileSchema().optional(),
      authMethod: z.enum(['client_secret_basic', 'client_secret_post', 'private_key_jwt']).optional(),
      privateKeyEnv: EnvNameSchema.optional(),
      privateKeyFile: secretFileSchema().optional(),
      algorithm: z.enum(['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'EdDSA']).optional(),
      scope: z.string().min(1).max(1024).optional(),
      clientMetadataUrl: z.url({ protocol: /^https$/, error: 'must be an https:// URL' }).optional(),
    })
    .superRefine((oauth, ctx) => {
      const issue = (path: string, message: string) =>
        ctx.addIssue({ code: 'custom', path: [path], params: { code: 'invalid_workflow' }, message });
      if (oauth.clientSecretEnv !== undefined && oauth.clientSecretFile !== undefined) {
        issue('clientSecretFile', 'give "clientSecretEnv" or "clientSecretFile", not both');
      }
      if (oauth.privateKeyEnv !== undefined && oauth.privateKeyFile !== undefined) {
        issue('privateKeyFile', 'give "privateKeyEnv" or "privateKeyFile", not both');
      }
      const hasSecret = oauth.clientSecretEnv !== undefined || oauth.clientSecretFile !== undefined;
      const hasKey = oauth.privateKeyEnv !== undefined || oauth.privateKeyFile !== undefined;
      if ((hasSecret || hasKey || oauth.grant === 'client_credentials') && oauth.clientId === undefined) {
        issue(
          'clientId',
          'a client secret, a private key or the client_credentials grant needs the pre-registered "clientId"',
        );
      }
      if (oauth.authMethod === 'private_key_jwt' && !hasKey) {
        issue('privateKeyEnv', 'private_key_jwt needs "privateKeyEnv" or "privateKeyFile" (a PEM private key)');
      }
      if (oauth.authMethod !== 'private_key_jwt' && hasKey) {
        issue('authMethod', 'a private key is used only with "authMethod": "private_key_jwt"');
      }
      if (oauth.grant === 'client_credentials' && oauth.authMethod !== 'private_key_jwt' && !hasSecret) {
        issue(
          'clientSecretEnv',
          'the client_credentials grant needs "clientSecretEnv" or "clientSecretFile" (or a private key with private_key_jwt)',
        );
      }
    }),
);

/** One entry of an agent's `mcpServers`: `{ name, project }` or `{ name, url }`, never both. @internal */
export const McpServerEntrySchema = z
  .strictObject({
    name: NameSchema,
    project: NameSchema.optional(),
    url: z
      .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL of a Streamable HTTP endpoint' })
      .optional(),
    tools: ToolFilterSchema.optional(),
    /**
     * Request headers of a remote entry whose values come from host variables: `"Bearer ${VAR}"` or
     * `"${VAR}"` (see {@link HEADER_TEMPLATE_PATTERN}); read when the service is connected, never stored.
     */
    headers: z
      .lazy(() =>
        z.record(
          z.string().regex(HEADER_NAME_PATTERN, {
            error: 'must be an HTTP header name (letters, digits and - only), e.g. "Authorization"',
          }),
          z.string().regex(HEADER_TEMPLATE_PATTERN, {
            error:
              // biome-ignore lint/suspicious/noTemplateCurlyInString: `${VAR}` is the header template syntax, not JavaScript's
              'must name a host variable, as "${VAR}" or "<Scheme> ${VAR}" (e.g. "Bearer ${GITHUB_TOKEN}"): a value is never written into the workflow',
          }),
        ),
      )
      .optional(),
    oauth: RemoteOAuthSchema.optional(),
  })
  .superRefine((entry, ctx) => {
    if (entry.url === undefined && (entry.headers !== undefined || entry.oauth !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [entry.headers !== undefined ? 'headers' : 'oauth'],
        params: { code: 'invalid_workflow' },
        message: '"headers" and "oauth" belong to remote entries ({ "name", "url" }); remove them from a project entry',
      });
    }
    for (const header of Object.keys(entry.headers ?? {})) {
      if (RESERVED_HEADERS.has(header.toLowerCase())) {
        ctx.addIssue({
          code: 'custom',
          path: ['headers', header],
          params: { code: 'invalid_workflow' },
          message: `"${header}" is set by the MCP transport itself; remove it`,
        });
      }
    }
    if (entry.project !== undefined && entry.url !== undefined) {
      ctx.addIssue({
        code: 'custom',
        params: { code: 'invalid_workflow' },
        message: 'an entry has either "project" or "url", never both; split it into two entries with different names',
      });
    } else if (entry.project === undefined && entry.url === undefined) {
      ctx.addIssue({
        code: 'custom',
        params: { code: 'invalid_workflow' },
        message: 'give "project" (a name in mcpDefinitions) or "url" (a Streamable HTTP endpoint)',
      });
    } else if (entry.url !== undefined && hasUserInfo(entry.url)) {
      // fetch refuses such a URL with a message that repeats it, password included.
      ctx.addIssue({
        code: 'custom',
        path: ['url'],
        params: { code: 'invalid_workflow' },
        message:
          'must not carry a user name or password (user:password@): no request can be made to it, and it would be shown',
      });
    }
  });

/** Whether `url` parses with a user name or password. */
function hasUserInfo(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.username !== '' || parsed.password !== '';
  } catch {
    return false;
  }
}

// The external agent CLIs the SDK has presets (and `harness-config` formats) for: the one list, in schemas/.
export { HarnessFormatSchema } from '../schemas/states.js';
/** One agent CLI preset name. */
export type HarnessPreset = NonNullable<CommandHarness['preset']>;

// The duration bounds live apart (no zod) for the process layer; re-exported here as before.
export { MAX_DURATION_MS, timerMs } from './durations.js';
import { MAX_DURATION_MS } from './durations.js';

/**
 * A duration option of the API in milliseconds: `fallback` when absent, else an integer from `floor`
 * (default 0) to {@link MAX_DURATION_MS}; anything else throws SdkError `usage` naming the option.
 */
export function durationMs(value: number | undefined, name: string, fallback: number, floor = 0): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < floor || value > MAX_DURATION_MS) {
    throw new SdkError('usage', `${name} must be a whole number of milliseconds from ${floor} to ${MAX_DURATION_MS}`, {
      remedy: `pass ${name} as an integer in that range, or leave it out for its default (${fallback} ms)`,
      data: { option: name },
    });
  }
  return value;
}

/** A duration in milliseconds from the workflow: a positive integer no longer than {@link MAX_DURATION_MS}. */
const durationMsSchema = lazily(() =>
  z
    .int({ error: 'must be a whole number of milliseconds' })
    .min(1, { error: 'must be at least 1 ms' })
    .max(MAX_DURATION_MS, { error: `must be at most ${MAX_DURATION_MS} ms (about 24.8 days)` }),
);

/** A model endpoint's base URL. */
const baseUrlSchema = lazily(() =>
  z.url({
    protocol: /^https?$/,
    error: 'must be an http:// or https:// base URL, e.g. "https://api.openai.com/v1"',
  }),
);

/** Options every model loop takes (SPEC §10.2). */
const modelLoopOptions = lazily(() => ({
  model: z.string().min(1, { error: 'name the model, e.g. "gpt-4.1" or "claude-sonnet-4-5"' }),
  baseUrl: baseUrlSchema().optional(),
  apiKeyEnv: EnvNameSchema.optional(),
  maxTurns: z.int().min(1).max(10_000).default(50),
  maxOutputTokens: z.int().min(1).max(10_000_000).optional(),
  temperature: z.number().min(0).max(2).optional(),
  requestTimeoutMs: durationMsSchema().default(600_000),
  system: z.string().optional(),
}));

/** How an agent is run (SPEC §10.2). @internal */
export const HarnessSchema = z.lazy(() =>
  z.discriminatedUnion('type', [
    /** Simulated model decisions from the run's script file. */
    z.strictObject({ type: z.literal('scripted') }),
    /** OpenAI and every OpenAI-compatible server; Chat Completions by default, or the Responses API. */
    z.strictObject({
      type: z.literal('openai'),
      ...modelLoopOptions(),
      api: z.enum(['chat', 'responses']).default('chat'),
    }),
    /** The Anthropic Messages API tool loop. */
    z.strictObject({ type: z.literal('anthropic'), ...modelLoopOptions() }),
    /** The Gemini API tool loop. */
    z.strictObject({ type: z.literal('gemini'), ...modelLoopOptions() }),
    /** An external agent CLI given the invocation's live surface. */
    z
      .strictObject({
        type: z.literal('command'),
        preset: HarnessFormatSchema.optional(),
        model: z.string().min(1).optional(),
        baseUrl: baseUrlSchema().optional(),
        apiKeyEnv: EnvNameSchema.optional(),
        command: z
          .string()
          .min(1)
          .regex(COMMAND_PATTERN, {
            error: 'must be one executable name or path, not a shell command line; put arguments in "args"',
          })
          .optional(),
        args: z
          .array(
            z
              .string()
              .max(LIMITS.charsPerArg, { error: `an argument may hold at most ${LIMITS.charsPerArg} characters` }),
          )
          .max(LIMITS.args, { error: `at most ${LIMITS.args} arguments` })
          .optional(),
        envFrom: z.record(EnvNameSchema, EnvNameSchema).default({}),
        timeoutMs: durationMsSchema().default(3_600_000),
        isolateHome: z.boolean().default(true),
      })
      .superRefine((harness, ctx) => {
        if (harness.preset === undefined && harness.command === undefined) {
          ctx.addIssue({
            code: 'custom',
            params: { code: 'invalid_workflow' },
            message: 'give "preset" (claude, codex, gemini, opencode or pi) or "command" (the CLI to run, with "args")',
          });
        }
      }),
  ]),
);

/** One agent (SPEC §3.2). @internal */
export const AgentSchema = z.strictObject({
  harness: HarnessSchema.default({ type: 'scripted' }),
  instructions: z.string().default(''),
  mcpServers: z
    .array(McpServerEntrySchema)
    .max(LIMITS.serversPerAgent, { error: `an agent may have at most ${LIMITS.serversPerAgent} services` })
    .default([]),
  /**
   * Who answers a question a service asks during a call (`elicitation/create`, `input_required`):
   * `model` (a tool error states the question; the model calls again with `answer`), `operator` (an
   * attended run's terminal; unattended, the call fails `question_unanswered`) or `decline`. Default
   * `model`, left absent when not written.
   */
  elicitation: ElicitationPolicySchema.optional(),
});

/** `orchestration` (SPEC §3.3). @internal */
export const OrchestrationSchema = z.lazy(() =>
  z.strictObject({
    allowMainReconfiguration: z.boolean().default(false),
    git: z.boolean().default(false),
    invocationRetries: z.int().min(0).max(LIMITS.invocationRetries).default(1),
    allowedRemoteUrls: z.array(z.url({ protocol: /^https?$/ })).default([]),
    defaultHarness: HarnessSchema.optional(),
    /**
     * The host variables a definition Main proposes may read through `envFrom`. Absent means none (`[]`); it
     * is not filled in when absent, so workflows stored before it existed keep their stored form.
     */
    mainMayMapEnv: z.array(EnvNameSchema).max(256, { error: 'at most 256 variables' }).optional(),
    /**
     * Where services run sandboxed (bubblewrap): `off` never; `auto` every project service when a working
     * sandbox is available, except an operator's definition that says `"sandbox": false`; `required` every
     * service, and a start fails when none is available. Default
     * `auto`, left absent when not written (a workflow stored before the setting existed reads the same).
     */
    sandbox: z.enum(['off', 'auto', 'required']).optional(),
    /**
     * Milliseconds a tool call a service answered with an MCP task may run before it is given up
     * (`task_deadline`, and `tasks/cancel` sent). Default 86,400,000 (24 h), left absent when not written.
     */
    taskDeadlineMs: z.int().min(1000).max(MAX_DURATION_MS).optional(),
  }),
);
/** A whole `workflow.json`, typed as written (`WorkflowSchema` is the public face of this one). */
const WorkflowDocumentSchema = z.strictObject({
  $schema: z.string().optional(),
  orchestration: OrchestrationSchema.default({
    allowMainReconfiguration: false,
    git: false,
    invocationRetries: 1,
    allowedRemoteUrls: [],
  }),
  agents: z.record(NameSchema, AgentSchema),
  mcpDefinitions: z.record(NameSchema, McpDefinitionSchema).default({}),
});

/**
 * The zod schema of a whole `workflow.json` (SPEC §3): `WorkflowSchema.parse(document)` checks a document
 * and fills its defaults. {@link parseWorkflow} adds the cross-field checks (references, file paths, the
 * entrypoint, the size of the JSON) and throws a coded `SdkError`; use it unless you compose schemas.
 * @public
 */
export const WorkflowSchema: z.ZodType<Workflow> = WorkflowDocumentSchema;
/** A workflow as a user may write it (defaults may be missing). @internal */
export type WorkflowInput = z.input<typeof WorkflowDocumentSchema>;

// Each written type is exactly what its schema gives (`z.output`), and a filled-in workflow is valid input:
// checked at compile time, part by part (SameShape checks one level of keys), so neither can drift.
type Out<S extends z.ZodType> = z.output<S>;
type HarnessOf<T extends Harness['type']> = Extract<Harness, { type: T }>;
type SchemaHarnessOf<T extends Harness['type']> = Extract<Out<typeof HarnessSchema>, { type: T }>;
// biome-ignore lint/correctness/noUnusedVariables: a compile-time check, used by being compiled.
type WorkflowTypesMatchSchemas = {
  mcpDefinition: Assert<SameShape<Out<typeof McpDefinitionSchema>, McpDefinition>>;
  toolFilter: Assert<SameShape<Out<typeof ToolFilterSchema>, ToolFilter>>;
  remoteOAuth: Assert<SameShape<Out<typeof RemoteOAuthSchema>, RemoteOAuth>>;
  mcpServerEntry: Assert<SameShape<Out<typeof McpServerEntrySchema>, McpServerEntry>>;
  harnessTypes: Assert<SameShape<Out<typeof HarnessSchema>['type'], Harness['type']>>;
  scripted: Assert<SameShape<SchemaHarnessOf<'scripted'>, HarnessOf<'scripted'>>>;
  openai: Assert<SameShape<SchemaHarnessOf<'openai'>, HarnessOf<'openai'>>>;
  anthropic: Assert<SameShape<SchemaHarnessOf<'anthropic'>, HarnessOf<'anthropic'>>>;
  gemini: Assert<SameShape<SchemaHarnessOf<'gemini'>, HarnessOf<'gemini'>>>;
  command: Assert<SameShape<SchemaHarnessOf<'command'>, CommandHarness>>;
  modelLoopKeys: Assert<SameShape<keyof ModelLoopOptions, keyof ReturnType<typeof modelLoopOptions>>>;
  agent: Assert<SameShape<Out<typeof AgentSchema>, WorkflowAgent>>;
  orchestration: Assert<SameShape<Out<typeof OrchestrationSchema>, WorkflowOrchestration>>;
  workflow: Assert<SameShape<Out<typeof WorkflowDocumentSchema>, Workflow>>;
  filledIsValidInput: Assert<[Workflow] extends [WorkflowInput] ? true : false>;
};
