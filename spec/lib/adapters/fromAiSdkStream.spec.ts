import { EventType } from '@ag-ui/core';
import { defer, from, map, mergeMap, of, retry, take } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { fromAiSdkStream, type AiSdkStreamPart } from '../../../lib/adapters/fromAiSdkStream.js';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { AguiRxError } from '../../../lib/protocol/errors.js';
import { toAnthropicMessages } from '../../../lib/converters/toAnthropicMessages.js';
import { toAgui } from '../../../operators/toAgui.js';
import { collect, createTestScheduler, diagnosticsSink, errorOf, sequentialIds } from '../../support/helpers.js';
import { runWithOracle } from '../../support/oracle.js';

/** One value map for a marble test's inputs and outputs, as RxJS's own specs use. */
type Marbles = Record<string, any>;

// Stream parts in.
const textDelta = (delta: string, id = 't1'): AiSdkStreamPart => ({ type: 'text-delta', id, delta });
const reasoningDelta = (delta: string, id = 'r1'): AiSdkStreamPart => ({ type: 'reasoning-delta', id, delta });
const inputStart = (toolCallId: string, toolName: string): AiSdkStreamPart => ({ type: 'tool-input-start', toolCallId, toolName });
const inputDelta = (toolCallId: string, inputTextDelta: string): AiSdkStreamPart => ({ type: 'tool-input-delta', toolCallId, inputTextDelta });
const toolCall = (toolCallId: string, toolName: string, input: unknown): AiSdkStreamPart => ({ type: 'tool-call', toolCallId, toolName, input });
const startStep: AiSdkStreamPart = { type: 'start-step' };
const finishStep: AiSdkStreamPart = { type: 'finish-step' };
const bad = (value: unknown) => value as AiSdkStreamPart;

// Agent events out.
const text = (delta: string, messageId = 't1'): AgentEvent => ({ type: EventType.TEXT_MESSAGE_CHUNK, messageId, delta });
const reasoning = (delta: string, messageId = 't1-reasoning'): AgentEvent => ({ type: EventType.REASONING_MESSAGE_CHUNK, messageId, delta });
const callStart = (toolCallId: string, toolCallName: string, parentMessageId: string, delta?: string): AgentEvent => ({
  type: EventType.TOOL_CALL_CHUNK,
  toolCallId,
  toolCallName,
  parentMessageId,
  ...(delta === undefined ? {} : { delta }),
});
const callArgs = (toolCallId: string, delta: string): AgentEvent => ({ type: EventType.TOOL_CALL_CHUNK, toolCallId, delta });
const callResult = (toolCallId: string, content: unknown): AgentEvent => ({ type: EventType.TOOL_CALL_RESULT, toolCallId, content }) as AgentEvent;
const stepStarted = (n: number): AgentEvent => ({ type: EventType.STEP_STARTED, stepName: `step-${n}` });
const stepFinished = (n: number): AgentEvent => ({ type: EventType.STEP_FINISHED, stepName: `step-${n}` });
const tokenUsage = (usage: Record<string, unknown>): AgentEvent => ({ type: 'TOKEN_USAGE', usage }) as AgentEvent;
const reasoningStart = (messageId: string, redacted = false): AgentEvent => ({
  type: EventType.REASONING_MESSAGE_START,
  messageId,
  role: 'reasoning',
  ...(redacted ? { metadata: { anthropic: { type: 'redacted_thinking' } } } : {}),
});
const encrypted = (entityId: string, encryptedValue: string): AgentEvent => ({ type: EventType.REASONING_ENCRYPTED_VALUE, subtype: 'message', entityId, encryptedValue });
// One Anthropic step with a server tool (web search) between two thinking blocks and two texts.
const serverToolStep: AiSdkStreamPart[] = [
  startStep,
  { type: 'reasoning-start', id: '0' },
  { type: 'reasoning-delta', id: '0', text: 'First thought.' },
  { type: 'reasoning-end', id: '0' },
  { type: 'text-delta', id: '1', text: 'Searching.' },
  { type: 'tool-call', toolCallId: 'srvtoolu_1', toolName: 'web_search', input: { query: 'q' }, providerExecuted: true },
  { type: 'tool-result', toolCallId: 'srvtoolu_1', toolName: 'web_search', input: { query: 'q' }, output: [], providerExecuted: true },
  { type: 'reasoning-start', id: '4' },
  { type: 'reasoning-delta', id: '4', text: 'Second thought.' },
  { type: 'reasoning-end', id: '4' },
  { type: 'text-delta', id: '5', text: 'Found it.' },
  { type: 'tool-call', toolCallId: 'toolu_2', toolName: 'save', input: {} },
  { type: 'finish-step', response: { id: 'msg_x', modelId: 'claude' } } as AiSdkStreamPart,
];
const signed = (signature: string) => ({ providerMetadata: { anthropic: { signature } } });
// An Anthropic step as the AI SDK's fullStream sends it: a signed thinking block, a redacted one, then text.
const anthropicThinking: AiSdkStreamPart[] = [
  { type: 'reasoning-start', id: '0' },
  { type: 'reasoning-delta', id: '0', text: 'Let me think.' },
  { type: 'reasoning-delta', id: '0', text: '', ...signed('SIG_abc') },
  { type: 'reasoning-end', id: '0' },
  { type: 'reasoning-start', id: '1', providerMetadata: { anthropic: { redactedData: 'REDACTED_xyz' } } },
  { type: 'reasoning-end', id: '1' },
  { type: 'text-start', id: '2' },
  { type: 'text-delta', id: '2', text: 'It is 20C.' },
  { type: 'text-end', id: '2' },
];

const invalidEvent = (detail: string) => new AguiRxError('INVALID_EVENT', `fromAiSdkStream received a malformed stream part: ${detail}`);

function adapt(parts: readonly AiSdkStreamPart[], options?: Parameters<typeof fromAiSdkStream>[0]): Promise<AgentEvent[]> {
  return collect(from(parts).pipe(fromAiSdkStream({ generateId: sequentialIds('m'), ...options })));
}

async function failure(parts: readonly AiSdkStreamPart[]): Promise<unknown> {
  return errorOf(adapt(parts));
}

