/**
 * The local model server speaks each wire protocol as its real clients expect: plain `fetch` requests,
 * the SSE streams parsed by hand, tool calls and usage checked, follow-up requests with tool results
 * normalized, and each fault in the provider's error shape.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import {
  type ModelRequest,
  type ModelServerOptions,
  scriptedPolicy,
  startModelServer,
} from '../../fixtures/modelServer/index.js';
import { readSse } from '../../fixtures/modelServer/readSse.js';

const TOOLS_CHAT = [
  { type: 'function', function: { name: 'mcp__lab__echo', description: 'Echo text', parameters: { type: 'object' } } },
  { type: 'function', function: { name: 'mcp__lab__add', description: 'Add', parameters: { type: 'object' } } },
];

async function server(t: import('node:test').TestContext, options: ModelServerOptions = {}) {
  const s = await startModelServer(options);
  t.after(() => s.close());
  return s;
}

/** Provider JSON, loosely typed: the tests check it field by field. */
// biome-ignore lint/suspicious/noExplicitAny: provider JSON is checked field by field below
type Loose = any;

async function json(res: Response): Promise<Loose> {
  return res.json();
}

function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

const echoThenAdd = () =>
  scriptedPolicy([
    { call: 'echo', arguments: { text: 'hi' } },
    {
      calls: [
        { call: 'add', arguments: { a: 1, b: 2 } },
        { call: 'echo', arguments: { text: 'again' } },
      ],
    },
  ]);

// ---------------------------------------------------------------- OpenAI Chat Completions

test('chat completions, not streaming: a tool call with its JSON arguments and usage', async (t) => {
  const s = await server(t, {
    respond: scriptedPolicy([{ call: 'echo', arguments: { text: 'hi' } }], {
      usage: { inputTokens: 11, outputTokens: 7 },
    }),
  });
  const res = await post(`${s.url}/v1/chat/completions`, {
    model: 'test-model',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Say hi' },
    ],
    tools: TOOLS_CHAT,
  });
  assert.equal(res.status, 200);
  const body = await json(res);
  assert.equal(body.object, 'chat.completion');
  const choice = body.choices[0];
  assert.equal(choice.finish_reason, 'tool_calls');
  assert.equal(choice.message.role, 'assistant');
  assert.equal(choice.message.tool_calls.length, 1);
  const call = choice.message.tool_calls[0];
  assert.equal(call.type, 'function');
  assert.match(call.id, /^call_/);
  assert.equal(call.function.name, 'mcp__lab__echo');
  assert.deepEqual(JSON.parse(call.function.arguments), { text: 'hi' });
  assert.deepEqual(
    { p: body.usage.prompt_tokens, c: body.usage.completion_tokens, t: body.usage.total_tokens },
    { p: 11, c: 7, t: 18 },
  );
  const [request] = s.requests;
  assert.equal(request?.protocol, 'openai-chat');
  assert.equal(request?.path, '/v1/chat/completions');
  assert.equal(request?.stream, false);
  assert.equal(request?.system, 'Be brief.');
  assert.deepEqual(request?.messages, [{ role: 'user', text: 'Say hi' }]);
  assert.deepEqual(
    request?.tools.map((tool) => tool.name),
    ['mcp__lab__echo', 'mcp__lab__add'],
  );
});

test('chat completions, streaming: tool call fragments by index, finish reason, usage chunk and [DONE]', async (t) => {
  const s = await server(t, {
    respond: () => ({
      toolCalls: [
        { name: 'mcp__lab__add', arguments: { a: 1, b: 2 } },
        { name: 'mcp__lab__echo', arguments: { text: 'parallel' } },
      ],
      usage: { inputTokens: 20, outputTokens: 5 },
    }),
  });
  const res = await post(`${s.url}/v1/chat/completions`, {
    model: 'test-model',
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Go' }] }],
    tools: TOOLS_CHAT,
  });
  const events = await readSse(res);
  assert.equal(events.at(-1)?.data, '[DONE]');
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
  assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk'));
  assert.equal(chunks[0].choices[0].delta.role, 'assistant');
  const calls: Array<{ id: string; name: string; args: string }> = [];
  let finish: string | undefined;
  for (const chunk of chunks) {
    for (const choice of chunk.choices) {
      if (choice.finish_reason) finish = choice.finish_reason;
      for (const fragment of choice.delta.tool_calls ?? []) {
        if (fragment.id) calls[fragment.index] = { id: fragment.id, name: fragment.function.name, args: '' };
        const call = calls[fragment.index];
        assert.ok(call, 'a fragment arrives after the first fragment of its call');
        call.args += fragment.function.arguments ?? '';
      }
    }
  }
  assert.equal(finish, 'tool_calls');
  assert.deepEqual(
    calls.map((c) => [c.name, JSON.parse(c.args)]),
    [
      ['mcp__lab__add', { a: 1, b: 2 }],
      ['mcp__lab__echo', { text: 'parallel' }],
    ],
  );
  assert.ok(calls.every((c) => c.id.startsWith('call_')));
  assert.ok(
    chunks.some((c) => c.choices[0]?.delta.tool_calls?.some((f: { id?: string }) => f.id === undefined)),
    'arguments arrive in more than one fragment',
  );
  const usage = chunks.at(-1);
  assert.deepEqual(usage.choices, []);
  assert.deepEqual([usage.usage.prompt_tokens, usage.usage.completion_tokens], [20, 5]);
  assert.equal(s.requests[0]?.stream, true);
  assert.equal(s.requests[0]?.streamUsage, true);
});

test('chat completions, streaming without include_usage: text deltas and no usage chunk', async (t) => {
  const s = await server(t, { respond: () => ({ text: 'all done here' }) });
  const res = await post(`${s.url}/v1/chat/completions`, {
    model: 'test-model',
    stream: true,
    messages: [{ role: 'user', content: 'Go' }],
  });
  const events = await readSse(res);
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
  const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
  assert.equal(text, 'all done here');
  assert.equal(chunks.at(-1).choices[0].finish_reason, 'stop');
  assert.ok(chunks.every((c) => c.usage === undefined && c.choices.length === 1));
});

