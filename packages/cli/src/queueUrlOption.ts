/**
 * The queue URL of `run`, `resume` and `worker` from `--queue`, `--queue-env` or `--queue-file` (SPEC §13.1).
 * A command line is readable by every user of the machine, so `--queue` takes no credentials; a URL with a
 * password comes from a variable or a 0600 file (the SDK's `queueUrlFrom` checks all three).
 */
import { QUEUE_URL_ENV, queueUrlFrom } from '@scienceevolve/sdk/internal';

/** The parsed values of the three queue options. */
export interface QueueUrlValues {
  queue?: string | undefined;
  'queue-env'?: string | undefined;
  'queue-file'?: string | undefined;
}

/**
 * The queue URL the options give, or undefined when none is given. With `worker: true` (a worker always
 * needs a queue) and no option, {@link QUEUE_URL_ENV} is read when it is set; `run` and `resume` never read a
 * variable they were not told to, so a set variable never makes a local run a queued one.
 *
 * The variable the URL came from is removed from this process's environment once read: the services, agent
 * CLIs and supervisor this process starts never inherit it, and no `envFrom` can map it.
 */
export function queueUrlOption(values: QueueUrlValues, options: { worker?: boolean } = {}): string | undefined {
  const fallback =
    options.worker === true &&
    values.queue === undefined &&
    values['queue-env'] === undefined &&
    values['queue-file'] === undefined &&
    process.env[QUEUE_URL_ENV] !== undefined
      ? QUEUE_URL_ENV
      : undefined;
  const source = queueUrlFrom(
    { url: values.queue, env: values['queue-env'] ?? fallback, file: values['queue-file'] },
    process.env,
  );
  if (source?.from.kind === 'env') delete process.env[source.from.variable];
  return source?.url;
}
