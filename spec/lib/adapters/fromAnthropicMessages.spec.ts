import { EventType, type Message } from '@ag-ui/core';
import { defer, from, map, mergeMap, of, retry, take } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import {
  fromAnthropicMessages,
  type AnthropicContentBlock,
  type AnthropicContentBlockDelta,
  type AnthropicStreamEvent,
  type AnthropicUsage,
} from '../../../lib/adapters/fromAnthropicMessages.js';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { AguiRxError } from '../../../lib/protocol/errors.js';
import { toAnthropicMessages } from '../../../lib/converters/toAnthropicMessages.js';
import { toAgui } from '../../../operators/toAgui.js';
import { collect, createTestScheduler, diagnosticsSink, sequentialIds, terminals } from '../../support/helpers.js';
import { runWithOracle } from '../../support/oracle.js';

/** One value map for a marble test's inputs and outputs, as RxJS's own specs use. */
type Marbles = Record<string, any>;

// Provider events, as a Messages stream sends them.
/** message_start's usage in most cases below. */
const counts: AnthropicUsage = { input_tokens: 10, output_tokens: 1 };
const start = (usage: AnthropicUsage = {}, id = 'msg_1', model = 'claude-test'): AnthropicStreamEvent => ({
  type: 'message_start',
  message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage },
});
const blockStart = (index: number, block: AnthropicContentBlock): AnthropicStreamEvent => ({ type: 'content_block_start', index, content_block: block });
const textBlock = (index: number) => blockStart(index, { type: 'text', text: '' });
const thinkingBlock = (index: number) => blockStart(index, { type: 'thinking', thinking: '', signature: '' });
const toolBlock = (index: number, id: string, name: string, input: unknown = {}, type: 'tool_use' | 'server_tool_use' | 'mcp_tool_use' = 'tool_use') =>
  blockStart(index, { type, id, name, input });
const delta = (index: number, piece: AnthropicContentBlockDelta): AnthropicStreamEvent => ({ type: 'content_block_delta', index, delta: piece });
const textDelta = (index: number, text: string) => delta(index, { type: 'text_delta', text });
const jsonDelta = (index: number, partial_json: string) => delta(index, { type: 'input_json_delta', partial_json });
const thinkingDelta = (index: number, thinking: string) => delta(index, { type: 'thinking_delta', thinking });
const signatureDelta = (index: number, signature: string) => delta(index, { type: 'signature_delta', signature });
const blockStop = (index: number): AnthropicStreamEvent => ({ type: 'content_block_stop', index });
const messageDelta = (stop_reason: string, usage: AnthropicUsage = { output_tokens: 5 }, extra: Record<string, unknown> = {}): AnthropicStreamEvent => ({
  type: 'message_delta',
  delta: { stop_reason, stop_sequence: null, ...extra },
  usage,
});
const stop: AnthropicStreamEvent = { type: 'message_stop' };
const ping: AnthropicStreamEvent = { type: 'ping' };
const bad = (value: unknown) => value as AnthropicStreamEvent;

// Agent events out.
const text = (delta: string, messageId = 'msg_1'): AgentEvent => ({ type: EventType.TEXT_MESSAGE_CHUNK, messageId, delta });
const reasoning = (delta: string, messageId = 'msg_1-reasoning-0'): AgentEvent => ({ type: EventType.REASONING_MESSAGE_CHUNK, messageId, delta });
const reasoningStart = (messageId: string, metadata?: Record<string, unknown>): AgentEvent => ({
  type: EventType.REASONING_MESSAGE_START,
  messageId,
  role: 'reasoning',
  ...(metadata === undefined ? {} : { metadata }),
});
const encrypted = (encryptedValue: string, entityId = 'msg_1-reasoning-0'): AgentEvent => ({ type: EventType.REASONING_ENCRYPTED_VALUE, subtype: 'message', entityId, encryptedValue });
const callStart = (toolCallId: string, toolCallName: string, parentMessageId = 'msg_1'): AgentEvent => ({ type: EventType.TOOL_CALL_CHUNK, toolCallId, toolCallName, parentMessageId });
const callArgs = (toolCallId: string, delta: string): AgentEvent => ({ type: EventType.TOOL_CALL_CHUNK, toolCallId, delta });
const result = (toolCallId: string, content: string, anthropic?: Record<string, unknown>): AgentEvent =>
  anthropic === undefined ? { type: EventType.TOOL_CALL_RESULT, toolCallId, content } : { type: EventType.TOOL_CALL_RESULT, toolCallId, content, metadata: { anthropic } };
/** A server tool call as it is sent, whole, when its result comes. */
const serverCall = (toolCallId: string, toolCallName: string, delta: string, anthropic: Record<string, unknown> = { type: 'server_tool_use' }, parentMessageId = 'msg_1'): AgentEvent => ({
  type: EventType.TOOL_CALL_CHUNK,
  toolCallId,
  toolCallName,
  parentMessageId,
  delta,
  metadata: { anthropic },
});
const tokenUsage = (usage: Record<string, unknown>): AgentEvent => ({ type: 'TOKEN_USAGE', usage }) as AgentEvent;

const invalidEvent = (detail: string) => new AguiRxError('INVALID_EVENT', `fromAnthropicMessages received a malformed Messages stream event: ${detail}`);
const connectionCut = 'The connection was probably cut: retry the request, and check that the whole response body is read.';
/** Why the stream (or its message) stopped before the message did, as the errors say it. */
const atEnd = 'no message_delta with a stop_reason, no message_stop';
const atNewMessage = 'a new message_start came before its stop_reason and message_stop';
/** The error of a stream cut inside tool calls (`which`: "tool call 'id' (name), so its arguments are"). */
const cutCall = (which: string, why = atEnd, message = "message 'msg_1'") =>
  new AguiRxError(
    'INCOMPLETE_STREAM',
    `fromAnthropicMessages: the stream ended before ${message} did (${why}) inside ${which} incomplete JSON and the call must not run. The text before it is kept. ${connectionCut}`,
  );
/** The error of a stream cut with no tool call open. */
const cutMessage = (why = atEnd, message = "message 'msg_1'") =>
  new AguiRxError('INCOMPLETE_STREAM', `fromAnthropicMessages: the stream ended before ${message} did (${why}), so the model's output may be cut short. The text before it is kept. ${connectionCut}`);
/** The error of calls whose arguments are not JSON at a stop_reason that says the model was done. */
const brokenCall = (reason: string, which: string, must = 'the call must') =>
  new AguiRxError(
    'INCOMPLETE_STREAM',
    `fromAnthropicMessages: the model said its output was finished (stop_reason: ${reason}), but the arguments of ${which} are not valid JSON, so ${must} not run. The text before it is kept. Retry the request; if it keeps happening, the model (or server) writes broken arguments for this tool: simplify its parameters or use another model.`,
  );

const limitCut = (which: string, limit = 'its max_tokens limit (stop_reason: max_tokens)', advice = 'Raise max_tokens (or ask for a shorter answer) and retry the request.') =>
  new AguiRxError(
    'INCOMPLETE_STREAM',
    `fromAnthropicMessages: the model's output was cut by ${limit} inside ${which} incomplete JSON and the call must not run. The text before it is kept. ${advice}`,
  );

/** Every event the adapter makes of the given inputs. */
function adapt(inputs: readonly AnthropicStreamEvent[], options?: Parameters<typeof fromAnthropicMessages>[0]): Promise<AgentEvent[]> {
  return collect(from(inputs).pipe(fromAnthropicMessages(options)));
}

/** The error the adapter fails with on the given inputs, and what it sent before. */
async function failure(inputs: readonly AnthropicStreamEvent[]): Promise<{ sent: AgentEvent[]; error: unknown }> {
  const sent: AgentEvent[] = [];
  const error = await collect(from(inputs).pipe(fromAnthropicMessages(), map((event) => void sent.push(event)))).then(
    () => undefined,
    (error: unknown) => error,
  );
  return { sent, error };
}