test('chat completions: a follow-up with tool results is normalized and gets the final text', async (t) => {
  const s = await server(t, { respond: echoThenAdd() });
  const res = await post(`${s.url}/v1/chat/completions`, {
    model: 'test-model',
    messages: [
      { role: 'developer', content: 'Use tools.' },
      { role: 'user', content: 'Go' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'mcp__lab__echo', arguments: '{"text":"hi"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'hi' },
      {
        role: 'assistant',
        content: 'two at once',
        tool_calls: [
          { id: 'call_2', type: 'function', function: { name: 'mcp__lab__add', arguments: '{"a":1,"b":2}' } },
          { id: 'call_3', type: 'function', function: { name: 'mcp__lab__echo', arguments: '{"text":"again"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_2', content: '{"content":[{"type":"text","text":"3"}]}' },
      { role: 'tool', tool_call_id: 'call_3', content: [{ type: 'text', text: 'again' }] },
    ],
    tools: TOOLS_CHAT,
  });
  const body = await json(res);
  assert.equal(body.choices[0].finish_reason, 'stop');
  assert.equal(body.choices[0].message.content, 'final: hi | 3 | again');
  assert.deepEqual(s.requests[0]?.messages, [
    { role: 'user', text: 'Go' },
    { role: 'assistant', toolCalls: [{ id: 'call_1', name: 'mcp__lab__echo', arguments: { text: 'hi' } }] },
    { role: 'tool', toolResults: [{ id: 'call_1', name: 'mcp__lab__echo', text: 'hi' }] },
    {
      role: 'assistant',
      text: 'two at once',
      toolCalls: [
        { id: 'call_2', name: 'mcp__lab__add', arguments: { a: 1, b: 2 } },
        { id: 'call_3', name: 'mcp__lab__echo', arguments: { text: 'again' } },
      ],
    },
    {
      role: 'tool',
      toolResults: [
        { id: 'call_2', name: 'mcp__lab__add', text: '{"content":[{"type":"text","text":"3"}]}' },
        { id: 'call_3', name: 'mcp__lab__echo', text: 'again' },
      ],
    },
  ]);
  assert.equal(s.requests[0]?.system, 'Use tools.');
});

// ---------------------------------------------------------------- Anthropic Messages

const TOOLS_ANTHROPIC = [
  { name: 'mcp__lab__echo', description: 'Echo text', input_schema: { type: 'object' } },
  { name: 'mcp__lab__add', description: 'Add', input_schema: { type: 'object' } },
];

test('anthropic messages, streaming: the real event sequence, tool_use input from input_json_delta, usage', async (t) => {
  const s = await server(t, {
    respond: () => ({
      text: 'Calling.',
      toolCalls: [{ name: 'mcp__lab__echo', arguments: { text: 'hi there' } }],
      usage: { inputTokens: 30, outputTokens: 9 },
    }),
  });
  const res = await post(
    `${s.url}/v1/messages?beta=true`,
    {
      model: 'claude-test',
      max_tokens: 1024,
      stream: true,
      system: [{ type: 'text', text: 'You are Claude Code.' }],
      // Claude Code 2.1.328 also sends part of its system text as a message of role "system".
      messages: [
        { role: 'system', content: 'Environment: linux.' },
        { role: 'user', content: [{ type: 'text', text: 'Go' }] },
      ],
      tools: TOOLS_ANTHROPIC,
    },
    { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' },
  );
  const events = await readSse(res);
  const data = events.map((e) => JSON.parse(e.data));
  for (const [i, e] of events.entries()) assert.equal(e.event, data[i].type, 'event: names the data type');
  const sequence = data.map((d) => (d.type === 'content_block_delta' ? `delta:${d.delta.type}` : d.type));
  assert.deepEqual(
    sequence.filter((x, i) => x !== sequence[i - 1]),
    [
      'message_start',
      'ping',
      'content_block_start',
      'delta:text_delta',
      'content_block_stop',
      'content_block_start',
      'delta:input_json_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ],
  );
  assert.equal(data[0].message.role, 'assistant');
  assert.equal(data[0].message.usage.input_tokens, 30);
  const blocks: Array<{ type: string; text?: string; id?: string; name?: string; json?: string }> = [];
  for (const d of data) {
    if (d.type === 'content_block_start') blocks[d.index] = { ...d.content_block, json: '' };
    if (d.type === 'content_block_delta') {
      const block = blocks[d.index]!;
      if (d.delta.type === 'text_delta') block.text = (block.text ?? '') + d.delta.text;
      else block.json += d.delta.partial_json;
    }
  }
  assert.equal(blocks[0]?.text, 'Calling.');
  assert.equal(blocks[1]?.type, 'tool_use');
  assert.equal(blocks[1]?.name, 'mcp__lab__echo');
  assert.match(blocks[1]?.id ?? '', /^toolu_/);
  assert.deepEqual(JSON.parse(blocks[1]?.json ?? ''), { text: 'hi there' });
  const delta = data.find((d) => d.type === 'message_delta');
  assert.equal(delta.delta.stop_reason, 'tool_use');
  assert.equal(delta.usage.output_tokens, 9);
  const [request] = s.requests;
  assert.equal(request?.protocol, 'anthropic');
  assert.equal(request?.path, '/v1/messages');
  assert.equal(request?.query.beta, 'true');
  assert.equal(request?.system, 'You are Claude Code.\nEnvironment: linux.');
  assert.deepEqual(request?.messages, [{ role: 'user', text: 'Go' }]);
  assert.equal(request?.apiKey, 'sk-ant-test');
  assert.equal(request?.headers['x-api-key'], 'sk-ant-test');
});

test('anthropic messages, not streaming: a follow-up with tool_result blocks, final text, end_turn', async (t) => {
  const s = await server(t, { respond: scriptedPolicy([{ call: 'echo', arguments: { text: 'hi' } }]) });
  const res = await post(`${s.url}/v1/messages`, {
    model: 'claude-test',
    max_tokens: 100,
    system: 'Be brief.',
    messages: [
      { role: 'user', content: 'Go' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Echoing.' },
          { type: 'tool_use', id: 'toolu_1', name: 'mcp__lab__echo', input: { text: 'hi' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'hi' }], is_error: true },
          { type: 'text', text: '<system-reminder>keep going</system-reminder>' },
        ],
      },
    ],
    tools: TOOLS_ANTHROPIC,
  });
  const body = await json(res);
  assert.equal(body.type, 'message');
  assert.equal(body.stop_reason, 'end_turn');
  assert.deepEqual(body.content, [{ type: 'text', text: 'final: hi' }]);
  assert.equal(typeof body.usage.input_tokens, 'number');
  assert.deepEqual(s.requests[0]?.messages, [
    { role: 'user', text: 'Go' },
    {
      role: 'assistant',
      text: 'Echoing.',
      toolCalls: [{ id: 'toolu_1', name: 'mcp__lab__echo', arguments: { text: 'hi' } }],
    },
    { role: 'tool', toolResults: [{ id: 'toolu_1', name: 'mcp__lab__echo', text: 'hi', isError: true }] },
    { role: 'user', text: '<system-reminder>keep going</system-reminder>' },
  ]);
});

// ---------------------------------------------------------------- OpenAI Responses

const TOOLS_RESPONSES = [
  { type: 'function', name: 'lab__echo', description: 'Echo text', parameters: { type: 'object' }, strict: false },
  {
    type: 'namespace',
    name: 'mcp__lab',
    description: 'Tools of lab',
    tools: [{ type: 'function', name: 'add', description: 'Add', parameters: { type: 'object' }, strict: false }],
  },
  { type: 'web_search' },
];

test('responses, not streaming: output items message and function_call, usage', async (t) => {
  const s = await server(t, {
    respond: () => ({
      text: 'Calling.',
      toolCalls: [{ name: 'lab__echo', arguments: { text: 'hi' } }],
      usage: { inputTokens: 40, outputTokens: 4 },
    }),
  });
  const res = await post(`${s.url}/v1/responses`, {
    model: 'gpt-test',
    instructions: 'Be brief.',
    input: 'Go',
    tools: TOOLS_RESPONSES,
  });
  const body = await json(res);
  assert.equal(body.object, 'response');
  assert.equal(body.status, 'completed');
  assert.match(body.id, /^resp_/);
  assert.deepEqual(
    body.output.map((item: { type: string }) => item.type),
    ['message', 'function_call'],
  );
  assert.deepEqual(body.output[0].content, [{ type: 'output_text', text: 'Calling.', annotations: [], logprobs: [] }]);
  const call = body.output[1];
  assert.match(call.id, /^fc_/);
  assert.match(call.call_id, /^call_/);
  assert.equal(call.name, 'lab__echo');
  assert.equal(call.namespace, undefined);
  assert.deepEqual(JSON.parse(call.arguments), { text: 'hi' });
  assert.deepEqual([body.usage.input_tokens, body.usage.output_tokens, body.usage.total_tokens], [40, 4, 44]);
  const [request] = s.requests;
  assert.equal(request?.protocol, 'openai-responses');
  assert.equal(request?.system, 'Be brief.');
  assert.deepEqual(request?.messages, [{ role: 'user', text: 'Go' }]);
  assert.deepEqual(
    request?.tools.map((tool) => tool.name),
    ['lab__echo', 'mcp__lab__add'],
  );
});

test('responses, streaming: the real event sequence with sequence numbers; a namespaced call names its namespace', async (t) => {
  const s = await server(t, {
    respond: scriptedPolicy([{ calls: [{ call: 'add', arguments: { a: 1, b: 2 } }, { call: 'echo' }] }], {
      usage: { inputTokens: 12, outputTokens: 3 },
    }),
  });
  const res = await post(`${s.url}/v1/responses`, {
    model: 'gpt-test',
    stream: true,
    input: [
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Use tools.' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Go' }] },
    ],
    tools: TOOLS_RESPONSES,
  });
  const events = await readSse(res);
  const data = events.map((e) => JSON.parse(e.data));
  for (const [i, e] of events.entries()) {
    assert.equal(e.event, data[i].type);
    assert.equal(data[i].sequence_number, i);
  }
  // Deltas repeat as many times as the arguments have fragments; the order of kinds is what clients check.
  const kinds = data.map((d) => d.type).filter((type, i, all) => type !== all[i - 1]);
  assert.deepEqual(kinds, [
    'response.created',
    'response.in_progress',
    'response.output_item.added',
    'response.function_call_arguments.delta',
    'response.function_call_arguments.done',
    'response.output_item.done',
    'response.output_item.added',
    'response.function_call_arguments.delta',
    'response.function_call_arguments.done',
    'response.output_item.done',
    'response.completed',
  ]);
  assert.equal(data[0].response.status, 'in_progress');
  const done = data.filter((d) => d.type === 'response.output_item.done').map((d) => d.item);
  assert.deepEqual(
    done.map((item) => [item.name, item.namespace, JSON.parse(item.arguments)]),
    [
      ['add', 'mcp__lab', { a: 1, b: 2 }],
      ['lab__echo', undefined, {}],
    ],
  );
  const first = data.filter((d) => d.item_id === done[0].id && d.type === 'response.function_call_arguments.delta');
  assert.equal(first.map((d) => d.delta).join(''), done[0].arguments);
  const completed = data.at(-1).response;
  assert.equal(completed.status, 'completed');
  assert.deepEqual(completed.output, done);
  assert.deepEqual([completed.usage.input_tokens, completed.usage.output_tokens], [12, 3]);
  assert.equal(s.requests[0]?.system, 'Use tools.');
});

test('responses, streaming text: content part and output_text deltas add up to the text', async (t) => {
  const s = await server(t, { respond: () => ({ text: 'the final answer' }) });
  const events = await readSse(await post(`${s.url}/v1/responses`, { model: 'gpt-test', stream: true, input: 'Go' }));
  const data = events.map((e) => JSON.parse(e.data));
  const kinds = data.map((d) => d.type).filter((type, i, all) => type !== all[i - 1]);
  assert.deepEqual(kinds, [
    'response.created',
    'response.in_progress',
    'response.output_item.added',
    'response.content_part.added',
    'response.output_text.delta',
    'response.output_text.done',
    'response.content_part.done',
    'response.output_item.done',
    'response.completed',
  ]);
  assert.ok(data.filter((d) => d.type === 'response.output_text.delta').length > 1, 'the text comes in pieces');
  const text = data
    .filter((d) => d.type === 'response.output_text.delta')
    .map((d) => d.delta)
    .join('');
  assert.equal(text, 'the final answer');
  assert.equal(data.find((d) => d.type === 'response.output_text.done').text, 'the final answer');
});

test('responses: a follow-up with function_call_output and item_reference is normalized; final text', async (t) => {
  const s = await server(t, { respond: scriptedPolicy([{ call: 'echo', arguments: { text: 'hi' } }]) });
  const first = await json(
    await post(`${s.url}/v1/responses`, { model: 'gpt-test', input: 'Go', tools: TOOLS_RESPONSES }),
  );
  const call = first.output[0];
  const res = await post(`${s.url}/v1/responses`, {
    model: 'gpt-test',
    input: [
      { role: 'user', content: 'Go' },
      { type: 'item_reference', id: call.id },
      { type: 'function_call_output', call_id: call.call_id, output: 'hi back' },
      {
        type: 'function_call',
        call_id: 'call_ns',
        namespace: 'mcp__lab',
        name: 'add',
        arguments: '{"a":1}',
      },
      { type: 'function_call_output', call_id: 'call_ns', output: [{ type: 'input_text', text: '1' }] },
      { type: 'reasoning', id: 'rs_1', summary: [] },
    ],
    tools: TOOLS_RESPONSES,
  });
  const body = await json(res);
  assert.equal(body.output[0].type, 'message');
  assert.equal(body.output[0].content[0].text, 'final: hi back | 1');
  assert.deepEqual(s.requests[1]?.messages, [
    { role: 'user', text: 'Go' },
    { role: 'assistant', toolCalls: [{ id: call.call_id, name: 'lab__echo', arguments: { text: 'hi' } }] },
    { role: 'tool', toolResults: [{ id: call.call_id, name: 'lab__echo', text: 'hi back' }] },
    { role: 'assistant', toolCalls: [{ id: 'call_ns', name: 'mcp__lab__add', arguments: { a: 1 } }] },
    { role: 'tool', toolResults: [{ id: 'call_ns', name: 'mcp__lab__add', text: '1' }] },
  ]);
  const unknown = await post(`${s.url}/v1/responses`, {
    model: 'gpt-test',
    input: [{ type: 'item_reference', id: 'fc_unknown' }],
  });
  assert.equal(unknown.status, 400);
  assert.match((await json(unknown)).error.message, /fc_unknown/);
});

// ---------------------------------------------------------------- Gemini

const TOOLS_GEMINI = [
  {
    functionDeclarations: [
      { name: 'echo', description: 'Echo text', parameters: { type: 'OBJECT' } },
      { name: 'add', description: 'Add', parametersJsonSchema: { type: 'object' } },
    ],
  },
  { googleSearch: {} },
];

test('gemini generateContent: functionCall parts, usageMetadata, model from the path', async (t) => {
  const s = await server(t, {
    respond: () => ({
      toolCalls: [{ name: 'echo', arguments: { text: 'hi' } }],
      usage: { inputTokens: 8, outputTokens: 2 },
    }),
  });
  const res = await post(
    `${s.url}/v1beta/models/gemini-test:generateContent`,
    {
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      contents: [{ role: 'user', parts: [{ text: 'Go' }] }],
      tools: TOOLS_GEMINI,
    },
    { 'x-goog-api-key': 'g-key' },
  );
  const body = await json(res);
  const candidate = body.candidates[0];
  assert.equal(candidate.finishReason, 'STOP');
  assert.equal(candidate.content.role, 'model');
  assert.deepEqual(candidate.content.parts, [{ functionCall: { name: 'echo', args: { text: 'hi' } } }]);
  assert.deepEqual(body.usageMetadata, { promptTokenCount: 8, candidatesTokenCount: 2, totalTokenCount: 10 });
  const [request] = s.requests;
  assert.equal(request?.protocol, 'gemini');
  assert.equal(request?.model, 'gemini-test');
  assert.equal(request?.stream, false);
  assert.equal(request?.system, 'Be brief.');
  assert.equal(request?.apiKey, 'g-key');
  assert.deepEqual(
    request?.tools.map((tool) => [tool.name, tool.parameters]),
    [
      ['echo', { type: 'OBJECT' }],
      ['add', { type: 'object' }],
    ],
  );
});

test('gemini streamGenerateContent?alt=sse: text chunks, whole function calls, finishReason last', async (t) => {
  const s = await server(t, {
    respond: () => ({
      text: 'Calling both.',
      toolCalls: [
        { name: 'echo', arguments: { text: 'a' } },
        { name: 'add', arguments: { a: 1, b: 2 } },
      ],
      usage: { inputTokens: 5, outputTokens: 6 },
    }),
  });
  const res = await post(`${s.url}/v1beta/models/gemini-test:streamGenerateContent?alt=sse&key=q-key`, {
    contents: [{ role: 'user', parts: [{ text: 'Go' }] }],
    tools: TOOLS_GEMINI,
  });
  const raw = await res.clone().text();
  assert.ok(raw.includes('\r\n\r\n'), 'events end with CRLF CRLF as Google sends them');
  const chunks = (await readSse(res)).map((e) => JSON.parse(e.data));
  assert.ok(chunks.length >= 2);
  const parts = chunks.flatMap((c) => c.candidates[0].content.parts);
  assert.equal(
    parts
      .filter((p: { text?: string }) => p.text !== undefined)
      .map((p: { text: string }) => p.text)
      .join(''),
    'Calling both.',
  );
  assert.deepEqual(
    parts
      .filter((p: { functionCall?: unknown }) => p.functionCall)
      .map((p: { functionCall: unknown }) => p.functionCall),
    [
      { name: 'echo', args: { text: 'a' } },
      { name: 'add', args: { a: 1, b: 2 } },
    ],
  );
  assert.deepEqual(
    chunks.map((c) => c.candidates[0].finishReason),
    [...chunks.slice(1).map(() => undefined), 'STOP'],
  );
  assert.equal(chunks.at(-1).usageMetadata.totalTokenCount, 11);
  assert.equal(s.requests[0]?.stream, true);
  assert.equal(s.requests[0]?.query.alt, 'sse');
  assert.equal(s.requests[0]?.apiKey, 'q-key');
});

test('gemini streamGenerateContent without alt=sse answers one JSON array of chunks', async (t) => {
  const s = await server(t, { respond: () => ({ text: 'plain' }) });
  const res = await post(`${s.url}/v1beta/models/gemini-test:streamGenerateContent`, {
    contents: [{ parts: [{ text: 'Go' }] }],
  });
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  const chunks = await json(res);
  assert.ok(Array.isArray(chunks));
  assert.equal(
    chunks
      .map(
        (c: { candidates: Array<{ content: { parts: Array<{ text: string }> } }> }) =>
          c.candidates[0]!.content.parts[0]!.text,
      )
      .join(''),
    'plain',
  );
});

test('gemini: a follow-up with functionResponse parts is normalized; final text', async (t) => {
  const s = await server(t, { respond: echoThenAdd() });
  const res = await post(`${s.url}/v1beta/models/gemini-test:generateContent`, {
    contents: [
      { role: 'user', parts: [{ text: 'Go' }] },
      {
        role: 'model',
        parts: [{ text: 'thinking', thought: true }, { functionCall: { name: 'echo', args: { text: 'hi' } } }],
      },
      { role: 'user', parts: [{ functionResponse: { name: 'echo', response: { name: 'echo', content: 'hi' } } }] },
      {
        role: 'model',
        parts: [
          { functionCall: { id: 'c2', name: 'add', args: { a: 1, b: 2 } } },
          { functionCall: { id: 'c3', name: 'echo', args: { text: 'again' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { id: 'c2', name: 'add', response: { output: '3' } } },
          { functionResponse: { id: 'c3', name: 'echo', response: { error: 'boom', detail: 1, more: 2 } } },
        ],
      },
    ],
    tools: TOOLS_GEMINI,
  });
  const body = await json(res);
  const text = body.candidates[0].content.parts[0].text;
  assert.equal(text, 'final: hi | 3 | {"error":"boom","detail":1,"more":2}');
  assert.deepEqual(s.requests[0]?.messages, [
    { role: 'user', text: 'Go' },
    { role: 'assistant', toolCalls: [{ id: 'echo', name: 'echo', arguments: { text: 'hi' } }] },
    { role: 'tool', toolResults: [{ id: 'echo', name: 'echo', text: 'hi' }] },
    {
      role: 'assistant',
      toolCalls: [
        { id: 'c2', name: 'add', arguments: { a: 1, b: 2 } },
        { id: 'c3', name: 'echo', arguments: { text: 'again' } },
      ],
    },
    {
      role: 'tool',
      toolResults: [
        { id: 'c2', name: 'add', text: '3' },
        { id: 'c3', name: 'echo', text: '{"error":"boom","detail":1,"more":2}' },
      ],
    },
  ]);
});

// ---------------------------------------------------------------- Faults, in each provider's error shape

/** One minimal valid request per protocol, and the error shape it must answer with. */
const FAULT_CASES: Array<{
  protocol: string;
  path: string;
  body: unknown;
  retryAfterMs: boolean;
  check: (body: Loose, kind: 'rateLimit' | 'serverError' | 'unauthorized') => void;
}> = [
  {
    protocol: 'openai-chat',
    path: '/v1/chat/completions',
    body: { model: 'm', messages: [{ role: 'user', content: 'Go' }] },
    retryAfterMs: true,
    check: (body, kind) => {
      assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type']);
      assert.equal(typeof body.error.message, 'string');
      const expected = { rateLimit: 'rate_limit_exceeded', serverError: null, unauthorized: 'invalid_api_key' };
      assert.equal(body.error.code, expected[kind]);
    },
  },
  {
    protocol: 'openai-responses',
    path: '/v1/responses',
    body: { model: 'm', input: 'Go' },
    retryAfterMs: true,
    check: (body, kind) => {
      assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type']);
      const expected = {
        rateLimit: 'rate_limit_exceeded',
        serverError: 'server_error',
        unauthorized: 'invalid_api_key',
      };
      assert.equal(body.error.code, expected[kind]);
    },
  },
  {
    protocol: 'anthropic',
    path: '/v1/messages',
    body: { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'Go' }] },
    retryAfterMs: true,
    check: (body, kind) => {
      assert.equal(body.type, 'error');
      const expected = {
        rateLimit: 'rate_limit_error',
        serverError: 'api_error',
        unauthorized: 'authentication_error',
      };
      assert.equal(body.error.type, expected[kind]);
      assert.equal(typeof body.error.message, 'string');
    },
  },
  {
    protocol: 'gemini',
    path: '/v1beta/models/m:generateContent',
    body: { contents: [{ role: 'user', parts: [{ text: 'Go' }] }] },
    retryAfterMs: false,
    check: (body, kind) => {
      const expected = { rateLimit: 'RESOURCE_EXHAUSTED', serverError: 'INTERNAL', unauthorized: 'UNAUTHENTICATED' };
      assert.equal(body.error.status, expected[kind]);
      assert.equal(typeof body.error.message, 'string');
      if (kind === 'rateLimit') {
        assert.deepEqual(body.error.details, [
          { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1s' },
        ]);
      }
    },
  },
];

for (const c of FAULT_CASES) {
  test(`${c.protocol}: 429 once (retry-after), 500 once, then a reply; each in the provider's error shape`, async (t) => {
    const s = await server(t, {
      faults: [
        { kind: 'rateLimit', at: [0] },
        { kind: 'serverError', at: [1] },
      ],
    });
    const limited = await post(s.url + c.path, c.body);
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after'), '1');
    assert.equal(limited.headers.get('retry-after-ms'), c.retryAfterMs ? '1000' : null);
    const limitedBody = await json(limited);
    c.check(limitedBody, 'rateLimit');
    assert.equal(limitedBody.error.code, c.protocol === 'gemini' ? 429 : limitedBody.error.code);

    const failed = await post(s.url + c.path, c.body);
    assert.equal(failed.status, 500);
    assert.equal(failed.headers.get('retry-after'), null);
    c.check(await json(failed), 'serverError');

    const ok = await post(s.url + c.path, c.body);
    assert.equal(ok.status, 200);
    assert.deepEqual(
      s.requests.map((r) => [r.protocol, r.index]),
      [
        [c.protocol, 0],
        [c.protocol, 1],
        [c.protocol, 2],
      ],
    );
  });

  test(`${c.protocol}: 401 on every request, in the provider's error shape`, async (t) => {
    const s = await server(t, { faults: [{ kind: 'unauthorized' }] });
    for (let i = 0; i < 2; i++) {
      const res = await post(s.url + c.path, c.body);
      assert.equal(res.status, 401);
      c.check(await json(res), 'unauthorized');
    }
    assert.equal(s.requests.length, 2);
  });
}

test('requireApiKey: a wrong or missing key is answered 401, the right one in any header form passes', async (t) => {
  const s = await server(t, { requireApiKey: 'right-key' });
  const chat = { model: 'm', messages: [{ role: 'user', content: 'Go' }] };
  assert.equal((await post(`${s.url}/v1/chat/completions`, chat)).status, 401);
  assert.equal((await post(`${s.url}/v1/chat/completions`, chat, { authorization: 'Bearer wrong' })).status, 401);
  assert.equal((await post(`${s.url}/v1/chat/completions`, chat, { authorization: 'Bearer right-key' })).status, 200);
  const messages = { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'Go' }] };
  assert.equal((await post(`${s.url}/v1/messages`, messages, { 'x-api-key': 'right-key' })).status, 200);
  const contents = { contents: [{ parts: [{ text: 'Go' }] }] };
  const g = `${s.url}/v1beta/models/m:generateContent`;
  assert.equal((await post(g, contents, { 'x-goog-api-key': 'right-key' })).status, 200);
  assert.equal((await post(`${g}?key=right-key`, contents)).status, 200);
  assert.deepEqual(
    s.requests.map((r) => r.apiKey),
    [undefined, 'wrong', 'right-key', 'right-key', 'right-key', 'right-key'],
  );
});

