import { EventType, type Event } from '@ag-ui/core';
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { from, type Observable } from 'rxjs';
import { fromLangChainStreamEvents, type LangChainStreamEvent } from '../../lib/adapters/fromLangChainStreamEvents.js';
import { fromLangGraphStream, type LangGraphStreamPart } from '../../lib/adapters/fromLangGraphStream.js';
import { toAgui } from '../../operators/toAgui.js';
import { fixtureFiles, fixturesDir, haveFixtures } from '../support/fixtures.js';
import { diagnosticsSink, terminals } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

type Raw = Record<string, any>;

const ownDir = resolve(__dirname, '../fixtures/langgraph');
const sharedDir = join(fixturesDir, 'langgraph');
const suffixes = ['events-v2.jsonl', 'values-messages.jsonl'];

/** What the provider said, taken from its own final messages (and, for the exact argument text, from the streamed pieces). */
interface Intent {
  /** Each assistant message: its id, final text, reasoning and calls. */
  assistants: { id: string; text: string; reasoning: string; calls: { id: string; name: string; args: unknown }[] }[];
  /** The argument text each call streamed, concatenated ('{}' for a call that streamed none). */
  streamedArgs: Map<string, string>;
  /** Each tool result, in order. */
  results: { toolCallId: string; content: string }[];
  /** The usage, summed per model, as RUN_FINISHED carries it. */
  usage: Raw[] | undefined;
  /** The graph's last state without its messages (graph.stream() only). */
  state?: Raw;
  /** The graph nodes run as steps (streamEvents only). */
  steps?: string[];
}

const readLines = (path: string): any[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));

/** A message's own fields, whichever form it is in. */
const fieldsOf = (message: Raw): Raw => (message?.lc !== undefined && message.type === 'constructor' ? message.kwargs : message);
const kindOf = (message: Raw): string => (message?.lc !== undefined ? message.id[message.id.length - 1] : message.type).replace(/MessageChunk$|Message$/, '').toLowerCase();
const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.filter((block) => block?.type === 'text').map((block) => block.text).join('') : '';
const reasoningOf = (message: Raw): string => {
  const kwargs = message.additional_kwargs ?? {};
  if (typeof kwargs.reasoning_content === 'string') return kwargs.reasoning_content;
  if (Array.isArray(kwargs.reasoning?.summary)) return kwargs.reasoning.summary.map((part: Raw) => part.text).join('\n\n');
  if (Array.isArray(message.content)) return message.content.filter((block: Raw) => block?.type === 'thinking').map((block: Raw) => block.thinking ?? '').join('');
  return '';
};
const assistantOf = (message: Raw) => ({
  id: message.id,
  text: textOf(message.content),
  reasoning: reasoningOf(message),
  calls: (message.tool_calls ?? []).map((call: Raw) => ({ id: call.id, name: call.name, args: call.args })),
});

/** Sums LangChain usage_metadata per model, in AG-UI's words. */
function usageOf(reports: { usage: Raw; model: string }[]): Raw[] | undefined {
  const sums = new Map<string, Raw>();
  const names: [string, (usage: Raw) => unknown][] = [
    ['inputTokens', (usage) => usage.input_tokens],
    ['outputTokens', (usage) => usage.output_tokens],
    ['totalTokens', (usage) => usage.total_tokens],
    ['reasoningTokens', (usage) => usage.output_token_details?.reasoning],
    ['cachedInputTokens', (usage) => usage.input_token_details?.cache_read],
    ['cacheWriteInputTokens', (usage) => usage.input_token_details?.cache_creation],
  ];
  for (const { usage, model } of reports) {
    const sum = sums.get(model) ?? { model };
    for (const [name, read] of names) {
      const value = read(usage);
      if (typeof value === 'number') sum[name] = (sum[name] ?? 0) + value;
    }
    sums.set(model, sum);
  }
  return sums.size === 0 ? undefined : [...sums.values()];
}