describe('fromAnthropicMessages', () => {
  let testScheduler: TestScheduler;

  beforeEach(() => {
    testScheduler = createTestScheduler();
  });

  describe('as an operator', () => {
    it('should turn text into text chunks, a tool_use block into tool call chunks, and usage into TOKEN_USAGE', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const values: Marbles = {
          s: start(counts),
          b: textBlock(0),
          t: textDelta(0, 'Hi'),
          p: blockStop(0),
          u: toolBlock(1, 'toolu_1', 'search'),
          x: jsonDelta(1, '{"q":1}'),
          q: blockStop(1),
          d: messageDelta('tool_use'),
          z: stop,
          T: text('Hi'),
          K: callStart('toolu_1', 'search'),
          A: callArgs('toolu_1', '{"q":1}'),
          U: tokenUsage({ inputTokens: 10, outputTokens: 5, totalTokens: 15, model: 'claude-test' }),
        };
        // prettier-ignore
        const e1 =  cold('-s-b-t-p-u-x-q-d-z-|', values);
        // prettier-ignore
        const e1subs =   '^------------------!';
        // prettier-ignore
        const expected = '-----T---K-A-----U-|';

        expectObservable(e1.pipe(fromAnthropicMessages())).toBe(expected, values);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should send the usage it holds before passing the source error on', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const error = new Error('ECONNRESET');
        const values: Marbles = {
          s: start({ input_tokens: 3, output_tokens: 1 }),
          U: tokenUsage({ inputTokens: 3, outputTokens: 1, totalTokens: 4, model: 'claude-test' }),
        };
        // prettier-ignore
        const e1 =  cold('--s--#   ', values, error);
        // prettier-ignore
        const e1subs =   '^----!   ';
        // prettier-ignore
        const expected = '-----(U#)';

        expectObservable(e1.pipe(fromAnthropicMessages())).toBe(expected, values, error);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should complete when the source is empty', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        // prettier-ignore
        const e1 = cold<AnthropicStreamEvent>('|   ');
        // prettier-ignore
        const e1subs =                        '(^!)';
        // prettier-ignore
        const expected =                      '|   ';

        expectObservable(e1.pipe(fromAnthropicMessages())).toBe(expected);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should not complete when the source never completes', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        // prettier-ignore
        const e1 = cold<AnthropicStreamEvent>('-');
        // prettier-ignore
        const e1subs =                        '^';
        // prettier-ignore
        const expected =                      '-';

        expectObservable(e1.pipe(fromAnthropicMessages())).toBe(expected);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should pass an immediate source error on', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        // prettier-ignore
        const e1 = cold<AnthropicStreamEvent>('#   ');
        // prettier-ignore
        const e1subs =                        '(^!)';
        // prettier-ignore
        const expected =                      '#   ';

        expectObservable(e1.pipe(fromAnthropicMessages())).toBe(expected);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should allow unsubscribing early and explicitly, sending nothing on teardown', () =>
      testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
        const values: Marbles = { s: start(), b: textBlock(0), t: textDelta(0, 'Hi'), T: text('Hi') };
        // prettier-ignore
        const e1 =   hot('-s-b-t----|', values);
        // prettier-ignore
        const unsub =    '-------!   ';
        // prettier-ignore
        const e1subs =   '^------!   ';
        // prettier-ignore
        const expected = '-----T--   ';

        expectObservable(e1.pipe(fromAnthropicMessages()), unsub).toBe(expected, values);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should not break unsubscription chains when unsubscribed explicitly', () =>
      testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
        const values: Marbles = { s: start(), b: textBlock(0), t: textDelta(0, 'Hi'), T: text('Hi') };
        // prettier-ignore
        const e1 =   hot('-s-b-t----|', values);
        // prettier-ignore
        const unsub =    '-------!   ';
        // prettier-ignore
        const e1subs =   '^------!   ';
        // prettier-ignore
        const expected = '-----T--   ';

        const result = e1.pipe(
          mergeMap((input) => of(input)),
          fromAnthropicMessages(),
          map((event) => event),
          mergeMap((event) => of(event)),
        );

        expectObservable(result, unsub).toBe(expected, values);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should stop a synchronous source when take has what it needs', () =>
      testScheduler.run(({ expectObservable }) => {
        const values: Marbles = { T: text('a'), S: text('b') };
        // prettier-ignore
        const expected = '(TS|)';

        let read = 0;
        const source$ = from([start(), textBlock(0), textDelta(0, 'a'), textDelta(0, 'b'), textDelta(0, 'c'), blockStop(0), stop]).pipe(map((input) => (read++, input)));

        expectObservable(source$.pipe(fromAnthropicMessages(), take(2))).toBe(expected, values);
        testScheduler.flush();
        expect(read).toBe(4);
      }));

    it('should keep state per subscription: a late subscriber knows no block it did not see open', () =>
      testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
        const values: Marbles = { s: start(), b: textBlock(0), t: textDelta(0, 'Hi'), z: stop, T: text('Hi') };
        const error = invalidEvent('content_block_delta for block 0, which no content_block_start opened (or which is closed). Is the stream cut or reordered?');
        // prettier-ignore
        const e1 =   hot('-s-b---t-z|', values);
        // prettier-ignore
        const sub2 =     '-----^     ';
        // prettier-ignore
        const e1subs = [ '^---------!',
                         '-----^-!   '];
        // prettier-ignore
        const expected1 = '-------T--|';
        // prettier-ignore
        const expected2 = '-------#   ';

        const result = e1.pipe(fromAnthropicMessages());

        expectObservable(result).toBe(expected1, values);
        expectObservable(result, sub2).toBe(expected2, values, error);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should start afresh on retry: the blocks of a failed attempt are forgotten', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const values: Marbles = { u: toolBlock(0, 'toolu_1', 'search'), q: blockStop(0), z: stop, K: callStart('toolu_1', 'search', 'm-1'), L: callStart('toolu_1', 'search', 'm-2'), A: callArgs('toolu_1', '{}') };
        // prettier-ignore
        const first =  cold('-u-#        ', values);
        // prettier-ignore
        const second = cold('   -u-q-z-| ', values);
        // prettier-ignore
        const firstSubs =   '^--!        ';
        // prettier-ignore
        const secondSubs =  '---^------! ';
        // prettier-ignore
        const expected =    '-K--L-A---| ';

        let attempt = 0;
        const source$ = defer(() => (attempt++ === 0 ? first : second));

        expectObservable(source$.pipe(fromAnthropicMessages({ generateId: sequentialIds('m-') }), retry(1))).toBe(expected, values);
        expectSubscriptions(first.subscriptions).toBe(firstSubs);
        expectSubscriptions(second.subscriptions).toBe(secondSubs);
      }));

    it('should fail with INCOMPLETE_STREAM when the source completes inside a tool_use block, after the usage it holds', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values: Marbles = {
          s: start(counts),
          u: toolBlock(0, 'toolu_1', 'book'),
          x: jsonDelta(0, '{"to": "Cr'),
          K: callStart('toolu_1', 'book'),
          A: callArgs('toolu_1', '{"to": "Cr'),
          U: tokenUsage({ inputTokens: 10, outputTokens: 1, totalTokens: 11, model: 'claude-test' }),
        };
        // prettier-ignore
        const e1 =  cold('-s-u-x-|   ', values);
        // prettier-ignore
        const expected = '---K-A-(U#)';

        expectObservable(e1.pipe(fromAnthropicMessages())).toBe(expected, values, cutCall("tool call 'toolu_1' (book), so its arguments are"));
      }));

    it('should fail at message_delta max_tokens inside a tool call, after the usage it brings', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const values: Marbles = {
          s: start(counts),
          u: toolBlock(0, 'toolu_a', 'book'),
          x: jsonDelta(0, '{"day": "Tue'),
          d: messageDelta('max_tokens', { output_tokens: 9 }),
          z: stop,
          k: callStart('toolu_a', 'book'),
          a: callArgs('toolu_a', '{"day": "Tue'),
          U: tokenUsage({ inputTokens: 10, outputTokens: 9, totalTokens: 19, model: 'claude-test' }),
        };
        // prettier-ignore
        const e1 =  cold('--s--u--x--d--z--|', values);
        // prettier-ignore
        const e1subs =   '^----------!       ';
        // prettier-ignore
        const expected = '-----k--a--(U#)   ';

        expectObservable(e1.pipe(fromAnthropicMessages())).toBe(expected, values, limitCut("tool call 'toolu_a' (book), so its arguments are"));
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should fail with PROVIDER_ERROR on an error event, after what came before and the usage it holds', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const values: Marbles = {
          s: start(counts),
          b: textBlock(0),
          t: textDelta(0, 'Hi'),
          e: bad({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
          T: text('Hi'),
          U: tokenUsage({ inputTokens: 10, outputTokens: 1, totalTokens: 11, model: 'claude-test' }),
        };
        const error = new AguiRxError(
          'PROVIDER_ERROR',
          "Anthropic failed mid-stream: Overloaded (overloaded_error). Retry the request (overloaded_error and api_error are usually transient); if it keeps failing, check the request and Anthropic's status page.",
        );
        // prettier-ignore
        const e1 =  cold('-s-b-t-e-|', values);
        // prettier-ignore
        const e1subs =   '^------!  ';
        // prettier-ignore
        const expected = '-----T-(U#)';

        expectObservable(e1.pipe(fromAnthropicMessages())).toBe(expected, values, error);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));
  });

  describe('text', () => {
    it('should name the message after message.id, in every text block, and send nothing for empty pieces', async () => {
      expect(
        await adapt([start(), textBlock(0), textDelta(0, ''), textDelta(0, 'One'), blockStop(0), toolBlock(1, 't1', 'x'), blockStop(1), textBlock(2), textDelta(2, 'Two'), blockStop(2), stop]),
      ).toEqual([text('One'), callStart('t1', 'x'), callArgs('t1', '{}'), text('Two')]);
    });

    it('should send the text a block starts with', async () => {
      expect(await adapt([start(), blockStart(0, { type: 'text', text: 'Pre' }), textDelta(0, 'fix'), blockStop(0), stop])).toEqual([text('Pre'), text('fix')]);
    });

    it('should keep the text of a message cut short by max_tokens', async () => {
      expect(await adapt([start(counts), textBlock(0), textDelta(0, 'The storm hit'), blockStop(0), messageDelta('max_tokens', { output_tokens: 4 }), stop])).toEqual([
        text('The storm hit'),
        tokenUsage({ inputTokens: 10, outputTokens: 4, totalTokens: 14, model: 'claude-test' }),
      ]);
    });

    it('should mint a message id when content comes without message_start, or message.id is empty', async () => {
      expect(await adapt([textBlock(0), textDelta(0, 'a'), blockStop(0), stop, start({}, ''), textBlock(0), textDelta(0, 'b'), blockStop(0), stop], { generateId: sequentialIds('m-') })).toEqual([
        text('a', 'm-1'),
        text('b', 'm-2'),
      ]);
    });

    it('should start a new message at each message_start', async () => {
      expect(await adapt([start(counts), textBlock(0), textDelta(0, 'One'), blockStop(0), stop, start({}, 'msg_2'), textBlock(0), textDelta(0, 'Two'), blockStop(0), stop])).toEqual([
        text('One'),
        tokenUsage({ inputTokens: 10, outputTokens: 1, totalTokens: 11, model: 'claude-test' }),
        text('Two', 'msg_2'),
      ]);
    });
  });

  describe('thinking', () => {
    it('should make each thinking block a reasoning message of its own, and its signature its encrypted value', async () => {
      expect(
        await adapt([
          start({}),
          thinkingBlock(0),
          thinkingDelta(0, 'Hmm'),
          thinkingDelta(0, ', yes.'),
          thinkingDelta(0, ''),
          signatureDelta(0, 'EqQBsig'),
          blockStop(0),
          textBlock(1),
          textDelta(1, 'Yes'),
          blockStop(1),
          thinkingBlock(2),
          thinkingDelta(2, 'More'),
          signatureDelta(2, 'EqQBsig2'),
          blockStop(2),
          stop,
        ]),
      ).toEqual([reasoning('Hmm'), reasoning(', yes.'), encrypted('EqQBsig'), text('Yes'), reasoning('More', 'msg_1-reasoning-2'), encrypted('EqQBsig2', 'msg_1-reasoning-2')]);
    });

    it('should open the reasoning message explicitly when a signature comes without thinking text', async () => {
      expect(await adapt([start({}), thinkingBlock(0), thinkingDelta(0, ''), signatureDelta(0, 'EqQBsig'), blockStop(0), stop])).toEqual([
        reasoningStart('msg_1-reasoning-0'),
        encrypted('EqQBsig'),
      ]);
    });

    it('should make a redacted_thinking block an empty reasoning message whose encrypted value is its data', async () => {
      expect(await adapt([start({}), blockStart(0, { type: 'redacted_thinking', data: 'EmwKredacted' }), blockStop(0), stop])).toEqual([
        reasoningStart('msg_1-reasoning-0', { anthropic: { type: 'redacted_thinking' } }),
        encrypted('EmwKredacted'),
      ]);
    });

    it('should give the client reasoning messages that carry their signatures, under toAgui', async () => {
      const run = await runWithOracle(
        from([
          start({}),
          blockStart(0, { type: 'redacted_thinking', data: 'EmwKredacted' }),
          blockStop(0),
          thinkingBlock(1),
          signatureDelta(1, 'EqQBempty'),
          blockStop(1),
          thinkingBlock(2),
          thinkingDelta(2, 'Think'),
          signatureDelta(2, 'EqQBsig'),
          blockStop(2),
          textBlock(3),
          textDelta(3, 'Answer'),
          blockStop(3),
          stop,
        ]).pipe(fromAnthropicMessages(), toAgui({ threadId: 't1', runId: 'r1' })),
      );
      expect(run.messages).toEqual([
        { id: 'msg_1-reasoning-0', role: 'reasoning', content: '', encryptedValue: 'EmwKredacted', metadata: { anthropic: { type: 'redacted_thinking' } } },
        { id: 'msg_1-reasoning-1', role: 'reasoning', content: '', encryptedValue: 'EqQBempty' },
        { id: 'msg_1-reasoning-2', role: 'reasoning', content: 'Think', encryptedValue: 'EqQBsig' },
        { id: 'msg_1', role: 'assistant', content: 'Answer' },
      ]);
    });
  });

  describe('tool calls', () => {
    it('should follow two tool_use blocks of one message, skipping empty fragments', async () => {
      expect(
        await adapt([
          start(),
          toolBlock(0, 'toolu_a', 'tides'),
          jsonDelta(0, ''),
          jsonDelta(0, '{"harbour":'),
          jsonDelta(0, '"Oban"}'),
          blockStop(0),
          toolBlock(1, 'toolu_b', 'wind'),
          jsonDelta(1, '{"at":1}'),
          blockStop(1),
          stop,
        ]),
      ).toEqual([callStart('toolu_a', 'tides'), callArgs('toolu_a', '{"harbour":'), callArgs('toolu_a', '"Oban"}'), callStart('toolu_b', 'wind'), callArgs('toolu_b', '{"at":1}')]);
    });

    it('should give a tool without arguments {}, with no fragment or only empty ones', async () => {
      expect(await adapt([start(), toolBlock(0, 'toolu_a', 'now'), blockStop(0), toolBlock(1, 'toolu_b', 'now'), jsonDelta(1, ''), blockStop(1), stop])).toEqual([
        callStart('toolu_a', 'now'),
        callArgs('toolu_a', '{}'),
        callStart('toolu_b', 'now'),
        callArgs('toolu_b', '{}'),
      ]);
    });

    it('should send the input a block starts with when no fragment follows', async () => {
      // (A server call's input is sent with its result: see 'server tools'.)
      expect(await adapt([start(), toolBlock(0, 'toolu_1', 'ferry', { route: 'oban' }), blockStop(0), stop])).toEqual([
        callStart('toolu_1', 'ferry'),
        callArgs('toolu_1', '{"route":"oban"}'),
      ]);
    });

    it('should finish the open calls at message_stop', async () => {
      expect(await adapt([start(counts), toolBlock(0, 'toolu_a', 'now'), stop])).toEqual([
        callStart('toolu_a', 'now'),
        callArgs('toolu_a', '{}'),
        tokenUsage({ inputTokens: 10, outputTokens: 1, totalTokens: 11, model: 'claude-test' }),
      ]);
    });

    it('should fail when a new message starts while a tool_use block is open', async () => {
      const { sent, error } = await failure([start(), toolBlock(0, 'toolu_a', 'book'), jsonDelta(0, '{"a"'), start({}, 'msg_2')]);
      expect(sent).toEqual([callStart('toolu_a', 'book'), callArgs('toolu_a', '{"a"')]);
      expect(error).toEqual(cutCall("tool call 'toolu_a' (book), so its arguments are", atNewMessage));
    });

    it('should end a truncated call with RUN_ERROR under toAgui, not RUN_FINISHED', async () => {
      const events = await collect(from([start(counts), toolBlock(0, 'toolu_a', 'server_tool', {}, 'server_tool_use'), jsonDelta(0, '{"q')]).pipe(fromAnthropicMessages(), toAgui({ threadId: 't1', runId: 'r1' })));
      expect(terminals(events)).toEqual([
        {
          type: EventType.RUN_ERROR,
          code: 'INCOMPLETE_STREAM',
          message: cutCall("tool call 'toolu_a' (server_tool), so its arguments are").message,
          usage: [{ inputTokens: 10, outputTokens: 1, totalTokens: 11, model: 'claude-test' }],
        },
      ]);
    });
  });

  describe('a tool call cut by max_tokens', () => {
    it('should fail with INCOMPLETE_STREAM naming the call when its block gets no content_block_stop, after the text, fragments and usage', async () => {
      const { sent, error } = await failure([
        start(counts),
        textBlock(0),
        textDelta(0, 'Writing it down.'),
        blockStop(0),
        toolBlock(1, 'toolu_a', 'write_notes'),
        jsonDelta(1, ''),
        jsonDelta(1, '{"text": "Tides were'),
        messageDelta('max_tokens', { output_tokens: 30 }),
        stop,
      ]);
      expect(error).toEqual(limitCut("tool call 'toolu_a' (write_notes), so its arguments are"));
      expect(sent).toEqual([
        text('Writing it down.'),
        callStart('toolu_a', 'write_notes'),
        callArgs('toolu_a', '{"text": "Tides were'),
        tokenUsage({ inputTokens: 10, outputTokens: 30, totalTokens: 40, model: 'claude-test' }),
      ]);
    });

    it('should fail the same way when the cut block did get its content_block_stop', async () => {
      const { sent, error } = await failure([start(counts), toolBlock(0, 'toolu_a', 'save'), jsonDelta(0, '{"days": [1, '), blockStop(0), messageDelta('max_tokens', { output_tokens: 30 }), stop]);
      expect(error).toEqual(limitCut("tool call 'toolu_a' (save), so its arguments are"));
      expect(sent).toEqual([callStart('toolu_a', 'save'), callArgs('toolu_a', '{"days": [1, '), tokenUsage({ inputTokens: 10, outputTokens: 30, totalTokens: 40, model: 'claude-test' })]);
    });

    it('should count a call cut before its first fragment as cut, and name only the cut calls', async () => {
      const { error } = await failure([
        start(),
        toolBlock(0, 'toolu_a', 'one'),
        jsonDelta(0, '{"a": 1}'),
        blockStop(0),
        toolBlock(1, 'toolu_none', 'now', {}, 'server_tool_use'),
        blockStop(1),
        toolBlock(2, 'toolu_b', 'two'),
        messageDelta('max_tokens'),
      ]);
      expect(error).toEqual(limitCut("tool call 'toolu_b' (two), so its arguments are"));
    });

    it('should name every call the cut went through, and say so for the context window limit too', async () => {
      const { error } = await failure([start(), toolBlock(0, 'toolu_a', 'one'), jsonDelta(0, '{"a'), toolBlock(1, 'toolu_b', 'two'), jsonDelta(1, '['), messageDelta('model_context_window_exceeded')]);
      expect(error).toEqual(
        limitCut(
          "tool calls 'toolu_a' (one), 'toolu_b' (two), so their arguments are",
          "the model's context window (stop_reason: model_context_window_exceeded)",
          'Shorten the conversation (or its tool results) and retry the request.',
        ),
      );
    });

    it('should keep a call whose arguments are whole', async () => {
      expect(await adapt([start(), toolBlock(0, 'toolu_a', 'one'), jsonDelta(0, '{"a": 1}'), messageDelta('max_tokens', {}), stop])).toEqual([callStart('toolu_a', 'one'), callArgs('toolu_a', '{"a": 1}')]);
    });

    it('should end the run with RUN_ERROR carrying the usage, and leave the text and what was streamed of the call in the client', async () => {
      const run = await runWithOracle(
        from([start(counts), textBlock(0), textDelta(0, 'Saving.'), blockStop(0), toolBlock(1, 'toolu_a', 'save'), jsonDelta(1, '{"day": "Tue'), messageDelta('max_tokens', { output_tokens: 30 }), stop]).pipe(
          fromAnthropicMessages(),
          toAgui({ threadId: 't1', runId: 'r1' }),
        ),
      );
      expect(run.events.at(-1)).toEqual({
        type: EventType.RUN_ERROR,
        code: 'INCOMPLETE_STREAM',
        message: limitCut("tool call 'toolu_a' (save), so its arguments are").message,
        usage: [{ inputTokens: 10, outputTokens: 30, totalTokens: 40, model: 'claude-test' }],
      });
      expect(run.messages).toEqual([
        expect.objectContaining({ role: 'assistant', id: 'msg_1', content: 'Saving.', toolCalls: [{ id: 'toolu_a', type: 'function', function: { name: 'save', arguments: '{"day": "Tue' } }] }),
      ]);
    });
  });

  describe('a stream cut before its message ended', () => {
    const usage = { inputTokens: 10, outputTokens: 1, totalTokens: 11, model: 'claude-test' };

    it('should end in RUN_ERROR naming the call when the stream stops after a tool_use block whose arguments are cut, keeping the text and usage', async () => {
      const inputs = [start(counts), textBlock(0), textDelta(0, 'Looking it up.'), blockStop(0), toolBlock(1, 'toolu_1', 'search'), jsonDelta(1, '{"q":'), blockStop(1)];
      const { sent, error } = await failure(inputs);
      expect(error).toEqual(cutCall("tool call 'toolu_1' (search), so its arguments are"));
      expect(sent).toEqual([text('Looking it up.'), callStart('toolu_1', 'search'), callArgs('toolu_1', '{"q":'), tokenUsage(usage)]);
      const run = await runWithOracle(from(inputs).pipe(fromAnthropicMessages(), toAgui({ threadId: 't1', runId: 'r1' })));
      expect(run.events.at(-1)).toEqual({ type: EventType.RUN_ERROR, code: 'INCOMPLETE_STREAM', message: error instanceof Error ? error.message : '', usage: [usage] });
      expect(run.messages).toEqual([
        expect.objectContaining({ role: 'assistant', id: 'msg_1', content: 'Looking it up.', toolCalls: [{ id: 'toolu_1', type: 'function', function: { name: 'search', arguments: '{"q":' } }] }),
      ]);
    });

    it('should end in RUN_ERROR saying the message is incomplete when no call is open, keeping the text and whole calls', async () => {
      const inputs = [start(counts), toolBlock(0, 'toolu_1', 'search'), jsonDelta(0, '{"q": 1}'), blockStop(0), textBlock(1), textDelta(1, 'High water is at')];
      const { sent, error } = await failure(inputs);
      expect(error).toEqual(cutMessage());
      expect(sent).toEqual([callStart('toolu_1', 'search'), callArgs('toolu_1', '{"q": 1}'), text('High water is at'), tokenUsage(usage)]);
      const run = await runWithOracle(from(inputs).pipe(fromAnthropicMessages(), toAgui({ threadId: 't1', runId: 'r1' })));
      expect(run.events.at(-1)).toEqual({ type: EventType.RUN_ERROR, code: 'INCOMPLETE_STREAM', message: cutMessage().message, usage: [usage] });
      expect(run.messages).toEqual([expect.objectContaining({ role: 'assistant', id: 'msg_1', content: 'High water is at' })]);
    });

    it('should count content without message_start, and a message_start with no content, as a message begun', async () => {
      expect((await failure([start(counts)])).error).toEqual(cutMessage());
      const { error } = await collect(from([textBlock(0), textDelta(0, 'a')]).pipe(fromAnthropicMessages({ generateId: sequentialIds('m-') }))).then(
        () => ({ error: undefined }),
        (error: unknown) => ({ error }),
      );
      expect(error).toEqual(cutMessage(atEnd, "message 'm-1'"));
    });

    it('should fail when a new message starts before the previous one ended, with no call open', async () => {
      const { sent, error } = await failure([start(), textBlock(0), textDelta(0, 'One'), blockStop(0), start({}, 'msg_2'), textBlock(0), textDelta(0, 'Two')]);
      expect(error).toEqual(cutMessage(atNewMessage));
      expect(sent).toEqual([text('One')]);
    });

    it('should accept a message whose stop_reason came but whose message_stop did not, ending its open calls', async () => {
      const inputs = [start(counts), toolBlock(0, 'toolu_a', 'now'), messageDelta('tool_use', { output_tokens: 4 })];
      expect(await adapt(inputs)).toEqual([callStart('toolu_a', 'now'), callArgs('toolu_a', '{}'), tokenUsage({ ...usage, outputTokens: 4, totalTokens: 14 })]);
      const run = await runWithOracle(from(inputs).pipe(fromAnthropicMessages(), toAgui({ threadId: 't1', runId: 'r1' })));
      expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
      expect(run.messages).toEqual([expect.objectContaining({ role: 'assistant', id: 'msg_1', toolCalls: [{ id: 'toolu_a', type: 'function', function: { name: 'now', arguments: '{}' } }] })]);
    });

    it('should complete with nothing for a stream that holds no message', async () => {
      expect(await adapt([ping, ping])).toEqual([]);
    });
  });

  describe('a tool call whose arguments are not JSON when the model says it is done', () => {
    it('should end in RUN_ERROR naming the call, after the text, fragments and usage, for any stop_reason that is not a cut', async () => {
      const inputs = [start(counts), textBlock(0), textDelta(0, 'Saving.'), blockStop(0), toolBlock(1, 'toolu_a', 'save'), jsonDelta(1, '{"day": '), blockStop(1), messageDelta('tool_use', { output_tokens: 30 }), stop];
      const { sent, error } = await failure(inputs);
      expect(error).toEqual(brokenCall('tool_use', "tool call 'toolu_a' (save)"));
      expect(sent).toEqual([text('Saving.'), callStart('toolu_a', 'save'), callArgs('toolu_a', '{"day": '), tokenUsage({ inputTokens: 10, outputTokens: 30, totalTokens: 40, model: 'claude-test' })]);
      const run = await runWithOracle(from(inputs).pipe(fromAnthropicMessages(), toAgui({ threadId: 't1', runId: 'r1' })));
      expect(run.events.at(-1)).toEqual({
        type: EventType.RUN_ERROR,
        code: 'INCOMPLETE_STREAM',
        message: brokenCall('tool_use', "tool call 'toolu_a' (save)").message,
        usage: [{ inputTokens: 10, outputTokens: 30, totalTokens: 40, model: 'claude-test' }],
      });
      expect(run.messages).toEqual([
        expect.objectContaining({ role: 'assistant', id: 'msg_1', content: 'Saving.', toolCalls: [{ id: 'toolu_a', type: 'function', function: { name: 'save', arguments: '{"day": ' } }] }),
      ]);
      // end_turn, with the block still open, and several calls.
      expect((await failure([start(), toolBlock(0, 'toolu_a', 'one'), jsonDelta(0, '{"a": '), toolBlock(1, 'toolu_b', 'two'), jsonDelta(1, '[1,'), messageDelta('end_turn', {}), stop])).error).toEqual(
        brokenCall('end_turn', "tool calls 'toolu_a' (one), 'toolu_b' (two)", 'the calls must'),
      );
    });

    it('should take a call with no fragment as a call without arguments, not a broken one', async () => {
      expect(await adapt([start(), toolBlock(0, 'toolu_a', 'now'), jsonDelta(0, ''), messageDelta('tool_use', {}), stop])).toEqual([callStart('toolu_a', 'now'), callArgs('toolu_a', '{}')]);
    });

    it('should say a refusal cut the call, after the refusal event', async () => {
      const { sent, error } = await failure([start(), toolBlock(0, 'toolu_a', 'one'), jsonDelta(0, '{"a": '), messageDelta('refusal', {}), stop]);
      expect(error).toEqual(limitCut("tool call 'toolu_a' (one), so its arguments are", 'a refusal (stop_reason: refusal)', 'The model declined to go on (see the anthropic.refusal event): rephrase the request.'));
      expect(sent.at(-1)).toEqual({ type: EventType.CUSTOM, name: 'anthropic.refusal', value: { messageId: 'msg_1' } });
    });
  });

  describe('server tool results', () => {
    it('should make every *_tool_result block with a tool_use_id a result after its held call, its content as JSON text unless a string, the blocks marked', async () => {
      const search = [{ type: 'web_search_result', url: 'https://example.com', title: 'Tides' }];
      const { onDiagnostic, messages } = diagnosticsSink();
      expect(
        await adapt(
          [
          start(),
          toolBlock(0, 'srvtoolu_1', 'web_search', {}, 'server_tool_use'),
          jsonDelta(0, '{"query":"tides"}'),
          blockStop(0),
          blockStart(1, { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: search }),
          blockStop(1),
          blockStart(2, { type: 'mcp_tool_result', tool_use_id: 'mcptoolu_1', is_error: false, content: 'plain' }),
          blockStop(2),
          blockStart(3, { type: 'code_execution_tool_result', tool_use_id: 'srvtoolu_2', content: { type: 'code_execution_result', stdout: '4' } }),
          blockStart(4, { type: 'web_fetch_tool_result' } as never),
          blockStart(5, { type: 'container_upload', file_id: 'f1' } as never),
          delta(5, { type: 'citations_delta', citation: {} }),
          stop,
          ],
          { onDiagnostic },
        ),
      ).toEqual([
        serverCall('srvtoolu_1', 'web_search', '{"query":"tides"}'),
        result('srvtoolu_1', JSON.stringify(search), { type: 'web_search_tool_result', contentFormat: 'json' }),
        result('mcptoolu_1', 'plain', { type: 'mcp_tool_result', is_error: false }),
        result('srvtoolu_2', '{"type":"code_execution_result","stdout":"4"}', { type: 'code_execution_tool_result', contentFormat: 'json' }),
      ]);
      // A result that names no call, and a block with no AG-UI form, are dropped with a diagnostic; the dropped block's delta goes with it.
      expect(messages).toEqual([
        "fromAnthropicMessages dropped a 'web_fetch_tool_result' content block (content_block_start 4: content_block): it names no tool_use_id, so it answers no tool call and has no AG-UI form. Later 'web_fetch_tool_result' blocks of this stream are dropped without another warning.",
        "fromAnthropicMessages dropped a 'container_upload' content block (content_block_start 5: content_block): it has no AG-UI form. Later 'container_upload' blocks of this stream are dropped without another warning.",
      ]);
    });
  });

  describe('server tools', () => {
    const search = [{ type: 'web_search_result', title: 'Yr', url: 'https://yr.no', encrypted_content: 'Eq..' }];
    /** A message in which Anthropic runs a tool: text, the call, its result block, the answer. */
    const served = (callBlock: AnthropicContentBlock, args: string, resultBlock: AnthropicContentBlock, stopReason = 'end_turn'): AnthropicStreamEvent[] => [
      start(counts),
      textBlock(0),
      textDelta(0, "I'll look that up."),
      blockStop(0),
      blockStart(1, callBlock),
      jsonDelta(1, args),
      blockStop(1),
      blockStart(2, resultBlock),
      blockStop(2),
      textBlock(3),
      textDelta(3, 'It is sunny in Oslo.'),
      blockStop(3),
      messageDelta(stopReason),
      stop,
    ];
    const user = { id: 'u1', role: 'user' as const, content: 'Weather in Oslo?' };

    it("should put the text after a server tool's result in a new assistant message, so that the transcript reads call, result, answer, and Anthropic gets its blocks back in that order", async () => {
      const run = await runWithOracle(
        from(
          served(
            { type: 'server_tool_use', id: 'srvtoolu_01', name: 'web_search', input: {} },
            '{"query":"weather oslo"}',
            { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_01', content: search },
          ),
        ).pipe(fromAnthropicMessages(), toAgui({ threadId: 't1', runId: 'r1', generateId: sequentialIds('t-') })),
      );
      expect(run.events.filter((event) => event.type === EventType.TEXT_MESSAGE_START).map((event) => (event as unknown as { messageId: string }).messageId)).toEqual(['msg_1', 'msg_1-3']);
      expect(run.messages).toEqual([
        {
          id: 'msg_1',
          role: 'assistant',
          content: "I'll look that up.",
          toolCalls: [{ id: 'srvtoolu_01', type: 'function', function: { name: 'web_search', arguments: '{"query":"weather oslo"}' }, metadata: { anthropic: { type: 'server_tool_use' } } }],
        },
        { id: 't-1', role: 'tool', toolCallId: 'srvtoolu_01', content: JSON.stringify(search), metadata: { anthropic: { type: 'web_search_tool_result', contentFormat: 'json' } } },
        { id: 'msg_1-3', role: 'assistant', content: 'It is sunny in Oslo.' },
      ]);
      // Anthropic ran the call: nothing is left for the client.
      expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'success' } });
      expect(run.events.at(-1)).not.toHaveProperty('outcome.pendingToolCallIds');
      const warnings: string[] = [];
      expect(toAnthropicMessages([user, ...run.messages], { onWarning: (warning) => void warnings.push(warning) }).messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'Weather in Oslo?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: "I'll look that up." },
            { type: 'server_tool_use', id: 'srvtoolu_01', name: 'web_search', input: { query: 'weather oslo' } },
            { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_01', content: search },
            { type: 'text', text: 'It is sunny in Oslo.' },
          ],
        },
      ]);
      expect(warnings).toEqual([]);
    });

    it.each([
      ['web_fetch', 'web_fetch_tool_result', { type: 'web_fetch_result', url: 'https://yr.no', content: { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Sunny' } } }],
      ['code_execution', 'code_execution_tool_result', { type: 'code_execution_result', stdout: '4', stderr: '', return_code: 0, content: [] }],
      ['bash_code_execution', 'bash_code_execution_tool_result', { type: 'bash_code_execution_result', stdout: 'ok', stderr: '', return_code: 0, content: [] }],
      ['text_editor_code_execution', 'text_editor_code_execution_tool_result', { type: 'text_editor_code_execution_view_result', file_type: 'text', content: 'x = 1' }],
      ['tool_search_tool_bm25', 'tool_search_tool_result', { type: 'tool_search_tool_search_result', tool_references: [{ type: 'tool_reference', tool_name: 'get_weather' }] }],
    ])('should do the same for %s and its %s', async (name, resultType, content) => {
      const run = await runWithOracle(
        from(served({ type: 'server_tool_use', id: 'srvtoolu_02', name, input: {} }, '{"x":1}', { type: resultType, tool_use_id: 'srvtoolu_02', content } as AnthropicContentBlock)).pipe(
          fromAnthropicMessages(),
          toAgui({ threadId: 't1', runId: 'r1' }),
        ),
      );
      expect(run.messages.map((message) => [message.role, message.id === 'msg_1' || message.id === 'msg_1-3' ? message.id : 'tool'])).toEqual([
        ['assistant', 'msg_1'],
        ['tool', 'tool'],
        ['assistant', 'msg_1-3'],
      ]);
      expect(toAnthropicMessages(run.messages).messages).toEqual([
        {
          role: 'assistant',
          content: [
            { type: 'text', text: "I'll look that up." },
            { type: 'server_tool_use', id: 'srvtoolu_02', name, input: { x: 1 } },
            { type: resultType, tool_use_id: 'srvtoolu_02', content },
            { type: 'text', text: 'It is sunny in Oslo.' },
          ],
        },
      ]);
    });

    it("should carry an MCP call's server_name and its result's is_error and text content, and give a client call after the result to the new message", async () => {
      const inputs: AnthropicStreamEvent[] = [
        start(counts),
        blockStart(0, { type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'ferry_times', server_name: 'calmac', input: { route: 'oban' } }),
        blockStop(0),
        blockStart(1, { type: 'mcp_tool_result', tool_use_id: 'mcptoolu_1', is_error: false, content: '[1,2]' }),
        blockStop(1),
        toolBlock(2, 'toolu_book', 'book_ferry'),
        jsonDelta(2, '{"sailing":"15:00"}'),
        blockStop(2),
        messageDelta('tool_use'),
        stop,
      ];
      const events = await adapt(inputs);
      expect(events.slice(0, 4)).toEqual([
        serverCall('mcptoolu_1', 'ferry_times', '{"route":"oban"}', { type: 'mcp_tool_use', server_name: 'calmac' }),
        result('mcptoolu_1', '[1,2]', { type: 'mcp_tool_result', is_error: false }),
        callStart('toolu_book', 'book_ferry', 'msg_1-2'),
        callArgs('toolu_book', '{"sailing":"15:00"}'),
      ]);
      const run = await runWithOracle(from(inputs).pipe(fromAnthropicMessages(), toAgui({ threadId: 't1', runId: 'r1' })));
      // Only the client's own call is left for it to run.
      expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'success', pendingToolCallIds: ['toolu_book'] } });
      const answered: Message[] = [...run.messages, { id: 't-book', role: 'tool', toolCallId: 'toolu_book', content: 'Booked.' }];
      expect(toAnthropicMessages(answered).messages).toEqual([
        {
          role: 'assistant',
          content: [
            { type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'ferry_times', server_name: 'calmac', input: { route: 'oban' } },
            // Text that reads as JSON stays text: the block's content was a string.
            { type: 'mcp_tool_result', tool_use_id: 'mcptoolu_1', is_error: false, content: '[1,2]' },
            { type: 'tool_use', id: 'toolu_book', name: 'book_ferry', input: { sailing: '15:00' } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_book', content: 'Booked.' }] },
      ]);
    });

    // A turn Anthropic paused (stop_reason: pause_turn) after the server call, before it ran the tool.
    const paused: AnthropicStreamEvent[] = [
      start(counts),
      textBlock(0),
      textDelta(0, "I'll search for that."),
      blockStop(0),
      toolBlock(1, 'srvtoolu_01', 'web_search', {}, 'server_tool_use'),
      jsonDelta(1, '{"query":"weather oslo"}'),
      blockStop(1),
      messageDelta('pause_turn'),
      stop,
    ];

    it('should leave a server call whose result never comes (a paused turn) out of the run, pending for no one, and say so', async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      const run = await runWithOracle(from(paused).pipe(fromAnthropicMessages({ onDiagnostic }), toAgui({ threadId: 't1', runId: 'r1' })));
      expect(run.events.filter((event) => event.type.startsWith('TOOL_CALL'))).toEqual([]);
      expect(run.events.at(-1)).toEqual({
        type: EventType.RUN_FINISHED,
        threadId: 't1',
        runId: 'r1',
        outcome: { type: 'success' },
        usage: [{ inputTokens: 10, outputTokens: 5, totalTokens: 15, model: 'claude-test' }],
      });
      expect(run.messages).toEqual([{ id: 'msg_1', role: 'assistant', content: "I'll search for that." }]);
      expect(messages).toEqual([
        "fromAnthropicMessages dropped server tool call 'srvtoolu_01' (web_search) of message 'msg_1': Anthropic runs it itself, and no result block for it came in the stream (as when Anthropic pauses a turn, stop_reason: pause_turn, before it runs the tool), so the client would take it for a call of its own to run. To let Anthropic run it, continue the turn in the same run: send the paused response back as the last assistant message and stream the continuation into the same source, where the call comes with its result (in a later run the client has no such call to send back).",
      ]);
    });

    it('should send a paused call when the continuation in the same stream brings its result, in the message that made it', async () => {
      const continued: AnthropicStreamEvent[] = [
        start(counts, 'msg_2'),
        blockStart(0, { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_01', content: search }),
        blockStop(0),
        textBlock(1),
        textDelta(1, 'It is sunny in Oslo.'),
        blockStop(1),
        messageDelta('end_turn'),
        stop,
      ];
      const { onDiagnostic, messages } = diagnosticsSink();
      const run = await runWithOracle(from([...paused, ...continued]).pipe(fromAnthropicMessages({ onDiagnostic }), toAgui({ threadId: 't1', runId: 'r1' })));
      expect(run.messages.map((message) => [message.role, message.role === 'tool' ? message.toolCallId : message.id])).toEqual([
        ['assistant', 'msg_1'],
        ['tool', 'srvtoolu_01'],
        ['assistant', 'msg_2'],
      ]);
      expect((run.messages[0] as { toolCalls?: unknown[] }).toolCalls).toHaveLength(1);
      expect(run.events.at(-1)).not.toHaveProperty('outcome.pendingToolCallIds');
      expect(messages).toEqual([]);
      expect(toAnthropicMessages(run.messages).messages).toEqual([
        {
          role: 'assistant',
          content: [
            { type: 'text', text: "I'll search for that." },
            { type: 'server_tool_use', id: 'srvtoolu_01', name: 'web_search', input: { query: 'weather oslo' } },
            { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_01', content: search },
            { type: 'text', text: 'It is sunny in Oslo.' },
          ],
        },
      ]);
    });
  });

  describe('dropped content', () => {
    const citation = { type: 'web_search_result_location', url: 'https://example.com', title: 'Tides', cited_text: 'High tide at 6.', encrypted_index: 'Eo8B' };
    const kept: AnthropicStreamEvent[] = [start(counts), textBlock(0), textDelta(0, 'High tide'), textDelta(0, ' is at 6.'), blockStop(0), messageDelta('end_turn'), stop];
    // The same stream with content that has no AG-UI form, and bookkeeping that carries none.
    const withDrops: AnthropicStreamEvent[] = [
      bad({ type: 'message_start', message: { id: 'msg_1', model: 'claude-test', content: [{ type: 'text', text: 'early' }], usage: counts } }),
      ping,
      textBlock(0),
      textDelta(0, 'High tide'),
      delta(0, { type: 'citations_delta', citation } as never),
      textDelta(0, ' is at 6.'),
      delta(0, { type: 'citations_delta', citation } as never),
      delta(0, { type: 'some_later_delta', value: 1 } as never),
      blockStop(0),
      blockStart(1, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AA' } } as never),
      delta(1, { type: 'image_delta', data: 'BB' } as never),
      blockStop(1),
      blockStart(2, { type: 'image', source: { type: 'url', url: 'https://example.com/b.png' } } as never),
      blockStop(2),
      bad({ type: 'some_later_event', value: 1 }),
      messageDelta('end_turn'),
      stop,
    ];
    const dropMessages = [
      "fromAnthropicMessages dropped the 1 content block(s) of message_start (message_start: message.content): blocks are read from content_block_start and content_block_delta events only, so these have no AG-UI form here. Later message_start content of this stream is dropped without another warning.",
      "fromAnthropicMessages dropped a 'citations_delta' delta (content_block_delta 0: delta, block 0): it has no AG-UI form. Later 'citations_delta' deltas of this stream are dropped without another warning.",
      "fromAnthropicMessages dropped a 'some_later_delta' delta (content_block_delta 0: delta, block 0): it has no AG-UI form. Later 'some_later_delta' deltas of this stream are dropped without another warning.",
      "fromAnthropicMessages dropped a 'image' content block (content_block_start 1: content_block): it has no AG-UI form. Later 'image' blocks of this stream are dropped without another warning.",
    ];

    it('should drop blocks and deltas without an AG-UI form, telling onDiagnostic once per type per subscription, and change nothing else', async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      const adapted$ = from(withDrops).pipe(fromAnthropicMessages({ onDiagnostic }));
      expect(await collect(adapted$)).toEqual(await adapt(kept));
      expect(messages).toEqual(dropMessages);
      // A second subscription is a new stream: it reports again.
      await collect(adapted$);
      expect(messages).toEqual([...dropMessages, ...dropMessages]);
    });

    it('should report nothing for a stream whose every block and delta it maps', async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      await adapt([start(counts), ping, thinkingBlock(0), thinkingDelta(0, 'Hm'), signatureDelta(0, 'sig'), blockStop(0), textBlock(1), textDelta(1, 'Hi'), blockStop(1), toolBlock(2, 'toolu_1', 'look'), jsonDelta(2, '{}'), blockStop(2), messageDelta('tool_use'), stop], { onDiagnostic });
      expect(messages).toEqual([]);
    });

    it('should give the official client the text without what was dropped, in a run that finishes', async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      const { onDiagnostic: toAguiDiagnostic, messages: repairs } = diagnosticsSink();
      const run = await runWithOracle(from(withDrops).pipe(fromAnthropicMessages({ onDiagnostic }), toAgui({ threadId: 't1', runId: 'r1', onDiagnostic: toAguiDiagnostic })));
      expect(run.messages).toEqual([{ id: 'msg_1', role: 'assistant', content: 'High tide is at 6.' }]);
      expect(run.events.filter((event) => event.type === EventType.RUN_FINISHED || event.type === EventType.RUN_ERROR).map((event) => event.type)).toEqual([EventType.RUN_FINISHED]);
      expect(messages).toEqual(dropMessages);
      expect(repairs).toEqual([]);
    });
  });

  describe('stop reasons', () => {
    it('should send CUSTOM anthropic.refusal for a refusal, with its stop_details, keeping the text before it', async () => {
      const details = { type: 'refusal', category: 'cyber', explanation: 'Blocked.' };
      expect(await adapt([start(counts), textBlock(0), textDelta(0, 'Here is'), blockStop(0), messageDelta('refusal', { output_tokens: 3 }, { stop_details: details }), stop])).toEqual([
        text('Here is'),
        { type: EventType.CUSTOM, name: 'anthropic.refusal', value: { messageId: 'msg_1', stopDetails: details } },
        tokenUsage({ inputTokens: 10, outputTokens: 3, totalTokens: 13, model: 'claude-test' }),
      ]);
      expect(await adapt([start(counts), messageDelta('refusal', {}, { stop_details: null })])).toEqual([
        { type: EventType.CUSTOM, name: 'anthropic.refusal', value: { messageId: 'msg_1' } },
        tokenUsage({ inputTokens: 10, outputTokens: 1, totalTokens: 11, model: 'claude-test' }),
      ]);
    });

    it('should send CUSTOM anthropic.container with the code execution container, which the client passes on, and report server tool counts once', async () => {
      const container = { id: 'container_011CPR5CNjB747bTd36fQLFk', expires_at: '2025-05-23T21:13:31.749448Z' };
      const serverToolUse = { web_search_requests: 0, web_fetch_requests: 1 };
      const inputs: AnthropicStreamEvent[] = [
        start(counts),
        textBlock(0),
        textDelta(0, 'Ran it.'),
        blockStop(0),
        messageDelta('end_turn', { output_tokens: 30, server_tool_use: serverToolUse }, { container }),
        stop,
        start(counts, 'msg_2'),
        messageDelta('end_turn', { output_tokens: 2, server_tool_use: { web_search_requests: 2 } }),
        stop,
      ];
      const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
      expect(await adapt(inputs, { onDiagnostic })).toEqual([
        text('Ran it.'),
        { type: EventType.CUSTOM, name: 'anthropic.container', value: { messageId: 'msg_1', container } },
        tokenUsage({ inputTokens: 10, outputTokens: 30, totalTokens: 40, model: 'claude-test' }),
        tokenUsage({ inputTokens: 10, outputTokens: 2, totalTokens: 12, model: 'claude-test' }),
      ]);
      expect(diagnostics).toEqual([
        'fromAnthropicMessages dropped the server tool counts of the usage (message_delta: usage.server_tool_use: {"web_search_requests":0,"web_fetch_requests":1}): TOKEN_USAGE has no field for them, and Anthropic bills them apart from tokens. To count them, pass raw: true and read usage.server_tool_use from the RAW events. Later server tool counts of this stream are dropped without another warning.',
      ]);
      const run = await runWithOracle(from(inputs).pipe(fromAnthropicMessages({ onDiagnostic: () => undefined }), toAgui({ threadId: 't1', runId: 'r1' })));
      expect(run.messages).toEqual([{ id: 'msg_1', role: 'assistant', content: 'Ran it.' }]);
      expect(run.events.filter((event) => event.type === EventType.CUSTOM && event.name === 'anthropic.container')).toEqual([
        expect.objectContaining({ value: { messageId: 'msg_1', container } }),
      ]);
      // Zero counts are nothing dropped.
      const quiet = diagnosticsSink();
      await adapt([start(counts), messageDelta('end_turn', { output_tokens: 1, server_tool_use: { web_search_requests: 0 } }), stop], { onDiagnostic: quiet.onDiagnostic });
      expect(quiet.messages).toEqual([]);
    });

    it('should send nothing of its own for end_turn, tool_use, stop_sequence, pause_turn and max_tokens', async () => {
      for (const reason of ['end_turn', 'tool_use', 'stop_sequence', 'pause_turn', 'max_tokens']) {
        expect(await adapt([messageDelta(reason, {})])).toEqual([]);
      }
    });

    it('should be accepted by the client with a refusal and no content at all', async () => {
      const run = await runWithOracle(from([start(), ping, messageDelta('refusal'), stop]).pipe(fromAnthropicMessages(), toAgui({ threadId: 't1', runId: 'r1' })));
      expect(run.messages).toEqual([]);
      expect(run.events.map((event) => event.type)).toEqual([EventType.RUN_STARTED, EventType.CUSTOM, EventType.RUN_FINISHED]);
    });
  });

  describe('usage', () => {
    it("should overlay message_delta's counts on message_start's, and count cache reads and writes into inputTokens", async () => {
      expect(
        await adapt([
          start({ input_tokens: 38, cache_creation_input_tokens: 1800, cache_read_input_tokens: 2048, output_tokens: 1 }),
          messageDelta('end_turn', { input_tokens: null, cache_creation_input_tokens: null, output_tokens: 88 }),
          stop,
        ]),
      ).toEqual([tokenUsage({ inputTokens: 3886, outputTokens: 88, totalTokens: 3974, cachedInputTokens: 2048, cacheWriteInputTokens: 1800, model: 'claude-test' })]);
    });

    it('should count only the last of several message_delta reports, which are running totals', async () => {
      expect(await adapt([start({ input_tokens: 5 }), messageDelta('', { output_tokens: 2 }), messageDelta('end_turn', { output_tokens: 7 }), stop])).toEqual([
        tokenUsage({ inputTokens: 5, outputTokens: 7, totalTokens: 12, model: 'claude-test' }),
      ]);
    });

    it('should omit absent counts and an absent model, and send nothing without counts', async () => {
      expect(await adapt([start({}, 'msg_1', ''), messageDelta('end_turn', {}), stop])).toEqual([]);
      expect(await adapt([start({ output_tokens: 3 }, 'msg_1', ''), stop])).toEqual([tokenUsage({ outputTokens: 3 })]);
    });

    it('should land on RUN_FINISHED under toAgui', async () => {
      const events = await collect(
        from([start({ input_tokens: 9, output_tokens: 1 }), textBlock(0), textDelta(0, 'Hi'), blockStop(0), messageDelta('end_turn', { output_tokens: 2 }), stop]).pipe(
          fromAnthropicMessages(),
          toAgui({ threadId: 't1', runId: 'r1' }),
        ),
      );
      expect(terminals(events)).toEqual([expect.objectContaining({ type: EventType.RUN_FINISHED, usage: [{ inputTokens: 9, outputTokens: 2, totalTokens: 11, model: 'claude-test' }] })]);
    });

    it.each([
      ['a negative count', start({ input_tokens: -1 }), 'message_start: message.usage.input_tokens is number -1'],
      ['a fraction', messageDelta('end_turn', { output_tokens: 1.5 }), 'message_delta: usage.output_tokens is number 1.5'],
      ['a count sent as a string', messageDelta('end_turn', { cache_read_input_tokens: '12' as never }), 'message_delta: usage.cache_read_input_tokens is "12"'],
    ])('should fail with INVALID_EVENT naming the field for %s', async (_name, event, described) => {
      expect((await failure([event])).error).toEqual(invalidEvent(`${described}, but token counts must be non-negative integers.`));
    });
  });

  describe('raw', () => {
    it('should send each event as RAW before the events made from it, ping and unknown types included', async () => {
      const inputs = [start(), ping, bad({ type: 'future_event', x: 1 }), textBlock(0), textDelta(0, 'Hi'), stop];
      const raw = (event: AnthropicStreamEvent): AgentEvent => ({ type: EventType.RAW, event, source: 'anthropic' });
      expect(await adapt(inputs, { raw: true })).toEqual([raw(inputs[0]), raw(inputs[1]), raw(inputs[2]), raw(inputs[3]), raw(inputs[4]), text('Hi'), raw(inputs[5])]);
      expect(await adapt(inputs)).toEqual([text('Hi')]);
    });
  });

  describe('bad input', () => {
    it('should say how to parse SSE data when it gets a string, a non-object or an object without a type', async () => {
      const hint = `where a Messages stream event such as { type: 'message_start', … } was expected. Parse each server-sent event's data first: parseSSE(), map((message) => JSON.parse(message.data)).`;
      expect((await failure([bad('{"type":"ping"}')])).error).toEqual(new AguiRxError('INVALID_EVENT', `fromAnthropicMessages received "{\\"type\\":\\"ping\\"}" ${hint}`));
      expect((await failure([bad(null)])).error).toEqual(new AguiRxError('INVALID_EVENT', `fromAnthropicMessages received null ${hint}`));
      expect((await failure([bad({ event: 'ping' })])).error).toEqual(new AguiRxError('INVALID_EVENT', `fromAnthropicMessages received an object without a string 'type' (got undefined) ${hint}`));
    });

    it.each<[string, AnthropicStreamEvent[], string]>([
      ['a delta for a block never opened', [start(), textDelta(3, 'x')], 'content_block_delta for block 3, which no content_block_start opened (or which is closed). Is the stream cut or reordered?'],
      ['a stop for a block not open', [start(), blockStop(0)], 'content_block_stop for block 0, which is not open. Is the stream cut or reordered?'],
      ['a block opened twice', [textBlock(0), textBlock(0)], 'content_block_start opens block 0, which is already open. Each block is opened once and closed by content_block_stop.'],
      ['a negative index', [bad({ type: 'content_block_stop', index: -1 })], "content_block_stop.index is number -1, but it must be a non-negative integer: the block's position in the message."],
      ['a block without type', [bad({ type: 'content_block_start', index: 0, content_block: {} })], "content_block_start 0 has a content_block with 'type: undefined', but it must be a string such as 'text'."],
      ['a missing content_block', [bad({ type: 'content_block_start', index: 0 })], "content_block_start 0: content_block is undefined, but it must be an object such as { type: 'text', text: '' }."],
      ['a tool_use without id', [blockStart(0, { type: 'tool_use', name: 'x' } as never)], "content_block_start 0: content_block is a tool_use block without an 'id'. Each tool call block must carry the call's id and the tool's name."],
      ['a delta without type', [textBlock(0), bad({ type: 'content_block_delta', index: 0, delta: { text: 'x' } })], "content_block_delta 0 has 'delta: an object', but it must be an object with a string 'type' such as { type: 'text_delta', text: 'Hi' }."],
      ['a text that is not a string', [textBlock(0), bad({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 7 } })], 'content_block_delta 0: delta.text is number 7, but it must be a string.'],
      ['input_json_delta on a text block', [textBlock(0), jsonDelta(0, '{}')], 'content_block_delta 0: delta is an input_json_delta for block 0, which is not a tool_use block.'],
      ['thinking_delta on a text block', [textBlock(0), thinkingDelta(0, 'x')], 'content_block_delta 0: delta is a thinking_delta for block 0, which is not a thinking block.'],
      ['a message_start without message', [bad({ type: 'message_start' })], "message_start: message is undefined, but it must be an object such as { id: 'msg_…', usage: { … } }."],
    ])('should fail with INVALID_EVENT for %s', async (_name, inputs, detail) => {
      expect((await failure(inputs)).error).toEqual(invalidEvent(detail));
    });

    it('should fail with PROVIDER_ERROR for an error event without a message', async () => {
      expect((await failure([bad({ type: 'error', error: {} })])).error).toEqual(
        new AguiRxError(
          'PROVIDER_ERROR',
          "Anthropic failed mid-stream: no message given. Retry the request (overloaded_error and api_error are usually transient); if it keeps failing, check the request and Anthropic's status page.",
        ),
      );
    });
  });

  describe('doc comment example', () => {
    it('should give the results it promises', async () => {
      const events = await adapt([
        { type: 'message_start', message: { id: 'msg_1', model: 'claude-x', usage: { input_tokens: 9, output_tokens: 1 } } },
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
        { type: 'content_block_stop', index: 0 },
        { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } },
        { type: 'message_stop' },
      ]);
      expect(events.map((event) => JSON.stringify(event)).join(', ')).toBe(
        '{"type":"TEXT_MESSAGE_CHUNK","messageId":"msg_1","delta":"Hi"}, {"type":"TOKEN_USAGE","usage":{"inputTokens":9,"outputTokens":2,"totalTokens":11,"model":"claude-x"}}',
      );
    });
  });
});