test('a retry-after of several seconds is configurable and reaches every header and message', async (t) => {
  const s = await server(t, { faults: [{ kind: 'rateLimit', retryAfterSeconds: 3 }] });
  const res = await post(`${s.url}/v1/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'Go' }] });
  assert.equal(res.headers.get('retry-after'), '3');
  assert.equal(res.headers.get('retry-after-ms'), '3000');
  assert.match((await json(res)).error.message, /try again in 3s/);
});

// ---------------------------------------------------------------- Routes, bodies, lifecycle

test('model lists answer for OpenAI/Anthropic and Gemini clients; unknown paths are 404 and recorded', async (t) => {
  const s = await server(t, { models: ['alpha', 'beta'] });
  const openai = await json(await fetch(`${s.url}/v1/models`));
  assert.equal(openai.object, 'list');
  assert.deepEqual(
    openai.data.map((m: { id: string; object: string; type: string }) => [m.id, m.object, m.type]),
    [
      ['alpha', 'model', 'model'],
      ['beta', 'model', 'model'],
    ],
  );
  assert.equal(openai.has_more, false);
  assert.equal((await json(await fetch(`${s.url}/v1/models/beta`))).id, 'beta');
  const gemini = await json(await fetch(`${s.url}/v1beta/models`));
  assert.deepEqual(
    gemini.models.map((m: { name: string }) => m.name),
    ['models/alpha', 'models/beta'],
  );
  assert.ok(gemini.models[0].supportedGenerationMethods.includes('streamGenerateContent'));
  const missing = await fetch(`${s.url}/v1/models/gamma`);
  assert.equal(missing.status, 404);
  await missing.body?.cancel();
  const unknown = await post(`${s.url}/chat/completions`, { model: 'm', messages: [] });
  assert.equal(unknown.status, 404);
  assert.match((await json(unknown)).error.message, /no route for POST \/chat\/completions/);
  assert.deepEqual(
    s.rejected.map((r) => [r.method, r.path, r.status]),
    [
      ['GET', '/v1/models/gamma', 404],
      ['POST', '/chat/completions', 404],
    ],
  );
  assert.equal(s.requests.length, 0, 'only model requests are recorded as requests');
});

test('count_tokens and countTokens answer without counting as model requests', async (t) => {
  const s = await server(t);
  const a = await json(
    await post(`${s.url}/v1/messages/count_tokens`, { model: 'm', messages: [{ role: 'user', content: 'Go' }] }),
  );
  assert.equal(typeof a.input_tokens, 'number');
  const g = await json(await post(`${s.url}/v1beta/models/m:countTokens`, { contents: [{ parts: [{ text: 'Go' }] }] }));
  assert.equal(typeof g.totalTokens, 'number');
  assert.equal(s.requests.length, 0);
});

test('bad bodies are 400 in the protocol shape and recorded; gzip bodies are read', async (t) => {
  const s = await server(t);
  const notJson = await fetch(`${s.url}/v1/messages`, { method: 'POST', body: '{nope' });
  assert.equal(notJson.status, 400);
  assert.equal((await json(notJson)).error.type, 'invalid_request_error');
  const noMessages = await post(`${s.url}/v1/chat/completions`, { model: 'm' });
  assert.equal(noMessages.status, 400);
  assert.match((await json(noMessages)).error.message, /messages/);
  const badRole = await post(`${s.url}/v1beta/models/m:generateContent`, {
    contents: [{ role: 'robot', parts: [{ text: 'x' }] }],
  });
  assert.equal((await json(badRole)).error.status, 'INVALID_ARGUMENT');
  assert.equal(s.rejected.length, 3);
  const { gzipSync } = await import('node:zlib');
  const zipped = await fetch(`${s.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    body: gzipSync(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'zipped' }] })),
  });
  assert.equal(zipped.status, 200);
  assert.deepEqual(s.requests[0]?.messages, [{ role: 'user', text: 'zipped' }]);
});

