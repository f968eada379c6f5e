/**
 * The environment of a project service (SPEC §5.3): the minimal inherited set, the definition's
 * `envFrom` mappings, then the SDK's own variables, which `envFrom` cannot override. Nothing else of the
 * host's environment reaches a service, and `process.env` is never changed.
 */
import { createRequire } from 'node:module';
import { delimiter, join, sep } from 'node:path';
import { MARKER_ENV } from '@scienceevolve/supervisor/procfs';
import { SdkError } from '../errors.js';

/** The host variables every service inherits when they are set (the MCP SDK's stdio client set). */
export const INHERITED_ENV_KEYS = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'] as const;

/** The variables the SDK sets for every service; `envFrom` cannot override them. */
export const SDK_ENV_KEYS = [
  'SCIENCEEVOLVE_WORKSPACE',
  'SCIENCEEVOLVE_MCP_SOURCE_DIR',
  'SCIENCEEVOLVE_PROJECT_ROOT',
  'NODE_PATH',
  'NODE_COMPILE_CACHE',
  MARKER_ENV,
] as const;

/**
 * The services' compile cache directory of a data dir, `<dataDir>/cache/compile`: Node ≥ 22.1 keeps
 * compiled modules there (`NODE_COMPILE_CACHE`), so the next start of a service reads the MCP SDK and
 * zod compiled instead of parsing them again. Outside every invocation's copy, shared by all projects of
 * the data dir (Node keys entries by its version and each file's content); Node creates it on first use.
 */
export function serviceCompileCacheDir(dataDir: string): string {
  return join(dataDir, 'cache', 'compile');
}

/** Input of {@link buildServiceEnv}. */
export interface ServiceEnvInput {
  /** The service name, for the error message of a missing variable. */
  serviceName: string;
  /** The host environment to read from (usually `process.env`); never modified. */
  hostEnv: Readonly<Record<string, string | undefined>>;
  /** Service variable → host variable (the definition's `envFrom`). Default `{}`. */
  envFrom?: Readonly<Record<string, string>>;
  /** The invocation's task directory, which is also the service's cwd (`SCIENCEEVOLVE_WORKSPACE`). */
  workspace: string;
  /** The copied source directory (`SCIENCEEVOLVE_MCP_SOURCE_DIR`). */
  sourceDir: string;
  /** The project's private SDK data directory (`SCIENCEEVOLVE_PROJECT_ROOT`). */
  projectRoot: string;
  /** The invocation's marker (`SCIENCEEVOLVE_MARKER`, SPEC §6). */
  marker: string;
  /**
   * The compile cache directory (`NODE_COMPILE_CACHE`, see {@link serviceCompileCacheDir}); an
   * invocation always gives it. Without it the variable is unset, and `envFrom` cannot set it either way.
   * Runtimes without a compile cache (Node 20, non-Node services) ignore it.
   */
  compileCacheDir?: string;
}

/**
 * Builds a service's complete environment. Throws an SdkError `missing_env` naming every host variable
 * that `envFrom` maps but the host does not have, or has empty (never a value).
 */
export function buildServiceEnv(input: ServiceEnvInput): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of INHERITED_ENV_KEYS) {
    const value = Object.hasOwn(input.hostEnv, key) ? input.hostEnv[key] : undefined;
    // A value that is a function definition is how bash exports functions (`() {`); the MCP SDK skips them too.
    if (value !== undefined && !value.startsWith('()')) env[key] = value;
  }

  const missing: { variable: string; hostVariable: string }[] = [];
  for (const [variable, hostVariable] of Object.entries(input.envFrom ?? {})) {
    if ((SDK_ENV_KEYS as readonly string[]).includes(variable)) continue;
    // Own keys only: `"X": "constructor"` reads no host variable, not Object.prototype's constructor.
    const value = Object.hasOwn(input.hostEnv, hostVariable) ? input.hostEnv[hostVariable] : undefined;
    // An empty value is missing too: a service given `KEY=` fails later and less clearly than here.
    if (value === undefined || value === '') missing.push({ variable, hostVariable });
    else env[variable] = value;
  }
  if (missing.length > 0) {
    const names = missing.map((m) => `${m.hostVariable} (for ${m.variable})`).join(', ');
    throw new SdkError(
      'missing_env',
      `service "${input.serviceName}" cannot start: host variable${missing.length > 1 ? 's' : ''} ${names} ${missing.length > 1 ? 'are' : 'is'} not set or empty`,
      {
        remedy: `set ${missing.map((m) => m.hostVariable).join(', ')} to a non-empty value in the environment that runs ScienceEvolve (export ${missing[0]!.hostVariable}=…), or change the definition's envFrom`,
        data: { service: input.serviceName, variables: missing },
      },
    );
  }

  env.SCIENCEEVOLVE_WORKSPACE = input.workspace;
  env.SCIENCEEVOLVE_MCP_SOURCE_DIR = input.sourceDir;
  env.SCIENCEEVOLVE_PROJECT_ROOT = input.projectRoot;
  env.NODE_PATH = serviceNodePath();
  if (input.compileCacheDir !== undefined) env.NODE_COMPILE_CACHE = input.compileCacheDir;
  env[MARKER_ENV] = input.marker;
  return env;
}

let cachedNodePath: string | undefined;

/** What a CommonJS service requires, by package: resolving exactly these proves the `NODE_PATH` works. */
const SERVICE_MODULES = [
  { pkg: '@modelcontextprotocol/sdk', request: '@modelcontextprotocol/sdk/server/index.js' },
  { pkg: 'zod', request: 'zod' },
] as const;

/**
 * The `NODE_PATH` every service gets: the `node_modules` directories under which
 * `@modelcontextprotocol/sdk` and `zod` resolve from this SDK, so that a CommonJS service can
 * `require('@modelcontextprotocol/sdk/server/index.js')` and `require('zod')` with nothing installed
 * beside it. Computed once.
 */
export function serviceNodePath(): string {
  if (cachedNodePath !== undefined) return cachedNodePath;
  const require = createRequire(import.meta.url);
  const dirs: string[] = [];
  for (const { pkg, request } of SERVICE_MODULES) {
    const dir = nodeModulesDirOf(require.resolve(request), pkg);
    if (!dirs.includes(dir)) dirs.push(dir);
  }
  cachedNodePath = dirs.join(delimiter);
  return cachedNodePath;
}

/**
 * `/x/node_modules/@scope/name/dist/cjs/server/index.js` → `/x/node_modules`. Found from the resolved file
 * rather than `<pkg>/package.json`, which a package's `exports` may map elsewhere or not export at all.
 */
function nodeModulesDirOf(resolved: string, pkg: string): string {
  const needle = `${sep}node_modules${sep}${pkg.split('/').join(sep)}${sep}`;
  const at = resolved.lastIndexOf(needle);
  if (at === -1) throw new SdkError('internal', `${pkg} resolved outside a node_modules directory (${resolved})`);
  return resolved.slice(0, at + `${sep}node_modules`.length);
}
