/**
 * The one redaction point of the SDK: what an error, a log line, an event or a model-facing view may show
 * of a URL or an HTTP header. A URL loses its user information and fragment, and the value of every query
 * parameter (`?token=…` becomes `?token=REDACTED`); a header shows its name, never its value; a message
 * that quotes an underlying error has every spelling of the URL and every header value replaced. A header
 * value with a line break or NUL is refused before it is used ({@link headerValueProblem}): HTTP cannot
 * carry it, and the library that refuses it would repeat it.
 *
 * It sits beside `errors.ts` at the bottom of the import picture, so every layer may use it.
 */

/** What replaces a hidden value in a URL's query, or a header's value. */
export const REDACTED = 'REDACTED';

/**
 * `url` as any output may show it: scheme, host, port and path, with every query value replaced by
 * {@link REDACTED}; no user information, no fragment. `(invalid URL)` when it does not parse.
 * @internal
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '(invalid URL)';
  }
  let query = '';
  if (parsed.search !== '') {
    const names = [...parsed.searchParams.keys()];
    query = `?${names.map((name) => `${encodeURIComponent(name)}=${REDACTED}`).join('&')}`;
  }
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}${query}`;
}

/** A URL-like run in free text: `scheme://` and what follows up to a space, quote or bracket. */
const URL_IN_TEXT = /[a-z][a-z0-9+.-]*:\/\/[^\s"'<>()[\]{}]*/gi;

/**
 * `text` with every URL-like `scheme://…` in it shown as {@link redactUrl} shows it (no user information,
 * no fragment, query values `REDACTED`); one that does not parse (a trailing `.` after a port…) loses
 * its user information. For messages of libraries that quote an address they were given (ioredis, BullMQ,
 * git) when the address itself is not known to the caller.
 */
export function redactUrlsIn(text: string): string {
  return text.replace(URL_IN_TEXT, (found) => {
    const shown = redactUrl(found);
    return shown === '(invalid URL)' ? found.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1') : shown;
  });
}

/** Whether `url` parses and shows the same after {@link redactUrl}: it holds nothing to hide. */
export function isRedactedUrl(url: string): boolean {
  return redactUrl(url) === url;
}

/** The message of `error`, with its cause's code when it has one (`fetch failed (ECONNREFUSED)`). */
export function errorText(error: unknown): string {
  if (error instanceof Error) {
    const causeCode = ((error as { cause?: unknown }).cause as { code?: unknown } | undefined)?.code;
    return typeof causeCode === 'string' ? `${error.message} (${causeCode})` : error.message;
  }
  return String(error);
}

/** What a message must not show: URLs (shown redacted) and secret values (shown as {@link REDACTED}). */
export interface Secrets {
  /** URLs whose every spelling (as given, as `URL` writes it) is replaced by its {@link redactUrl} form. */
  urls?: readonly string[];
  /** Header values and other secrets, replaced wherever they occur (each line of a value too). */
  values?: readonly string[];
}

/** The shortest secret value that is replaced in text: shorter ones would mangle ordinary words. */
const MIN_SECRET_CHARS = 4;

/** `text` with every URL of `secrets.urls` redacted and every value of `secrets.values` replaced. */
export function redactText(text: string, secrets: Secrets): string {
  let out = text;
  for (const url of secrets.urls ?? []) {
    const shown = redactUrl(url);
    const spellings = [url];
    try {
      spellings.push(new URL(url).href);
    } catch {
      // An invalid URL has only the spelling it was given.
    }
    for (const spelling of spellings) if (spelling !== '' && spelling !== shown) out = out.split(spelling).join(shown);
  }
  const values = (secrets.values ?? []).flatMap((value) => [value, ...value.split(/[\r\n]+/), JSON.stringify(value)]);
  // Longest first, so that a whole value is replaced before one of its lines.
  for (const value of [...new Set(values)].sort((a, b) => b.length - a.length)) {
    if (value.trim().length >= MIN_SECRET_CHARS) out = out.split(value).join(REDACTED);
  }
  return out;
}

/**
 * The message of `error` (see {@link errorText}) with `url` and `secrets` redacted: fetch and the MCP
 * transports repeat the URL, whose query may hold a token, and header values in their own errors. Every
 * message about a remote that quotes an underlying error goes through here.
 */
export function networkMessage(error: unknown, url: string, secrets: Secrets = {}): string {
  return redactText(errorText(error), { urls: [url, ...(secrets.urls ?? [])], values: secrets.values ?? [] });
}

/**
 * Why a header value cannot be sent, or `undefined`: a carriage return, line feed or NUL (header
 * injection; fetch refuses it with a message that repeats the value). The reason never quotes the value.
 */
export function headerValueProblem(name: string, value: string): string | undefined {
  if (/[\r\n\0]/.test(value)) {
    return `the value of header "${name}" holds a line break or NUL character, which HTTP cannot carry (its value is not shown)`;
  }
  return undefined;
}

/** `headers` as output may show them: each name with the value {@link REDACTED}. */
export function redactHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const shown: Record<string, string> = Object.create(null);
  for (const name of Object.keys(headers)) shown[name] = REDACTED;
  return { ...shown };
}

