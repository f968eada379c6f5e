/**
 * An independent checker of the workflow.json rules that validation must hold (names, limits and file paths),
 * written from the contract's tables and NOT importing the SDK's validator, so that the soak's fuzzer can
 * tell whether an accepted document breaks a rule. It answers only about documents the SDK accepted: it
 * lists every rule the document breaks (empty = agrees with the SDK).
 */

const NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** Whitespace and the characters a shell gives meaning to. */
const SHELL_CHARS = /[\s;&|<>()$`\\"'*?[\]#~=%!{}]/;
const FIXED_CATALOG = 'scienceevolve';

const LIMIT = {
  definitions: 32,
  filesPerDefinition: 100,
  charsPerFile: 500_000,
  definitionsJsonBytes: 1024 * 1024,
  serversPerAgent: 32,
  workflowJsonBytes: 2 * 1024 * 1024,
  args: 64,
  charsPerArg: 4096,
};

function own(o: object, k: string): boolean {
  return Object.hasOwn(o, k);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** True when `s` has no lone UTF-16 surrogate. */
function wellFormed(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (!(d >= 0xdc00 && d <= 0xdfff)) return false;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) return false;
  }
  return true;
}

function bytes(v: unknown): number {
  return Buffer.byteLength(JSON.stringify(v) ?? '', 'utf8');
}

/** Why one file path is unsafe, or undefined. */
function pathProblem(p: string): string | undefined {
  if (p.length === 0) return 'empty path';
  if (p.includes('\0')) return 'NUL in path';
  if (p.includes('\\')) return 'backslash in path';
  if (p.startsWith('/')) return 'absolute path';
  for (const seg of p.split('/')) {
    if (seg === '') return 'empty segment';
    if (seg === '.') return '"." segment';
    if (seg === '..') return '".." segment';
  }
  return undefined;
}

/** Every rule `doc` (a document the SDK accepted) breaks; the second list names the issue-13 rules (lone surrogates). */
export function independentCheck(doc: unknown): { broken: string[]; surrogates: string[] } {
  const broken: string[] = [];
  const surrogates: string[] = [];
  const walkStrings = (v: unknown, path: string): void => {
    if (typeof v === 'string') {
      if (!wellFormed(v)) surrogates.push(`${path}: lone surrogate`);
    } else if (Array.isArray(v)) {
      for (const [i, x] of v.entries()) walkStrings(x, `${path}[${i}]`);
    } else if (isObject(v))
      for (const k of Object.keys(v)) {
        if (!wellFormed(k)) surrogates.push(`${path}: key with a lone surrogate`);
        walkStrings(v[k], `${path}.${k}`);
      }
  };
  walkStrings(doc, '$');
  if (!isObject(doc)) return { broken: ['$: not an object'], surrogates };
  if (bytes(doc) > LIMIT.workflowJsonBytes) broken.push('$: over 2 MiB');
  const defs = own(doc, 'mcpDefinitions') ? doc.mcpDefinitions : {};
  if (!isObject(defs)) broken.push('$.mcpDefinitions: not an object');
  const defNames = isObject(defs) ? Object.keys(defs) : [];
  if (isObject(defs)) {
    if (defNames.length > LIMIT.definitions) broken.push('$.mcpDefinitions: more than 32');
    if (bytes(defs) > LIMIT.definitionsJsonBytes) broken.push('$.mcpDefinitions: over 1 MiB');
    for (const name of defNames) {
      const at = `$.mcpDefinitions.${name}`;
      if (!NAME.test(name)) broken.push(`${at}: bad definition name`);
      const d = defs[name];
      if (!isObject(d)) {
        broken.push(`${at}: not an object`);
        continue;
      }
      for (const k of Object.keys(d))
        if (!['files', 'entrypoint', 'command', 'args', 'envFrom', 'network'].includes(k))
          broken.push(`${at}.${k}: unknown key`);
      const files = d.files;
      if (!isObject(files)) broken.push(`${at}.files: missing or not an object`);
      else {
        const paths = Object.keys(files);
        if (paths.length > LIMIT.filesPerDefinition) broken.push(`${at}.files: more than 100`);
        const set = new Set(paths);
        for (const p of paths) {
          const why = pathProblem(p);
          if (why) broken.push(`${at}.files[${JSON.stringify(p)}]: ${why}`);
          const content = files[p];
          if (typeof content !== 'string') broken.push(`${at}.files[${JSON.stringify(p)}]: not text`);
          else if (content.length > LIMIT.charsPerFile) broken.push(`${at}.files[${JSON.stringify(p)}]: too long`);
          const segs = p.split('/');
          for (let i = 1; i < segs.length; i++)
            if (set.has(segs.slice(0, i).join('/'))) broken.push(`${at}.files[${JSON.stringify(p)}]: file and dir`);
        }
        const ep = d.entrypoint;
        if (typeof ep !== 'string' || !own(files, ep) || typeof files[ep] !== 'string' || files[ep] === '')
          broken.push(`${at}.entrypoint: not a non-empty file`);
      }
      if (own(d, 'command')) {
        const c = d.command;
        if (typeof c !== 'string' || c === '' || SHELL_CHARS.test(c)) broken.push(`${at}.command: not one executable`);
      }
      if (own(d, 'args')) {
        const a = d.args;
        if (!Array.isArray(a)) broken.push(`${at}.args: not a list`);
        else {
          if (a.length > LIMIT.args) broken.push(`${at}.args: more than 64`);
          a.forEach((x, i) => {
            if (typeof x !== 'string' || x.length > LIMIT.charsPerArg) broken.push(`${at}.args[${i}]: bad`);
          });
        }
      }
      if (own(d, 'envFrom')) {
        const e = d.envFrom;
        if (!isObject(e)) broken.push(`${at}.envFrom: not an object`);
        else
          for (const k of Object.keys(e)) {
            if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) broken.push(`${at}.envFrom.${k}: bad variable name`);
            if (typeof e[k] !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(e[k] as string))
              broken.push(`${at}.envFrom.${k}: bad host variable`);
          }
      }
      if (own(d, 'network') && typeof d.network !== 'boolean') broken.push(`${at}.network: not a boolean`);
    }
  }
  const agents = doc.agents;
  if (!isObject(agents)) broken.push('$.agents: missing or not an object');
  else
    for (const name of Object.keys(agents)) {
      const at = `$.agents.${name}`;
      if (!NAME.test(name)) broken.push(`${at}: bad agent name`);
      const a = agents[name];
      if (!isObject(a)) {
        broken.push(`${at}: not an object`);
        continue;
      }
      const servers = own(a, 'mcpServers') ? a.mcpServers : [];
      if (!Array.isArray(servers)) {
        broken.push(`${at}.mcpServers: not a list`);
        continue;
      }
      if (servers.length > LIMIT.serversPerAgent) broken.push(`${at}.mcpServers: more than 32`);
      const seen = new Set<string>();
      servers.forEach((s, i) => {
        const sat = `${at}.mcpServers[${i}]`;
        if (!isObject(s)) {
          broken.push(`${sat}: not an object`);
          return;
        }
        const n = s.name;
        if (typeof n !== 'string' || !NAME.test(n)) broken.push(`${sat}.name: bad service name`);
        else {
          if (n === FIXED_CATALOG) broken.push(`${sat}.name: fixed catalog name`);
          if (seen.has(n)) broken.push(`${sat}.name: duplicate`);
          seen.add(n);
        }
        const hasProject = own(s, 'project');
        const hasUrl = own(s, 'url');
        if (hasProject === hasUrl) broken.push(`${sat}: needs exactly one of project and url`);
        if (hasProject && (typeof s.project !== 'string' || !defNames.includes(s.project)))
          broken.push(`${sat}.project: no such definition`);
      });
    }
  const orch = doc.orchestration;
  if (own(doc, 'orchestration') && !isObject(orch)) broken.push('$.orchestration: not an object');
  if (isObject(orch) && own(orch, 'invocationRetries')) {
    const r = orch.invocationRetries;
    if (typeof r !== 'number' || !Number.isSafeInteger(r) || r < 0)
      broken.push('$.orchestration.invocationRetries: bad');
  }
  return { broken, surrogates };
}
