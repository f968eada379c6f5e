/**
 * The environment of a project service (SPEC §5.3): the minimal inherited set, the definition's
 * `envFrom` mappings, then the SDK's own variables, which `envFrom` cannot override. Nothing else of the
 * host's environment reaches a service, and `process.env` is never changed.
 */
import { realpathSync } from 'node:fs';
import { mkdir, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { delimiter, dirname, join, sep } from 'node:path';
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

let cachedModules: readonly ServiceModule[] | undefined;

/** A package the SDK lends its services: its name and the real directory it is installed in. */
export interface ServiceModule {
  /** The package name (`@modelcontextprotocol/sdk`, `zod`, …). */
  pkg: string;
  /** The package's root directory, as installed beside this SDK (links resolved). */
  dir: string;
}

/**
 * What a service may import or require without installing anything, by package, and the request that finds
 * it: the MCP SDK v1 (`@modelcontextprotocol/sdk`), the v2 server packages (`@modelcontextprotocol/server`
 * and the `core` it is built on) and `zod`. `optional` packages are lent when this installation has them.
 */
const SERVICE_MODULES: readonly { pkg: string; request: string; from?: string; optional?: boolean }[] = [
  { pkg: '@modelcontextprotocol/sdk', request: '@modelcontextprotocol/sdk/server/index.js' },
  { pkg: 'zod', request: 'zod' },
  { pkg: '@modelcontextprotocol/server', request: '@modelcontextprotocol/server', optional: true },
  // `core` is the server's own dependency: found from where the server is installed.
  {
    pkg: '@modelcontextprotocol/core',
    request: '@modelcontextprotocol/core',
    from: '@modelcontextprotocol/server',
    optional: true,
  },
];

/**
 * The packages every project service can load, CommonJS or ESM, wherever the data dir lives: each resolved
 * from this SDK's own installation. Computed once.
 */
export function serviceModules(): readonly ServiceModule[] {
  if (cachedModules !== undefined) return cachedModules;
  const sdkRequire = createRequire(import.meta.url);
  const found: ServiceModule[] = [];
  for (const { pkg, request, from, optional } of SERVICE_MODULES) {
    try {
      const base = from === undefined ? undefined : found.find((m) => m.pkg === from);
      if (from !== undefined && base === undefined) continue;
      const resolveFrom = base === undefined ? sdkRequire : createRequire(join(base.dir, 'package.json'));
      const nodeModules = nodeModulesDirOf(resolveFrom.resolve(request), pkg);
      found.push({ pkg, dir: realpathSync(join(nodeModules, ...pkg.split('/'))) });
    } catch (error) {
      if (!optional) throw error;
    }
  }
  cachedModules = found;
  return found;
}

/**
 * The `NODE_PATH` every service gets: the `node_modules` directories under which the packages of
 * {@link serviceModules} resolve from this SDK, so that a CommonJS service can
 * `require('@modelcontextprotocol/sdk/server/index.js')` and `require('zod')` with nothing installed
 * beside it. ES modules ignore `NODE_PATH`: they find the same packages through
 * {@link linkServiceModules}.
 */
export function serviceNodePath(): string {
  const dirs: string[] = [];
  for (const { pkg, dir } of serviceModules()) {
    const nodeModules = dir.slice(0, dir.length - pkg.length - 1);
    if (!dirs.includes(nodeModules)) dirs.push(nodeModules);
  }
  return dirs.join(delimiter);
}

/**
 * Writes `<dir>/node_modules/<package>` links to each package of {@link serviceModules}, in an
 * invocation's runtime directory: an ancestor of every service copy, so Node's own lookup (which ES modules
 * use, and which `NODE_PATH` does not reach) finds the SDK's MCP packages and `zod` from a service wherever
 * the data dir lives. A `node_modules` shipped inside a service's own files is nearer and wins. Returns the
 * directory (0700; bound read-only inside a sandbox).
 */
export async function linkServiceModules(dir: string): Promise<string> {
  const root = join(dir, 'node_modules');
  await mkdir(root, { recursive: true, mode: 0o700 });
  for (const { pkg, dir: target } of serviceModules()) {
    const at = join(root, ...pkg.split('/'));
    await mkdir(dirname(at), { recursive: true, mode: 0o700 });
    await symlink(target, at, 'dir').catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
  }
  return root;
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