/** A word that marks a flag, a variable or a header as holding a secret (`--api-key`, `GITHUB_TOKEN=`, …). */
const SECRET_NAME = String.raw`[A-Za-z0-9_-]*(?:token|secret|passw(?:or)?d|api[-_]?key|auth[A-Za-z0-9_-]*|credentials?|cookie|private[-_]?key|access[-_]?key)[A-Za-z0-9_-]*`;
/** Query parameter names that carry a signature or key without saying so (`?key=`, Azure's `?sig=`). */
const SECRET_QUERY_NAMES = new Set(['key', 'sig', 'signature']);

/**
 * Whether a header or query parameter name says it carries a credential: `Authorization`,
 * `Proxy-Authorization`, `Cookie`, `X-Api-Key`, `X-Auth-Token`, `password`, `access_token`, … (a name with
 * token, secret, password, api key, auth, credential, cookie, private or access key in it), or one of the
 * bare `key`, `sig`, `signature`. Such a value must never be given on a command line.
 * @internal
 */
export function isSecretName(name: string): boolean {
  return new RegExp(`^${SECRET_NAME}$`, 'i').test(name) || SECRET_QUERY_NAMES.has(name.toLowerCase());
}

/** A shell word: double-quoted, single-quoted or bare. */
const SHELL_WORD = String.raw`"[^"]*"|'[^']*'|[^\s'"]+`;

/**
 * What a launch command (a shell command line, as `gateway --stdio` takes it) holds that output must not
 * show: every URL with user information, a query or a fragment; the value of a flag whose name says secret
 * (`--token X`, `--api-key=X`: a name with token, secret, password, api key, auth, credential, cookie or
 * private/access key in it); the value of such a variable assignment
 * (`GITHUB_TOKEN=X cmd`); the value of a header argument so named (`-H "Authorization: Bearer X"`,
 * `"X-Api-Key: X"`) and a `Bearer`/`Basic` credential. Feed
 * the result to {@link redactText} (or use {@link redactCommand}). Errs towards hiding: a path given to
 * `--key-file` is hidden too.
 */