/** Concatenates the streamed argument pieces of each call: tool_call_chunks, else tool_use / input_json_delta blocks, keyed by index (or the latest call). */
function collectArgs(chunks: { key: string; chunk: Raw }[]): Map<string, string> {
  const args = new Map<string, string>();
  const byIndex = new Map<string, string>();
  let latest: string | undefined;
  for (const { key, chunk } of chunks) {
    const blocks = Array.isArray(chunk.content) ? chunk.content : [];
    const pieces: Raw[] =
      Array.isArray(chunk.tool_call_chunks) && chunk.tool_call_chunks.length > 0
        ? chunk.tool_call_chunks
        : blocks
            .filter((block: Raw) => block.type === 'tool_use' || block.type === 'input_json_delta')
            .map((block: Raw) => ({ id: block.id, name: block.name, args: block.partial_json ?? '', index: block.index }));
    for (const piece of pieces) {
      const slot = piece.index === undefined || piece.index === null ? undefined : `${key}/${piece.index}`;
      let id = slot === undefined ? undefined : byIndex.get(slot);
      if (piece.id && piece.id !== id) id = piece.id;
      id ??= latest;
      if (slot !== undefined) byIndex.set(slot, id!);
      latest = id;
      args.set(id!, (args.get(id!) ?? '') + (piece.args ?? ''));
    }
  }
  for (const [id, text] of args) if (text === '') args.set(id, '{}');
  return args;
}

function streamEventsIntent(events: Raw[]): Intent {
  const ends = events.filter((event) => event.event === 'on_chat_model_end');
  const assistants = ends.map((event) => assistantOf(event.data.output));
  const calls = assistants.flatMap((assistant) => assistant.calls);
  const answered = new Set<string>();
  const results: Intent['results'] = [];
  for (const event of events) {
    let toolCallId: string | undefined;
    let content: string | undefined;
    if (event.event === 'on_tool_end') [toolCallId, content] = [event.data.output.tool_call_id, textOf(event.data.output.content)];
    if (event.event === 'on_tool_error') {
      toolCallId = calls.find((call) => call.name === event.name && !answered.has(call.id))!.id;
      content = `Error: ${event.data.error}`;
    }
    if (toolCallId === undefined) continue;
    answered.add(toolCallId);
    results.push({ toolCallId, content: content! });
  }
  const open: string[] = [];
  const steps: string[] = [];
  const stepRuns = new Set<string>();
  for (const event of events) {
    if (event.event === 'on_chain_start' && event.name === event.metadata?.langgraph_node && !open.includes(event.name)) {
      open.push(event.name);
      steps.push(event.name);
      stepRuns.add(event.run_id);
    }
    if (event.event === 'on_chain_end' && stepRuns.has(event.run_id)) open.splice(open.indexOf(event.name), 1);
  }
  const chunks = events.filter((event) => event.event === 'on_chat_model_stream').map((event) => ({ key: event.run_id, chunk: event.data.chunk }));
  return {
    assistants,
    streamedArgs: collectArgs(chunks),
    results,
    usage: usageOf(ends.map((event) => ({ usage: event.data.output.usage_metadata, model: event.data.output.response_metadata.model_name }))),
    steps,
  };
}

function graphStreamIntent(parts: any[][]): Intent {
  const payloadOf = (part: any[]): any[] => (part.length === 3 ? [part[1], part[2]] : part);
  // The run's state is the root graph's (namespace []): a subgraph's values are its own.
  const values = parts.filter((part) => part.length === 2 || part[0].length === 0).map(payloadOf).filter(([mode]) => mode === 'values').map(([, state]) => state);
  const input = new Set(values[0].messages.map((message: Raw) => fieldsOf(message).id));
  const produced = values[values.length - 1].messages.filter((message: Raw) => !input.has(fieldsOf(message).id));
  const ais = produced.filter((message: Raw) => kindOf(message) === 'ai').map(fieldsOf);
  const chunks = parts
    .map(payloadOf)
    .filter(([mode, payload]) => mode === 'messages' && kindOf(payload[0]) === 'ai')
    .map(([, payload]) => ({ key: fieldsOf(payload[0]).id, chunk: fieldsOf(payload[0]) }));
  const { messages: _messages, ...state } = values[values.length - 1];
  return {
    assistants: ais.map(assistantOf),
    streamedArgs: collectArgs(chunks),
    results: produced
      .filter((message: Raw) => kindOf(message) === 'tool')
      .map(fieldsOf)
      .map((message: Raw) => ({ toolCallId: message.tool_call_id, content: textOf(message.content) })),
    usage: usageOf(ais.filter((message: Raw) => message.usage_metadata).map((message: Raw) => ({ usage: message.usage_metadata, model: message.response_metadata.model_name }))),
    state,
  };
}