test('a policy that throws is answered 500 and recorded, not a crash', async (t) => {
  const s = await server(t, {
    respond: () => {
      throw new Error('policy bug');
    },
  });
  const res = await post(`${s.url}/v1/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'Go' }] });
  assert.equal(res.status, 500);
  await res.body?.cancel();
  assert.match(s.rejected[0]?.message ?? '', /policy bug/);
});

test('waitForRequests resolves on arrival; close() abandons a delayed reply and is idempotent', async (t) => {
  const s = await server(t, { respond: () => ({ text: 'late', delayMs: 60_000 }) });
  const pending = post(`${s.url}/v1/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'Go' }] });
  const outcome = pending.then(
    () => 'answered',
    () => 'failed',
  );
  await s.waitForRequests(1);
  await assert.rejects(s.waitForRequests(2, 50), /1 of 2 requests/);
  await s.close();
  assert.equal(await outcome, 'failed', 'the client sees its connection dropped');
  await s.close();
  await assert.rejects(fetch(`${s.url}/v1/models`));
});

// ---------------------------------------------------------------- scriptedPolicy

const request = (over: Partial<ModelRequest>): ModelRequest => ({
  protocol: 'openai-chat',
  path: '/v1/chat/completions',
  query: {},
  model: 'm',
  stream: false,
  system: '',
  tools: [],
  messages: [{ role: 'user', text: 'Go' }],
  headers: {},
  index: 0,
  ...over,
});