export function commandSecrets(command: string): Required<Secrets> {
  const urls = new Set<string>();
  const values = new Set<string>();
  const unquote = (word: string) => (/^(["']).*\1$/s.test(word) ? word.slice(1, -1) : word);
  for (const [url] of command.matchAll(/[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s'"]+/g)) {
    if (!isRedactedUrl(url)) urls.add(url);
  }
  // A flag (one or two dashes, then `=` or spaces) or a variable assignment (`=` only) named as a secret.
  const named = new RegExp(
    String.raw`(?:^|[\s"'])(?:(-{1,2}${SECRET_NAME})(?:=|\s+)|(${SECRET_NAME})=)(${SHELL_WORD})`,
    'gi',
  );
  for (const match of command.matchAll(named)) values.add(unquote(match[3] ?? ''));
  // A header given as an argument (`-H "Authorization: Bearer X"`, `--header "X-Api-Key: X"`).
  const header = new RegExp(String.raw`(?:^|[\s"'])${SECRET_NAME}\s*:\s*([^"'\n]+)`, 'gi');
  for (const match of command.matchAll(header)) values.add((match[1] ?? '').trim());
  for (const match of command.matchAll(/\b(?:Bearer|Basic)\s+([^\s'"]+)/g)) values.add(match[1] ?? '');
  values.delete('');
  return { urls: [...urls], values: [...values] };
}

/** `command` as output may show it: {@link commandSecrets} redacted (URLs by {@link redactUrl}, values as {@link REDACTED}). */
export function redactCommand(command: string): string {
  return redactText(command, commandSecrets(command));
}

/** Depth past which {@link redactValue} shows a value as {@link REDACTED}: 16. */
const MAX_REDACT_DEPTH = 16;

/**
 * A JSON value (a tool call's arguments or result) as telemetry may record it, when the operator turned
 * that on: every member whose name says secret ({@link isSecretName}) is {@link REDACTED}, every string
 * that is a URL or holds one is shown as {@link redactUrlsIn} shows it, and `secrets` are replaced
 * wherever they occur. Nesting deeper than 16 levels is cut.
 */
export function redactValue(value: unknown, secrets: Secrets = {}, depth = 0): unknown {
  if (depth > MAX_REDACT_DEPTH) return REDACTED;
  if (typeof value === 'string') return redactText(redactUrlsIn(value), secrets);
  if (Array.isArray(value)) return value.map((item) => redactValue(item, secrets, depth + 1));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = Object.create(null);
  for (const [key, item] of Object.entries(value)) {
    out[key] = isSecretName(key) ? REDACTED : redactValue(item, secrets, depth + 1);
  }
  return out;
}

/**
 * Whether a field of a question's schema holds a secret: the schema marks it (`writeOnly: true`,
 * `"x-secret": true`, `format: "password"`) or its name looks like a credential ({@link isSecretName}). Its
 * answer is journaled `REDACTED`, and the operator's prompt does not echo it.
 */
export function isSecretField(name: string, field: unknown): boolean {
  const marked =
    typeof field === 'object' &&
    field !== null &&
    ((field as Record<string, unknown>).format === 'password' ||
      (field as Record<string, unknown>).writeOnly === true ||
      (field as Record<string, unknown>)['x-secret'] === true);
  return marked || isSecretName(name);
}

/**
 * A question's `requestedSchema` as a journal (and the run viewer) may show it: a field that holds a secret
 * ({@link isSecretField}) keeps its type and description, but its `default`, `examples`, `const` and `enum`
 * are {@link REDACTED} — the operator's prompt never shows them either.
 */
export function redactQuestionSchema(requestedSchema: Record<string, unknown>): Record<string, unknown> {
  const properties = requestedSchema.properties;
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) return requestedSchema;
  const shown: Record<string, unknown> = Object.create(null);
  for (const [name, field] of Object.entries(properties as Record<string, unknown>)) {
    if (!isSecretField(name, field) || typeof field !== 'object' || field === null) {
      shown[name] = field;
      continue;
    }
    const copy: Record<string, unknown> = { ...(field as Record<string, unknown>) };
    for (const key of ['default', 'examples', 'const', 'enum']) if (key in copy) copy[key] = REDACTED;
    shown[name] = copy;
  }
  return { ...requestedSchema, properties: { ...shown } };
}

/**
 * Elicited `values` as a journal may show them: the value of every field that `requestedSchema` marks
 * secret (`format: "password"`, `writeOnly: true`, `"x-secret": true`) or whose name looks like a
 * credential ({@link isSecretName}) is {@link REDACTED}.
 */
export function redactElicited(
  values: Readonly<Record<string, unknown>> | undefined,
  requestedSchema: unknown,
): Record<string, unknown> | undefined {
  if (values === undefined) return undefined;
  const properties =
    typeof requestedSchema === 'object' && requestedSchema !== null
      ? ((requestedSchema as { properties?: unknown }).properties as Record<string, unknown> | undefined)
      : undefined;
  const shown: Record<string, unknown> = Object.create(null);
  for (const [name, value] of Object.entries(values)) {
    const field =
      properties !== undefined && typeof properties === 'object' && Object.hasOwn(properties, name)
        ? properties[name]
        : undefined;
    shown[name] = isSecretField(name, field) ? REDACTED : value;
  }
  return { ...shown };
}