describe('fromAiSdkStream', () => {
  let testScheduler: TestScheduler;

  beforeEach(() => {
    testScheduler = createTestScheduler();
  });

  describe('as an operator', () => {
    it('should turn steps, text, a tool call, its result and the finish into agent events', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const values: Marbles = {
          s: startStep,
          a: textDelta('Hi'),
          b: inputStart('c1', 'search'),
          c: inputDelta('c1', '{"q":1}'),
          e: finishStep,
          o: { type: 'tool-output-available', toolCallId: 'c1', output: 'found' },
          f: { type: 'finish', totalUsage: { inputTokens: 9, outputTokens: 4, totalTokens: 13 } },
          P: stepStarted(1),
          t: text('Hi'),
          k: callStart('c1', 'search', 't1'),
          l: callArgs('c1', '{"q":1}'),
          F: stepFinished(1),
          r: callResult('c1', 'found'),
          U: tokenUsage({ inputTokens: 9, outputTokens: 4, totalTokens: 13 }),
        };
        // prettier-ignore
        const e1 =  cold('-s--a--b--c--e--o--f--|', values);
        // prettier-ignore
        const e1subs =   '^---------------------!';
        // prettier-ignore
        const expected = '-P--t--k--l--F--r--U--|';

        expectObservable(e1.pipe(fromAiSdkStream())).toBe(expected, values);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should send the step usage it holds before passing the source error on', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const error = new Error('ECONNRESET');
        const values: Marbles = {
          e: { type: 'finish-step', usage: { inputTokens: 3, outputTokens: 1 } },
          U: tokenUsage({ inputTokens: 3, outputTokens: 1 }),
        };
        // prettier-ignore
        const e1 =  cold('--e--#   ', values, error);
        // prettier-ignore
        const e1subs =   '^----!   ';
        // prettier-ignore
        const expected = '-----(U#)';

        expectObservable(e1.pipe(fromAiSdkStream())).toBe(expected, values, error);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should complete when the source is empty', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        // prettier-ignore
        const e1 = cold<AiSdkStreamPart>('|   ');
        // prettier-ignore
        const e1subs =                   '(^!)';
        // prettier-ignore
        const expected =                 '|   ';

        expectObservable(e1.pipe(fromAiSdkStream())).toBe(expected);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should not complete when the source never completes', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        // prettier-ignore
        const e1 = cold<AiSdkStreamPart>('-');
        // prettier-ignore
        const e1subs =                   '^';
        // prettier-ignore
        const expected =                 '-';

        expectObservable(e1.pipe(fromAiSdkStream())).toBe(expected);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should pass an immediate source error on', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        // prettier-ignore
        const e1 = cold<AiSdkStreamPart>('#   ');
        // prettier-ignore
        const e1subs =                   '(^!)';
        // prettier-ignore
        const expected =                 '#   ';

        expectObservable(e1.pipe(fromAiSdkStream())).toBe(expected);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should allow unsubscribing early and explicitly, sending nothing on teardown', () =>
      testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
        const values: Marbles = {
          a: textDelta('Hi'),
          e: { type: 'finish-step', usage: { inputTokens: 3 } },
          b: { type: 'tool-approval-request', approvalId: 'ap1', toolCallId: 'c1' },
          t: text('Hi'),
        };
        // prettier-ignore
        const e1 =   hot('--a--e--b----|', values);
        // prettier-ignore
        const unsub =    '----------!   ';
        // prettier-ignore
        const e1subs =   '^---------!   ';
        // prettier-ignore
        const expected = '--t-------    ';

        expectObservable(e1.pipe(fromAiSdkStream()), unsub).toBe(expected, values);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should not break unsubscription chains when unsubscribed explicitly', () =>
      testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
        const values: Marbles = { a: textDelta('Hi'), b: textDelta('!'), t: text('Hi') };
        // prettier-ignore
        const e1 =   hot('--a----b----|', values);
        // prettier-ignore
        const unsub =    '-----!       ';
        // prettier-ignore
        const e1subs =   '^----!       ';
        // prettier-ignore
        const expected = '--t---       ';

        const result = e1.pipe(
          mergeMap((part) => of(part)),
          fromAiSdkStream(),
          map((event) => event),
          mergeMap((event) => of(event)),
        );

        expectObservable(result, unsub).toBe(expected, values);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should stop a synchronous source when take has what it needs', () =>
      testScheduler.run(({ expectObservable }) => {
        const values: Marbles = { t: text('a'), s: text('b') };
        // prettier-ignore
        const expected = '(ts|)';

        let read = 0;
        const source$ = from([textDelta('a'), textDelta('b'), textDelta('c'), { type: 'finish' } as AiSdkStreamPart]).pipe(map((part) => (read++, part)));

        expectObservable(source$.pipe(fromAiSdkStream(), take(2))).toBe(expected, values);
        testScheduler.flush();
        expect(read).toBe(2);
      }));

    it('should keep state per subscription: a late subscriber numbers its own steps', () =>
      testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
        const values: Marbles = { s: startStep, P: stepStarted(1), Q: stepStarted(2) };
        // prettier-ignore
        const e1 =   hot('--s----s----|', values);
        // prettier-ignore
        const sub2 =     '----^        ';
        // prettier-ignore
        const e1subs = [ '^-----------!',
                         '----^-------!'];
        // prettier-ignore
        const expected1 = '--P----(FQ)-|';
        // prettier-ignore
        const expected2 = '-------P----|';

        const result = e1.pipe(fromAiSdkStream());

        expectObservable(result).toBe(expected1, { ...values, F: stepFinished(1) });
        expectObservable(result, sub2).toBe(expected2, values);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should start afresh on retry: the tool calls of a failed attempt are forgotten', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const values: Marbles = {
          a: toolCall('c1', 'search', { q: 1 }),
          k: callStart('c1', 'search', 'm1', '{"q":1}'),
          j: callStart('c1', 'search', 'm2', '{"q":1}'),
        };
        // prettier-ignore
        const first =  cold('-a-#      ', values);
        // prettier-ignore
        const second = cold('   -a-|   ', values);
        // prettier-ignore
        const firstSubs =   '^--!      ';
        // prettier-ignore
        const secondSubs =  '---^--!   ';
        // prettier-ignore
        const expected =    '-k--j-|   ';

        let attempt = 0;
        const source$ = defer(() => (attempt++ === 0 ? first : second));

        expectObservable(source$.pipe(fromAiSdkStream({ generateId: sequentialIds('m') }), retry(1))).toBe(expected, values);
        expectSubscriptions(first.subscriptions).toBe(firstSubs);
        expectSubscriptions(second.subscriptions).toBe(secondSubs);
      }));

    it('should tell onDiagnostic of each call that abort cut mid-arguments, and end cancelled all the same', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values: Marbles = {
          a: inputStart('c1', 'w'),
          b: inputDelta('c1', '{"a":'),
          c: inputStart('c2', 'x'),
          d: toolCall('c3', 'y', { done: true }),
          x: { type: 'abort' },
          k: callStart('c1', 'w', 'm1'),
          l: callArgs('c1', '{"a":'),
          m: callStart('c2', 'x', 'm1'),
          n: callStart('c3', 'y', 'm1', '{"done":true}'),
          C: { type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } },
        };
        const { onDiagnostic, messages } = diagnosticsSink();
        // prettier-ignore
        const e1 =  cold('-a-b-c-d-x-|', values);
        // prettier-ignore
        const expected = '-k-l-m-n-C-|';

        expectObservable(e1.pipe(fromAiSdkStream({ generateId: sequentialIds('m'), onDiagnostic }))).toBe(expected, values);
        testScheduler.flush();
        expect(messages).toEqual([
          `fromAiSdkStream received 'abort' in the middle of tool call 'c1' (w): its arguments stopped at "{\\"a\\":", which is not a whole JSON object. The run ends cancelled, as the user asked, but the call stays in the client's messages half-written: it must not be run, and the next request made from those messages carries it (the converters send its input as {}, with a warning, and answer it with a failed result).`,
          expect.stringContaining("in the middle of tool call 'c2' (x): its arguments stopped at nothing, which is not a whole JSON object."),
        ]);
      }));

    it('should count as cut a call whose arguments so far are JSON but not an object', async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      await adapt([inputStart('c1', 'count'), inputDelta('c1', '12'), { type: 'abort' }], { onDiagnostic });
      expect(messages).toEqual([expect.stringContaining(`in the middle of tool call 'c1' (count): its arguments stopped at "12", which is not a whole JSON object.`)]);
    });

    it('should fail with PROVIDER_ERROR on an error part, after what came before', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const values: Marbles = { a: textDelta('Hi'), b: { type: 'error', errorText: 'Rate limit reached' }, t: text('Hi') };
        const error = new AguiRxError(
          'PROVIDER_ERROR',
          "The AI SDK stream reported an error: Rate limit reached. Retry the request; if it keeps failing, check the request, the API key and the provider's status.",
        );
        // prettier-ignore
        const e1 =  cold('--a--b--|', values);
        // prettier-ignore
        const e1subs =   '^----!   ';
        // prettier-ignore
        const expected = '--t--#   ';

        expectObservable(e1.pipe(fromAiSdkStream())).toBe(expected, values, error);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should end with a cancelled RUN_FINISHED on abort, sending the usage it holds, and read nothing after', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values: Marbles = {
          e: { type: 'finish-step', usage: { inputTokens: 5, outputTokens: 2 } },
          x: { type: 'abort' },
          a: textDelta('late'),
          U: tokenUsage({ inputTokens: 5, outputTokens: 2 }),
          C: { type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } },
        };
        // prettier-ignore
        const e1 =  cold('--e--x--a--|', values);
        // prettier-ignore
        const expected = '-----(UC)--|';

        expectObservable(e1.pipe(fromAiSdkStream())).toBe(expected, values);
      }));
  });

  describe('text and reasoning', () => {
    it('should read delta or text, send nothing for start, end or empty deltas, and give reasoning an id of its own', async () => {
      expect(
        await adapt([
          { type: 'reasoning-start', id: 'r1' },
          reasoningDelta(''),
          { type: 'reasoning-delta', id: 'r1', text: 'Think' },
          { type: 'reasoning-end', id: 'r1' },
          { type: 'text-start', id: 't1' },
          { type: 'text-delta', id: 't1', text: 'Hel' },
          textDelta('lo', 't1'),
          { type: 'text-end', id: 't1' },
        ]),
      ).toEqual([reasoning('Think', 'r1-reasoning'), text('Hel', 'r1'), text('lo', 'r1')]);
    });

    it("should send Anthropic's thinking signature and redacted thinking as REASONING_ENCRYPTED_VALUE, each block a reasoning message", async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      expect(await adapt(anthropicThinking, { onDiagnostic })).toEqual([
        reasoning('Let me think.', '0-reasoning'),
        encrypted('0-reasoning', 'SIG_abc'),
        reasoningStart('0-reasoning-2', true),
        encrypted('0-reasoning-2', 'REDACTED_xyz'),
        text('It is 20C.', '0'),
      ]);
      expect(messages).toEqual([]);
    });

    it("should read a UI stream's signature from reasoning-start and reasoning-end once, opening the reasoning message before it", async () => {
      expect(
        await adapt([
          { type: 'reasoning-start', id: 'r0', ...signed('SIG') },
          reasoningDelta('Hmm.', 'r0'),
          { type: 'reasoning-end', id: 'r0', ...signed('SIG') },
          { type: 'reasoning-start', id: 'r1' },
          reasoningDelta('Again.', 'r1'),
          { type: 'reasoning-end', id: 'r1', ...signed('SIG2') },
        ]),
      ).toEqual([reasoningStart('r0-reasoning'), encrypted('r0-reasoning', 'SIG'), reasoning('Hmm.', 'r0-reasoning'), reasoning('Again.', 'r0-reasoning-2'), encrypted('r0-reasoning-2', 'SIG2')]);
    });

    it('should put the signature of each of two interleaved reasoning blocks on its own block, through the official client', async () => {
      const parts: AiSdkStreamPart[] = [
        reasoningDelta('one', 'r1'),
        reasoningDelta('two', 'r2'),
        { type: 'reasoning-end', id: 'r1', ...signed('S1') },
        { type: 'reasoning-end', id: 'r2', ...signed('S2') },
        textDelta('answer', 't1'),
      ];
      expect(await adapt(parts)).toEqual([reasoning('one', 'r1-reasoning'), reasoning('two', 'r1-reasoning-2'), encrypted('r1-reasoning', 'S1'), encrypted('r1-reasoning-2', 'S2'), text('answer', 'r1')]);
      const run = await runWithOracle(from(parts).pipe(fromAiSdkStream(), toAgui({ threadId: 'thread-1', runId: 'run-1' })));
      expect(run.messages).toEqual([
        { id: 'r1-reasoning', role: 'reasoning', content: 'one', encryptedValue: 'S1' },
        { id: 'r1-reasoning-2', role: 'reasoning', content: 'two', encryptedValue: 'S2' },
        { id: 'r1', role: 'assistant', content: 'answer' },
      ]);
    });

    it('should drop, with a diagnostic, the result of a provider-executed call that never came, and keep the message whole', async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      const parts: AiSdkStreamPart[] = [textDelta('Found ', 't0'), { type: 'tool-result', toolCallId: 'ghost', toolName: 'web_search', output: 'x', providerExecuted: true } as AiSdkStreamPart, textDelta('it.', 't1')];
      expect(await adapt(parts, { onDiagnostic })).toEqual([text('Found ', 't0'), text('it.', 't0')]);
      expect(messages).toEqual([
        "fromAiSdkStream dropped the result of provider-executed tool call 'ghost': no call with that id came before it in this stream (a provider runs its own tools within the response that calls them). Check that the stream is whole and in order.",
      ]);
      const run = await runWithOracle(from(parts).pipe(fromAiSdkStream({ onDiagnostic: () => {} }), toAgui({ threadId: 'thread-1', runId: 'run-1' })));
      expect(run.messages).toEqual([{ id: 't0', role: 'assistant', content: 'Found it.' }]);
    });

    it('should name a message after the provider response id and begin a new one with the next response', async () => {
      expect(
        await adapt([
          { type: 'response-metadata', id: 'resp-1', modelId: 'gpt-test' },
          textDelta('One', '0'),
          reasoningDelta('r', '0'),
          { type: 'response-metadata', id: 'resp-1' },
          textDelta('!', '0'),
          { type: 'response-metadata', id: 'resp-2' },
          textDelta('Two', '0'),
        ]),
      ).toEqual([text('One', 'resp-1'), reasoning('r', 'resp-1-reasoning'), text('!', 'resp-1'), text('Two', 'resp-2')]);
    });

    it('should keep the message going when the response id comes after it began', async () => {
      expect(await adapt([textDelta('A', 'x'), { type: 'response-metadata', id: 'resp-1' }, textDelta('B', 'x')])).toEqual([text('A', 'x'), text('B', 'x')]);
    });

    it('should give each step a message of its own, suffixing an id an earlier step used', async () => {
      expect(await adapt([startStep, textDelta('A', '0'), finishStep, startStep, textDelta('B', '0'), finishStep])).toEqual([
        stepStarted(1),
        text('A', '0'),
        stepFinished(1),
        stepStarted(2),
        text('B', '0-2'),
        stepFinished(2),
      ]);
    });

    it('should send nothing, and report nothing, for bookkeeping parts', async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      expect(
        await adapt(
          [
            { type: 'start', messageId: 'ui-1' },
            { type: 'stream-start', warnings: [] },
            { type: 'message-metadata', messageMetadata: {} },
            { type: 'text-start', id: 't1' },
            { type: 'text-end', id: 't1' },
            { type: 'reasoning-start', id: 'r1' },
            { type: 'reasoning-end', id: 'r1' },
            { type: 'tool-input-end', id: 'c1' },
            { type: 'raw', rawValue: { choices: [{ delta: { content: 'Hi' } }] } },
          ],
          { onDiagnostic },
        ),
      ).toEqual([]);
      expect(messages).toEqual([]);
    });

    it('should drop sources, files, data-* and unknown parts, telling onDiagnostic once per type per subscription', async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      const dropped: AiSdkStreamPart[] = [
        { type: 'source', sourceType: 'url', id: 's1', url: 'https://example.com' },
        { type: 'file', mediaType: 'image/png' },
        { type: 'data-weather', data: { c: 20 } },
        bad({ type: 'some-part-from-a-later-sdk' }),
      ];
      const parts: AiSdkStreamPart[] = [textDelta('See'), ...dropped, startStep, ...dropped, { type: 'data-weather', id: 'w2', data: { c: 21 } }, { type: 'data-status', data: 'ok' }, textDelta(' this.', 't2')];
      const adapted$ = from(parts).pipe(fromAiSdkStream({ generateId: sequentialIds('m'), onDiagnostic }));
      // The output is that of the same stream without the dropped parts.
      expect(await collect(adapted$)).toEqual(await adapt(parts.filter((part) => !dropped.includes(part) && !part.type.startsWith('data-'))));
      expect(messages).toEqual([
        "fromAiSdkStream dropped a 'source' part (id 's1', outside a step): it has no AG-UI form. Later 'source' parts of this stream are dropped without another warning.",
        "fromAiSdkStream dropped a 'file' part (outside a step): it has no AG-UI form. Later 'file' parts of this stream are dropped without another warning.",
        "fromAiSdkStream dropped a 'data-weather' part (outside a step): it has no AG-UI form. Later 'data-weather' parts of this stream are dropped without another warning.",
        "fromAiSdkStream dropped a 'some-part-from-a-later-sdk' part (outside a step): it has no AG-UI form. Later 'some-part-from-a-later-sdk' parts of this stream are dropped without another warning.",
        "fromAiSdkStream dropped a 'data-status' part (in step-1): it has no AG-UI form. Later 'data-status' parts of this stream are dropped without another warning.",
      ]);
      // A second subscription is a new stream: it reports again.
      await collect(adapted$);
      expect(messages).toHaveLength(10);
    });
  });

  describe('tool calls', () => {
    it('should open a call with its name and parent, then stream its arguments under its id (fullStream ids and deltas)', async () => {
      expect(
        await adapt([
          textDelta('On it.'),
          { type: 'tool-input-start', id: 'c1', toolName: 'search' },
          { type: 'tool-input-delta', id: 'c1', delta: '{"q":' },
          { type: 'tool-input-delta', id: 'c1', delta: '' },
          { type: 'tool-input-delta', id: 'c1', delta: '1}' },
          { type: 'tool-input-end', id: 'c1' },
          toolCall('c1', 'search', { q: 1 }),
        ]),
      ).toEqual([text('On it.'), callStart('c1', 'search', 't1'), callArgs('c1', '{"q":'), callArgs('c1', '1}')]);
    });

    it('should send the whole input of a tool call that came without deltas, once, as JSON text', async () => {
      expect(
        await adapt([
          toolCall('c1', 'search', '{"q":1}'),
          toolCall('c1', 'search', '{"q":1}'),
          toolCall('c2', 'weather', { city: 'Lyon' }),
          toolCall('c3', 'now', ''),
          inputStart('c4', 'later'),
          { type: 'tool-input-available', toolCallId: 'c4', toolName: 'later', input: {} },
        ]),
      ).toEqual([
        callStart('c1', 'search', 'm1', '{"q":1}'),
        callStart('c2', 'weather', 'm1', '{"city":"Lyon"}'),
        callStart('c3', 'now', 'm1'),
        callStart('c4', 'later', 'm1'),
        callArgs('c4', '{}'),
      ]);
    });

    it('should keep the input of tool-input-error as it came', async () => {
      expect(await adapt([{ type: 'tool-input-error', toolCallId: 'c1', toolName: 'search', input: '{"q":', errorText: 'Invalid JSON' }])).toEqual([
        callStart('c1', 'search', 'm1', '{"q":'),
      ]);
    });

    it('should turn results into TOOL_CALL_RESULT, skipping preliminary outputs', async () => {
      expect(
        await adapt([
          toolCall('c1', 'search', {}),
          { type: 'tool-output-available', toolCallId: 'c1', output: { hits: 1 }, preliminary: true },
          { type: 'tool-output-available', toolCallId: 'c1', output: { hits: 3 } },
          { type: 'tool-result', toolCallId: 'c2', toolName: 'mcp', result: [{ type: 'text', text: 'ok' }] },
          { type: 'tool-result', toolCallId: 'c3', toolName: 'void', output: undefined },
          { type: 'tool-result', toolCallId: 'c4', toolName: 'nil', output: null },
        ]),
      ).toEqual([
        callStart('c1', 'search', 'm1', '{}'),
        callResult('c1', { hits: 3 }),
        callResult('c2', [{ type: 'text', text: 'ok' }]),
        callResult('c3', ''),
        callResult('c4', 'null'),
      ]);
    });

    it('should answer a failed or denied call with a TOOL_CALL_RESULT that says so', async () => {
      expect(
        await adapt([
          toolCall('c1', 'a', {}),
          { type: 'tool-error', toolCallId: 'c1', toolName: 'a', error: new Error('boom') },
          { type: 'tool-error', toolCallId: 'c2', toolName: 'a', error: 'plain' },
          { type: 'tool-error', toolCallId: 'c3', toolName: 'a', error: { code: 7 } },
          { type: 'tool-output-error', toolCallId: 'c4', errorText: 'EACCES' },
          { type: 'tool-result', toolCallId: 'c5', toolName: 'mcp', result: 'server down', isError: true },
          { type: 'tool-output-denied', toolCallId: 'c1' },
        ]),
      ).toEqual([
        callStart('c1', 'a', 'm1', '{}'),
        callResult('c1', 'Error: boom'),
        callResult('c2', 'Error: plain'),
        callResult('c3', 'Error: {"code":7}'),
        callResult('c4', 'Error: EACCES'),
        callResult('c5', 'Error: server down'),
        callResult('c1', "Error: the user denied the call to 'a'."),
      ]);
    });

    it("should put what follows a provider-executed tool's result in a new assistant message, and keep reasoning blocks apart", () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values: Marbles = {
          s: serverToolStep[0], a: serverToolStep[2], b: serverToolStep[4], c: serverToolStep[5], d: serverToolStep[6],
          e: serverToolStep[8], f: serverToolStep[10], g: serverToolStep[11], h: serverToolStep[12],
          P: stepStarted(1),
          A: reasoning('First thought.', '0-reasoning'),
          B: text('Searching.', '0'),
          C: callStart('srvtoolu_1', 'web_search', '0', '{"query":"q"}'),
          D: callResult('srvtoolu_1', []),
          E: reasoning('Second thought.', '0-reasoning-2'),
          F: text('Found it.', '0-5'),
          G: callStart('toolu_2', 'save', '0-5', '{}'),
          H: stepFinished(1),
        };
        // prettier-ignore
        const e1 =  cold('-s-a-b-c-d-e-f-g-h-|', values);
        // prettier-ignore
        const expected = '-P-A-B-C-D-E-F-G-H-|';

        expectObservable(e1.pipe(fromAiSdkStream())).toBe(expected, values);
      }));

    it('should end the calls a provider response left open when the next response begins', async () => {
      expect(
        await adapt([
          { type: 'response-metadata', id: 'resp-1' },
          toolCall('c1', 'a', '{}'),
          toolCall('c2', 'b', '{}'),
          { type: 'tool-result', toolCallId: 'c2', toolName: 'b', result: 'ok' },
          { type: 'response-metadata', id: 'resp-2' },
          textDelta('done'),
        ]),
      ).toEqual([
        callStart('c1', 'a', 'resp-1', '{}'),
        callStart('c2', 'b', 'resp-1', '{}'),
        callResult('c2', 'ok'),
        { type: EventType.TOOL_CALL_END, toolCallId: 'c1' },
        text('done', 'resp-2'),
      ]);
    });
  });

  describe('interrupts, steps and usage', () => {
    it('should end the run with an interrupt outcome at finish for each tool approval asked for', async () => {
      const events = await adapt([
        startStep,
        inputStart('c1', 'book'),
        { type: 'tool-approval-request', approvalId: 'ap1', toolCallId: 'c1' },
        { type: 'tool-approval-request', approvalId: 'ap2', toolCall: { toolCallId: 'c2', toolName: 'pay', input: {} } },
        { type: 'tool-approval-request', approvalId: 'ap3' },
        finishStep,
        { type: 'finish', totalUsage: { inputTokens: 1, outputTokens: 1 } },
      ]);
      expect(events.slice(-2)).toEqual([
        tokenUsage({ inputTokens: 1, outputTokens: 1 }),
        {
          type: EventType.RUN_FINISHED,
          outcome: {
            type: 'interrupt',
            interrupts: [
              { id: 'ap1', reason: 'tool_approval', toolCallId: 'c1', message: "Approve the call to 'book'?" },
              { id: 'ap2', reason: 'tool_approval', toolCallId: 'c2', message: "Approve the call to 'pay'?" },
              { id: 'ap3', reason: 'tool_approval' },
            ],
          },
        },
      ]);
    });

    it('should end the run with the interrupts when the source completes without finish', async () => {
      expect((await adapt([{ type: 'tool-approval-request', approvalId: 'ap1', toolCallId: 'c1' }])).at(-1)).toEqual({
        type: EventType.RUN_FINISHED,
        outcome: { type: 'interrupt', interrupts: [{ id: 'ap1', reason: 'tool_approval', toolCallId: 'c1' }] },
      });
    });

    it('should close an open step when the next one starts, and finish no step that never started', async () => {
      expect(await adapt([finishStep, startStep, startStep, finishStep, finishStep])).toEqual([stepStarted(1), stepFinished(1), stepStarted(2), stepFinished(2)]);
    });

    it('should send finish totalUsage instead of the steps usage, with the model', async () => {
      expect(
        await adapt([
          { type: 'finish-step', usage: { inputTokens: 1, outputTokens: 1 }, response: { id: 'r', modelId: 'm-1' } },
          { type: 'finish-step', usage: { inputTokens: 2, outputTokens: 2 } },
          { type: 'finish', totalUsage: { inputTokens: 3, outputTokens: 3, totalTokens: 6, reasoningTokens: 1, cachedInputTokens: 2 } },
        ]),
      ).toEqual([tokenUsage({ inputTokens: 3, outputTokens: 3, totalTokens: 6, reasoningTokens: 1, cachedInputTokens: 2, model: 'm-1' })]);
    });

    it('should send the steps usage when finish has none', async () => {
      expect(
        await adapt([
          { type: 'finish-step', usage: { inputTokens: 1, outputTokens: 1 } },
          { type: 'finish-step', usage: { inputTokens: Number.NaN, outputTokens: undefined } },
          { type: 'finish-step', usage: { inputTokens: 2, outputTokens: 2 } },
          { type: 'finish' },
        ]),
      ).toEqual([tokenUsage({ inputTokens: 1, outputTokens: 1 }), tokenUsage({ inputTokens: 2, outputTokens: 2 })]);
    });

    it('should read v6 details and the nested LanguageModelV3 usage', async () => {
      expect(
        await adapt([
          {
            type: 'finish',
            totalUsage: { inputTokens: 10, outputTokens: 5, totalTokens: 15, inputTokenDetails: { cacheReadTokens: 4, cacheWriteTokens: 2 }, outputTokenDetails: { reasoningTokens: 3 } },
          },
        ]),
      ).toEqual([tokenUsage({ inputTokens: 10, outputTokens: 5, totalTokens: 15, reasoningTokens: 3, cachedInputTokens: 4, cacheWriteInputTokens: 2 })]);
      expect(
        await adapt([
          { type: 'response-metadata', id: 'x', modelId: 'claude' },
          { type: 'finish', usage: { inputTokens: { total: 10, noCache: 4, cacheRead: 5, cacheWrite: 1 }, outputTokens: { total: 5, text: 3, reasoning: 2 }, raw: {} } },
        ]),
      ).toEqual([tokenUsage({ inputTokens: 10, outputTokens: 5, reasoningTokens: 2, cachedInputTokens: 5, cacheWriteInputTokens: 1, model: 'claude' })]);
    });
  });

  describe('AI SDK 4 parts', () => {
    // streamText().fullStream of AI SDK 4 (its TextStreamPart): deltas as textDelta, arguments as args, usage as promptTokens / completionTokens.
    const v4Usage = (promptTokens: number, completionTokens: number) => ({ promptTokens, completionTokens, totalTokens: promptTokens + completionTokens });
    const v4Steps: AiSdkStreamPart[] = [
      { type: 'step-start', messageId: 'msg-1', request: {}, warnings: [] },
      { type: 'reasoning', textDelta: 'Weather first.' },
      { type: 'text-delta', textDelta: 'Checking' },
      { type: 'text-delta', textDelta: ' Oslo.' },
      { type: 'tool-call-streaming-start', toolCallId: 'c1', toolName: 'weather' },
      { type: 'tool-call-delta', toolCallId: 'c1', toolName: 'weather', argsTextDelta: '{"city":' },
      { type: 'tool-call-delta', toolCallId: 'c1', toolName: 'weather', argsTextDelta: '"Oslo"}' },
      { type: 'tool-call', toolCallId: 'c1', toolName: 'weather', args: { city: 'Oslo' } },
      { type: 'tool-call', toolCallId: 'c2', toolName: 'time', args: {} },
      { type: 'tool-result', toolCallId: 'c1', toolName: 'weather', args: { city: 'Oslo' }, result: { celsius: 4 } },
      { type: 'tool-result', toolCallId: 'c2', toolName: 'time', args: {}, result: '12:00' },
      { type: 'step-finish', messageId: 'msg-1', finishReason: 'tool-calls', usage: v4Usage(10, 5), response: { id: 'resp-1', modelId: 'gpt-4o' }, isContinued: false },
      { type: 'step-start', messageId: 'msg-2', request: {}, warnings: [] },
      { type: 'text-delta', textDelta: '4 °C at noon.' },
      { type: 'step-finish', messageId: 'msg-2', finishReason: 'stop', usage: v4Usage(20, 6), response: { id: 'resp-2', modelId: 'gpt-4o' }, isContinued: false },
      { type: 'finish', finishReason: 'stop', usage: v4Usage(30, 11), response: { id: 'resp-2', modelId: 'gpt-4o' } },
    ] as AiSdkStreamPart[];

    it('should read a fullStream of AI SDK 4: textDelta, reasoning, tool-call-streaming-start / -delta, args, result, steps named by messageId, promptTokens', async () => {
      expect(await adapt(v4Steps)).toEqual([
        stepStarted(1),
        reasoning('Weather first.', 'msg-1-reasoning'),
        text('Checking', 'msg-1'),
        text(' Oslo.', 'msg-1'),
        callStart('c1', 'weather', 'msg-1'),
        callArgs('c1', '{"city":'),
        callArgs('c1', '"Oslo"}'),
        callStart('c2', 'time', 'msg-1', '{}'),
        callResult('c1', { celsius: 4 }),
        callResult('c2', '12:00'),
        stepFinished(1),
        stepStarted(2),
        text('4 °C at noon.', 'msg-2'),
        stepFinished(2),
        tokenUsage({ inputTokens: 30, outputTokens: 11, totalTokens: 41, model: 'gpt-4o' }),
      ]);
    });

    it("should read a LanguageModelV1 provider stream: a tool-call-delta without start opens its call, args as JSON text, the finish's usage", async () => {
      expect(
        await adapt([
          { type: 'response-metadata', id: 'chatcmpl-1', modelId: 'gpt-4o-mini' },
          { type: 'text-delta', textDelta: 'Let me look.' },
          { type: 'tool-call-delta', toolCallType: 'function', toolCallId: 'c1', toolName: 'search', argsTextDelta: '' },
          { type: 'tool-call-delta', toolCallType: 'function', toolCallId: 'c1', toolName: 'search', argsTextDelta: '{"q":"rx"}' },
          { type: 'tool-call', toolCallType: 'function', toolCallId: 'c1', toolName: 'search', args: '{"q":"rx"}' },
          { type: 'tool-call', toolCallType: 'function', toolCallId: 'c2', toolName: 'now', args: '{}' },
          { type: 'finish', finishReason: 'tool-calls', usage: { promptTokens: 12, completionTokens: 8 } },
        ] as AiSdkStreamPart[]),
      ).toEqual([
        text('Let me look.', 'chatcmpl-1'),
        callStart('c1', 'search', 'chatcmpl-1'),
        callArgs('c1', '{"q":"rx"}'),
        callStart('c2', 'now', 'chatcmpl-1', '{}'),
        tokenUsage({ inputTokens: 12, outputTokens: 8, model: 'gpt-4o-mini' }),
      ]);
    });

    it('should send the steps AI SDK 4 usage when finish has none, and name a continued step apart', async () => {
      expect(
        await adapt([
          { type: 'step-start', messageId: 'msg-1' },
          { type: 'text-delta', textDelta: 'Part one' },
          { type: 'step-finish', messageId: 'msg-1', usage: v4Usage(3, 2), isContinued: true },
          { type: 'step-start', messageId: 'msg-1' },
          { type: 'text-delta', textDelta: ', part two.' },
          { type: 'step-finish', messageId: 'msg-1', usage: { promptTokens: 4, completionTokens: Number.NaN, totalTokens: Number.NaN }, isContinued: false },
          { type: 'finish' },
        ] as AiSdkStreamPart[]),
      ).toEqual([
        stepStarted(1),
        text('Part one', 'msg-1'),
        stepFinished(1),
        stepStarted(2),
        text(', part two.', 'msg-1-2'),
        stepFinished(2),
        tokenUsage({ inputTokens: 3, outputTokens: 2, totalTokens: 5 }),
        tokenUsage({ inputTokens: 4 }),
      ]);
    });

    it("should send a tool-result with neither output nor result empty, and a usage in neither version's words not at all, telling onDiagnostic once each", async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      expect(
        await adapt(
          [
            toolCall('c1', 'a', {}),
            { type: 'tool-result', toolCallId: 'c1', toolName: 'a' },
            { type: 'tool-result', toolCallId: 'c2', toolName: 'a' },
            { type: 'step-finish', usage: { prompt_tokens: 3 } },
            { type: 'finish', usage: { input_tokens: 3 } },
          ] as AiSdkStreamPart[],
          { onDiagnostic },
        ),
      ).toEqual([callStart('c1', 'a', 'm1', '{}'), callResult('c1', ''), callResult('c2', '')]);
      expect(messages).toEqual([
        "fromAiSdkStream read a 'tool-result' part for tool call 'c1' with neither 'output' (AI SDK 5 and later) nor 'result' (AI SDK 4), so its result is sent empty, as for a tool that returned nothing. Later such parts are not reported again.",
        "fromAiSdkStream could not read step-finish.usage: it has none of the AI SDK's token counts (inputTokens / outputTokens / totalTokens of AI SDK 5 and later, promptTokens / completionTokens of AI SDK 4), so no usage is reported for it. Later usage of that kind is not reported again.",
      ]);
    });

    it("should send a UI stream's tool-output-available without output (a tool that returned nothing) empty, without a diagnostic", async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      expect(await adapt([{ type: 'tool-output-available', toolCallId: 'c1' } as AiSdkStreamPart], { onDiagnostic })).toEqual([callResult('c1', '')]);
      expect(messages).toEqual([]);
    });
  });

  describe('errors', () => {
    it('should describe a provider error from error, errorText or a bare value', async () => {
      const message = (detail: string) => `The AI SDK stream reported an error: ${detail}. Retry the request; if it keeps failing, check the request, the API key and the provider's status.`;
      expect(await failure([{ type: 'error', error: new Error('Overloaded') }])).toMatchObject({ code: 'PROVIDER_ERROR', message: message('Overloaded') });
      expect(await failure([{ type: 'error', error: { type: 'overloaded_error' } }])).toMatchObject({ message: message('{"type":"overloaded_error"}') });
      expect(await failure([{ type: 'error' }])).toMatchObject({ message: message('no message given') });
    });

    it.each<[string, unknown, string]>([
      ['a non-object', 'text', `fromAiSdkStream received "text" where an AI SDK stream part ({ type: 'text-delta', id, delta }, …) was expected. Pipe streamText().fullStream, a model's doStream() stream, or the parsed chunks of a UI message stream.`],
      ['an object without type', { id: 'x' }, `fromAiSdkStream received an object whose type is undefined where an AI SDK stream part ({ type: 'text-delta', id, delta }, …) was expected. Pipe streamText().fullStream, a model's doStream() stream, or the parsed chunks of a UI message stream.`],
    ])('should fail with INVALID_EVENT on %s', async (_, part, message) => {
      const error = await failure([bad(part)]);
      expect(error).toBeInstanceOf(AguiRxError);
      expect(error).toMatchObject({ code: 'INVALID_EVENT', message });
    });

    it.each<[string, AiSdkStreamPart, string]>([
      ['a non-string delta', bad({ type: 'text-delta', id: 't', delta: 5 }), 'text-delta.delta is number 5, but it must be a string.'],
      ['a delta before its call', inputDelta('c9', '{'), "tool-input-delta for tool call 'c9' came before its tool-input-start, which names the tool. Is the stream cut short or reordered?"],
      ['a call without a name', bad({ type: 'tool-call', toolCallId: 'c1', input: '{}' }), "tool-call has no 'toolName'. Each tool-call part must carry one."],
      ['a tool input without id', bad({ type: 'tool-input-start', toolName: 'a' }), "tool-input-start has neither 'toolCallId' nor 'id'. Each tool-input-start part names its tool call."],
      ['a bad count', bad({ type: 'finish', totalUsage: { inputTokens: -1 } }), 'finish.totalUsage.inputTokens is number -1, but token counts must be non-negative integers.'],
      ['a non-object usage', bad({ type: 'finish-step', usage: 7 }), 'finish-step.usage is number 7, but it must be an object such as { inputTokens: 9, outputTokens: 1 }.'],
      ['an approval without id', bad({ type: 'tool-approval-request', toolCallId: 'c1' }), "tool-approval-request has no 'approvalId'. Each tool-approval-request part must carry one."],
      [
        'a text-delta in neither version\'s words',
        bad({ type: 'text-delta', id: 't1', content: 'Hi' }),
        "text-delta has no text: neither 'delta' nor 'text' (AI SDK 5 and later) nor 'textDelta' (AI SDK 4). Each text-delta part carries its piece of text in one of them; is the stream from another library?",
      ],
      [
        'an AI SDK 4 reasoning part without textDelta',
        bad({ type: 'reasoning', reasoning: 'Hm' }),
        "reasoning has no text: neither 'delta' nor 'text' (AI SDK 5 and later) nor 'textDelta' (AI SDK 4). Each reasoning part carries its piece of text in one of them; is the stream from another library?",
      ],
      [
        'a tool-call-delta without argsTextDelta',
        bad({ type: 'tool-call-delta', toolCallId: 'c1', toolName: 'a', args: '{}' }),
        "tool-call-delta has no argument text: neither 'delta' / 'inputTextDelta' (AI SDK 5 and later) nor 'argsTextDelta' (AI SDK 4). Each tool-call-delta part carries a piece of the call's arguments in one of them.",
      ],
      [
        'a tool-call-delta that names no tool before its start',
        bad({ type: 'tool-call-delta', toolCallId: 'c9', argsTextDelta: '{' }),
        "tool-call-delta for tool call 'c9' came before its tool-call-streaming-start, which names the tool. Is the stream cut short or reordered?",
      ],
      [
        'a tool-call with neither input nor args',
        bad({ type: 'tool-call', toolCallId: 'c1', toolName: 'weather', arguments: { city: 'Oslo' } }),
        "tool-call for tool call 'c1' has neither 'input' (AI SDK 5 and later) nor 'args' (AI SDK 4), the call's arguments. Each tool-call part carries them, '{}' for a tool without parameters.",
      ],
      [
        'a tool-input-available without input',
        bad({ type: 'tool-input-available', toolCallId: 'c1', toolName: 'weather' }),
        "tool-input-available for tool call 'c1' has neither 'input' (AI SDK 5 and later) nor 'args' (AI SDK 4), the call's arguments. Each tool-input-available part carries them, '{}' for a tool without parameters.",
      ],
    ])('should fail with INVALID_EVENT on %s', async (_, part, detail) => {
      const error = await failure([part]);
      expect(error).toBeInstanceOf(AguiRxError);
      expect({ code: (error as AguiRxError).code, message: (error as AguiRxError).message }).toEqual({ code: 'INVALID_EVENT', message: invalidEvent(detail).message });
    });
  });

  describe('raw', () => {
    it('should send each part as RAW before the events made from it, when asked', async () => {
      const part = textDelta('Hi');
      expect(await adapt([part], { raw: true })).toEqual([{ type: EventType.RAW, event: part, source: 'ai-sdk' }, text('Hi')]);
      expect(await adapt([part])).toEqual([text('Hi')]);
    });
  });

  describe('through toAgui and the official client', () => {
    it('should build a step message with reasoning, text, a call and its result, then a cancelled run on abort', async () => {
      const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
      const run = await runWithOracle(
        from<AiSdkStreamPart[]>([
          startStep,
          reasoningDelta('Plan.', 'r'),
          textDelta('Checking.', 't'),
          toolCall('c1', 'look', { x: 1 }),
          { type: 'tool-result', toolCallId: 'c1', toolName: 'look', output: 'seen' },
          finishStep,
          startStep,
          textDelta('Seen', 't'),
          { type: 'abort' },
        ]).pipe(fromAiSdkStream(), toAgui({ threadId: 'thread-1', runId: 'run-1', onDiagnostic })),
      );
      expect(diagnostics).toEqual([]);
      expect(run.messages).toEqual([
        expect.objectContaining({ id: 'r-reasoning', role: 'reasoning', content: 'Plan.' }),
        expect.objectContaining({ id: 'r', role: 'assistant', content: 'Checking.', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'look', arguments: '{"x":1}' } }] }),
        expect.objectContaining({ role: 'tool', toolCallId: 'c1', content: 'seen' }),
        expect.objectContaining({ id: 't', role: 'assistant', content: 'Seen' }),
      ]);
      expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } });
    });

    it('should end cancelled on abort in the middle of a call\'s arguments, the cut call ended, as the adapter promises', async () => {
      const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
      const onError = jest.fn();
      const run = await runWithOracle(
        from<AiSdkStreamPart[]>([
          startStep,
          textDelta('Looking.', 't'),
          { type: 'tool-input-start', id: 'c1', toolName: 'search' },
          { type: 'tool-input-delta', id: 'c1', delta: '{"q":' },
          { type: 'abort' },
        ] as AiSdkStreamPart[]).pipe(fromAiSdkStream(), toAgui({ threadId: 'thread-1', runId: 'run-1', onDiagnostic, onError })),
      );
      expect(diagnostics).toEqual([]);
      expect(onError).not.toHaveBeenCalled();
      expect(run.events.map((event) => event.type)).not.toContain(EventType.RUN_ERROR);
      expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } });
      expect(run.messages).toEqual([expect.objectContaining({ id: 't', role: 'assistant', content: 'Looking.', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'search', arguments: '{"q":' } }] })]);
    });

    it("should keep Anthropic's thinking signature and redacted data on the reasoning messages, for toAnthropicMessages to send back", async () => {
      const run = await runWithOracle(
        from<AiSdkStreamPart[]>([startStep, ...anthropicThinking, { type: 'finish-step', response: { id: 'msg_1', modelId: 'claude' } } as AiSdkStreamPart]).pipe(
          fromAiSdkStream(),
          toAgui({ threadId: 'thread-1', runId: 'run-1' }),
        ),
      );
      expect(run.messages).toEqual([
        { id: '0-reasoning', role: 'reasoning', content: 'Let me think.', encryptedValue: 'SIG_abc' },
        expect.objectContaining({ id: '0-reasoning-2', role: 'reasoning', content: '', encryptedValue: 'REDACTED_xyz' }),
        { id: '0', role: 'assistant', content: 'It is 20C.' },
      ]);
      const warnings: string[] = [];
      const user = { id: 'u1', role: 'user' as const, content: 'Weather?' };
      expect(toAnthropicMessages([user, ...run.messages], { onWarning: (warning) => void warnings.push(warning) }).messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Let me think.', signature: 'SIG_abc' },
            { type: 'redacted_thinking', data: 'REDACTED_xyz' },
            { type: 'text', text: 'It is 20C.' },
          ],
        },
      ]);
      expect(warnings).toEqual([]);
    });

    it("should build call, result, then answer in order when the provider runs a tool inside the step, each thought its own reasoning message", async () => {
      const run = await runWithOracle(from(serverToolStep).pipe(fromAiSdkStream(), toAgui({ threadId: 'thread-1', runId: 'run-1' })));
      expect(run.messages).toEqual([
        { id: '0-reasoning', role: 'reasoning', content: 'First thought.' },
        { id: '0', role: 'assistant', content: 'Searching.', toolCalls: [{ id: 'srvtoolu_1', type: 'function', function: { name: 'web_search', arguments: '{"query":"q"}' } }] },
        { id: expect.any(String), role: 'tool', toolCallId: 'srvtoolu_1', content: '[]' },
        { id: '0-reasoning-2', role: 'reasoning', content: 'Second thought.' },
        { id: '0-5', role: 'assistant', content: 'Found it.', toolCalls: [{ id: 'toolu_2', type: 'function', function: { name: 'save', arguments: '{}' } }] },
      ]);
      expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'success', pendingToolCallIds: ['toolu_2'] } });
    });

    it('should name the call abort cut mid-arguments, which the next request answers with a failed result', async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      const run = await runWithOracle(
        from<AiSdkStreamPart[]>([startStep, textDelta('Hi', 't'), { type: 'tool-input-start', id: 'c1', toolName: 'w' }, { type: 'tool-input-delta', id: 'c1', delta: '{"a":' }, { type: 'abort' }] as AiSdkStreamPart[]).pipe(
          fromAiSdkStream({ onDiagnostic }),
          toAgui({ threadId: 'thread-1', runId: 'run-1' }),
        ),
      );
      expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } });
      expect(messages).toEqual([expect.stringContaining("received 'abort' in the middle of tool call 'c1' (w): its arguments stopped at \"{\\\"a\\\":\"")]);
      const warnings: string[] = [];
      expect(toAnthropicMessages([{ id: 'u1', role: 'user', content: 'Go' }, ...run.messages], { onWarning: (warning) => void warnings.push(warning) }).messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'Go' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Hi' }, { type: 'tool_use', id: 'c1', name: 'w', input: {} }] },
        { role: 'user', content: [expect.objectContaining({ type: 'tool_result', tool_use_id: 'c1', is_error: true })] },
      ]);
      expect(warnings).toEqual([expect.stringContaining("tool call 'c1'"), expect.stringContaining("'c1'")]);
    });

    it('should run to RUN_FINISHED with sources, files and data parts dropped, each type reported once', async () => {
      const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
      const { onDiagnostic: toAguiDiagnostic, messages: repairs } = diagnosticsSink();
      const run = await runWithOracle(
        from<AiSdkStreamPart[]>([
          { type: 'start', messageId: 'ui-1' },
          startStep,
          textDelta('Sources: ', 't'),
          { type: 'source-url', sourceId: 's1', url: 'https://example.com/a' },
          { type: 'source-url', sourceId: 's2', url: 'https://example.com/b' },
          { type: 'data-weather', data: { c: 20 } },
          textDelta('two.', 't'),
          { type: 'file', url: 'data:image/png;base64,AA', mediaType: 'image/png' },
          finishStep,
          { type: 'finish' },
        ]).pipe(fromAiSdkStream({ onDiagnostic }), toAgui({ threadId: 'thread-1', runId: 'run-1', onDiagnostic: toAguiDiagnostic })),
      );
      expect(repairs).toEqual([]);
      expect(diagnostics.map((message) => message.slice(0, message.indexOf(' part ')))).toEqual([
        "fromAiSdkStream dropped a 'source-url'",
        "fromAiSdkStream dropped a 'data-weather'",
        "fromAiSdkStream dropped a 'file'",
      ]);
      expect(run.messages).toEqual([expect.objectContaining({ id: 't', role: 'assistant', content: 'Sources: two.' })]);
      expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
    });

    it('should build the messages and usage of an AI SDK 4 fullStream: its text, the call with its arguments, no diagnostic', async () => {
      const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
      const run = await runWithOracle(
        from([
          { type: 'text-delta', textDelta: 'Hello' },
          { type: 'text-delta', textDelta: ' world' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'weather', args: { city: 'Oslo' } },
          { type: 'finish', finishReason: 'tool-calls', usage: { promptTokens: 5, completionTokens: 7, totalTokens: 12 } },
        ] as AiSdkStreamPart[]).pipe(fromAiSdkStream({ generateId: sequentialIds('m'), onDiagnostic }), toAgui({ threadId: 'thread-1', runId: 'run-1', onDiagnostic })),
      );
      expect(diagnostics).toEqual([]);
      expect(run.messages).toEqual([{ id: 'm1', role: 'assistant', content: 'Hello world', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] }]);
      expect(run.events.at(-1)).toMatchObject({
        type: EventType.RUN_FINISHED,
        outcome: { type: 'success', pendingToolCallIds: ['c1'] },
        usage: [{ inputTokens: 5, outputTokens: 7, totalTokens: 12 }],
      });
    });

    it('should build two steps of an AI SDK 4 fullStream: reasoning, streamed arguments, results, the answer and the usage', async () => {
      const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
      const run = await runWithOracle(
        from<AiSdkStreamPart[]>([
          { type: 'step-start', messageId: 'msg-1' },
          { type: 'reasoning', textDelta: 'Weather first.' },
          { type: 'text-delta', textDelta: 'Checking.' },
          { type: 'tool-call-streaming-start', toolCallId: 'c1', toolName: 'weather' },
          { type: 'tool-call-delta', toolCallId: 'c1', toolName: 'weather', argsTextDelta: '{"city":' },
          { type: 'tool-call-delta', toolCallId: 'c1', toolName: 'weather', argsTextDelta: '"Oslo"}' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'weather', args: { city: 'Oslo' } },
          { type: 'tool-result', toolCallId: 'c1', toolName: 'weather', args: { city: 'Oslo' }, result: { celsius: 4 } },
          { type: 'step-finish', messageId: 'msg-1', usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 }, response: { id: 'resp-1', modelId: 'gpt-4o' } },
          { type: 'step-start', messageId: 'msg-2' },
          { type: 'text-delta', textDelta: '4 °C.' },
          { type: 'step-finish', messageId: 'msg-2', usage: { promptTokens: 20, completionTokens: 2, totalTokens: 22 }, response: { id: 'resp-2', modelId: 'gpt-4o' } },
          { type: 'finish', finishReason: 'stop', usage: { promptTokens: 30, completionTokens: 7, totalTokens: 37 } },
        ] as AiSdkStreamPart[]).pipe(fromAiSdkStream({ onDiagnostic }), toAgui({ threadId: 'thread-1', runId: 'run-1', onDiagnostic })),
      );
      expect(diagnostics).toEqual([]);
      expect(run.messages).toEqual([
        expect.objectContaining({ id: 'msg-1-reasoning', role: 'reasoning', content: 'Weather first.' }),
        { id: 'msg-1', role: 'assistant', content: 'Checking.', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] },
        expect.objectContaining({ role: 'tool', toolCallId: 'c1', content: '{"celsius":4}' }),
        { id: 'msg-2', role: 'assistant', content: '4 °C.' },
      ]);
      expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'success' }, usage: [{ inputTokens: 30, outputTokens: 7, totalTokens: 37, model: 'gpt-4o' }] });
    });

    it('should end an AI SDK 4 part it cannot read with RUN_ERROR naming the fields it expected, after the text before it', async () => {
      const run = await runWithOracle(
        from([textDelta('Hi'), { type: 'tool-call', toolCallId: 'c1', toolName: 'weather', arguments: '{}' }] as AiSdkStreamPart[]).pipe(fromAiSdkStream(), toAgui({ threadId: 'thread-1', runId: 'run-1' })),
      );
      expect(run.messages).toEqual([{ id: 't1', role: 'assistant', content: 'Hi' }]);
      expect(run.events.at(-1)).toMatchObject({
        type: EventType.RUN_ERROR,
        code: 'INVALID_EVENT',
        message: invalidEvent("tool-call for tool call 'c1' has neither 'input' (AI SDK 5 and later) nor 'args' (AI SDK 4), the call's arguments. Each tool-call part carries them, '{}' for a tool without parameters.").message,
      });
    });

    it('should end with RUN_ERROR on a provider error part', async () => {
      const run = await runWithOracle(from<AiSdkStreamPart[]>([textDelta('Hi'), { type: 'error', errorText: 'Overloaded' }]).pipe(fromAiSdkStream(), toAgui({ threadId: 'thread-1', runId: 'run-1' })));
      expect(run.events.map((event) => event.type)).toEqual([
        EventType.RUN_STARTED,
        EventType.TEXT_MESSAGE_START,
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TEXT_MESSAGE_END,
        EventType.RUN_ERROR,
      ]);
      expect(run.events.at(-1)).toMatchObject({ code: 'PROVIDER_ERROR' });
    });
  });

  it('should give the results its doc example promises', () => {
    const logged: string[] = [];
    of<AiSdkStreamPart[]>(
      { type: 'start-step' },
      { type: 'text-start', id: 't1' },
      { type: 'text-delta', id: 't1', delta: 'Hi' },
      { type: 'text-end', id: 't1' },
      { type: 'finish-step' },
      { type: 'finish', totalUsage: { inputTokens: 9, outputTokens: 1, totalTokens: 10 } },
    )
      .pipe(fromAiSdkStream())
      .subscribe((event) => logged.push(JSON.stringify(event)));
    expect(logged.join(', ')).toBe(
      '{"type":"STEP_STARTED","stepName":"step-1"}, {"type":"TEXT_MESSAGE_CHUNK","messageId":"t1","delta":"Hi"}, {"type":"STEP_FINISHED","stepName":"step-1"}, {"type":"TOKEN_USAGE","usage":{"inputTokens":9,"outputTokens":1,"totalTokens":10}}',
    );
  });
});