const tools = (...names: string[]) => names.map((name) => ({ name }));

test('scriptedPolicy matches by exact name, then suffix after __, then after other separators', async () => {
  const policy = scriptedPolicy([{ call: 'echo', arguments: { a: 1 } }]);
  const pick = async (...names: string[]) => (await policy(request({ tools: tools(...names) }), 0)).toolCalls;
  assert.deepEqual(await pick('mcp__lab__echo', 'mcp__lab__add'), [{ name: 'mcp__lab__echo', arguments: { a: 1 } }]);
  assert.deepEqual(await pick('lab__echo'), [{ name: 'lab__echo', arguments: { a: 1 } }]);
  assert.deepEqual(await pick('echo', 'lab__echo'), [{ name: 'echo', arguments: { a: 1 } }]);
  assert.deepEqual(await pick('mcp_lab_echo', 'lab__echo'), [{ name: 'lab__echo', arguments: { a: 1 } }]);
  assert.deepEqual(await pick('mcp_lab_echo'), [{ name: 'mcp_lab_echo', arguments: { a: 1 } }]);
  const regex = scriptedPolicy([{ call: /add$/ }]);
  assert.deepEqual((await regex(request({ tools: tools('x__add', 'x__echo') }), 0)).toolCalls, [
    { name: 'x__add', arguments: {} },
  ]);
});

