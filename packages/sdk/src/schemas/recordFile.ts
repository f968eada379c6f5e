/**
 * The shape of one JSON record kept in a file of the data dir, written once for the room that keeps it
 * (the store: `store/tokenStore.ts`) and the room that uses it (sessions: a remote service's sign-in, which
 * may not import the store). Types only.
 */

/** One JSON record in a file of the data dir. Every method is safe to call from several processes. */
export interface RecordFile<R = unknown> {
  /** The file's path (named in errors). */
  readonly path: string;
  /**
   * The parsed record, or undefined when none is held; `io_error` naming the file when it is not JSON. The
   * caller checks the value with the record's schema.
   */
  read(): Promise<unknown>;
  /** Replaces the record atomically (0600). */
  write(record: R): Promise<void>;
  /** Removes the record. */
  remove(): Promise<void>;
  /** Runs `fn` holding this record's cross-process lock. */
  withLock<T>(fn: () => Promise<T>): Promise<T>;
}
