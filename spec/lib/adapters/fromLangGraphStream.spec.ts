import { EventType } from '@ag-ui/core';
import { defer, from, map, mergeMap, of, retry, take } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { LangChainMessageFields } from '../../../lib/adapters/fromLangChainStreamEvents.js';
import { fromLangGraphStream, type LangGraphStreamPart } from '../../../lib/adapters/fromLangGraphStream.js';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { AguiRxError } from '../../../lib/protocol/errors.js';
import { toAgui } from '../../../operators/toAgui.js';
import { collect, createTestScheduler, diagnosticsSink, sequentialIds } from '../../support/helpers.js';
import { runWithOracle } from '../../support/oracle.js';

/** One value map for a marble test's inputs and outputs, as RxJS's own specs use. */
type Marbles = Record<string, any>;

const metadata = { langgraph_node: 'model_request', langgraph_step: 1, ls_provider: 'openai', ls_model_name: 'gpt-test' };
// graph.stream() items, as LangGraph JS sends them: lc-serialised messages, as JSON.stringify writes them.
const lc = (cls: string, kwargs: LangChainMessageFields) => ({ lc: 1, type: 'constructor' as const, id: ['langchain_core', 'messages', cls], kwargs });
const ai = (kwargs: LangChainMessageFields): LangGraphStreamPart => ['messages', [lc('AIMessageChunk', { id: 'run-1', tool_call_chunks: [], additional_kwargs: {}, ...kwargs }), metadata]];
const say = (content: LangChainMessageFields['content'], id = 'run-1') => ai({ id, content });
const piece = (index: number, fields: { id?: string; name?: string; args?: string } = {}) => ai({ content: [], tool_call_chunks: [{ type: 'tool_call_chunk', index, args: '', ...fields }] });
const tool = (toolCallId: string, content: unknown, id = `tm-${toolCallId}`): LangGraphStreamPart => [
  'messages',
  [lc('ToolMessage', { id, tool_call_id: toolCallId, content: content as string, status: 'success' }), { ...metadata, langgraph_node: 'tools' }],
];
const values = (state: Record<string, unknown>): LangGraphStreamPart => ['values', state];
const bad = (value: unknown) => value as LangGraphStreamPart;

const text = (delta: string, messageId = 'run-1'): AgentEvent => ({ type: EventType.TEXT_MESSAGE_CHUNK, messageId, delta });
const reasoning = (delta: string, messageId = 'run-1-reasoning'): AgentEvent => ({ type: EventType.REASONING_MESSAGE_CHUNK, messageId, delta });
const callStart = (toolCallId: string, toolCallName: string, delta?: string, parentMessageId = 'run-1'): AgentEvent => ({
  type: EventType.TOOL_CALL_CHUNK,
  toolCallId,
  toolCallName,
  parentMessageId,
  ...(delta === undefined ? {} : { delta }),
});
const callArgs = (toolCallId: string, delta: string): AgentEvent => ({ type: EventType.TOOL_CALL_CHUNK, toolCallId, delta });
const result = (toolCallId: string, content: string, messageId = `tm-${toolCallId}`): AgentEvent => ({ type: EventType.TOOL_CALL_RESULT, toolCallId, content, messageId });
const snapshot = (state: unknown): AgentEvent => ({ type: EventType.STATE_SNAPSHOT, snapshot: state });
const tokenUsage = (usage: Record<string, unknown>): AgentEvent => ({ type: 'TOKEN_USAGE', usage }) as AgentEvent;

function adapt(inputs: readonly LangGraphStreamPart[], options?: Parameters<typeof fromLangGraphStream>[0]): Promise<AgentEvent[]> {
  return collect(from(inputs).pipe(fromLangGraphStream(options)));
}

async function failure(inputs: readonly LangGraphStreamPart[]): Promise<AguiRxError> {
  return adapt(inputs).then(
    () => {
      throw new Error('expected a failure');
    },
    (error: AguiRxError) => error,
  );
}