test('scriptedPolicy says in its text when no tool or several tools match, instead of calling one', async () => {
  const policy = scriptedPolicy([{ call: 'echo' }]);
  const none = await policy(request({ tools: tools('lab__add') }), 0);
  assert.equal(none.toolCalls, undefined);
  assert.equal(none.text, 'scripted step 1: no offered tool matches echo; offered: lab__add');
  const several = await policy(request({ tools: tools('a__echo', 'b__echo') }), 0);
  assert.equal(several.text, 'scripted step 1: echo matches several offered tools: a__echo, b__echo');
});

test('scriptedPolicy reads its step from the conversation, answers title requests aside, builds the final text', async () => {
  const policy = scriptedPolicy([{ call: 'echo' }, { calls: [{ call: 'add' }, { call: 'echo' }] }], {
    usage: { inputTokens: 1, outputTokens: 2 },
  });
  const offered = tools('lab__echo', 'lab__add');
  const step2 = await policy(
    request({
      tools: offered,
      messages: [
        { role: 'user', text: 'Go' },
        { role: 'assistant', toolCalls: [{ id: '1', name: 'lab__echo', arguments: {} }] },
        { role: 'tool', toolResults: [{ id: '1', text: '{"content":[{"type":"text","text":"one"}]}' }] },
      ],
    }),
    7,
  );
  assert.deepEqual(step2.toolCalls, [
    { name: 'lab__add', arguments: {} },
    { name: 'lab__echo', arguments: {} },
  ]);
  assert.deepEqual(step2.usage, { inputTokens: 1, outputTokens: 2 });
  const done = await policy(
    request({
      tools: offered,
      messages: [
        { role: 'user', text: 'Go' },
        { role: 'assistant', toolCalls: [{ id: '1', name: 'lab__echo', arguments: {} }] },
        { role: 'tool', toolResults: [{ id: '1', text: 'one' }] },
        {
          role: 'assistant',
          toolCalls: [
            { id: '2', name: 'lab__add', arguments: {} },
            { id: '3', name: 'lab__echo', arguments: {} },
          ],
        },
        {
          role: 'tool',
          toolResults: [
            { id: '2', text: 'two' },
            { id: '3', text: 'three' },
          ],
        },
      ],
    }),
    0,
  );
  assert.equal(done.text, 'final: one | two | three');
  const title = await policy(
    request({ system: 'You are a title generator. Output only a title.', messages: [{ role: 'user', text: 'Go' }] }),
    0,
  );
  assert.equal(title.text, 'Scripted session');
  const custom = scriptedPolicy([], { final: (results, r) => `${r.model}:${results.length}`, titleText: 'T' });
  assert.equal((await custom(request({ tools: offered }), 0)).text, 'm:0');
  assert.equal((await custom(request({ messages: [{ role: 'user', text: 'Summarize this chat' }] }), 0)).text, 'T');
  const textStep = scriptedPolicy([{ text: 'stop here' }, { call: 'echo' }]);
  assert.equal((await textStep(request({ tools: offered }), 0)).text, 'stop here');
});

