import { EventType } from '@ag-ui/core';
import { defer, from, map, mergeMap, of, retry, take } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import {
  fromLangChainStreamEvents,
  type LangChainMessageFields,
  type LangChainStreamEvent,
  type LangChainToolCallChunk,
} from '../../../lib/adapters/fromLangChainStreamEvents.js';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { AguiRxError } from '../../../lib/protocol/errors.js';
import { toAnthropicMessages } from '../../../lib/converters/toAnthropicMessages.js';
import { toAgui } from '../../../operators/toAgui.js';
import { collect, createTestScheduler, diagnosticsSink, errorOf, sequentialIds } from '../../support/helpers.js';
import { runWithOracle } from '../../support/oracle.js';

/** One value map for a marble test's inputs and outputs, as RxJS's own specs use. */
type Marbles = Record<string, any>;

// streamEvents v2 events, as LangChain sends them.
const modelEvent = (event: string, data: LangChainStreamEvent['data'], runId = 'run-m1', fields: Partial<LangChainStreamEvent> = {}): LangChainStreamEvent => ({
  event,
  name: 'ChatOpenAI',
  run_id: runId,
  tags: ['seq:step:1'],
  metadata: { langgraph_node: 'agent', ls_provider: 'openai', ls_model_name: 'gpt-test' },
  data,
  ...fields,
});
const stream = (chunk: LangChainMessageFields, runId = 'run-m1', id = 'lc_run--m1') => modelEvent('on_chat_model_stream', { chunk: { id, ...chunk } }, runId);
const say = (content: LangChainMessageFields['content'], runId?: string, id?: string) => stream({ content }, runId, id);
const pieces = (...toolCallChunks: LangChainToolCallChunk[]) => stream({ content: '', tool_call_chunks: toolCallChunks });
const end = (output: LangChainMessageFields, runId = 'run-m1') => modelEvent('on_chat_model_end', { output: { id: 'lc_run--m1', ...output } }, runId);
const toolEvent = (event: string, name: string, data: LangChainStreamEvent['data'], runId = 'run-t1'): LangChainStreamEvent => ({ event, name, run_id: runId, tags: [], metadata: { langgraph_node: 'tools' }, data });
const toolMessage = (toolCallId: string, content: unknown, fields: Record<string, unknown> = {}) => ({ type: 'tool', id: null, tool_call_id: toolCallId, content, status: 'success', ...fields });
const chain = (event: 'on_chain_start' | 'on_chain_end', name: string, runId: string, node?: string): LangChainStreamEvent => ({
  event,
  name,
  run_id: runId,
  metadata: node === undefined ? {} : { langgraph_node: node },
  data: {},
});
const bad = (value: unknown) => value as LangChainStreamEvent;

// Agent events out.
const text = (delta: string, messageId = 'lc_run--m1'): AgentEvent => ({ type: EventType.TEXT_MESSAGE_CHUNK, messageId, delta });
const reasoning = (delta: string, messageId = 'lc_run--m1-reasoning'): AgentEvent => ({ type: EventType.REASONING_MESSAGE_CHUNK, messageId, delta });
const callStart = (toolCallId: string, toolCallName: string, delta?: string, parentMessageId = 'lc_run--m1'): AgentEvent => ({
  type: EventType.TOOL_CALL_CHUNK,
  toolCallId,
  toolCallName,
  parentMessageId,
  ...(delta === undefined ? {} : { delta }),
});
const callArgs = (toolCallId: string, delta: string): AgentEvent => ({ type: EventType.TOOL_CALL_CHUNK, toolCallId, delta });
const result = (toolCallId: string, content: string, messageId?: string): AgentEvent => ({
  type: EventType.TOOL_CALL_RESULT,
  toolCallId,
  content,
  ...(messageId === undefined ? {} : { messageId }),
});
const tokenUsage = (usage: Record<string, unknown>): AgentEvent => ({ type: 'TOKEN_USAGE', usage }) as AgentEvent;
const encrypted = (entityId: string, encryptedValue: string): AgentEvent => ({ type: EventType.REASONING_ENCRYPTED_VALUE, subtype: 'message', entityId, encryptedValue });
const reasoningStart = (messageId: string, redacted = false): AgentEvent => ({
  type: EventType.REASONING_MESSAGE_START,
  messageId,
  role: 'reasoning',
  ...(redacted ? { metadata: { anthropic: { type: 'redacted_thinking' } } } : {}),
});
const stepStarted = (stepName: string): AgentEvent => ({ type: EventType.STEP_STARTED, stepName });
const stepFinished = (stepName: string): AgentEvent => ({ type: EventType.STEP_FINISHED, stepName });

function adapt(inputs: readonly LangChainStreamEvent[], options?: Parameters<typeof fromLangChainStreamEvents>[0]): Promise<AgentEvent[]> {
  return collect(from(inputs).pipe(fromLangChainStreamEvents(options)));
}

async function failure(inputs: readonly LangChainStreamEvent[]): Promise<unknown> {
  return errorOf(adapt(inputs));
}

