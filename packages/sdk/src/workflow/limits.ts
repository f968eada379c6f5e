/** The limits of SPEC §3.4, enforced at the boundary by validation. @internal */
export const LIMITS = {
  /** Project services (`mcpDefinitions` entries) per workflow. */
  definitions: 32,
  /** Files per definition. */
  filesPerDefinition: 100,
  /** Characters (Unicode code points, as zod counts string lengths) per file. */
  charsPerFile: 500_000,
  /** `mcpDefinitions` serialized as JSON, in UTF-8 bytes (1 MiB). */
  definitionsJsonBytes: 1024 * 1024,
  /** `mcpServers` entries per agent, remote and project together. */
  serversPerAgent: 32,
  /** A complete workflow snapshot serialized as JSON, in UTF-8 bytes (2 MiB). */
  workflowJsonBytes: 2 * 1024 * 1024,
  /** `args` entries per definition. */
  args: 64,
  /** Characters per `args` entry. */
  charsPerArg: 4096,
  /** Characters of a service, definition or agent name. */
  nameChars: 64,
  /** Characters of one file path (not in SPEC; see docs/workflow-json.md). */
  pathChars: 1024,
  /** UTF-8 bytes of one path segment: what file systems allow for one name (not in SPEC). */
  pathSegmentBytes: 255,
  /** `orchestration.invocationRetries` at most (not in SPEC). */
  invocationRetries: 10,
  /** Patterns in one `tools.include` or `tools.exclude` list (not in SPEC). */
  toolPatterns: 256,
  /** Characters of one tool pattern (not in SPEC; MCP tool names are at most 128). */
  toolPatternChars: 256,
} as const;

/** Service, definition and agent names: 1–64 of `a-z 0-9 - _`, starting with a letter or digit. */
export const NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** The names of the fixed catalog: the SDK's own built-in services, which no `mcpServers` entry may take. @internal */
export const FIXED_CATALOG_NAMES: readonly string[] = ['scienceevolve'];

/** Variables the SDK sets for every service; `envFrom` may not name them (SPEC §5.3). @internal */
export const RESERVED_ENV_NAMES: readonly string[] = [
  'SCIENCEEVOLVE_WORKSPACE',
  'SCIENCEEVOLVE_MCP_SOURCE_DIR',
  'SCIENCEEVOLVE_PROJECT_ROOT',
  'SCIENCEEVOLVE_MARKER',
  'NODE_PATH',
  'NODE_COMPILE_CACHE',
];

/** A valid environment variable name. */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A `command` value: an executable's name or path, never a shell command line. Letters, digits and
 * `. _ - + / @ ,` only: no whitespace, quotes, `$`, `;`, `|`, `&`, `<`, `>`, backticks, globs or the like.
 */
export const COMMAND_PATTERN = /^[A-Za-z0-9._+@,/-]+$/;