// ---------------------------------------------------------------- The standalone process

const MAIN = fileURLToPath(new URL('../../fixtures/modelServer/main.ts', import.meta.url));

/** Polls until `pid` is gone (to 10 s), then asserts `kill(pid, 0)` throws ESRCH. */
async function assertGone(pid: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch (error) {
      assert.equal((error as NodeJS.ErrnoException).code, 'ESRCH');
      return;
    }
    if (Date.now() > deadline) assert.fail(`process ${pid} is still alive after 10 s`);
    await sleep(20);
  }
}

/** Starts main.ts with `policy`; resolves with the child and its first stdout line, parsed. */
async function startMain(
  t: import('node:test').TestContext,
  policy: string,
): Promise<{ child: ChildProcess; info: { url: string; port: number; pid: number } }> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, policy], { stdio: ['pipe', 'pipe', 'pipe'] });
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    if (child.pid !== undefined) await assertGone(child.pid);
  });
  let out = '';
  let err = '';
  child.stderr?.on('data', (chunk) => {
    err += chunk;
  });
  const info = await new Promise<{ url: string; port: number; pid: number }>((resolve, reject) => {
    child.stdout?.on('data', (chunk) => {
      out += chunk;
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) resolve(JSON.parse(line));
    });
    child.once('exit', (code) => reject(new Error(`main.ts exited with ${code} before listening: ${err}`)));
  });
  return { child, info };
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

