/**
 * A call's cancellation without an `AbortSignal` until something asks for one. On Node 20 an
 * `AbortSignal` costs ~2.3 µs to build and its first listener as much again (Node 24: ~0.1 µs), and a
 * forwarded `tools/call` used to build two and listen to each (the face's, for the client's
 * cancellation, and the gate's, for its timeout): a third of the warm path of a call. A
 * {@link CallCancel} is a flag, a reason and a list of listeners; {@link CallCancel.signal} makes a real
 * `AbortSignal` that follows it the first time it is read (for the SDK client, a remote session, a task,
 * an in-process tool), so code that needs a signal still gets one, aborted with the same reason.
 *
 * Inside the SDK it rides beside the signal: in {@link ForwardOptions} as `cancel` (with `signal` a
 * getter of its lazy signal), and in a surface call's options under {@link CALL_CANCEL}.
 */

/** The reason an abort without one is given (as `AbortController.abort()` gives). */
function abortError(): unknown {
  return new DOMException('This operation was aborted', 'AbortError');
}

/** Anything that aborts: an `AbortSignal` or a {@link CallCancel}. */
export type Abortable = AbortSignal | CallCancel;

/** See the module comment. */
export class CallCancel {
  private isAborted = false;
  private why: unknown;
  private listeners: (() => void)[] | undefined;
  private controller: AbortController | undefined;

  /** Whether it was aborted. */
  get aborted(): boolean {
    return this.isAborted;
  }

  /** Why it was aborted (undefined until it is). */
  get reason(): unknown {
    return this.why;
  }

  /** A real `AbortSignal` that follows this one (made at the first read; already aborted if this is). */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.isAborted) this.controller.abort(this.why);
    }
    return this.controller.signal;
  }

  /**
   * Calls `listener` once when aborted (not at all if it already is: check {@link aborted} first, as with
   * a signal). Returns the function that stops it.
   */
  onAbort(listener: () => void): () => void {
    if (this.isAborted) return () => {};
    this.listeners ??= [];
    this.listeners.push(listener);
    return () => {
      const list = this.listeners;
      if (list === undefined) return;
      const at = list.indexOf(listener);
      if (at !== -1) list.splice(at, 1);
    };
  }

  /** Aborts with `reason` (an `AbortError` when none is given). Idempotent: the first reason stays. */
  abort(reason?: unknown): void {
    if (this.isAborted) return;
    this.isAborted = true;
    this.why = reason === undefined ? abortError() : reason;
    this.controller?.abort(this.why);
    const list = this.listeners;
    this.listeners = undefined;
    if (list === undefined) return;
    // Every listener runs, as an AbortSignal's do, even when one throws: the first error is thrown after.
    let failed: { error: unknown } | undefined;
    for (const listener of list) {
      try {
        listener();
      } catch (error) {
        failed ??= { error };
      }
    }
    if (failed !== undefined) throw failed.error;
  }
}

/**
 * Has `listener` called once when `source` aborts (an `AbortSignal` or a {@link CallCancel}); returns the
 * function that stops it. Nothing is called for a source that is already aborted: check it first.
 */
export function listenAbort(source: Abortable | undefined, listener: () => void): () => void {
  if (source === undefined) return () => {};
  if (source instanceof CallCancel) return source.onAbort(listener);
  source.addEventListener('abort', listener, { once: true });
  return () => source.removeEventListener('abort', listener);
}

/** The key of a surface call's {@link CallCancel} in its options (the options' `signal` follows it). */
export const CALL_CANCEL: unique symbol = Symbol('scienceevolve.callCancel');

/** The {@link CallCancel} a surface call's options carry under {@link CALL_CANCEL}, if they do. */
export function callCancelOf(options: object | undefined): CallCancel | undefined {
  const cancel = (options as { [CALL_CANCEL]?: unknown } | undefined)?.[CALL_CANCEL];
  return cancel instanceof CallCancel ? cancel : undefined;
}

/**
 * A surface call's options cancelled by `cancel`: `rest` with `cancel` under {@link CALL_CANCEL} and
 * `signal` a getter of its lazy signal (an own, enumerable property, so a wrapper that copies the options
 * still hands on a working signal). A signal is passed as it is.
 */
export function withCancel<T extends object>(rest: T, source: Abortable): T & { signal?: AbortSignal } {
  if (!(source instanceof CallCancel)) return { ...rest, signal: source };
  return {
    ...rest,
    [CALL_CANCEL]: source,
    get signal() {
      return source.signal;
    },
  };
}
