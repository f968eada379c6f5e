/**
 * Questions from servers (SPEC §7): a service's `elicitation/create` (2025-11-25) and the elicitation of
 * an `input_required` result (2026-07-28, which the official client turns into the same request to the
 * same handler) are answered by the agent's policy, `agents.<name>.elicitation`:
 *
 * - `model` (the default): the call that asked is answered with a tool error that states the question and
 *   its schema (`question_asked`); the model answers by calling the same tool again with the same
 *   arguments plus `answer` (an object of the schema's fields), which the bridge strips from the arguments
 *   and gives to the service when it asks again (`accept`);
 * - `operator`: an operator callback (the CLI's TTY prompt in an attended run) answers; without one (an
 *   unattended run) the call fails `question_unanswered` with the question;
 * - `decline`: the service is told `decline`.
 *
 * URL-mode elicitation is shown (the URL is in the question), never opened: it is declined. Sampling is
 * refused (`sampling_refused`). Which call asked: the latest call in flight on the session (a service
 * asks while it handles a call; with several calls in flight at once the latest is taken).
 */
import type { Client } from '@modelcontextprotocol/client';
import { SdkError } from '../errors.js';
import { isPlainObject } from '../plainObject.js';
import type { Question, QuestionAnswer } from '../schemas/records.js';
import type { ElicitationPolicy } from '../workflow/workflowTypes.js';

export type { ElicitationPolicy, Question, QuestionAnswer };

/** The default {@link ElicitationPolicy}: `model`. */
export const DEFAULT_ELICITATION_POLICY: ElicitationPolicy = 'model';

/** How one call's questions are answered (the caller's part, through the surface). @public */
export interface QuestionOptions {
  /** Who answers (default `model`). */
  policy?: ElicitationPolicy;
  /** The model's answer, from the call's `answer` argument (policy `model`). */
  answer?: Record<string, unknown>;
  /** Policy `operator`: asks the operator (absent: the run is unattended). */
  askOperator?: (question: Question) => Promise<QuestionAnswer>;
  /** Told of a question before the operator is asked (`askOperator`): it waits for a person (journaled). */
  onAsking?: (question: Question) => void;
  /** Told of every question and how it was answered (journaled, secret fields redacted by the caller). */
  onQuestion?: (question: Question, answer: QuestionAnswer) => void;
}

/**
 * A call's hold: on while a person (the operator) answers one of its questions. The call's timers (the
 * session's forwarding timeout, the surface gate's) wait while it is on: a person takes longer than a
 * service should.
 */
export class CallHold {
  private readonly listeners = new Set<(on: boolean) => void>();
  private on = false;

  /** Whether a person is answering now. */
  get held(): boolean {
    return this.on;
  }

  set(on: boolean): void {
    if (on === this.on) return;
    this.on = on;
    for (const listener of [...this.listeners]) listener(on);
  }