describe('fromLangChainStreamEvents', () => {
  let testScheduler: TestScheduler;

  beforeEach(() => {
    testScheduler = createTestScheduler();
  });

  describe('as an operator', () => {
    it('should turn chunks into text and tool call chunks, the end into usage, and a tool end into a result', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const values: Marbles = {
          s: modelEvent('on_chat_model_start', { input: { messages: [['<recursive>']] } }),
          a: say('Hi'),
          b: pieces({ id: 'call-1', name: 'search', args: '{"q":1}', index: 0 }),
          e: end({ content: 'Hi', usage_metadata: { input_tokens: 9, output_tokens: 4, total_tokens: 13 }, response_metadata: { model_name: 'gpt-test-1' } }),
          x: toolEvent('on_tool_start', 'search', { input: { q: 1 } }),
          y: toolEvent('on_tool_end', 'search', { output: toolMessage('call-1', 'found') }),
          t: text('Hi'),
          k: callStart('call-1', 'search', '{"q":1}'),
          U: tokenUsage({ inputTokens: 9, outputTokens: 4, totalTokens: 13, model: 'gpt-test-1' }),
          r: result('call-1', 'found'),
        };
        // prettier-ignore
        const e1 =  cold('--s--a--b--e--x--y--|', values);
        // prettier-ignore
        const e1subs =   '^-------------------!';
        // prettier-ignore
        const expected = '-----t--k--U-----r--|';

        expectObservable(e1.pipe(fromLangChainStreamEvents())).toBe(expected, values);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it("should send a running model's usage before passing the source error on", () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const error = new Error('ECONNRESET');
        const values: Marbles = {
          a: stream({ content: 'Hi', usage_metadata: { input_tokens: 3, output_tokens: 1, total_tokens: 4 } }),
          t: text('Hi'),
          U: tokenUsage({ inputTokens: 3, outputTokens: 1, totalTokens: 4, model: 'gpt-test' }),
        };
        // prettier-ignore
        const e1 =  cold('--a--#   ', values, error);
        // prettier-ignore
        const e1subs =   '^----!   ';
        // prettier-ignore
        const expected = '--t--(U#)';

        expectObservable(e1.pipe(fromLangChainStreamEvents())).toBe(expected, values, error);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should complete when the source is empty', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        // prettier-ignore
        const e1 = cold<LangChainStreamEvent>('|   ');
        // prettier-ignore
        const e1subs =                        '(^!)';
        // prettier-ignore
        const expected =                      '|   ';

        expectObservable(e1.pipe(fromLangChainStreamEvents())).toBe(expected);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should not complete when the source never completes', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        // prettier-ignore
        const e1 = cold<LangChainStreamEvent>('-');
        // prettier-ignore
        const e1subs =                        '^';
        // prettier-ignore
        const expected =                      '-';

        expectObservable(e1.pipe(fromLangChainStreamEvents())).toBe(expected);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should pass an immediate source error on', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        // prettier-ignore
        const e1 = cold<LangChainStreamEvent>('#   ');
        // prettier-ignore
        const e1subs =                        '(^!)';
        // prettier-ignore
        const expected =                      '#   ';

        expectObservable(e1.pipe(fromLangChainStreamEvents())).toBe(expected);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should allow unsubscribing early and explicitly, sending nothing on teardown', () =>
      testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
        const values: Marbles = { a: stream({ content: 'Hi', usage_metadata: { input_tokens: 3 } }), b: say('!'), t: text('Hi') };
        // prettier-ignore
        const e1 =   hot('--a----b----|', values);
        // prettier-ignore
        const unsub =    '-----!       ';
        // prettier-ignore
        const e1subs =   '^----!       ';
        // prettier-ignore
        const expected = '--t---       ';

        expectObservable(e1.pipe(fromLangChainStreamEvents()), unsub).toBe(expected, values);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should not break unsubscription chains when unsubscribed explicitly', () =>
      testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
        const values: Marbles = { a: say('Hi'), b: say('!'), t: text('Hi') };
        // prettier-ignore
        const e1 =   hot('--a----b----|', values);
        // prettier-ignore
        const unsub =    '-----!       ';
        // prettier-ignore
        const e1subs =   '^----!       ';
        // prettier-ignore
        const expected = '--t---       ';

        const result$ = e1.pipe(
          mergeMap((input) => of(input)),
          fromLangChainStreamEvents(),
          map((event) => event),
          mergeMap((event) => of(event)),
        );

        expectObservable(result$, unsub).toBe(expected, values);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should stop a synchronous source when take has what it needs', () =>
      testScheduler.run(({ expectObservable }) => {
        const values: Marbles = { t: text('a'), s: text('b') };
        // prettier-ignore
        const expected = '(ts|)';

        let read = 0;
        const source$ = from([say('a'), say('b'), say('c')]).pipe(map((input) => (read++, input)));

        expectObservable(source$.pipe(fromLangChainStreamEvents(), take(2))).toBe(expected, values);
        testScheduler.flush();
        expect(read).toBe(2);
      }));

    it('should keep state per subscription: a late subscriber does not continue calls it did not see', () =>
      testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
        const values: Marbles = {
          a: pieces({ id: 'call-1', name: 'search', args: '{', index: 0 }),
          b: pieces({ args: '}', index: 0 }),
          k: callStart('call-1', 'search', '{'),
          l: callArgs('call-1', '}'),
        };
        // prettier-ignore
        const e1 =   hot('--a----b----|', values);
        // prettier-ignore
        const sub2 =     '----^        ';
        // prettier-ignore
        const e1subs = [ '^-----------!',
                         '----^--!     '];
        // prettier-ignore
        const expected1 = '--k----l----|';
        // prettier-ignore
        const expected2 = '-------#     ';

        const result$ = e1.pipe(fromLangChainStreamEvents());
        const error = new AguiRxError(
          'INVALID_EVENT',
          "fromLangChainStreamEvents received a malformed LangChain message: data.chunk.tool_call_chunks[0] starts a tool call without a name. The first piece of each call must carry the tool's name (and id); is the stream cut short or reordered?",
        );

        expectObservable(result$).toBe(expected1, values);
        expectObservable(result$, sub2).toBe(expected2, values, error);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should start afresh on retry: the tool calls of a failed attempt are forgotten', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const values: Marbles = { a: pieces({ id: 'call-1', name: 'search', args: '{"q":', index: 0 }), k: callStart('call-1', 'search', '{"q":') };
        // prettier-ignore
        const first =  cold('-a-#      ', values);
        // prettier-ignore
        const second = cold('   -a-|   ', values);
        // prettier-ignore
        const firstSubs =   '^--!      ';
        // prettier-ignore
        const secondSubs =  '---^--!   ';
        // prettier-ignore
        const expected =    '-k--k-|   ';

        let attempt = 0;
        const source$ = defer(() => (attempt++ === 0 ? first : second));

        expectObservable(source$.pipe(fromLangChainStreamEvents(), retry(1))).toBe(expected, values);
        expectSubscriptions(first.subscriptions).toBe(firstSubs);
        expectSubscriptions(second.subscriptions).toBe(secondSubs);
      }));

    it('should fail with INVALID_EVENT on an input that is not an event, after what came before', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const values: Marbles = { a: say('Hi'), b: bad(['messages', {}]), t: text('Hi') };
        const error = new AguiRxError(
          'INVALID_EVENT',
          "fromLangChainStreamEvents received an array of 2 where a streamEvents v2 event such as { event: 'on_chat_model_stream', run_id, data: { chunk } } was expected. Pass the events of streamEvents(input, { version: 'v2' }); graph.stream() output needs fromLangGraphStream.",
        );
        // prettier-ignore
        const e1 =  cold('--a--b--|', values);
        // prettier-ignore
        const e1subs =   '^----!   ';
        // prettier-ignore
        const expected = '--t--#   ';

        expectObservable(e1.pipe(fromLangChainStreamEvents())).toBe(expected, values, error);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));
  });

  describe('text and reasoning (rule 1)', () => {
    it('should name the message after the run’s first chunk id, and send nothing for empty content', async () => {
      expect(await adapt([say(''), say([]), say('Hel'), say('lo', 'run-m1', 'msg_other'), say([{ type: 'text', text: '!', index: 0 }])])).toEqual([text('Hel'), text('lo'), text('!')]);
    });

    it('should fall back on the run_id when the chunks carry no id', async () => {
      expect(await adapt([modelEvent('on_chat_model_stream', { chunk: { content: 'Hi' } }, 'run-9')])).toEqual([text('Hi', 'run-9')]);
    });

    it('should give each model run its own message', async () => {
      expect(await adapt([say('A'), end({ content: 'A' }), say('B', 'run-m2', 'lc_run--m2')])).toEqual([text('A'), text('B', 'lc_run--m2')]);
    });

    it('should read reasoning_content, reasoning strings and summaries, thinking and reasoning blocks, before the text', async () => {
      expect(
        await adapt([
          stream({ content: '', additional_kwargs: { reasoning_content: 'Deep' } }),
          stream({ content: '', additional_kwargs: { reasoning: 'Router' } }),
          stream({ content: [], additional_kwargs: { reasoning: { summary: [{ text: 'One', index: 0 }] } } }),
          stream({ content: [], additional_kwargs: { reasoning: { summary: [{ text: '.', index: 0 }] } } }),
          stream({ content: [], additional_kwargs: { reasoning: { summary: [{ text: 'Two', index: 1 }] } } }),
          say([
            { type: 'thinking', thinking: 'Hmm', index: 0 },
            { type: 'thinking', signature: 'sig', index: 0 },
            { type: 'reasoning', reasoning: 'So', index: 0 },
            { type: 'text', text: 'Done', index: 1 },
          ]),
        ]),
      ).toEqual([reasoning('Deep'), reasoning('Router'), reasoning('One'), reasoning('.'), reasoning('\n\nTwo'), reasoning('Hmm'), encrypted('lc_run--m1-reasoning', 'sig'), reasoning('So'), text('Done')]);
    });

    it("should send a thinking block's signature and a redacted_thinking block's data as REASONING_ENCRYPTED_VALUE, each block its own reasoning message", () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values: Marbles = {
          a: say([{ type: 'redacted_thinking', data: 'Eo8B', index: 0 }]),
          b: say([{ type: 'thinking', thinking: '', signature: 'SIG_A', index: 1 }]),
          c: say([{ type: 'thinking', thinking: 'Plan', index: 2 }], 'run-m2', 'run-b'),
          d: say([{ type: 'thinking', thinking: '', signature: 'SIG_B', index: 2 }], 'run-m2', 'run-b'),
          e: say([{ type: 'text', text: 'Done', index: 3 }]),
          R: reasoningStart('lc_run--m1-reasoning', true),
          X: encrypted('lc_run--m1-reasoning', 'Eo8B'),
          S: reasoningStart('lc_run--m1-reasoning-2'),
          Y: encrypted('lc_run--m1-reasoning-2', 'SIG_A'),
          p: reasoning('Plan', 'run-b-reasoning'),
          Z: encrypted('run-b-reasoning', 'SIG_B'),
          t: text('Done'),
        };
        const { onDiagnostic, messages } = diagnosticsSink();
        // prettier-ignore
        const e1 =  cold('-a----b----c-d-e-|', values);
        // prettier-ignore
        const expected = '-(RX)-(SY)-p-Z-t-|';

        expectObservable(e1.pipe(fromLangChainStreamEvents({ onDiagnostic }))).toBe(expected, values);
        testScheduler.flush();
        expect(messages).toEqual([]);
      }));

    it('should keep the signatures of a streamed Anthropic turn for toAnthropicMessages, through toAgui and the official client', async () => {
      const events = [
        say([{ type: 'thinking', thinking: 'Plan A', index: 0 }]),
        say([{ type: 'thinking', thinking: '', signature: 'SIG_A', index: 0 }]),
        say([{ type: 'redacted_thinking', data: 'Eo8B', index: 1 }]),
        say([{ type: 'text', text: 'A1', index: 2 }]),
        end({}),
      ];
      const run = await runWithOracle(from(events).pipe(fromLangChainStreamEvents(), toAgui({ threadId: 'thread-1', runId: 'run-1' })));
      expect(run.messages).toEqual([
        { id: 'lc_run--m1-reasoning', role: 'reasoning', content: 'Plan A', encryptedValue: 'SIG_A' },
        expect.objectContaining({ id: 'lc_run--m1-reasoning-2', role: 'reasoning', content: '', encryptedValue: 'Eo8B' }),
        { id: 'lc_run--m1', role: 'assistant', content: 'A1' },
      ]);
      const warnings: string[] = [];
      expect(toAnthropicMessages([{ id: 'u1', role: 'user', content: 'Go' }, ...run.messages], { onWarning: (warning) => void warnings.push(warning) }).messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'Go' }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Plan A', signature: 'SIG_A' },
            { type: 'redacted_thinking', data: 'Eo8B' },
            { type: 'text', text: 'A1' },
          ],
        },
      ]);
      expect(warnings).toEqual([]);
    });

    it("should keep each block of a whole message apart (blocks without index), each with its own signature or data, for toAnthropicMessages", async () => {
      const whole = end({ content: [{ type: 'thinking', thinking: 'A', signature: 'S1' }, { type: 'redacted_thinking', data: 'R' }, { type: 'thinking', thinking: 'B', signature: 'S2' }, { type: 'text', text: 'answer' }] });
      const run = await runWithOracle(from([whole]).pipe(fromLangChainStreamEvents(), toAgui({ threadId: 'thread-1', runId: 'run-1' })));
      expect(run.messages).toEqual([
        { id: 'lc_run--m1-reasoning', role: 'reasoning', content: 'A', encryptedValue: 'S1' },
        expect.objectContaining({ id: 'lc_run--m1-reasoning-2', role: 'reasoning', content: '', encryptedValue: 'R' }),
        { id: 'lc_run--m1-reasoning-3', role: 'reasoning', content: 'B', encryptedValue: 'S2' },
        { id: 'lc_run--m1', role: 'assistant', content: 'answer' },
      ]);
      expect(toAnthropicMessages(run.messages, { onWarning: () => {} }).messages).toEqual([
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'A', signature: 'S1' },
            { type: 'redacted_thinking', data: 'R' },
            { type: 'thinking', thinking: 'B', signature: 'S2' },
            { type: 'text', text: 'answer' },
          ],
        },
      ]);
    });

    it('should drop blocks it has no AG-UI form for, telling onDiagnostic once per type per subscription', async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      const inputs = [
        say([{ type: 'image_url', image_url: 'data:…' }, { type: 'text', text: 'Hi' }]),
        say([{ type: 'document', source: { type: 'base64', data: 'JVBE' } }, { type: 'image_url', image_url: 'data:…' }, { type: 'text', text: ' there' }]),
        end({ content: [{ type: 'text', text: 'Hi there' }] }),
        say([{ type: 'image_url', image_url: 'data:…' }, { type: 'text', text: 'Again' }], 'run-m2', 'lc_run--m2'),
      ];
      const adapted$ = from(inputs).pipe(fromLangChainStreamEvents({ onDiagnostic }));
      // The same as the stream without the dropped blocks.
      expect(await collect(adapted$)).toEqual(await adapt([say('Hi'), say(' there'), end({ content: [{ type: 'text', text: 'Hi there' }] }), say('Again', 'run-m2', 'lc_run--m2')]));
      const dropMessages = [
        "fromLangChainStreamEvents dropped a 'image_url' content block (data.chunk.content[0]): it has no AG-UI form, as only text, thinking / reasoning and tool call blocks are read. Later 'image_url' blocks of this stream are dropped without another warning.",
        "fromLangChainStreamEvents dropped a 'document' content block (data.chunk.content[0]): it has no AG-UI form, as only text, thinking / reasoning and tool call blocks are read. Later 'document' blocks of this stream are dropped without another warning.",
      ];
      expect(messages).toEqual(dropMessages);
      // A second subscription is a new stream: it reports again.
      await collect(adapted$);
      expect(messages).toEqual([...dropMessages, ...dropMessages]);
    });

    it("should read a whole model output's blocks the same way, reporting one it drops", async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      expect(await adapt([end({ content: [{ type: 'text', text: 'Hi' }, { type: 'audio', data: 'AA' }] })], { onDiagnostic })).toEqual([text('Hi')]);
      expect(messages).toEqual([
        "fromLangChainStreamEvents dropped a 'audio' content block (data.output.content[1]): it has no AG-UI form, as only text, thinking / reasoning and tool call blocks are read. Later 'audio' blocks of this stream are dropped without another warning.",
      ]);
    });

    it("should not report LangChain's standard tool call blocks, which repeat the chunk's tool_call_chunks", async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      const chunk = { content: [{ type: 'tool_call_chunk', id: 'call-1', name: 'look', args: '{}', index: 0 }], tool_call_chunks: [{ type: 'tool_call_chunk', id: 'call-1', name: 'look', args: '{}', index: 0 }] };
      expect(await adapt([stream(chunk as LangChainMessageFields)], { onDiagnostic })).toEqual([callStart('call-1', 'look', '{}')]);
      expect(messages).toEqual([]);
    });

    it('should read lc-serialised chunks as plain ones', async () => {
      const chunk = { lc: 1, type: 'constructor', id: ['langchain_core', 'messages', 'AIMessageChunk'], kwargs: { id: 'lc_run--m1', content: 'Hi', tool_call_chunks: [] } };
      expect(await adapt([modelEvent('on_chat_model_stream', { chunk })])).toEqual([text('Hi')]);
    });
  });

  describe('tool calls (rule 2)', () => {
    it('should key tool_call_chunks by index within the run, interleaved, and give every piece the call id', async () => {
      expect(
        await adapt([
          pieces({ id: 'call-a', name: 'a', args: '', index: 0 }, { id: 'call-b', name: 'b', args: '{"x"', index: 1 }),
          pieces({ name: null, args: '{}', id: null, index: 0 }),
          pieces({ args: ':1}', index: 1 }),
        ]),
      ).toEqual([callStart('call-a', 'a'), callStart('call-b', 'b', '{"x"'), callArgs('call-a', '{}'), callArgs('call-b', ':1}')]);
    });

    it('should continue the latest call with pieces that carry no index, and start a new one at a new id', async () => {
      expect(
        await adapt([pieces({ id: 'call-a', name: 'a', args: '{"q":' }), pieces({ args: '1}' }), pieces({ id: 'call-b', name: 'b', args: '{}' }), pieces({ id: 'call-b', args: '' })]),
      ).toEqual([callStart('call-a', 'a', '{"q":'), callArgs('call-a', '1}'), callStart('call-b', 'b', '{}')]);
    });

    it('should read tool_use and input_json_delta blocks when the chunk has no tool_call_chunks', async () => {
      expect(
        await adapt([
          say([{ type: 'tool_use', id: 'toolu_1', name: 'search', input: {}, index: 1 }]),
          say([{ type: 'input_json_delta', partial_json: '{"q":', index: 1 }]),
          say([{ type: 'input_json_delta', partial_json: '1}', index: 1 }]),
          say([{ type: 'tool_use', id: 'toolu_2', name: 'fixed', input: { a: 1 }, index: 2 }]),
        ]),
      ).toEqual([callStart('toolu_1', 'search'), callArgs('toolu_1', '{"q":'), callArgs('toolu_1', '1}'), callStart('toolu_2', 'fixed', '{"a":1}')]);
    });

    it('should read only the tool_call_chunks when a chunk has both, as LangChain sends them', async () => {
      expect(
        await adapt([
          stream({ content: [{ type: 'tool_use', id: 'toolu_1', name: 'search', input: {}, index: 0 }], tool_call_chunks: [{ id: 'toolu_1', name: 'search', args: '', index: 0 }] }),
          stream({ content: [{ type: 'input_json_delta', partial_json: '{}', index: 0 }], tool_call_chunks: [{ args: '{}', index: 0 }] }),
        ]),
      ).toEqual([callStart('toolu_1', 'search'), callArgs('toolu_1', '{}')]);
    });

    it('should mint an id for a call that has none', async () => {
      expect(await adapt([pieces({ name: 'search', args: '{}', index: 0 })], { generateId: sequentialIds('minted-') })).toEqual([callStart('minted-1', 'search', '{}')]);
    });

    it('should parent the calls of each run on that run’s message', async () => {
      expect(await adapt([say('A'), end({}), modelEvent('on_chat_model_stream', { chunk: { id: 'lc_run--m2', tool_call_chunks: [{ id: 'c', name: 'n', index: 0 }] } }, 'run-m2')])).toEqual([
        text('A'),
        callStart('c', 'n', undefined, 'lc_run--m2'),
      ]);
    });
  });

  describe('model end and usage (rule 3)', () => {
    it('should map every count of usage_metadata, with the served model', async () => {
      const usage = { input_tokens: 100, output_tokens: 20, total_tokens: 120, input_token_details: { cache_read: 40, cache_creation: 10 }, output_token_details: { reasoning: 5 } };
      expect(await adapt([end({ usage_metadata: usage, response_metadata: { model_name: 'claude-x' } })])).toEqual([
        tokenUsage({ model: 'claude-x', inputTokens: 100, outputTokens: 20, totalTokens: 120, reasoningTokens: 5, cachedInputTokens: 40, cacheWriteInputTokens: 10 }),
      ]);
    });

    it("should prefer the end's usage over its chunks', and fall back on ls_model_name", async () => {
      expect(
        await adapt([stream({ content: 'Hi', usage_metadata: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } }), end({ usage_metadata: { input_tokens: 7, output_tokens: 3, total_tokens: 10 } })]),
      ).toEqual([text('Hi'), tokenUsage({ model: 'gpt-test', inputTokens: 7, outputTokens: 3, totalTokens: 10 })]);
    });

    it("should add the chunks' usage up when the end has none", async () => {
      expect(
        await adapt([
          stream({ content: '', usage_metadata: { input_tokens: 7, output_tokens: 0, total_tokens: 7 } }),
          stream({ content: '', usage_metadata: { input_tokens: 0, output_tokens: 3, total_tokens: 3 } }),
          end({ usage_metadata: null }),
        ]),
      ).toEqual([tokenUsage({ model: 'gpt-test', inputTokens: 7, outputTokens: 3, totalTokens: 10 })]);
    });

    it('should read the whole output, tool_calls included, of a run that streamed nothing', async () => {
      expect(await adapt([end({ content: 'Sure.', tool_calls: [{ id: 'call-1', name: 'search', args: { q: 'x' } }] })])).toEqual([text('Sure.'), callStart('call-1', 'search', '{"q":"x"}')]);
    });

    it('should send no usage for a run that reported none', async () => {
      expect(await adapt([say('Hi'), end({ content: 'Hi' })])).toEqual([text('Hi')]);
    });
  });

  describe('tool results (rule 4)', () => {
    const call = (id: string, name: string) => pieces({ id, name, args: '{}', index: Number(id.slice(-1)) });

    it("should answer the call named by the ToolMessage's tool_call_id, with its id, text blocks joined", async () => {
      expect(
        await adapt([
          call('call-1', 'search'),
          toolEvent('on_tool_end', 'search', { output: toolMessage('call-1', [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }], { id: 'tm-1' }) }),
        ]),
      ).toEqual([callStart('call-1', 'search', '{}'), result('call-1', 'ab', 'tm-1')]);
    });

    it('should read an lc-serialised ToolMessage, and the ToolMessages of a Command', async () => {
      const serialised = { lc: 1, type: 'constructor', id: ['langchain_core', 'messages', 'ToolMessage'], kwargs: { tool_call_id: 'call-1', content: 'one' } };
      const command = { lg_name: 'Command', update: { messages: [toolMessage('call-2', 'two')] } };
      expect(
        await adapt([call('call-1', 'a'), call('call-2', 'b'), toolEvent('on_tool_end', 'a', { output: serialised }), toolEvent('on_tool_end', 'b', { output: command }, 'run-t2')]),
      ).toEqual([callStart('call-1', 'a', '{}'), callStart('call-2', 'b', '{}'), result('call-1', 'one'), result('call-2', 'two')]);
    });

    it('should find the call from the tool input, else the earliest unanswered call of that name, and serialise other output', async () => {
      expect(
        await adapt([
          call('call-1', 'calc'),
          call('call-2', 'calc'),
          toolEvent('on_tool_start', 'calc', { input: { type: 'tool_call', id: 'call-2', name: 'calc', args: {} } }, 'run-t2'),
          toolEvent('on_tool_end', 'calc', { output: 42 }, 'run-t2'),
          toolEvent('on_tool_start', 'calc', { input: '{"a":1}' }),
          toolEvent('on_tool_end', 'calc', { output: { sum: 3 } }),
          toolEvent('on_tool_end', 'calc', { output: 'again' }, 'run-t3'),
        ]),
      ).toEqual([callStart('call-1', 'calc', '{}'), callStart('call-2', 'calc', '{}'), result('call-2', '42'), result('call-1', '{"sum":3}')]);
    });

    it('should answer a failed tool with Error: and its message', async () => {
      expect(
        await adapt([
          call('call-1', 'divide'),
          call('call-2', 'weather'),
          toolEvent('on_tool_start', 'divide', { input: { a: 1, b: 0 } }),
          toolEvent('on_tool_error', 'divide', { error: new Error('division by zero'), input: { a: 1, b: 0 } }),
          toolEvent('on_tool_error', 'weather', { error: 'unknown city', input: { city: 'Atlantis' } }, 'run-t2'),
        ]),
      ).toEqual([callStart('call-1', 'divide', '{}'), callStart('call-2', 'weather', '{}'), result('call-1', 'Error: division by zero'), result('call-2', 'Error: unknown city')]);
    });

    describe('parallel calls of one tool, whose runs name no call (langchain-ai/langchain#37426)', () => {
      const weather = (id: string, city: string, index: number) => pieces({ id, name: 'get_weather', args: `{"city":"${city}"}`, index });
      const parisMessage = toolMessage('toolu_A', 'Paris: 18C');

      it("should answer a failed run's call by its input, and the other call by its ToolMessage", () =>
        testScheduler.run(({ cold, expectObservable }) => {
          const values: Marbles = {
            a: weather('toolu_A', 'Paris', 0),
            b: weather('toolu_B', 'Rome', 1),
            p: toolEvent('on_tool_start', 'get_weather', { input: { city: 'Paris' } }, 'run-t1'),
            q: toolEvent('on_tool_start', 'get_weather', { input: { city: 'Rome' } }, 'run-t2'),
            x: toolEvent('on_tool_error', 'get_weather', { input: { city: 'Rome' }, error: 'Rome service down' }, 'run-t2'),
            y: toolEvent('on_tool_end', 'get_weather', { input: { city: 'Paris' }, output: parisMessage }, 'run-t1'),
            A: callStart('toolu_A', 'get_weather', '{"city":"Paris"}'),
            B: callStart('toolu_B', 'get_weather', '{"city":"Rome"}'),
            E: result('toolu_B', 'Error: Rome service down'),
            R: result('toolu_A', 'Paris: 18C'),
          };
          const { onDiagnostic, messages } = diagnosticsSink();
          // prettier-ignore
          const e1 =  cold('-a-b-p-q-x-y-|', values);
          // prettier-ignore
          const expected = '-A-B-----E-R-|';

          expectObservable(e1.pipe(fromLangChainStreamEvents({ onDiagnostic }))).toBe(expected, values);
          testScheduler.flush();
          expect(messages).toEqual([]);
        }));

      it('should match a result without tool_call_id by the run input, and one that names its call should still reach it', async () => {
        const { onDiagnostic, messages } = diagnosticsSink();
        expect(
          await adapt(
            [
              weather('toolu_A', 'Paris', 0),
              weather('toolu_B', 'Rome', 1),
              toolEvent('on_tool_start', 'get_weather', { input: '{"city":"Rome"}' }, 'run-t2'),
              toolEvent('on_tool_end', 'get_weather', { output: 'Rome: 25C' }, 'run-t2'),
              toolEvent('on_tool_end', 'get_weather', { input: { city: 'Paris', units: 'metric' }, output: 'Paris: 18C' }, 'run-t1'),
            ],
            { onDiagnostic },
          ),
        ).toEqual([
          callStart('toolu_A', 'get_weather', '{"city":"Paris"}'),
          callStart('toolu_B', 'get_weather', '{"city":"Rome"}'),
          result('toolu_B', 'Rome: 25C'),
          result('toolu_A', 'Paris: 18C'),
        ]);
        expect(messages).toEqual([]);
      });

      it('should answer no call, telling onDiagnostic, when the input fits several calls or none, and still take the results that name their calls', async () => {
        const { onDiagnostic, messages } = diagnosticsSink();
        expect(
          await adapt(
            [
              weather('toolu_A', 'Paris', 0),
              weather('toolu_B', 'Paris', 1),
              weather('toolu_C', 'Rome', 2),
              toolEvent('on_tool_error', 'get_weather', { input: { city: 'Paris' }, error: 'Paris service down' }, 'run-t1'),
              toolEvent('on_tool_end', 'get_weather', { input: { city: 'Oslo' }, output: 'Oslo: 2C' }, 'run-t2'),
              toolEvent('on_tool_end', 'get_weather', { output: toolMessage('toolu_B', 'Paris: 18C') }, 'run-t3'),
            ],
            { onDiagnostic },
          ),
        ).toEqual([
          callStart('toolu_A', 'get_weather', '{"city":"Paris"}'),
          callStart('toolu_B', 'get_weather', '{"city":"Paris"}'),
          callStart('toolu_C', 'get_weather', '{"city":"Rome"}'),
          result('toolu_B', 'Paris: 18C'),
        ]);
        expect(messages).toEqual([
          "fromLangChainStreamEvents could not tell which call the error (Paris service down) of a 'get_weather' tool run (run_id 'run-t1') answers, because its input {\"city\":\"Paris\"} fits 'toolu_A', 'toolu_B' alike; its tool events name no tool_call_id (langchain-ai/langchain#37426). It is not sent rather than given to the wrong call: those calls stay unanswered (RUN_FINISHED pendingToolCallIds). Return a ToolMessage (it names its call), or give the tool a ToolCall input ({ type: 'tool_call', id, args }).",
          expect.stringContaining("the result of a 'get_weather' tool run (run_id 'run-t2') answers, because its input {\"city\":\"Oslo\"} fits none of 'toolu_A', 'toolu_B', 'toolu_C'"),
        ]);
      });

      it('should tell parallel calls without input apart only when one is waiting', async () => {
        const { onDiagnostic, messages } = diagnosticsSink();
        expect(
          await adapt(
            [weather('toolu_A', 'Paris', 0), weather('toolu_B', 'Rome', 1), toolEvent('on_tool_end', 'get_weather', { output: 'which?' }, 'run-t1'), toolEvent('on_tool_end', 'get_weather', { output: toolMessage('toolu_A', 'Paris: 18C') }, 'run-t2'), toolEvent('on_tool_end', 'get_weather', { output: 'Rome: 25C' }, 'run-t3')],
            { onDiagnostic },
          ),
        ).toEqual([
          callStart('toolu_A', 'get_weather', '{"city":"Paris"}'),
          callStart('toolu_B', 'get_weather', '{"city":"Rome"}'),
          result('toolu_A', 'Paris: 18C'),
          result('toolu_B', 'Rome: 25C'),
        ]);
        expect(messages).toEqual([expect.stringContaining("because its events carry no input to tell 'toolu_A', 'toolu_B' apart")]);
      });

      it('should send a result that names its call even after a result matched to that call by input, telling onDiagnostic', async () => {
        const { onDiagnostic, messages } = diagnosticsSink();
        expect(
          await adapt([weather('toolu_A', 'Paris', 0), toolEvent('on_tool_end', 'get_weather', { input: { city: 'Paris' }, output: 'cached' }, 'run-t1'), toolEvent('on_tool_end', 'get_weather', { output: toolMessage('toolu_A', 'Paris: 18C') }, 'run-t2')], { onDiagnostic }),
        ).toEqual([callStart('toolu_A', 'get_weather', '{"city":"Paris"}'), result('toolu_A', 'cached'), result('toolu_A', 'Paris: 18C')]);
        expect(messages).toEqual([expect.stringContaining("received a result naming tool call 'toolu_A' after it had sent that call the result of a 'get_weather' run matched by its input")]);
      });

      it('should leave the calls it cannot tell apart pending in RUN_FINISHED, through toAgui and the official client', async () => {
        const { onDiagnostic, messages } = diagnosticsSink();
        const events = [
          weather('toolu_A', 'Paris', 0),
          weather('toolu_B', 'Paris', 1),
          end({}),
          toolEvent('on_tool_error', 'get_weather', { input: { city: 'Paris' }, error: 'down' }, 'run-t1'),
          toolEvent('on_tool_end', 'get_weather', { output: toolMessage('toolu_B', 'Paris: 18C') }, 'run-t2'),
        ];
        const run = await runWithOracle(from(events).pipe(fromLangChainStreamEvents({ onDiagnostic }), toAgui({ threadId: 'thread-1', runId: 'run-1' })));
        expect(run.messages).toEqual([
          {
            id: 'lc_run--m1',
            role: 'assistant',
            toolCalls: [
              { id: 'toolu_A', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
              { id: 'toolu_B', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            ],
          },
          { id: expect.any(String), role: 'tool', toolCallId: 'toolu_B', content: 'Paris: 18C' },
        ]);
        expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'success', pendingToolCallIds: ['toolu_A'] } });
        expect(messages).toHaveLength(1);
      });

      it('should give the failed Rome run its own call through the official client, keeping Paris its result', async () => {
        const events = [
          weather('toolu_A', 'Paris', 0),
          weather('toolu_B', 'Rome', 1),
          end({}),
          toolEvent('on_tool_start', 'get_weather', { input: { city: 'Paris' } }, 'run-t1'),
          toolEvent('on_tool_start', 'get_weather', { input: { city: 'Rome' } }, 'run-t2'),
          toolEvent('on_tool_error', 'get_weather', { input: { city: 'Rome' }, error: 'Rome service down' }, 'run-t2'),
          toolEvent('on_tool_end', 'get_weather', { input: { city: 'Paris' }, output: parisMessage }, 'run-t1'),
        ];
        const run = await runWithOracle(from(events).pipe(fromLangChainStreamEvents(), toAgui({ threadId: 'thread-1', runId: 'run-1' })));
        expect(run.messages.slice(1)).toEqual([
          { id: expect.any(String), role: 'tool', toolCallId: 'toolu_B', content: 'Error: Rome service down' },
          { id: expect.any(String), role: 'tool', toolCallId: 'toolu_A', content: 'Paris: 18C' },
        ]);
        expect(run.events.at(-1)).not.toHaveProperty('outcome.pendingToolCallIds');
      });
    });

    it('should send nothing for a tool run that answers no call, and fail on output it cannot serialise', async () => {
      expect(await adapt([toolEvent('on_tool_end', 'helper', { output: 'x' })])).toEqual([]);
      const cycle: Record<string, unknown> = {};
      cycle.self = cycle;
      const error = (await failure([call('call-1', 'a'), toolEvent('on_tool_end', 'a', { output: cycle })])) as AguiRxError;
      expect(error).toBeInstanceOf(AguiRxError);
      expect(error.code).toBe('INVALID_EVENT');
      expect(error.message).toMatch(/^The result of tool call 'call-1' \(an object\) cannot be serialised to JSON: .*Return text, or plain data, from the tool\.$/s);
    });
  });

  describe('steps (rule 5)', () => {
    const graph = [
      chain('on_chain_start', 'LangGraph', 'g'),
      chain('on_chain_start', 'agent', 'n1', 'agent'),
      chain('on_chain_start', 'should_continue', 'r1', 'agent'),
      chain('on_chain_end', 'should_continue', 'r1', 'agent'),
      chain('on_chain_start', 'agent', 'sub', 'agent'),
      chain('on_chain_end', 'agent', 'sub', 'agent'),
      chain('on_chain_end', 'agent', 'n1', 'agent'),
      chain('on_chain_start', 'tools', 'n2', 'tools'),
      chain('on_chain_end', 'tools', 'n2', 'tools'),
      chain('on_chain_end', 'LangGraph', 'g'),
    ];

    it('should send graph nodes as steps when asked, not routers nor a same-named subgraph node', async () => {
      expect(await adapt(graph, { steps: true })).toEqual([stepStarted('agent'), stepFinished('agent'), stepStarted('tools'), stepFinished('tools')]);
    });

    it('should send no steps by default', async () => {
      expect(await adapt(graph)).toEqual([]);
    });
  });

  describe('other events (rule 6)', () => {
    it('should send custom events as CUSTOM and ignore the rest', async () => {
      expect(
        await adapt([
          { event: 'on_custom_event', name: 'progress', run_id: 'c1', data: { percent: 50 } },
          { event: 'on_retriever_end', name: 'docs', run_id: 'x1', data: { output: [] } },
          { event: 'on_chain_stream', name: 'agent', run_id: 'n1', data: { chunk: { messages: [] } } },
        ]),
      ).toEqual([{ type: EventType.CUSTOM, name: 'progress', value: { percent: 50 } }]);
    });
  });

  describe('bad input (rule 7)', () => {
    const invalid = (detail: string) => new AguiRxError('INVALID_EVENT', detail);

    it.each([
      [null, "fromLangChainStreamEvents received null where a streamEvents v2 event such as { event: 'on_chat_model_stream', run_id, data: { chunk } } was expected."],
      [{ type: 'TEXT_MESSAGE_CHUNK' }, "fromLangChainStreamEvents received an object without a string 'event' (got undefined) where a streamEvents v2 event"],
    ])('should refuse %p with a message that says what to pass', async (input, start) => {
      const error = (await failure([bad(input)])) as AguiRxError;
      expect(error.code).toBe('INVALID_EVENT');
      expect(error.message.startsWith(start)).toBe(true);
    });

    it('should refuse malformed events and chunks', async () => {
      const cases: [LangChainStreamEvent, AguiRxError][] = [
        [bad({ event: 'on_chat_model_stream', name: 'm', data: 'x' }), invalid("fromLangChainStreamEvents received a malformed streamEvents v2 event: on_chat_model_stream.data is \"x\", but it must be an object.")],
        [bad({ event: 'on_chat_model_stream', name: 'm', data: { chunk: { content: 'x' } } }), invalid("fromLangChainStreamEvents received a malformed streamEvents v2 event: 'on_chat_model_stream' has run_id: undefined, but every event names its run with a non-empty string run_id.")],
        [modelEvent('on_chat_model_stream', { chunk: 'x' }), invalid("fromLangChainStreamEvents received a malformed streamEvents v2 event: data.chunk of 'ChatOpenAI' is \"x\", but it must be a message chunk such as { content: 'Hi' }.")],
        [stream({ content: 5 as never }), invalid('fromLangChainStreamEvents received a malformed LangChain message: data.chunk.content is number 5, but it must be a string or a list of content blocks.')],
        [stream({ content: [7 as never] }), invalid("fromLangChainStreamEvents received a malformed LangChain message: data.chunk.content[0] is number 7, but it must be an object such as { type: 'text', text: 'Hi' }.")],
        [stream({ tool_call_chunks: 'x' as never }), invalid('fromLangChainStreamEvents received a malformed LangChain message: data.chunk.tool_call_chunks is "x", but it must be an array.')],
        [pieces({ id: 'c', name: 'n', index: 1.5 }), invalid("fromLangChainStreamEvents received a malformed LangChain message: data.chunk.tool_call_chunks[0].index is number 1.5, but a tool call's index must be an integer.")],
        [pieces({ id: 'c', name: 'n', args: {} as never, index: 0 }), invalid('fromLangChainStreamEvents received a malformed LangChain message: data.chunk.tool_call_chunks[0].args is an object, but it must be a string.')],
      ];
      for (const [input, expected] of cases) {
        const error = (await failure([input])) as AguiRxError;
        expect({ code: error.code, message: error.message }).toEqual({ code: expected.code, message: expected.message });
      }
    });

    it('should become RUN_ERROR under toAgui, after closing the text so far', async () => {
      const run = await runWithOracle(from([say('Hi'), bad(42)]).pipe(fromLangChainStreamEvents(), toAgui({ threadId: 'thread-1', runId: 'run-1' })));
      expect(run.events.map((event) => event.type)).toEqual(['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'RUN_ERROR']);
      expect(run.events.at(-1)).toMatchObject({ code: 'INVALID_EVENT' });
    });
  });

  describe('through toAgui and the official client', () => {
    it('should run to RUN_FINISHED with the text of a chunk whose image block is dropped, reported once', async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      const { onDiagnostic: toAguiDiagnostic, messages: repairs } = diagnosticsSink();
      const events = [
        say([{ type: 'text', text: 'Here is ' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' } }]),
        say([{ type: 'image_url', image_url: { url: 'https://example.com/b.png' } }, { type: 'text', text: 'the chart.' }]),
        end({}),
      ];
      const run = await runWithOracle(from(events).pipe(fromLangChainStreamEvents({ onDiagnostic }), toAgui({ threadId: 'thread-1', runId: 'run-1', onDiagnostic: toAguiDiagnostic })));
      expect(run.messages).toEqual([{ id: 'lc_run--m1', role: 'assistant', content: 'Here is the chart.' }]);
      expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
      expect(messages).toHaveLength(1);
      expect(messages[0]).toContain("dropped a 'image_url' content block (data.chunk.content[1])");
      expect(repairs).toEqual([]);
    });

    it('should build the assistant message with reasoning, text, parallel calls, results and usage, inside steps', async () => {
      const events = [
        chain('on_chain_start', 'agent', 'n1', 'agent'),
        stream({ content: '', additional_kwargs: { reasoning_content: 'Both.' } }),
        say('Checking.'),
        pieces({ id: 'call-a', name: 'a', args: '', index: 0 }, { id: 'call-b', name: 'b', args: '{"x":', index: 1 }),
        pieces({ args: '1}', index: 1 }),
        end({ usage_metadata: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } }),
        chain('on_chain_end', 'agent', 'n1', 'agent'),
        chain('on_chain_start', 'tools', 'n2', 'tools'),
        toolEvent('on_tool_end', 'b', { output: toolMessage('call-b', 'B') }, 'run-tb'),
        toolEvent('on_tool_end', 'a', { output: toolMessage('call-a', 'A') }, 'run-ta'),
        chain('on_chain_end', 'tools', 'n2', 'tools'),
      ];
      const run = await runWithOracle(from(events).pipe(fromLangChainStreamEvents({ steps: true }), toAgui({ threadId: 'thread-1', runId: 'run-1' })));
      expect(run.messages).toEqual([
        { id: 'lc_run--m1-reasoning', role: 'reasoning', content: 'Both.' },
        {
          id: 'lc_run--m1',
          role: 'assistant',
          content: 'Checking.',
          toolCalls: [
            { id: 'call-a', type: 'function', function: { name: 'a', arguments: '{}' } },
            { id: 'call-b', type: 'function', function: { name: 'b', arguments: '{"x":1}' } },
          ],
        },
        { id: expect.any(String), role: 'tool', toolCallId: 'call-b', content: 'B' },
        { id: expect.any(String), role: 'tool', toolCallId: 'call-a', content: 'A' },
      ]);
      expect(run.events.filter((event) => event.type.startsWith('STEP_')).map((event) => `${event.type}:${(event as { stepName?: string }).stepName}`)).toEqual([
        'STEP_STARTED:agent',
        'STEP_FINISHED:agent',
        'STEP_STARTED:tools',
        'STEP_FINISHED:tools',
      ]);
      expect(run.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', usage: [{ inputTokens: 10, outputTokens: 5, totalTokens: 15, model: 'gpt-test' }] });
    });
  });

  it('should give the results its doc example promises', async () => {
    const lines: string[] = [];
    await collect(
      from<LangChainStreamEvent[]>([
        { event: 'on_chat_model_stream', name: 'ChatOpenAI', run_id: 'r1', data: { chunk: { id: 'm1', content: 'Hi' } } },
        { event: 'on_chat_model_end', name: 'ChatOpenAI', run_id: 'r1', data: { output: { id: 'm1', content: 'Hi', usage_metadata: { input_tokens: 5, output_tokens: 1, total_tokens: 6 } } } },
      ]).pipe(fromLangChainStreamEvents(), map((event) => void lines.push(JSON.stringify(event)))),
    );
    expect(lines.join(', ')).toBe('{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"Hi"}, {"type":"TOKEN_USAGE","usage":{"inputTokens":5,"outputTokens":1,"totalTokens":6}}');
  });

  describe('raw', () => {
    it('should send each event as RAW before the events made from it, when asked', async () => {
      const a = say('Hi');
      const b = chain('on_chain_start', 'LangGraph', 'g');
      expect(await adapt([a, b], { raw: true })).toEqual([{ type: EventType.RAW, event: a, source: 'langchain' }, text('Hi'), { type: EventType.RAW, event: b, source: 'langchain' }]);
    });

    it('should send no RAW events by default', async () => {
      expect(await adapt([say('Hi')])).toEqual([text('Hi')]);
    });
  });
});