/** Runs one recording through its adapter, toAgui and the official client, and checks that nothing the provider said is lost. */
async function checkRecording(path: string, steps = false): Promise<void> {
  const items = readLines(path);
  const isGraphStream = path.endsWith('values-messages.jsonl');
  const expected = isGraphStream ? graphStreamIntent(items) : streamEventsIntent(items);
  const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
  const agentEvents = isGraphStream
    ? from(items as LangGraphStreamPart[]).pipe(fromLangGraphStream())
    : from(items as LangChainStreamEvent[]).pipe(fromLangChainStreamEvents({ steps }));
  const events$: Observable<Event> = agentEvents.pipe(toAgui({ threadId: 'thread-1', runId: 'run-1', onDiagnostic }));
  const run = await runWithOracle(events$);
  const received = run.events as unknown as Event[];

  // One run, ended once, with nothing repaired on the way.
  expect(received[0].type).toBe(EventType.RUN_STARTED);
  expect(terminals(received)).toEqual([received[received.length - 1]]);
  expect(received[received.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED, threadId: 'thread-1', runId: 'run-1' });
  expect(diagnostics).toEqual([]);

  // Each assistant message: the provider's id, final text and calls; their argument text exactly as streamed, and the same JSON as the provider's.
  const assistants = run.messages.filter((message) => message.role === 'assistant') as Raw[];
  expect(assistants.map((message) => ({ id: message.id, text: message.content ?? '' }))).toEqual(expected.assistants.map(({ id, text }) => ({ id, text })));
  assistants.forEach((message, i) => {
    const calls = (message.toolCalls ?? []) as Raw[];
    expect(calls.map((call) => ({ id: call.id, name: call.function.name, args: JSON.parse(call.function.arguments) }))).toEqual(expected.assistants[i].calls);
    for (const call of calls) expect({ id: call.id, args: call.function.arguments }).toEqual({ id: call.id, args: expected.streamedArgs.get(call.id) ?? JSON.stringify(expected.assistants[i].calls.find((c) => c.id === call.id)!.args) });
  });

  // Reasoning: one message per assistant message that reasoned, with an id of its own.
  const reasoning = run.messages.filter((message) => message.role === 'reasoning') as Raw[];
  const reasoned = expected.assistants.filter((assistant) => assistant.reasoning !== '');
  expect(reasoning.map((message) => ({ id: message.id, text: message.content }))).toEqual(reasoned.map(({ id, reasoning }) => ({ id: `${id}-reasoning`, text: reasoning })));

  // Tool results, in order.
  const results = run.messages.filter((message) => message.role === 'tool') as Raw[];
  expect(results.map((message) => ({ toolCallId: message.toolCallId, content: message.content }))).toEqual(expected.results);

  // Usage on RUN_FINISHED; state without its messages; steps.
  const finished = received[received.length - 1] as Extract<Event, { type: EventType.RUN_FINISHED }>;
  expect(finished.usage).toEqual(expected.usage);
  if (expected.state !== undefined) expect(run.state).toEqual(expected.state);
  const stepNames = received.filter((event) => event.type === EventType.STEP_STARTED).map((event) => (event as Raw).stepName);
  expect(stepNames).toEqual(steps ? expected.steps : []);
}

const shared = fixtureFiles('langgraph', suffixes);
const own = readdirSync(ownDir)
  .filter((name) => suffixes.some((suffix) => name.endsWith(suffix)))
  .sort();
const withSteps = (names: string[]) => names.filter((name) => name.endsWith('.events-v2.jsonl'));