  /** Tells `listener` of each change; returns the function that stops telling it. */
  listen(listener: (on: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** `options` whose operator, while asked, has `holding` told `true` (then `false` once answered). */
export function holdingWhileAsked(
  options: QuestionOptions | undefined,
  holding: (on: boolean) => void,
): QuestionOptions | undefined {
  const ask = options?.askOperator;
  if (options === undefined || ask === undefined) return options;
  return {
    ...options,
    askOperator: async (question) => {
      holding(true);
      try {
        return await ask(question);
      } finally {
        holding(false);
      }
    },
  };
}

/** One call in flight: its options and the question left unanswered, if any. */
interface Slot {
  options: QuestionOptions;
  unanswered?: Question;
}

// The desk of each service client (set by the session that lists it).
const desks = new WeakMap<Client, QuestionDesk>();

/** The questions of one service session; see the module comment. */
export class QuestionDesk {
  private readonly slots: Slot[] = [];

  /** Registers this desk as the answerer of `client`'s `elicitation/create` (and of its sampling refusal). */
  attach(client: Client): void {
    desks.set(client, this);
  }

  /** Runs `call` as one call whose questions `options` answers; throws the question when it is left unanswered. */
  async during<T>(
    what: string,
    service: string,
    options: QuestionOptions | undefined,
    call: () => Promise<T>,
  ): Promise<T> {
    const slot: Slot = { options: options ?? {} };
    this.slots.push(slot);
    let result: T;
    try {
      result = await call();
    } catch (error) {
      // A 2026-07-28 call whose question was left unanswered ends in the handler's refusal (see answerQuestions).
      if (slot.unanswered === undefined) throw error;
    } finally {
      this.slots.splice(this.slots.indexOf(slot), 1);
    }
    if (slot.unanswered !== undefined) {
      throw questionError(what, service, slot.unanswered, slot.options.policy ?? DEFAULT_ELICITATION_POLICY);
    }
    return result!;
  }

  /** Whether the latest call in flight has a question left unanswered. */
  get leftUnanswered(): boolean {
    return this.slots.at(-1)?.unanswered !== undefined;
  }

  /** Answers one question of the service. */
  async answer(question: Question): Promise<QuestionAnswer> {
    const slot = this.slots.at(-1);
    const options = slot?.options ?? {};
    const policy = options.policy ?? DEFAULT_ELICITATION_POLICY;
    let answer: QuestionAnswer;
    if (question.mode === 'url') {
      // Shown (the URL is in the tool error), never opened.
      if (slot !== undefined && policy !== 'decline') slot.unanswered = question;
      answer = { action: 'decline' };
    } else if (policy === 'decline') {
      answer = { action: 'decline' };
    } else if (policy === 'model' && options.answer !== undefined) {
      answer = { action: 'accept', content: options.answer };
    } else if (policy === 'operator' && options.askOperator !== undefined) {
      options.onAsking?.(question);
      answer = await options.askOperator(question);
    } else {
      if (slot !== undefined) slot.unanswered = question;
      answer = { action: 'cancel' };
    }
    options.onQuestion?.(question, answer);
    return answer;
  }
}

/** The tool error of a question left unanswered: `question_asked` (the model answers) or `question_unanswered`. */
function questionError(what: string, service: string, question: Question, policy: ElicitationPolicy): SdkError {
  const shown =
    question.mode === 'url'
      ? `${question.message} (open this URL yourself; the SDK never opens it: ${question.url})`
      : `${question.message}; answer schema: ${JSON.stringify(question.requestedSchema ?? {})}`;
  if (policy === 'model' && question.mode === 'form') {
    return new SdkError('question_asked', `service "${service}" asks, during ${what}: ${shown}`, {
      remedy:
        'Call the same tool again with the same arguments plus "answer": an object with the fields of the answer schema.',
      data: { service, question: { ...question } },
    });
  }
  return new SdkError(
    'question_unanswered',
    `service "${service}" asked, during ${what}, and no one could answer: ${shown}`,
    {
      remedy:
        question.mode === 'url'
          ? 'Open the URL yourself, then call the tool again.'
          : 'Run attended (a terminal) with agents.<agent>.elicitation "operator", or set it to "model".',
      data: { service, question: { ...question } },
    },
  );
}

/** The question an `elicitation/create` request's params carry. */
export function questionOf(params: Record<string, unknown>): Question {
  const message = typeof params.message === 'string' ? params.message : '';
  if (params.mode === 'url') return { mode: 'url', message, url: typeof params.url === 'string' ? params.url : '' };
  return {
    mode: 'form',
    message,
    ...(isPlainObject(params.requestedSchema) ? { requestedSchema: params.requestedSchema } : {}),
  };
}

/**
 * Has `client` answer `elicitation/create` through the desk set for it (none yet: `decline`) and refuse
 * `sampling/createMessage` with a coded error. Called once by `newServiceClient`.
 */
export function answerQuestions(client: Client): void {
  client.setRequestHandler('elicitation/create', async (request) => {
    const desk = desks.get(client);
    const question = questionOf(request.params as Record<string, unknown>);
    const answer = desk === undefined ? { action: 'decline' as const } : await desk.answer(question);
    // On 2026-07-28 the client retries an input_required call with the answer at once; a question left for
    // the model or the operator must end the call instead (the server would only ask again).
    if (client.getProtocolEra() === 'modern' && desk?.leftUnanswered === true) {
      throw new Error(`the question is left unanswered: ${question.message}`);
    }
    return answer as never;
  });
}

/**
 * An operator answer that accepts a form question with the defaults its schema gives (SEP-1034): every
 * property with a `default` of the right primitive type (or a string array) is filled; a URL question is
 * declined. For unattended clients that must answer (the conformance client scenario
 * `elicitation-sep1034-client-defaults`): `{ policy: "operator", askOperator: answerWithDefaults }`.
 */
export async function answerWithDefaults(question: Question): Promise<QuestionAnswer> {
  if (question.mode !== 'form') return { action: 'decline' };
  const properties = question.requestedSchema?.properties;
  // Field names come from the service: no prototype behind them (`__proto__` is a field like any other).
  const content: Record<string, unknown> = Object.create(null);
  if (isPlainObject(properties)) {
    for (const [name, field] of Object.entries(properties)) {
      if (!isPlainObject(field) || !Object.hasOwn(field, 'default')) continue;
      const value = field.default;
      const ok =
        ['string', 'number', 'boolean'].includes(typeof value) ||
        (Array.isArray(value) && value.every((item) => typeof item === 'string'));
      if (ok) content[name] = value;
    }
  }
  return { action: 'accept', content: { ...content } };
}