test('main.ts serves a JSON policy, records requests as JSON lines, and exits 0 on SIGTERM', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'se-model-server-'));
  t.after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  const record = join(dir, 'requests.jsonl');
  const policy = JSON.stringify({
    steps: [{ call: 'echo', arguments: { text: 'hi' } }],
    faults: [{ kind: 'rateLimit', at: [0] }],
    requireApiKey: 'k',
    record,
  });
  const { child, info } = await startMain(t, policy);
  assert.equal(info.pid, child.pid);
  assert.match(info.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  const body = {
    model: 'm',
    max_tokens: 10,
    messages: [{ role: 'user', content: 'Go' }],
    tools: [{ name: 'mcp__lab__echo', input_schema: { type: 'object' } }],
  };
  const limited = await post(`${info.url}/v1/messages`, body, { 'x-api-key': 'k' });
  assert.equal(limited.status, 429);
  await limited.body?.cancel();
  const res = await json(await post(`${info.url}/v1/messages`, body, { 'x-api-key': 'k' }));
  assert.deepEqual(
    res.content.map((b: { type: string; name?: string; input?: unknown }) => [b.type, b.name, b.input]),
    [['tool_use', 'mcp__lab__echo', { text: 'hi' }]],
  );
  const lines = readFileSync(record, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    lines.map((r) => [r.protocol, r.index, r.apiKey, r.tools.length]),
    [
      ['anthropic', 0, 'k', 1],
      ['anthropic', 1, 'k', 1],
    ],
  );
  child.kill('SIGTERM');
  assert.equal(await exited(child), 0);
  await assertGone(info.pid);
});

test('main.ts exits when its stdin closes (its parent is gone)', async (t) => {
  const { child, info } = await startMain(t, '{"steps": []}');
  const res = await json(
    await post(`${info.url}/v1/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'Go' }] }),
  );
  assert.equal(res.choices[0].message.content, 'final: ');
  child.stdin?.end();
  assert.equal(await exited(child), 0);
  await assertGone(info.pid);
});

test('main.ts refuses a bad policy with exit 2 and a message naming the field', async (t) => {
  const cases = [
    ['{"steps": [{"call": 3}]}', /steps\[0\]\.call: a tool name/],
    ['{"faults": [{"kind": "teapot"}]}', /faults\[0\]\.kind/],
    ['{"stepz": []}', /unknown policy keys: stepz/],
    ['/nonexistent/policy.json', /cannot read the policy file/],
  ] as const;
  await Promise.all(
    cases.map(async ([policy, message]) => {
      const child = spawn(process.execPath, ['--import', 'tsx', MAIN, policy], { stdio: ['ignore', 'pipe', 'pipe'] });
      t.after(async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        if (child.pid !== undefined) await assertGone(child.pid);
      });
      let err = '';
      child.stderr.on('data', (chunk) => {
        err += chunk;
      });
      assert.equal(await exited(child), 2, policy);
      assert.match(err, message);
    }),
  );
});