// A user's own clone has no ../shared: the skip says why, in the suite's own name.
(haveFixtures ? describe : describe.skip)(
  `recorded LangGraph streams through fromLangChainStreamEvents / fromLangGraphStream, toAgui and the official client${haveFixtures ? '' : ' (skipped: ../shared/fixtures is absent)'}`,
  () => {
    it('should find the recordings', () => {
      expect(shared).toEqual([
        'bench-langgraph-anthropic-parallel-tools.events-v2.jsonl',
        'bench-langgraph-openai-parallel-tools.events-v2.jsonl',
        'vercel-langgraph-react-agent-values-messages.jsonl',
      ]);
    });

    it.each(shared)('should keep the text, reasoning, tool arguments, results and usage of %s', (name) => checkRecording(join(sharedDir, name)));

    it.each(withSteps(shared))('should also send the graph nodes of %s as steps when asked', (name) => checkRecording(join(sharedDir, name), true));
  },
);

describe('our own LangGraph fixtures through fromLangChainStreamEvents / fromLangGraphStream, toAgui and the official client', () => {
  it('should find them', () => {
    expect(own).toEqual([
      'list-content-input-json-delta.events-v2.jsonl',
      'plain-json-subgraph-namespace.values-messages.jsonl',
      'reasoning.events-v2.jsonl',
      'steps.events-v2.jsonl',
      'tool-call-chunks-without-index.events-v2.jsonl',
      'tool-error.events-v2.jsonl',
    ]);
  });

  it.each(own)('should keep the text, reasoning, tool arguments, results and usage of %s', (name) => checkRecording(join(ownDir, name)));

  it.each(withSteps(own))('should also send the graph nodes of %s as steps when asked', (name) => checkRecording(join(ownDir, name), true));

  it('should really hold the edge cases they are named after', () => {
    const events = (name: string): Raw[] => readLines(join(ownDir, name));
    const chunks = (name: string) => events(name).filter((event) => event.event === 'on_chat_model_stream').map((event) => event.data.chunk);

    const noIndex = chunks('tool-call-chunks-without-index.events-v2.jsonl').flatMap((chunk) => chunk.tool_call_chunks);
    expect(noIndex.length).toBeGreaterThanOrEqual(4);
    expect(noIndex.every((piece: Raw) => !('index' in piece))).toBe(true);

    const listContent = chunks('list-content-input-json-delta.events-v2.jsonl');
    expect(listContent.every((chunk) => !('tool_call_chunks' in chunk))).toBe(true);
    expect(listContent.flatMap((chunk) => chunk.content).map((block: Raw) => block.type)).toEqual(expect.arrayContaining(['text', 'tool_use', 'input_json_delta']));

    const steps = events('steps.events-v2.jsonl').filter((event) => event.event === 'on_chain_start');
    expect(steps.filter((event) => event.name === 'writer' && event.metadata.langgraph_node === 'writer')).toHaveLength(2);
    expect(steps.some((event) => event.name !== event.metadata.langgraph_node && event.metadata.langgraph_node !== undefined)).toBe(true);

    const toolError = events('tool-error.events-v2.jsonl');
    expect(toolError.some((event) => event.event === 'on_tool_error')).toBe(true);
    expect(toolError.some((event) => event.event === 'on_tool_end' && event.data.output.status === 'error')).toBe(true);

    const reasoning = chunks('reasoning.events-v2.jsonl');
    expect(reasoning.some((chunk) => chunk.additional_kwargs.reasoning_content)).toBe(true);
    expect(reasoning.some((chunk) => Array.isArray(chunk.content) && chunk.content.some((block: Raw) => block.type === 'thinking' && block.thinking))).toBe(true);

    const graph = readLines(join(ownDir, 'plain-json-subgraph-namespace.values-messages.jsonl'));
    expect(graph.every((part) => part.length === 3 && Array.isArray(part[0]))).toBe(true);
    // The root graph's states (namespace []) around the subgraph's, with a key of the root's own.
    const states = graph.filter((part) => part[1] === 'values');
    expect(states.map((part) => part[0].length === 0)).toEqual([true, false, false, false, false, true]);
    expect(states.map((part) => 'topic' in part[2])).toEqual([true, false, false, false, false, true]);
    expect(graph.some((part) => part[1] === 'messages' && part[2][0].type === 'tool' && Array.isArray(part[2][0].content))).toBe(true);
    const summaryIndexes = new Set(graph.flatMap((part) => (part[1] === 'messages' ? (part[2][0].additional_kwargs?.reasoning?.summary ?? []) : [])).map((part: Raw) => part.index));
    expect([...summaryIndexes]).toEqual([0, 1]);
  });
});
