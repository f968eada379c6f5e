/**
 * The local model server speaks each wire protocol as its real clients expect: plain `fetch` requests,
 * the SSE streams parsed by hand, tool calls and usage checked, follow-up requests with tool results
 * normalized, and each fault in the provider's error shape.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ModelServerOptions, scriptedPolicy, startModelServer } from '../../fixtures/modelServer/index.js';
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

/** A JSON body, loosely typed: the tests check provider JSON field by field. */
// biome-ignore lint/suspicious/noExplicitAny: provider JSON is checked field by field below
async function json(res: Response): Promise<any> {
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
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Go' }] }],
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
  assert.equal(request?.system, 'You are Claude Code.');
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