describe('fromLangGraphStream', () => {
  let testScheduler: TestScheduler;

  beforeEach(() => {
    testScheduler = createTestScheduler();
  });

  describe('as an operator', () => {
    it('should turn messages into text, tool calls and results, and values into state', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const values_: Marbles = {
          a: say('Hi'),
          b: piece(0, { id: 'call-1', name: 'search', args: '{}' }),
          v: values({ messages: [], hits: 0 }),
          r: tool('call-1', 'found'),
          t: text('Hi'),
          k: callStart('call-1', 'search', '{}'),
          S: snapshot({ hits: 0 }),
          R: result('call-1', 'found'),
        };
        // prettier-ignore
        const e1 =  cold('--a--b--v--r--|', values_);
        // prettier-ignore
        const e1subs =   '^-------------!';
        // prettier-ignore
        const expected = '--t--k--S--R--|';

        expectObservable(e1.pipe(fromLangGraphStream())).toBe(expected, values_);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should pass a source error on', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const error = new Error('graph failed');
        const values_: Marbles = { a: say('Hi'), t: text('Hi') };
        // prettier-ignore
        const e1 =  cold('--a--#', values_, error);
        // prettier-ignore
        const e1subs =   '^----!';
        // prettier-ignore
        const expected = '--t--#';

        expectObservable(e1.pipe(fromLangGraphStream())).toBe(expected, values_, error);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should complete when the source is empty, and pass an immediate error on', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        // prettier-ignore
        const e1 = cold<LangGraphStreamPart>('|   ');
        // prettier-ignore
        const e2 = cold<LangGraphStreamPart>('#   ');
        // prettier-ignore
        const subs =                         '(^!)';

        expectObservable(e1.pipe(fromLangGraphStream())).toBe('|');
        expectObservable(e2.pipe(fromLangGraphStream())).toBe('#');
        expectSubscriptions(e1.subscriptions).toBe(subs);
        expectSubscriptions(e2.subscriptions).toBe(subs);
      }));

    it('should not complete when the source never completes', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        // prettier-ignore
        const e1 = cold<LangGraphStreamPart>('-');
        // prettier-ignore
        const e1subs =                       '^';

        expectObservable(e1.pipe(fromLangGraphStream())).toBe('-');
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should allow unsubscribing early, also through other operators', () =>
      testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
        const values_: Marbles = { a: say('Hi'), b: say('!'), t: text('Hi') };
        // prettier-ignore
        const e1 =   hot('--a----b----|', values_);
        // prettier-ignore
        const unsub =    '-----!       ';
        // prettier-ignore
        const e1subs =   '^----!       ';
        // prettier-ignore
        const expected = '--t---       ';

        const result$ = e1.pipe(
          mergeMap((input) => of(input)),
          fromLangGraphStream(),
          mergeMap((event) => of(event)),
        );

        expectObservable(result$, unsub).toBe(expected, values_);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should stop a synchronous source when take has what it needs', () =>
      testScheduler.run(({ expectObservable }) => {
        let read = 0;
        const source$ = from([say('a'), say('b'), say('c')]).pipe(map((input) => (read++, input)));

        expectObservable(source$.pipe(fromLangGraphStream(), take(2))).toBe('(ts|)', { t: text('a'), s: text('b') });
        testScheduler.flush();
        expect(read).toBe(2);
      }));

    it('should start afresh on retry: the calls of a failed attempt are forgotten', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values_: Marbles = { a: piece(0, { id: 'call-1', name: 'search' }), k: callStart('call-1', 'search') };
        // prettier-ignore
        const first =  cold('-a-#   ', values_);
        // prettier-ignore
        const second = cold('   -a-|', values_);
        // prettier-ignore
        const expected =    '-k--k-|';

        let attempt = 0;
        expectObservable(defer(() => (attempt++ === 0 ? first : second)).pipe(fromLangGraphStream(), retry(1))).toBe(expected, values_);
      }));
  });

  describe('messages (rules 1 to 3)', () => {
    it('should read reasoning summaries, then text blocks, under the message id', async () => {
      expect(
        await adapt([
          ai({ content: [], response_metadata: { model_name: 'gpt-5' } }),
          ai({ content: [], additional_kwargs: { reasoning: { summary: [] } } }),
          ai({ content: [], additional_kwargs: { reasoning: { summary: [{ text: 'Plan', index: 0 }] } } }),
          ai({ content: [], additional_kwargs: { reasoning: { summary: [{ text: 'More', index: 1 }] } } }),
          say([{ type: 'text', text: 'Done', index: 0 }]),
        ]),
      ).toEqual([reasoning('Plan'), reasoning('\n\nMore'), text('Done')]);
    });

    it('should key tool_call_chunks by index, from any number, with the provider call id', async () => {
      expect(
        await adapt([
          piece(1, { id: 'call-a', name: 'weather' }),
          piece(1, { args: '{"city":' }),
          piece(2, { id: 'call-b', name: 'time', args: '{}' }),
          piece(1, { args: '"Tokyo"}' }),
        ]),
      ).toEqual([callStart('call-a', 'weather'), callArgs('call-a', '{"city":'), callStart('call-b', 'time', '{}'), callArgs('call-a', '"Tokyo"}')]);
    });

    it("should send a thinking block's signature and a redacted_thinking block's data as REASONING_ENCRYPTED_VALUE (the reader fromLangChainStreamEvents shares)", async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      expect(
        await adapt([say([{ type: 'thinking', thinking: 'Hmm', index: 0 }]), say([{ type: 'thinking', thinking: '', signature: 'SIG', index: 0 }]), say([{ type: 'redacted_thinking', data: 'Eo8B', index: 1 }])], { onDiagnostic }),
      ).toEqual([
        reasoning('Hmm'),
        { type: EventType.REASONING_ENCRYPTED_VALUE, subtype: 'message', entityId: 'run-1-reasoning', encryptedValue: 'SIG' },
        { type: EventType.REASONING_MESSAGE_START, messageId: 'run-1-reasoning-2', role: 'reasoning', metadata: { anthropic: { type: 'redacted_thinking' } } },
        { type: EventType.REASONING_ENCRYPTED_VALUE, subtype: 'message', entityId: 'run-1-reasoning-2', encryptedValue: 'Eo8B' },
      ]);
      expect(messages).toEqual([]);
    });

    it('should drop blocks it has no AG-UI form for, telling onDiagnostic once per type per subscription', async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      const parts = [say([{ type: 'image_url', image_url: 'data:…' }, { type: 'text', text: 'Hi' }]), say([{ type: 'image_url', image_url: 'data:…' }]), say([{ type: 'text', text: '!' }, { type: 'some_later_block' }])];
      const adapted$ = from(parts).pipe(fromLangGraphStream({ onDiagnostic }));
      expect(await collect(adapted$)).toEqual(await adapt([say('Hi'), say('!')]));
      const dropMessages = [
        "fromLangGraphStream dropped a 'image_url' content block (message.content[0]): it has no AG-UI form, as only text, thinking / reasoning and tool call blocks are read. Later 'image_url' blocks of this stream are dropped without another warning.",
        "fromLangGraphStream dropped a 'some_later_block' content block (message.content[1]): it has no AG-UI form, as only text, thinking / reasoning and tool call blocks are read. Later 'some_later_block' blocks of this stream are dropped without another warning.",
      ];
      expect(messages).toEqual(dropMessages);
      // A second subscription is a new stream: it reports again.
      await collect(adapted$);
      expect(messages).toEqual([...dropMessages, ...dropMessages]);
    });

    it("should not split a message at an empty chunk with another id (OpenAI Responses' item id)", async () => {
      expect(await adapt([say('Hel'), ai({ id: 'msg_item', content: [] }), say('lo')])).toEqual([text('Hel'), text('lo')]);
    });

    it('should start a new message at a chunk with another id, and continue the current one without id', async () => {
      expect(await adapt([say('A'), say('B', 'run-2'), ai({ id: undefined, content: 'C' })])).toEqual([text('A'), text('B', 'run-2'), text('C', 'run-2')]);
    });

    it('should mint a message id when the first chunk has none', async () => {
      expect(await adapt([ai({ id: undefined, content: 'Hi' })], { generateId: sequentialIds('m-') })).toEqual([text('Hi', 'm-1')]);
    });

    it('should read plain messages, class-like ones and a whole AIMessage with tool_calls', async () => {
      const whole = { type: 'ai', id: 'ai-1', content: 'Calling.', tool_calls: [{ id: 'call-1', name: 'search', args: { q: 1 } }] };
      const classLike = { _getType: () => 'ai', id: 'ai-2', content: 'Hi' };
      expect(await adapt([['messages', [whole, metadata]], bad(['messages', [classLike, metadata]])])).toEqual([
        text('Calling.', 'ai-1'),
        callStart('call-1', 'search', '{"q":1}', 'ai-1'),
        text('Hi', 'ai-2'),
      ]);
    });

    it("should read the [namespace, mode, payload] items of subgraphs: a subgraph's messages stream, its state is not the run's", async () => {
      expect(
        await adapt([
          bad([[], 'values', { messages: [], topic: 'oslo', report: null }]),
          bad([['sub:1'], 'messages', [lc('AIMessageChunk', { id: 'run-1', content: 'Hi' }), metadata]]),
          bad([['sub:1'], 'values', { messages: [], n: 1 }]),
          bad([['sub:1', 'model:2'], 'values', { messages: [], n: 2 }]),
          bad([[], 'values', { messages: [], topic: 'oslo', report: 'done' }]),
        ]),
      ).toEqual([snapshot({ topic: 'oslo', report: null }), text('Hi'), snapshot({ topic: 'oslo', report: 'done' })]);
    });

    it("should read a single streamMode: 'messages', whose items are bare [message, metadata] pairs (with subgraphs: true, [namespace, pair])", async () => {
      const pair = (item: LangGraphStreamPart) => (item as [string, unknown])[1] as LangGraphStreamPart;
      expect(
        await adapt([
          pair(say('Calling.')),
          pair(piece(0, { id: 'call-1', name: 'search', args: '{"q":1}' })),
          pair(tool('call-1', 'found')),
          pair(ai({ id: 'run-2', content: 'Found', usage_metadata: { input_tokens: 3, output_tokens: 1, total_tokens: 4 } })),
          bad([[], pair(say('.', 'run-2'))]),
          bad([['research:abc'], pair(say('Sub', 'run-3'))]),
          pair(['messages', [{ type: 'human', content: 'Hi' }, {}]]),
        ]),
      ).toEqual([
        text('Calling.'),
        callStart('call-1', 'search', '{"q":1}'),
        result('call-1', 'found'),
        text('Found', 'run-2'),
        tokenUsage({ model: 'gpt-test', inputTokens: 3, outputTokens: 1, totalTokens: 4 }),
        text('.', 'run-2'),
        text('Sub', 'run-3'),
      ]);
    });
  });

  describe('usage (rule 4)', () => {
    it("should send each chunk's usage, with the model named on an earlier chunk, else ls_model_name", async () => {
      const usage = { input_tokens: 10, output_tokens: 4, total_tokens: 14, input_token_details: { cache_read: 2 }, output_token_details: { reasoning: 1 } };
      expect(await adapt([ai({ content: [], response_metadata: { model_name: 'gpt-5-2025' } }), say('Hi'), ai({ content: [], usage_metadata: usage }), ai({ id: 'run-2', content: '', usage_metadata: usage })])).toEqual([
        text('Hi'),
        tokenUsage({ model: 'gpt-5-2025', inputTokens: 10, outputTokens: 4, totalTokens: 14, reasoningTokens: 1, cachedInputTokens: 2 }),
        tokenUsage({ model: 'gpt-test', inputTokens: 10, outputTokens: 4, totalTokens: 14, reasoningTokens: 1, cachedInputTokens: 2 }),
      ]);
    });
  });

  describe('tool messages (rule 5)', () => {
    it('should answer the call with the text, text blocks joined, other content as JSON, once', async () => {
      expect(
        await adapt([
          piece(0, { id: 'call-1', name: 'a', args: '{}' }),
          tool('call-1', [{ type: 'text', text: 'x' }, { type: 'text', text: 'y' }]),
          tool('call-2', { ok: true }),
          tool('call-1', 'again'),
        ]),
      ).toEqual([callStart('call-1', 'a', '{}'), result('call-1', 'xy'), result('call-2', '{"ok":true}')]);
    });

    it('should send nothing for human and system messages', async () => {
      expect(await adapt([['messages', [lc('HumanMessage', { id: 'h', content: 'Hi' }), {}]], ['messages', [{ type: 'system', content: 'Be brief.' }, {}]]])).toEqual([]);
    });
  });

  describe('values (rule 6)', () => {
    it('should send the state without its messages, and updates not at all', async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      expect(await adapt([values({ messages: [lc('HumanMessage', { content: 'Hi' })] }), values({ messages: [], todos: ['a'] }), ['updates', { agent: {} }]], { onDiagnostic })).toEqual([
        snapshot({}),
        snapshot({ todos: ['a'] }),
      ]);
      expect(messages).toEqual([]);
    });
  });

  describe('interrupts (rule 7)', () => {
    const asked = (id: string | undefined, value: unknown) => ({ ...(id === undefined ? {} : { id }), value });
    const paused = (interrupts: Record<string, unknown>[]): AgentEvent => ({ type: EventType.RUN_FINISHED, outcome: { type: 'interrupt', interrupts } }) as AgentEvent;

    it('should end with an interrupt outcome when the source completes, and keep __interrupt__ out of the state (LangGraph 1.0)', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const question = { question: 'Approve booking to Paris?' };
        const values_: Marbles = {
          a: values({ messages: [], destination: 'Paris', approved: false }),
          b: values({ messages: [], destination: 'Paris', approved: false, __interrupt__: [asked('i-1', question)] }),
          S: snapshot({ destination: 'Paris', approved: false }),
          F: paused([{ id: 'i-1', reason: 'input_required', metadata: { value: question } }]),
        };
        // prettier-ignore
        const e1 =  cold('--a--b--|', values_);
        // prettier-ignore
        const e1subs =   '^-------!';
        // prettier-ignore
        const expected = '--S--S--(F|)';

        expectObservable(e1.pipe(fromLangGraphStream())).toBe(expected, values_);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should send no snapshot for interrupts sent alone (before LangGraph 1.0), and count each once across values and updates', async () => {
      const interrupts = [asked('i-1', 'Which city?'), asked('i-2', { fields: ['date'] })];
      expect(await adapt([values({ messages: [], city: null }), ['updates', { __interrupt__: interrupts }], values({ __interrupt__: interrupts })])).toEqual([
        snapshot({ city: null }),
        paused([
          { id: 'i-1', reason: 'input_required', message: 'Which city?', metadata: { value: 'Which city?' } },
          { id: 'i-2', reason: 'input_required', metadata: { value: { fields: ['date'] } } },
        ]),
      ]);
    });

    it('should mint an id for an interrupt without one, the same for its repeats', async () => {
      const interrupt = { value: 'Sure?', when: 'during', resumable: true, ns: ['ask:1'] };
      expect(await adapt([['updates', { __interrupt__: [interrupt] }], values({ __interrupt__: [{ ...interrupt }] })], { generateId: sequentialIds('m-') })).toEqual([
        paused([{ id: 'm-1', reason: 'input_required', message: 'Sure?', metadata: { value: 'Sure?' } }]),
      ]);
    });

    it('should keep a numeric id as its text', async () => {
      expect(await adapt([bad(['updates', { __interrupt__: [{ id: 5, value: 'Sure?' }] }])], { generateId: sequentialIds('m-') })).toEqual([
        paused([{ id: '5', reason: 'input_required', message: 'Sure?', metadata: { value: 'Sure?' } }]),
      ]);
    });

    it("should take the root graph's interrupts, and a subgraph's when the root sends none", async () => {
      const sub = bad([['ask:1'], 'values', { notes: [], __interrupt__: [asked('i-sub', 'Sub?')] }]);
      const rootToo = bad([[], 'updates', { __interrupt__: [asked('i-root', 'Root?')] }]);
      expect((await adapt([sub, rootToo])).at(-1)).toEqual(paused([{ id: 'i-root', reason: 'input_required', message: 'Root?', metadata: { value: 'Root?' } }]));
      expect(await adapt([sub])).toEqual([paused([{ id: 'i-sub', reason: 'input_required', message: 'Sub?', metadata: { value: 'Sub?' } }])]);
    });

    it('should finish as before when no interrupt came, or an empty list', async () => {
      expect(await adapt([values({ messages: [], x: 1 }), ['updates', { __interrupt__: [] }]])).toEqual([snapshot({ x: 1 })]);
    });

    it.each([
      [values({ messages: [], __interrupt__: 'stop' }), "fromLangGraphStream received a malformed item: a 'values' item.__interrupt__ is \"stop\", but it must be the list of the graph's interrupts ([{ id, value }])."],
      [bad(['updates', { __interrupt__: [7] }]), "fromLangGraphStream received a malformed item: a 'updates' item.__interrupt__[0] is number 7, but it must be an interrupt ({ id, value })."],
      [bad([['ask:1'], 'values', { __interrupt__: null }]), "fromLangGraphStream received a malformed item: a 'values' item of subgraph 'ask:1'.__interrupt__ is null, but it must be the list of the graph's interrupts ([{ id, value }])."],
    ])('should refuse a malformed __interrupt__: %#', async (input, message) => {
      const error = await failure([input]);
      expect({ code: error.code, message: error.message }).toEqual({ code: 'INVALID_EVENT', message });
    });

    it('should end the run paused through toAgui and the official client, with the state and messages it had', async () => {
      const chunk = (content: string) => lc('AIMessageChunk', { id: 'chatcmpl-1', content, tool_call_chunks: [], additional_kwargs: {} });
      const run = await runWithOracle(
        from([
          values({ messages: [], destination: 'Paris', approved: false }),
          bad(['messages', [chunk('Booking Paris.'), metadata]]),
          values({ messages: [], destination: 'Paris', approved: false, __interrupt__: [asked('f723e8dc0a1b', { question: 'Approve booking to Paris?' })] }),
          bad(['updates', { __interrupt__: [asked('f723e8dc0a1b', { question: 'Approve booking to Paris?' })] }]),
        ]).pipe(fromLangGraphStream(), toAgui({ threadId: 'thread-1', runId: 'run-1' })),
      );
      expect(run.state).toEqual({ destination: 'Paris', approved: false });
      expect(run.messages).toEqual([{ id: 'chatcmpl-1', role: 'assistant', content: 'Booking Paris.' }]);
      expect(run.events.at(-1)).toMatchObject({
        type: EventType.RUN_FINISHED,
        outcome: { type: 'interrupt', interrupts: [{ id: 'f723e8dc0a1b', reason: 'input_required', metadata: { value: { question: 'Approve booking to Paris?' } } }] },
      });
    });
  });

  describe('custom and other modes (rule 8)', () => {
    it("should send a custom item as CUSTOM { name: 'custom', value }, from the root graph or a subgraph", async () => {
      expect(await adapt([['custom', { progress: 'Fetched 10/100 records' }], bad([['fetch:1'], 'custom', 'half way'])])).toEqual([
        { type: EventType.CUSTOM, name: 'custom', value: { progress: 'Fetched 10/100 records' } },
        { type: EventType.CUSTOM, name: 'custom', value: 'half way' },
      ]);
    });

    it('should ignore the items of a mode with no AG-UI form, telling onDiagnostic once per mode per subscription', async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      const parts = [['debug', { step: 1 }], ['debug', { step: 2 }], ['checkpoints', {}], say('Hi')] as LangGraphStreamPart[];
      const source = from(parts).pipe(fromLangGraphStream({ onDiagnostic }));
      expect(await collect(source)).toEqual([text('Hi')]);
      await collect(source);
      expect(messages).toEqual([
        "fromLangGraphStream ignores 'debug' items: they describe how the graph runs, which AG-UI has no event for. Leave 'debug' out of streamMode, or pass raw: true to forward every item as a RAW event. Later 'debug' items of this stream are ignored without another warning.",
        "fromLangGraphStream ignores 'checkpoints' items: they describe how the graph runs, which AG-UI has no event for. Leave 'checkpoints' out of streamMode, or pass raw: true to forward every item as a RAW event. Later 'checkpoints' items of this stream are ignored without another warning.",
        expect.stringContaining("ignores 'debug' items"),
        expect.stringContaining("ignores 'checkpoints' items"),
      ]);
    });

    it('should carry custom data through toAgui and the official client', async () => {
      const run = await runWithOracle(from([['custom', { progress: 1 }], say('Done.')] as LangGraphStreamPart[]).pipe(fromLangGraphStream(), toAgui({ threadId: 'thread-1', runId: 'run-1' })));
      expect(run.events.filter((event) => event.type === EventType.CUSTOM)).toEqual([expect.objectContaining({ name: 'custom', value: { progress: 1 } })]);
      expect(run.messages).toEqual([{ id: 'run-1', role: 'assistant', content: 'Done.' }]);
    });
  });

  describe('bad input (rule 9)', () => {
    it.each([
      [null, 'null'],
      [{ event: 'on_chat_model_stream' }, 'an object'],
      [['values'], 'an array of 1'],
      // A single streamMode: 'values' yields the state itself, 'updates' { node: update }.
      [{ messages: [], topic: 'oslo' }, 'an object'],
      [{ agent: { messages: [] } }, 'an object'],
      // Not a namespace, or not a mode.
      [['sub:1', 'values', {}], 'an array of 3'],
      [[['sub:1'], 7, {}], 'an array of 3'],
      // Not a message and its metadata.
      [[{ content: 'Hi' }, {}], 'an array of 2'],
      [[lc('AIMessageChunk', { content: 'Hi' }), 'agent'], 'an array of 2'],
    ])('should refuse %p and say to pass streamMode as an array', async (input, described) => {
      const error = await failure([bad(input)]);
      expect({ code: error.code, message: error.message }).toEqual({
        code: 'INVALID_EVENT',
        message: `fromLangGraphStream received ${described} where a [mode, payload] item (with subgraphs: true, [namespace, mode, payload]) was expected. graph.stream() with a single streamMode other than 'messages' yields bare states or updates, which cannot be told apart. Pass streamMode as an array, e.g. graph.stream(input, { streamMode: ['messages', 'values'] }), and its items unchanged. streamEvents() output needs fromLangChainStreamEvents.`,
      });
    });

    it('should refuse a [namespace, payload] item of a single streamMode other than messages, and say to pass streamMode as an array', async () => {
      const error = await failure([bad([['research:abc'], { messages: [], notes: [] }])]);
      expect({ code: error.code, message: error.message }).toEqual({
        code: 'INVALID_EVENT',
        message:
          "fromLangGraphStream received a [namespace, payload] item without its mode (graph.stream() with subgraphs: true and a single streamMode) whose payload is an object, not a [message, metadata] pair: a state and an update cannot be told apart. Pass streamMode as an array, e.g. graph.stream(input, { streamMode: ['messages', 'values'] }), and its items unchanged.",
      });
    });

    it.each([
      [bad(['messages', 'x']), `fromLangGraphStream received a malformed item: a 'messages' payload is "x", but it must be a [message, metadata] pair.`],
      [bad(['messages', ['x', {}]]), `fromLangGraphStream received a malformed item: a 'messages' payload holds "x" where a LangChain message was expected.`],
      [bad(['messages', [lc('ToolMessage', { content: 'x' }), {}]]), 'fromLangGraphStream received a malformed item: a ToolMessage has tool_call_id: undefined, but it must name the call it answers.'],
      [say(3 as never), 'fromLangGraphStream received a malformed LangChain message: message.content is number 3, but it must be a string or a list of content blocks.'],
      [piece(0, { args: '{' }), "fromLangGraphStream received a malformed LangChain message: message.tool_call_chunks[0] starts a tool call without a name. The first piece of each call must carry the tool's name (and id); is the stream cut short or reordered?"],
    ])('should refuse a malformed item: %#', async (input, message) => {
      const error = await failure([input]);
      expect({ code: error.code, message: error.message }).toEqual({ code: 'INVALID_EVENT', message });
    });
  });

  describe('through toAgui and the official client', () => {
    it('should run to RUN_FINISHED with the text of chunks whose image blocks are dropped, reported once', async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      const { onDiagnostic: toAguiDiagnostic, messages: repairs } = diagnosticsSink();
      const parts = [say([{ type: 'text', text: 'Here is ' }, { type: 'image_url', image_url: 'data:…' }]), say([{ type: 'image_url', image_url: 'data:…' }, { type: 'text', text: 'the chart.' }]), values({ messages: [], done: true })];
      const run = await runWithOracle(from(parts).pipe(fromLangGraphStream({ onDiagnostic }), toAgui({ threadId: 'thread-1', runId: 'run-1', onDiagnostic: toAguiDiagnostic })));
      expect(run.messages).toEqual([{ id: 'run-1', role: 'assistant', content: 'Here is the chart.' }]);
      expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
      expect(messages).toHaveLength(1);
      expect(repairs).toEqual([]);
    });

    it('should build reasoning, the assistant message with its calls, the results, the state and the usage', async () => {
      const parts: LangGraphStreamPart[] = [
        values({ messages: [], todos: [] }),
        ai({ content: [], additional_kwargs: { reasoning: { summary: [{ text: 'Two calls.', index: 0 }] } } }),
        piece(1, { id: 'call-a', name: 'a' }),
        piece(2, { id: 'call-b', name: 'b', args: '{"x":1}' }),
        ai({ content: [], usage_metadata: { input_tokens: 5, output_tokens: 2, total_tokens: 7 } }),
        values({ messages: [], todos: [] }),
        tool('call-a', 'A'),
        tool('call-b', 'B'),
        values({ messages: [], todos: ['done'] }),
        say('All done.', 'run-2'),
      ];
      const run = await runWithOracle(from(parts).pipe(fromLangGraphStream(), toAgui({ threadId: 'thread-1', runId: 'run-1' })));
      expect(run.messages).toEqual([
        { id: 'run-1-reasoning', role: 'reasoning', content: 'Two calls.' },
        {
          id: 'run-1',
          role: 'assistant',
          toolCalls: [
            { id: 'call-a', type: 'function', function: { name: 'a', arguments: '{}' } },
            { id: 'call-b', type: 'function', function: { name: 'b', arguments: '{"x":1}' } },
          ],
        },
        { id: 'tm-call-a', role: 'tool', toolCallId: 'call-a', content: 'A' },
        { id: 'tm-call-b', role: 'tool', toolCallId: 'call-b', content: 'B' },
        { id: 'run-2', role: 'assistant', content: 'All done.' },
      ]);
      expect(run.state).toEqual({ todos: ['done'] });
      expect(run.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', usage: [{ inputTokens: 5, outputTokens: 2, totalTokens: 7, model: 'gpt-test' }] });
    });
  });

  describe('streamMode shapes through toAgui and the official client', () => {
    const chunk = (content: string) => lc('AIMessageChunk', { id: 'chatcmpl-1', content, additional_kwargs: {}, response_metadata: {}, tool_call_chunks: [], tool_calls: [], invalid_tool_calls: [] });
    const meta = { langgraph_node: 'agent', langgraph_step: 1, ls_model_name: 'gpt-4o' };

    it("should build the assistant message of a single streamMode: 'messages' (graph.stream(input, { streamMode: 'messages' }))", async () => {
      const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
      const run = await runWithOracle(
        from([bad([chunk('Hello'), meta]), bad([chunk(' world'), meta])]).pipe(fromLangGraphStream({ onDiagnostic }), toAgui({ threadId: 'thread-1', runId: 'run-1', onDiagnostic })),
      );
      expect(diagnostics).toEqual([]);
      expect(run.messages).toEqual([{ id: 'chatcmpl-1', role: 'assistant', content: 'Hello world' }]);
      expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
    });

    it("should end a single streamMode: 'values' with RUN_ERROR that says to pass streamMode as an array, never an empty success", async () => {
      const run = await runWithOracle(from([bad({ messages: [], topic: 'oslo' })]).pipe(fromLangGraphStream(), toAgui({ threadId: 'thread-1', runId: 'run-1' })));
      expect(run.events.map((event) => event.type)).toEqual([EventType.RUN_STARTED, EventType.RUN_ERROR]);
      expect(run.events.at(-1)).toMatchObject({ code: 'INVALID_EVENT', message: expect.stringContaining("Pass streamMode as an array, e.g. graph.stream(input, { streamMode: ['messages', 'values'] })") });
    });

    it("should keep the root graph's state while a subgraph's states and tokens come (subgraphs: true)", async () => {
      const run = await runWithOracle(
        from([
          bad([[], 'values', { messages: [], topic: 'oslo', report: null }]),
          bad([['research:abc'], 'values', { messages: [], notes: ['n1'] }]),
          bad([['research:abc'], 'messages', [chunk('Researching.'), { ...meta, langgraph_node: 'research_model' }]]),
          bad([['research:abc'], 'values', { messages: [], notes: ['n1', 'n2'] }]),
          bad([[], 'values', { messages: [], topic: 'oslo', report: 'done' }]),
        ]).pipe(fromLangGraphStream(), toAgui({ threadId: 'thread-1', runId: 'run-1' })),
      );
      const states = run.events.filter((event) => event.type === EventType.STATE_SNAPSHOT || event.type === EventType.STATE_DELTA);
      expect(states).toEqual([
        expect.objectContaining({ type: EventType.STATE_SNAPSHOT, snapshot: { topic: 'oslo', report: null } }),
        // (a snapshot again: smaller than its delta)
        expect.objectContaining({ type: EventType.STATE_SNAPSHOT, snapshot: { topic: 'oslo', report: 'done' } }),
      ]);
      expect(run.state).toEqual({ topic: 'oslo', report: 'done' });
      expect(run.messages).toEqual([{ id: 'chatcmpl-1', role: 'assistant', content: 'Researching.' }]);
      expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
    });
  });

  it('should give the results its doc example promises', async () => {
    const lines: string[] = [];
    await collect(
      from<LangGraphStreamPart[]>([
        ['messages', [{ type: 'AIMessageChunk', id: 'm1', content: 'Hi' }, { langgraph_node: 'agent' }]],
        ['values', { messages: [], mood: 'happy' }],
      ]).pipe(fromLangGraphStream(), map((event) => void lines.push(JSON.stringify(event)))),
    );
    expect(lines.join(', ')).toBe('{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"Hi"}, {"type":"STATE_SNAPSHOT","snapshot":{"mood":"happy"}}');
  });

  describe('raw', () => {
    it('should send each item as RAW before the events made from it, when asked, and none by default', async () => {
      const a = say('Hi');
      expect(await adapt([a], { raw: true })).toEqual([{ type: EventType.RAW, event: a, source: 'langgraph' }, text('Hi')]);
      expect(await adapt([a])).toEqual([text('Hi')]);
    });
  });
});
