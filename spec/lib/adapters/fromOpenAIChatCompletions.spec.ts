import { EventType, type Event } from '@ag-ui/core';
import { defer, from, map, mergeMap, of, retry, take, tap, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import {
  fromOpenAIChatCompletions,
  type ChatCompletionChunk,
  type ChatCompletionChunkChoice,
  type ChatCompletionChunkDelta,
  type ChatCompletionContentPart,
  type ChatCompletionUsage,
} from '../../../lib/adapters/fromOpenAIChatCompletions.js';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { AguiRxError } from '../../../lib/protocol/errors.js';
import { toOpenAIChatMessages } from '../../../lib/converters/toOpenAIChatMessages.js';
import { toAgui } from '../../../operators/toAgui.js';
import { collect, createTestScheduler, diagnosticsSink, errorOf, sequentialIds, terminals } from '../../support/helpers.js';
import { runWithOracle } from '../../support/oracle.js';
import { fixturesDir, haveFixtures } from '../../support/fixtures.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One value map for a marble test's inputs and outputs, as RxJS's own specs use. */
type Marbles = Record<string, any>;

type Input = ChatCompletionChunk | '[DONE]';

// Provider chunks, as a chat completions stream sends them.
const chunk = (delta: ChatCompletionChunkDelta, fields: Partial<ChatCompletionChunk> & { finish?: ChatCompletionChunkChoice['finish_reason'] } = {}): ChatCompletionChunk => {
  const { finish = null, ...rest } = fields;
  return { id: 'cmpl-1', object: 'chat.completion.chunk', created: 1741950000, model: 'gpt-test', choices: [{ index: 0, delta, finish_reason: finish }], ...rest };
};
const finish = (reason: ChatCompletionChunkChoice['finish_reason'], fields: Partial<ChatCompletionChunk> = {}) => chunk({}, { finish: reason, ...fields });
const usageChunk = (usage: ChatCompletionUsage, fields: Partial<ChatCompletionChunk> = {}): ChatCompletionChunk => ({
  id: 'cmpl-1',
  object: 'chat.completion.chunk',
  created: 1741950000,
  model: 'gpt-test',
  choices: [],
  usage,
  ...fields,
});
const toolPiece = (index: number, fields: { id?: string; name?: string; args?: string } = {}) =>
  chunk({
    tool_calls: [
      {
        index,
        ...(fields.id === undefined ? {} : { id: fields.id, type: 'function' as const }),
        function: { ...(fields.name === undefined ? {} : { name: fields.name }), arguments: fields.args ?? '' },
      },
    ],
  });
const bad = (value: unknown) => value as Input;

// Agent events out.
const text = (delta: string, messageId = 'cmpl-1'): AgentEvent => ({ type: EventType.TEXT_MESSAGE_CHUNK, messageId, delta });
const reasoning = (delta: string, messageId = 'cmpl-1-reasoning'): AgentEvent => ({ type: EventType.REASONING_MESSAGE_CHUNK, messageId, delta });
const callStart = (toolCallId: string, toolCallName: string, delta?: string, parentMessageId = 'cmpl-1'): AgentEvent => ({
  type: EventType.TOOL_CALL_CHUNK,
  toolCallId,
  toolCallName,
  parentMessageId,
  ...(delta === undefined ? {} : { delta }),
});
const callArgs = (toolCallId: string, delta: string): AgentEvent => ({ type: EventType.TOOL_CALL_CHUNK, toolCallId, delta });
const tokenUsage = (usage: Record<string, unknown>): AgentEvent => ({ type: 'TOKEN_USAGE', usage }) as AgentEvent;

const invalidEvent = (detail: string) => new AguiRxError('INVALID_EVENT', `fromOpenAIChatCompletions received a malformed chat.completion.chunk: ${detail}`);
const lengthCut = (which: string) =>
  new AguiRxError(
    'INCOMPLETE_STREAM',
    `fromOpenAIChatCompletions: the model's output was cut by its token limit (finish_reason: length) inside ${which} incomplete JSON and the call must not run. The text before it is kept. Raise max_completion_tokens (max_tokens on older servers), or ask for a shorter answer, and retry the request.`,
  );

/** Every event the adapter makes of the given inputs. */
function adapt(inputs: readonly Input[], options?: Parameters<typeof fromOpenAIChatCompletions>[0]): Promise<AgentEvent[]> {
  return collect(from(inputs).pipe(fromOpenAIChatCompletions(options)));
}

/** The error the adapter fails with on the given inputs. */
async function failure(inputs: readonly Input[]): Promise<unknown> {
  return errorOf(adapt(inputs));
}

describe('fromOpenAIChatCompletions', () => {
  let testScheduler: TestScheduler;

  beforeEach(() => {
    testScheduler = createTestScheduler();
  });

  describe('as an operator', () => {
    it('should turn content into text chunks, a tool call into tool call chunks, and usage into TOKEN_USAGE', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const values: Marbles = {
          a: chunk({ role: 'assistant', content: 'Hel' }),
          b: chunk({ content: 'lo' }),
          c: toolPiece(0, { id: 'call-1', name: 'search' }),
          d: toolPiece(0, { args: '{"q":1}' }),
          f: finish('tool_calls'),
          u: usageChunk({ prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 }),
          D: '[DONE]' as const,
          t: text('Hel'),
          s: text('lo'),
          k: callStart('call-1', 'search'),
          l: callArgs('call-1', '{"q":1}'),
          U: tokenUsage({ inputTokens: 9, outputTokens: 4, totalTokens: 13, model: 'gpt-test' }),
        };
        // prettier-ignore
        const e1 =  cold('--a--b--c--d--f--u--D--|', values);
        // prettier-ignore
        const e1subs =   '^----------------------!';
        // prettier-ignore
        const expected = '--t--s--k--l--------U--|';

        expectObservable(e1.pipe(fromOpenAIChatCompletions())).toBe(expected, values);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should send the usage it holds before passing the source error on', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const error = new Error('ECONNRESET');
        const values: Marbles = {
          a: chunk({ content: 'Hi' }, { usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } }),
          t: text('Hi'),
          U: tokenUsage({ inputTokens: 3, outputTokens: 1, totalTokens: 4, model: 'gpt-test' }),
        };
        // prettier-ignore
        const e1 =  cold('--a--#   ', values, error);
        // prettier-ignore
        const e1subs =   '^----!   ';
        // prettier-ignore
        const expected = '--t--(U#)';

        expectObservable(e1.pipe(fromOpenAIChatCompletions())).toBe(expected, values, error);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should fail with the cut call at [DONE], after the usage that follows finish_reason length', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const values: Marbles = {
          c: toolPiece(0, { id: 'call-1', name: 'search', args: '{"q":' }),
          f: finish('length'),
          u: usageChunk({ prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 }),
          D: '[DONE]' as const,
          k: callStart('call-1', 'search', '{"q":'),
          U: tokenUsage({ inputTokens: 9, outputTokens: 4, totalTokens: 13, model: 'gpt-test' }),
        };
        // prettier-ignore
        const e1 =  cold('--c--f--u--D--|', values);
        // prettier-ignore
        const e1subs =   '^----------!   ';
        // prettier-ignore
        const expected = '--k--------(U#)';

        expectObservable(e1.pipe(fromOpenAIChatCompletions())).toBe(expected, values, lengthCut("tool call 'call-1' (search), so its arguments are"));
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should fail with the cut call when the source completes without [DONE]', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const values: Marbles = {
          c: toolPiece(0, { id: 'call-1', name: 'search', args: '{"q":' }),
          f: finish('length', { usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 } }),
          k: callStart('call-1', 'search', '{"q":'),
          U: tokenUsage({ inputTokens: 9, outputTokens: 4, totalTokens: 13, model: 'gpt-test' }),
        };
        // prettier-ignore
        const e1 =  cold('--c--f--|   ', values);
        // prettier-ignore
        const e1subs =   '^-------!   ';
        // prettier-ignore
        const expected = '--k-----(U#)';

        expectObservable(e1.pipe(fromOpenAIChatCompletions())).toBe(expected, values, lengthCut("tool call 'call-1' (search), so its arguments are"));
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should complete when the source is empty', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        // prettier-ignore
        const e1 = cold<Input>('|   ');
        // prettier-ignore
        const e1subs =         '(^!)';
        // prettier-ignore
        const expected =       '|   ';

        expectObservable(e1.pipe(fromOpenAIChatCompletions())).toBe(expected);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should not complete when the source never completes', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        // prettier-ignore
        const e1 = cold<Input>('-');
        // prettier-ignore
        const e1subs =         '^';
        // prettier-ignore
        const expected =       '-';

        expectObservable(e1.pipe(fromOpenAIChatCompletions())).toBe(expected);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should pass an immediate source error on', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        // prettier-ignore
        const e1 = cold<Input>('#   ');
        // prettier-ignore
        const e1subs =         '(^!)';
        // prettier-ignore
        const expected =       '#   ';

        expectObservable(e1.pipe(fromOpenAIChatCompletions())).toBe(expected);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should allow unsubscribing early and explicitly, sending nothing on teardown', () =>
      testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
        const values: Marbles = {
          a: chunk({ content: 'Hi' }, { usage: { prompt_tokens: 3 } }),
          b: chunk({ content: '!' }),
          t: text('Hi'),
        };
        // prettier-ignore
        const e1 =   hot('--a----b----|', values);
        // prettier-ignore
        const unsub =    '-----!       ';
        // prettier-ignore
        const e1subs =   '^----!       ';
        // prettier-ignore
        const expected = '--t---       ';

        expectObservable(e1.pipe(fromOpenAIChatCompletions()), unsub).toBe(expected, values);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should not break unsubscription chains when unsubscribed explicitly', () =>
      testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
        const values: Marbles = { a: chunk({ content: 'Hi' }), b: chunk({ content: '!' }), t: text('Hi') };
        // prettier-ignore
        const e1 =   hot('--a----b----|', values);
        // prettier-ignore
        const unsub =    '-----!       ';
        // prettier-ignore
        const e1subs =   '^----!       ';
        // prettier-ignore
        const expected = '--t---       ';

        const result = e1.pipe(
          mergeMap((input) => of(input)),
          fromOpenAIChatCompletions(),
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
        const source$ = from([chunk({ content: 'a' }), chunk({ content: 'b' }), chunk({ content: 'c' }), usageChunk({ prompt_tokens: 1 })]).pipe(
          map((input) => (read++, input)),
        );

        expectObservable(source$.pipe(fromOpenAIChatCompletions(), take(2))).toBe(expected, values);
        testScheduler.flush();
        expect(read).toBe(2);
      }));

    it('should keep state per subscription: a late subscriber gets no usage it did not see', () =>
      testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
        const values: Marbles = {
          u: usageChunk({ prompt_tokens: 5, completion_tokens: 2 }),
          D: '[DONE]' as const,
          U: tokenUsage({ inputTokens: 5, outputTokens: 2, model: 'gpt-test' }),
        };
        // prettier-ignore
        const e1 =   hot('--u----D----|', values);
        // prettier-ignore
        const sub2 =     '----^        ';
        // prettier-ignore
        const e1subs = [ '^-----------!',
                         '----^-------!'];
        // prettier-ignore
        const expected1 = '-------U----|';
        // prettier-ignore
        const expected2 = '------------|';

        const result = e1.pipe(fromOpenAIChatCompletions());

        expectObservable(result).toBe(expected1, values);
        expectObservable(result, sub2).toBe(expected2, values);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should start afresh on retry: the tool calls of a failed attempt are forgotten', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const values: Marbles = {
          a: toolPiece(0, { id: 'call-1', name: 'search', args: '{"q":"rxjs"}' }),
          k: callStart('call-1', 'search', '{"q":"rxjs"}'),
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
        const expected =    '-k--k-|   ';

        let attempt = 0;
        const source$ = defer(() => (attempt++ === 0 ? first : second));

        expectObservable(source$.pipe(fromOpenAIChatCompletions(), retry(1))).toBe(expected, values);
        expectSubscriptions(first.subscriptions).toBe(firstSubs);
        expectSubscriptions(second.subscriptions).toBe(secondSubs);
      }));

    it('should fail with INVALID_EVENT on a chunk that is not one, after what came before', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const values: Marbles = { a: chunk({ content: 'Hi' }), b: bad({ id: 'cmpl-1', object: 'chat.completion' }), t: text('Hi') };
        const error = invalidEvent(
          "it has no 'choices' array. Is this a Chat Completions stream (stream: true)? Responses API and other providers' events need their own adapter.",
        );
        // prettier-ignore
        const e1 =  cold('--a--b--|', values);
        // prettier-ignore
        const e1subs =   '^----!   ';
        // prettier-ignore
        const expected = '--t--#   ';

        expectObservable(e1.pipe(fromOpenAIChatCompletions())).toBe(expected, values, error);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));
  });

  describe('text and reasoning', () => {
    it('should name the message after the completion id, and send nothing for empty or null pieces', async () => {
      expect(
        await adapt([
          chunk({ role: 'assistant', content: '', refusal: null }),
          chunk({ content: null }),
          chunk({ content: 'Hello' }),
          chunk({ content: ', world' }),
          finish('stop'),
          '[DONE]',
        ]),
      ).toEqual([text('Hello'), text(', world')]);
    });

    it('should send refusal pieces as the assistant text', async () => {
      expect(await adapt([chunk({ role: 'assistant', content: null, refusal: '' }), chunk({ refusal: "I can't" }), chunk({ refusal: ' help.' }), finish('stop')])).toEqual([
        text("I can't"),
        text(' help.'),
      ]);
    });

    it('should send reasoning_content as reasoning, under an id of its own', async () => {
      expect(
        await adapt([
          chunk({ role: 'assistant', content: null, reasoning_content: '' }),
          chunk({ content: null, reasoning_content: 'Think' }),
          chunk({ content: null, reasoning_content: 'ing.' }),
          chunk({ content: 'Answer', reasoning_content: null }),
          finish('stop'),
        ]),
      ).toEqual([reasoning('Think'), reasoning('ing.'), text('Answer')]);
    });

    it('should read reasoning (OpenRouter) when reasoning_content is absent, never both', async () => {
      expect(await adapt([chunk({ reasoning: 'Hmm' }), chunk({ reasoning_content: 'A', reasoning: 'A' })])).toEqual([reasoning('Hmm'), reasoning('A')]);
    });

    it("should read the text of OpenRouter's reasoning_details when reasoning or reasoning_content beside it is empty", async () => {
      const { onDiagnostic } = diagnosticsSink();
      const details = [{ type: 'reasoning.text', text: 'deep thought', index: 0 }];
      expect(await adapt([chunk({ reasoning: '', reasoning_details: details })], { onDiagnostic })).toEqual([reasoning('deep thought')]);
      expect(await adapt([chunk({ reasoning_content: '', reasoning_details: details })], { onDiagnostic })).toEqual([reasoning('deep thought')]);
    });

    it('should read reasoning when reasoning_content beside it is empty or null', async () => {
      expect(await adapt([chunk({ reasoning_content: '', reasoning: 'think' }), chunk({ reasoning_content: null, reasoning: 'ing' }), chunk({ reasoning_content: '', reasoning: '' })])).toEqual([reasoning('think'), reasoning('ing')]);
    });

    it('should send reasoning before text when one chunk carries both', async () => {
      expect(await adapt([chunk({ reasoning_content: 'so', content: 'Yes' })])).toEqual([reasoning('so'), text('Yes')]);
    });

    it('should keep the text of a completion cut short by length or content_filter', async () => {
      expect(await adapt([chunk({ content: 'The storm hit' }), finish('length')])).toEqual([text('The storm hit')]);
      expect(await adapt([chunk({ content: 'The storm hit' }), finish('content_filter')])).toEqual([
        text('The storm hit'),
        { type: EventType.CUSTOM, name: 'openai.content_filter', value: { messageId: 'cmpl-1' } },
      ]);
    });

    it('should drop log probabilities with one diagnostic per stream, keeping the text the client builds', async () => {
      const logprobs = (token: string) => ({ content: [{ token, logprob: -0.1, bytes: [72, 105], top_logprobs: [{ token: 'Hello', logprob: -2.3, bytes: [72] }] }], refusal: null });
      const inputs: Input[] = [
        { ...chunk({ role: 'assistant', content: 'Hi' }), choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi' }, logprobs: logprobs('Hi'), finish_reason: null }] },
        { ...chunk({ content: '!' }), choices: [{ index: 0, delta: { content: '!' }, logprobs: logprobs('!'), finish_reason: null }] },
        { ...finish('stop'), choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }] },
        '[DONE]',
      ];
      const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
      expect(await adapt(inputs, { onDiagnostic })).toEqual([text('Hi'), text('!')]);
      expect(diagnostics).toEqual([
        "fromOpenAIChatCompletions dropped the log probabilities of message 'cmpl-1' (choices[0].logprobs): AG-UI has no event for them. To read them, pass raw: true and read choices[].logprobs from the RAW events. Later log probabilities of this stream are dropped without another warning.",
      ]);
      const run = await runWithOracle(from(inputs).pipe(fromOpenAIChatCompletions({ onDiagnostic: () => undefined }), toAgui({ threadId: 'thread-1', runId: 'run-1' })));
      expect(run.messages).toEqual([{ id: 'cmpl-1', role: 'assistant', content: 'Hi!' }]);
      // Empty or null log probabilities hold nothing to drop.
      const quiet = diagnosticsSink();
      await adapt([{ ...chunk({ content: 'Hi' }), choices: [{ index: 0, delta: { content: 'Hi' }, logprobs: { content: [], refusal: null }, finish_reason: null }] }], { onDiagnostic: quiet.onDiagnostic });
      expect(quiet.messages).toEqual([]);
    });

    describe("a provider's content filter (Azure OpenAI)", () => {
      const results = { violence: { filtered: true, severity: 'high' }, hate: { filtered: false, severity: 'safe' } };
      // Azure's filtered answer: the finish chunk carries the verdicts that stopped it.
      const filtered: Input[] = [
        chunk({ role: 'assistant', content: 'Some' }, { id: 'chatcmpl-az2' }),
        { id: 'chatcmpl-az2', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta: {}, finish_reason: 'content_filter', content_filter_results: results }] },
        '[DONE]',
      ];
      const filterEvent = { type: EventType.CUSTOM, name: 'openai.content_filter', value: { messageId: 'chatcmpl-az2', contentFilterResults: results } };

      it('should send CUSTOM openai.content_filter with the verdicts after the text, so that a client can tell a filtered answer from a whole one', async () => {
        expect(await adapt(filtered)).toEqual([text('Some', 'chatcmpl-az2'), filterEvent]);
        const run = await runWithOracle(from(filtered).pipe(fromOpenAIChatCompletions(), toAgui({ threadId: 'thread-1', runId: 'run-1' })));
        expect(run.messages).toEqual([{ id: 'chatcmpl-az2', role: 'assistant', content: 'Some' }]);
        expect(run.events.filter((event) => event.type === EventType.CUSTOM)).toEqual([expect.objectContaining(filterEvent)]);
        expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'success' } });
      });

      it('should still fail a call the filter cut with INCOMPLETE_STREAM, after the CUSTOM event', async () => {
        const inputs: Input[] = [toolPiece(0, { id: 'call-1', name: 'f', args: '{"a": "' }), finish('content_filter'), '[DONE]'];
        const events: AgentEvent[] = [];
        const error = await errorOf(collect(from(inputs).pipe(fromOpenAIChatCompletions(), tap((event) => events.push(event)))));
        expect(events).toEqual([callStart('call-1', 'f', '{"a": "'), { type: EventType.CUSTOM, name: 'openai.content_filter', value: { messageId: 'cmpl-1' } }]);
        expect(error).toMatchObject({ name: 'AguiRxError', code: 'INCOMPLETE_STREAM' });
      });
    });

    it('should start a new message for the next completion', async () => {
      expect(await adapt([chunk({ content: 'One' }), finish('stop'), chunk({ content: 'Two' }, { id: 'cmpl-2' }), chunk({ reasoning_content: 'r' }, { id: 'cmpl-2' })])).toEqual([
        text('One'),
        text('Two', 'cmpl-2'),
        reasoning('r', 'cmpl-2-reasoning'),
      ]);
    });

    it('should mint a message id per completion when the chunks carry none', async () => {
      const noId = (delta: ChatCompletionChunkDelta, fields: Partial<ChatCompletionChunk> & { finish?: ChatCompletionChunkChoice['finish_reason'] } = {}) =>
        chunk(delta, { id: '', ...fields });
      expect(
        await adapt(
          [
            noId({ content: 'One' }),
            noId({ content: ' more' }),
            noId({}, { finish: 'stop' }),
            usageChunk({ prompt_tokens: 2 }, { id: '' }),
            noId({ content: 'Two' }),
            { ...noId({ content: '!' }), id: undefined } as unknown as ChatCompletionChunk,
          ],
          { generateId: sequentialIds('m-') },
        ),
        // The first completion's usage is sent when the second begins.
      ).toEqual([text('One', 'm-1'), text(' more', 'm-1'), tokenUsage({ inputTokens: 2, model: 'gpt-test' }), text('Two', 'm-2'), text('!', 'm-2')]);
    });
  });

  describe('tool calls', () => {
    it('should key calls by index, also when the first index is 1, and give every piece the call id', async () => {
      expect(
        await adapt([
          chunk({ content: 'Checking.' }),
          toolPiece(1, { id: 'toolu_1', name: 'get_tides' }),
          toolPiece(1, { args: '{"harbour":' }),
          toolPiece(1, { args: '"Oban"}' }),
          finish('tool_calls'),
        ]),
      ).toEqual([text('Checking.'), callStart('toolu_1', 'get_tides'), callArgs('toolu_1', '{"harbour":'), callArgs('toolu_1', '"Oban"}')]);
    });

    it('should follow parallel calls whose pieces interleave, several per chunk too', async () => {
      expect(
        await adapt([
          toolPiece(0, { id: 'call-a', name: 'heat' }),
          toolPiece(1, { id: 'call-b', name: 'kettle', args: '{"on"' }),
          toolPiece(0, { args: '{"c":21}' }),
          chunk({
            tool_calls: [
              { index: 1, function: { arguments: ':true}' } },
              { index: 0, function: { arguments: '' } },
            ],
          }),
          finish('tool_calls'),
        ]),
      ).toEqual([callStart('call-a', 'heat'), callStart('call-b', 'kettle', '{"on"'), callArgs('call-a', '{"c":21}'), callArgs('call-b', ':true}')]);
    });

    it('should start a new call when a known index brings a new id', async () => {
      expect(
        await adapt([toolPiece(0, { id: 'call-a', name: 'one', args: '{}' }), toolPiece(0, { id: 'call-b', name: 'two', args: '{"x":1}' }), toolPiece(0, { args: ' ' })]),
      ).toEqual([callStart('call-a', 'one', '{}'), callStart('call-b', 'two', '{"x":1}'), callArgs('call-b', ' ')]);
    });

    it('should give a call whose id another call of the message has a fresh id, saying so, and the client both calls', async () => {
      const sink = diagnosticsSink();
      const inputs: Input[] = [
        toolPiece(0, { id: 'call-a', name: 'heat', args: '{"c":' }),
        toolPiece(1, { id: 'call-a', name: 'kettle', args: '{"on":' }),
        toolPiece(0, { args: '21}' }),
        toolPiece(1, { args: 'true}' }),
        finish('tool_calls'),
        '[DONE]',
      ];
      expect(await adapt(inputs, { generateId: sequentialIds('fresh-'), onDiagnostic: sink.onDiagnostic })).toEqual([
        callStart('call-a', 'heat', '{"c":'),
        callStart('fresh-1', 'kettle', '{"on":'),
        callArgs('call-a', '21}'),
        callArgs('fresh-1', 'true}'),
      ]);
      expect(sink.messages).toEqual([
        "fromOpenAIChatCompletions: choices[0].delta.tool_calls[0] starts a tool call under id 'call-a', which another call of this message has; it is sent as 'fresh-1' so that the two stay apart. Each call needs an id of its own: check the server.",
      ]);
      const run = await runWithOracle(from(inputs).pipe(fromOpenAIChatCompletions({ generateId: sequentialIds('fresh-'), onDiagnostic: () => undefined }), toAgui({ threadId: 't1', runId: 'r1' })));
      expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'success', pendingToolCallIds: ['call-a', 'fresh-1'] } });
      expect(run.messages).toEqual([
        expect.objectContaining({
          role: 'assistant',
          toolCalls: [
            { id: 'call-a', type: 'function', function: { name: 'heat', arguments: '{"c":21}' } },
            { id: 'fresh-1', type: 'function', function: { name: 'kettle', arguments: '{"on":true}' } },
          ],
        }),
      ]);
    });

    it('should mint an id for a call that has none', async () => {
      expect(await adapt([toolPiece(0, { name: 'lookup' }), toolPiece(0, { args: '{}' })], { generateId: sequentialIds('call-') })).toEqual([
        callStart('call-1', 'lookup'),
        callArgs('call-1', '{}'),
      ]);
    });

    it('should continue the latest call with pieces that carry no index', async () => {
      const piece = (fields: Record<string, unknown>) => chunk({ tool_calls: [fields as never] });
      expect(
        await adapt([
          piece({ id: 'call-a', function: { name: 'one', arguments: '{"a":' } }),
          piece({ function: { arguments: '1}' } }),
          piece({ id: 'call-b', function: { name: 'two', arguments: '{}' } }),
          piece({ id: 'call-b', function: { arguments: ' ' } }),
        ]),
      ).toEqual([callStart('call-a', 'one', '{"a":'), callArgs('call-a', '1}'), callStart('call-b', 'two', '{}'), callArgs('call-b', ' ')]);
    });

    it('should end the calls at finish_reason: a later piece at the same index is no continuation', async () => {
      expect(await failure([toolPiece(0, { id: 'call-a', name: 'one' }), finish('tool_calls'), toolPiece(0, { args: '{}' })])).toEqual(
        invalidEvent("choices[0].delta.tool_calls[0] starts a tool call without function.name. The first piece of each call must carry the tool's name (and id); is the stream cut short or reordered?"),
      );
    });

    it('should parent the calls of each completion on that completion', async () => {
      expect(
        await adapt([toolPiece(0, { id: 'call-a', name: 'one' }), finish('tool_calls'), { ...toolPiece(0, { id: 'call-b', name: 'two' }), id: 'cmpl-2' }, finish('tool_calls', { id: 'cmpl-2' })]),
      ).toEqual([callStart('call-a', 'one'), callStart('call-b', 'two', undefined, 'cmpl-2')]);
    });

    it('should read the legacy function_call as a tool call', async () => {
      expect(
        await adapt([chunk({ function_call: { name: 'get_time', arguments: '' } }), chunk({ function_call: { arguments: '{"tz":"UTC"}' } }), finish('function_call')], {
          generateId: sequentialIds('fn-'),
        }),
      ).toEqual([callStart('fn-1', 'get_time'), callArgs('fn-1', '{"tz":"UTC"}')]);
    });
  });

  describe('audio output', () => {
    // gpt-4o-audio-preview with modalities ['text', 'audio'], stream: true: the answer's text comes only as the audio's transcript.
    const spoken = (fields: Partial<ChatCompletionChunk> = {}): Input[] => [
      chunk({ role: 'assistant', content: null, refusal: null }, fields),
      chunk({ audio: { id: 'audio_1', transcript: 'Hello' } }, fields),
      chunk({ audio: { transcript: ', how can I help?' } }, fields),
      chunk({ audio: { data: 'UklGRiQAAABXQVZF' } }, fields),
      chunk({ audio: { data: 'Zm10IBAAAAAB' } }, fields),
      chunk({ audio: { expires_at: 1729018505 } }, fields),
      finish('stop', fields),
      '[DONE]',
    ];
    const dropped = (messageId: string) =>
      `fromOpenAIChatCompletions dropped the audio of message '${messageId}' (choices[0].delta.audio.data, audio id 'audio_1'): AG-UI has no event that carries audio in an assistant message, so only its transcript is sent, as the message's text. To play it, read delta.audio.data from the chunks yourself (raw: true also sends each chunk as RAW).`;

    it("should send the audio's transcript as the message's text, and tell onDiagnostic once per message that its audio was dropped", async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      expect(await adapt([...spoken(), ...spoken({ id: 'cmpl-2' })], { onDiagnostic })).toEqual([
        text('Hello'),
        text(', how can I help?'),
        text('Hello', 'cmpl-2'),
        text(', how can I help?', 'cmpl-2'),
      ]);
      expect(messages).toEqual([dropped('cmpl-1'), dropped('cmpl-2')]);
    });

    it('should give the official client the spoken answer as an assistant message', async () => {
      const { onDiagnostic } = diagnosticsSink();
      const run = await runWithOracle(from(spoken({ model: 'gpt-4o-audio-preview' })).pipe(fromOpenAIChatCompletions({ onDiagnostic }), toAgui({ threadId: 't1', runId: 'r1' })) as Observable<Event>);
      expect(run.messages).toEqual([{ id: 'cmpl-1', role: 'assistant', content: 'Hello, how can I help?' }]);
    });

    it('should refuse an audio that is not an object', async () => {
      expect(await failure([chunk({ audio: 'UklG' as never })])).toEqual(invalidEvent(`choices[0].delta.audio is "UklG", but it must be an object such as { transcript: 'Hi' }.`));
    });
  });

  describe('servers that give every chunk a new id (llama.cpp issue 5876, Foundry Local)', () => {
    // Each chunk its own id, as those servers send them.
    const renamed = (inputs: readonly ChatCompletionChunk[]): ChatCompletionChunk[] => inputs.map((input, i) => ({ ...input, id: `chatcmpl-${i + 1}` }));
    const idChanged = (id: string, completion: string) =>
      `fromOpenAIChatCompletions read chunk '${id}' as part of completion '${completion}': it continues that completion's tool calls (or only finishes them), though its id differs. OpenAI gives every chunk of a completion the same id; this server changes it, so its text may become one message per chunk. Fix the server, or give every chunk of the stream the first chunk's id before the adapter. Later id changes of this stream are read the same way without another warning.`;

    it('should read a chunk that only continues the open calls, or only finishes them, as the same completion, saying so once', async () => {
      const inputs: Input[] = [
        ...renamed([
          chunk({ role: 'assistant', content: 'Let me ' }),
          chunk({ content: 'check.' }),
          toolPiece(0, { id: 'call_1', name: 'weather', args: '{"city":' }),
          toolPiece(0, { args: '"Oslo"' }),
          chunk({ tool_calls: [{ index: 0, id: 'call_1', function: { arguments: '}' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '' } }] }),
          finish('tool_calls'),
        ]),
        '[DONE]',
      ];
      const { onDiagnostic, messages } = diagnosticsSink();
      expect(await adapt(inputs, { onDiagnostic })).toEqual([
        text('Let me ', 'chatcmpl-1'),
        text('check.', 'chatcmpl-2'),
        callStart('call_1', 'weather', '{"city":', 'chatcmpl-3'),
        callArgs('call_1', '"Oslo"'),
        callArgs('call_1', '}'),
      ]);
      expect(messages).toEqual([idChanged('chatcmpl-4', 'chatcmpl-3')]);
      const run = await runWithOracle(from(inputs).pipe(fromOpenAIChatCompletions({ onDiagnostic }), toAgui({ threadId: 't1', runId: 'r1' })) as Observable<Event>);
      expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'success', pendingToolCallIds: ['call_1'] } });
      expect(run.messages.at(-1)).toEqual({ id: 'chatcmpl-3', role: 'assistant', toolCalls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] });
    });

    it('should check the calls at the finish that came under a new id: a call cut by length fails', async () => {
      const inputs = renamed([toolPiece(0, { id: 'call_1', name: 'weather', args: '{"city":' }), toolPiece(0, { args: '"Os' }), finish('length')]);
      expect(await failure(inputs)).toEqual(lengthCut("tool call 'call_1' (weather), so its arguments are"));
    });

    it('should begin a new completion for any other chunk with a new id, also while calls are open', async () => {
      expect(
        await adapt([
          toolPiece(0, { id: 'call-a', name: 'one', args: '{}' }),
          { ...toolPiece(0, { id: 'call-b', name: 'two', args: '{}' }), id: 'cmpl-2' },
          { ...chunk({ content: 'Done.' }), id: 'cmpl-3' },
        ]),
      ).toEqual([callStart('call-a', 'one', '{}'), callStart('call-b', 'two', '{}', 'cmpl-2'), text('Done.', 'cmpl-3')]);
    });

    it('should say that the server changed the chunk id when a piece continues a call its new completion does not have', async () => {
      const inputs = renamed([toolPiece(0, { id: 'call_1', name: 'weather', args: '{"city":' }), chunk({ content: 'Hm.' }), toolPiece(0, { args: '"Oslo"}' })]);
      expect(await failure(inputs)).toEqual(
        invalidEvent(
          "choices[0].delta.tool_calls[0] continues tool call 'call_1' (it has no function.name), but its chunk's id 'chatcmpl-3' differs from the chunk before it ('chatcmpl-2'): the server changed the id in the middle of a completion, and a chunk with a new id begins a new completion, which has no call to continue. OpenAI gives every chunk of a completion the same id; fix the server, or give every chunk of the stream the first chunk's id before the adapter.",
        ),
      );
      const events = await collect(from(inputs).pipe(fromOpenAIChatCompletions(), toAgui({ threadId: 't1', runId: 'r1' })));
      expect(terminals(events as Event[])).toEqual([expect.objectContaining({ type: EventType.RUN_ERROR, code: 'INVALID_EVENT' })]);
    });
  });

  describe("Gemini's thought signatures (OpenAI-compatible endpoint)", () => {
    const signed = (index: number, id: string, name: string, args: string, extra_content: unknown) =>
      chunk({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: args }, extra_content } as never] }, { model: 'gemini-3-pro-preview' });
    const mark = { google: { encryptedValue: 'thought_signature' } };
    const signature = (entityId: string, encryptedValue: string): AgentEvent => ({ type: EventType.REASONING_ENCRYPTED_VALUE, subtype: 'tool-call', entityId, encryptedValue });

    it("should make a call's extra_content.google.thought_signature its encrypted value, marked as Gemini's, which the client keeps on the call and toOpenAIChatMessages sends back", async () => {
      const inputs: Input[] = [
        chunk({ role: 'assistant', tool_calls: [
          { index: 0, id: 'function-call-1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' }, extra_content: { google: { thought_signature: 'CrICAdHtim827fQ' } } },
          { index: 1, id: 'function-call-2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
        ] as never }),
        finish('tool_calls'),
        '[DONE]',
      ];
      const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
      expect(await adapt(inputs, { onDiagnostic })).toEqual([
        { ...callStart('function-call-1', 'get_weather', '{"city":"Oslo"}'), metadata: mark },
        signature('function-call-1', 'CrICAdHtim827fQ'),
        callStart('function-call-2', 'get_time', '{}'),
      ]);
      const run = await runWithOracle(from(inputs).pipe(fromOpenAIChatCompletions({ onDiagnostic }), toAgui({ threadId: 't1', runId: 'r1' })) as Observable<Event>);
      expect(run.messages).toEqual([
        {
          id: 'cmpl-1',
          role: 'assistant',
          toolCalls: [
            { id: 'function-call-1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' }, encryptedValue: 'CrICAdHtim827fQ', metadata: mark },
            { id: 'function-call-2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
          ],
        },
      ]);
      const warnings: string[] = [];
      const next = toOpenAIChatMessages(
        [...run.messages, { id: 't1', role: 'tool', toolCallId: 'function-call-1', content: 'Sunny' }, { id: 't2', role: 'tool', toolCallId: 'function-call-2', content: '09:00' }],
        { onWarning: (warning) => void warnings.push(warning) },
      );
      expect(next[0]).toEqual({
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'function-call-1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' }, extra_content: { google: { thought_signature: 'CrICAdHtim827fQ' } } },
          { id: 'function-call-2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
        ],
      });
      expect(warnings).toEqual([]);
      expect(diagnostics).toEqual([]);
    });

    it('should read a signature on a later piece of the call too', async () => {
      expect(await adapt([toolPiece(0, { id: 'call-1', name: 'f', args: '{"a":' }), signed(0, 'call-1', '', '1}', { google: { thought_signature: 'SIG' } })])).toEqual([
        callStart('call-1', 'f', '{"a":'),
        { ...callArgs('call-1', '1}'), metadata: mark },
        signature('call-1', 'SIG'),
      ]);
    });

    it('should drop the other fields of extra_content, and a delta.extra_content, telling onDiagnostic once per kind', async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      const text$ = (content: string) => chunk({ content, extra_content: { google: { thought_signature: 'TXT' } } } as never);
      expect(
        await adapt(
          [text$('Hi'), text$('!'), signed(0, 'call-1', 'f', '{}', { google: { thought_signature: 'SIG', other: 1 }, vendor: {} }), signed(1, 'call-2', 'g', '{}', { vendor: {} })],
          { onDiagnostic },
        ),
      ).toEqual([text('Hi'), text('!'), { ...callStart('call-1', 'f', '{}'), metadata: mark }, signature('call-1', 'SIG'), callStart('call-2', 'g', '{}')]);
      expect(messages).toEqual([
        "fromOpenAIChatCompletions dropped the extra_content of message 'cmpl-1' (choices[0].delta.extra_content, such as Gemini's thought signature of its text): it has no AG-UI form; only a tool call's thought signature is kept (as the call's encryptedValue). Later delta.extra_content of this stream is dropped without another warning.",
        "fromOpenAIChatCompletions dropped 'vendor', 'google.other' of a tool call piece's extra_content (choices[0].delta.tool_calls[0].extra_content): only Gemini's google.thought_signature has an AG-UI form (the call's encryptedValue). Later such fields of this stream are dropped without another warning.",
      ]);
    });

    it('should refuse an extra_content that is not an object', async () => {
      expect(await failure([signed(0, 'call-1', 'f', '{}', 'SIG')])).toEqual(
        invalidEvent(`choices[0].delta.tool_calls[0].extra_content is "SIG", but it must be an object such as { google: { thought_signature: '…' } }.`),
      );
    });
  });

  describe("OpenRouter's reasoning_details", () => {
    const base = { id: 'gen-1', object: 'chat.completion.chunk', created: 1, model: 'google/gemini-3-pro-preview' };
    const routed = (delta: Record<string, unknown>, finish: string | null = null): Input => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] }) as Input;
    const gemini3: Input[] = [
      routed({ role: 'assistant', content: '', reasoning: 'Need weather.', reasoning_details: [{ type: 'reasoning.text', text: 'Need weather.', format: 'google-gemini-v1', index: 0 }] }),
      routed({ role: 'assistant', content: '', reasoning: null, reasoning_details: [{ type: 'reasoning.encrypted', data: 'CiQBjz1rX', format: 'google-gemini-v1', index: 0, id: 'tool_get_weather_abc' }] }),
      routed({ content: null, tool_calls: [{ index: 0, id: 'tool_get_weather_abc', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] }),
      routed({ content: '' }, 'tool_calls'),
      { ...base, choices: [], usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 } } as Input,
      '[DONE]',
    ];
    const mark = { openrouter: { encryptedValue: 'reasoning.encrypted', format: 'google-gemini-v1' } };
    const sealOf = (subtype: 'tool-call' | 'message', entityId: string, encryptedValue: string): AgentEvent => ({ type: EventType.REASONING_ENCRYPTED_VALUE, subtype, entityId, encryptedValue });
    const textRead =
      "fromOpenAIChatCompletions read the text of reasoning_details (choices[0].delta.reasoning_details[0]) as the text of reasoning message 'gen-1-reasoning' (the same text as delta.reasoning); the blocks themselves (their type, format and index) have no AG-UI form and are not kept, so toOpenAIChatMessages cannot send them back as reasoning_details. Only encrypted blocks are kept (as encrypted values), and only a tool call's is sent back. Later reasoning_details text of this stream is read the same way without another warning.";

    it('should give the call an encrypted block names its encrypted value, marked, which the client keeps and toOpenAIChatMessages sends back', async () => {
      const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
      expect(await adapt(gemini3, { onDiagnostic })).toEqual([
        reasoning('Need weather.', 'gen-1-reasoning'),
        { ...callStart('tool_get_weather_abc', 'get_weather', '{"city":"Paris"}', 'gen-1'), metadata: mark },
        sealOf('tool-call', 'tool_get_weather_abc', 'CiQBjz1rX'),
        tokenUsage({ inputTokens: 10, outputTokens: 20, totalTokens: 30, model: 'google/gemini-3-pro-preview' }),
      ]);
      expect(diagnostics).toEqual([textRead]);
      const run = await runWithOracle(from(gemini3).pipe(fromOpenAIChatCompletions({ onDiagnostic }), toAgui({ threadId: 't1', runId: 'r1' })) as Observable<Event>);
      expect(run.messages).toEqual([
        { id: 'gen-1-reasoning', role: 'reasoning', content: 'Need weather.' },
        {
          id: 'gen-1',
          role: 'assistant',
          toolCalls: [{ id: 'tool_get_weather_abc', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' }, encryptedValue: 'CiQBjz1rX', metadata: mark }],
        },
      ]);
      const warnings: string[] = [];
      const next = toOpenAIChatMessages([...run.messages, { id: 't1', role: 'tool', toolCallId: 'tool_get_weather_abc', content: 'Sunny' }], { onWarning: (warning) => void warnings.push(warning) });
      expect(next).toEqual([
        {
          role: 'assistant',
          content: null,
          reasoning_details: [{ type: 'reasoning.encrypted', id: 'tool_get_weather_abc', data: 'CiQBjz1rX', format: 'google-gemini-v1', index: 0 }],
          tool_calls: [{ id: 'tool_get_weather_abc', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'tool_get_weather_abc', content: 'Sunny' },
      ]);
      expect(warnings).toEqual([
        "toOpenAIChatMessages dropped reasoning message 'gen-1-reasoning': Chat Completions takes no reasoning as input. Use the Responses API (toOpenAIResponsesInput) to send encrypted reasoning back.",
      ]);
    });

    it("should seal a call at once when the call came first, and keep other encrypted blocks and Anthropic's signatures on the reasoning message", async () => {
      const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
      expect(
        await adapt(
          [
            toolPiece(0, { id: 'call-1', name: 'f', args: '{}' }),
            chunk({ reasoning_details: [{ type: 'reasoning.encrypted', data: 'AFTER', id: 'call-1' }] } as never),
            chunk({ reasoning_details: [{ type: 'reasoning.encrypted', data: 'NO-CALL', id: 'rs_9' }] } as never),
            finish('tool_calls'),
            chunk({ reasoning: 'Hmm', reasoning_details: [{ type: 'reasoning.text', text: 'Hmm', signature: '', format: 'anthropic-claude-v1', index: 0 }] } as never, { id: 'cmpl-2' }),
            chunk({ reasoning: '', reasoning_details: [{ type: 'reasoning.text', text: '', signature: 'ErUB', format: 'anthropic-claude-v1', index: 0 }] } as never, { id: 'cmpl-2' }),
            chunk({ reasoning_details: [{ type: 'reasoning.encrypted', data: 'SECOND' }] } as never, { id: 'cmpl-2' }),
          ],
          { onDiagnostic },
        ),
      ).toEqual([
        callStart('call-1', 'f', '{}'),
        sealOf('tool-call', 'call-1', 'AFTER'),
        { type: EventType.REASONING_MESSAGE_START, messageId: 'cmpl-1-reasoning', role: 'reasoning' },
        sealOf('message', 'cmpl-1-reasoning', 'NO-CALL'),
        reasoning('Hmm', 'cmpl-2-reasoning'),
        sealOf('message', 'cmpl-2-reasoning', 'ErUB'),
      ]);
      expect(diagnostics).toEqual([
        textRead.replace("'gen-1-reasoning'", "'cmpl-2-reasoning'"),
        "fromOpenAIChatCompletions dropped a second encrypted value of reasoning message 'cmpl-2-reasoning': AG-UI keeps one encryptedValue per message or call, and the first stands. Later such values of this stream are dropped without another warning.",
      ]);
    });

    it('should read the text of the blocks when the delta has no reasoning, and drop blocks of an unknown type, telling onDiagnostic once per type', async () => {
      const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
      const details = (...entries: unknown[]) => chunk({ reasoning_details: entries } as never);
      expect(
        await adapt([details({ type: 'reasoning.summary', summary: 'Plan' }), details({ type: 'reasoning.future', x: 1 }, { type: 'reasoning.future' }), details({ type: 'reasoning.text', text: '.' })], { onDiagnostic }),
      ).toEqual([reasoning('Plan'), reasoning('.')]);
      expect(diagnostics).toEqual([
        textRead.replace("'gen-1-reasoning'", "'cmpl-1-reasoning'"),
        "fromOpenAIChatCompletions dropped a 'reasoning.future' reasoning block (choices[0].delta.reasoning_details[0]): only 'reasoning.text', 'reasoning.summary' and 'reasoning.encrypted' blocks have an AG-UI form. Later 'reasoning.future' blocks of this stream are dropped without another warning.",
      ]);
    });

    it('should build the reasoning message with its encrypted value in the official client when no text came', async () => {
      const inputs: Input[] = [chunk({ reasoning_details: [{ type: 'reasoning.encrypted', data: 'ENC', format: 'openai-responses-v1' }] } as never), chunk({ content: 'Hi' }), finish('stop')];
      const run = await runWithOracle(from(inputs).pipe(fromOpenAIChatCompletions(), toAgui({ threadId: 't1', runId: 'r1' })) as Observable<Event>);
      expect(run.messages).toEqual([
        { id: 'cmpl-1-reasoning', role: 'reasoning', content: '', encryptedValue: 'ENC' },
        { id: 'cmpl-1', role: 'assistant', content: 'Hi' },
      ]);
    });

    it('should end the run with RUN_ERROR INVALID_EVENT on reasoning_details that are not an array of blocks', async () => {
      const details = (value: unknown) => chunk({ reasoning_details: value } as never);
      expect(await failure([details({ type: 'reasoning.text' })])).toEqual(
        invalidEvent(
          "choices[0].delta.reasoning_details is an object, but it must be an array of reasoning blocks such as [{ type: 'reasoning.encrypted', data: '…', id: 'call_1', format: 'google-gemini-v1' }] (OpenRouter's format).",
        ),
      );
      expect(await failure([details(['x'])])).toEqual(invalidEvent(`choices[0].delta.reasoning_details[0] is "x", but it must be an object such as { type: 'reasoning.text', text: '…' }.`));
      expect(await failure([details([{ text: 'x' }])])).toEqual(
        invalidEvent("choices[0].delta.reasoning_details[0] has 'type: undefined', but a reasoning block's type must be a string such as 'reasoning.text' or 'reasoning.encrypted'."),
      );
      expect(await failure([details([{ type: 'reasoning.encrypted', data: 7 }])])).toEqual(invalidEvent('choices[0].delta.reasoning_details[0].data is number 7, but it must be a string.'));
      const events = await collect(from([chunk({ reasoning: 'a' }), details(5)]).pipe(fromOpenAIChatCompletions(), toAgui({ threadId: 't1', runId: 'r1', onDiagnostic: () => undefined })));
      expect(terminals(events)).toEqual([
        expect.objectContaining({
          type: EventType.RUN_ERROR,
          code: 'INVALID_EVENT',
          message: expect.stringContaining("choices[0].delta.reasoning_details is number 5, but it must be an array of reasoning blocks such as [{ type: 'reasoning.encrypted'"),
        }),
      ]);
    });
  });

  describe('custom (freeform) tool calls (openai-python#2530)', () => {
    const customPiece = (fields: { id?: string; name?: string; input?: string; type?: boolean }) =>
      chunk({
        tool_calls: [
          {
            index: 0,
            ...(fields.id === undefined ? {} : { id: fields.id }),
            ...(fields.type === false ? {} : { type: 'custom' }),
            custom: { ...(fields.name === undefined ? {} : { name: fields.name }), ...(fields.input === undefined ? {} : { input: fields.input }) },
          } as never,
        ],
      });
    const inputs: Input[] = [customPiece({ id: 'call_1', name: 'code_exec', input: '' }), customPiece({ input: 'print("hi")' }), customPiece({ input: '\n', type: false }), finish('tool_calls'), '[DONE]'];

    it('should read the name from custom.name and the input as {"input": "<text>"}, marked as fromOpenAIResponses marks a custom_tool_call', async () => {
      expect(await adapt(inputs)).toEqual([{ ...callStart('call_1', 'code_exec', '{"input":"'), metadata: { openai: { type: 'custom_tool_call' } } }, callArgs('call_1', 'print(\\"hi\\")'), callArgs('call_1', '\\n'), callArgs('call_1', '"}')]);
      const run = await runWithOracle(from(inputs).pipe(fromOpenAIChatCompletions(), toAgui({ threadId: 't1', runId: 'r1' })) as Observable<Event>);
      expect(run.messages).toEqual([
        { id: 'cmpl-1', role: 'assistant', toolCalls: [{ id: 'call_1', type: 'function', function: { name: 'code_exec', arguments: JSON.stringify({ input: 'print("hi")\n' }) }, metadata: { openai: { type: 'custom_tool_call' } } }] },
      ]);
      // The client keeps the mark, so the call goes back as the custom call it came as.
      expect(toOpenAIChatMessages([...run.messages, { id: 't1', role: 'tool', toolCallId: 'call_1', content: 'hi' }])).toEqual([
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'custom', custom: { name: 'code_exec', input: 'print("hi")\n' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'hi' },
      ]);
    });

    it('should fail a custom call cut by length, or left open by the source, with INCOMPLETE_STREAM', async () => {
      expect(await failure([customPiece({ id: 'call_1', name: 'code_exec', input: 'print(' }), finish('length')])).toEqual(lengthCut(`tool call 'call_1' (code_exec), so its arguments are`));
      expect(await failure([customPiece({ id: 'call_1', name: 'code_exec', input: 'print(' })])).toMatchObject({ code: 'INCOMPLETE_STREAM' });
    });

    it('should say that a piece of another type is not read, not that the stream was cut', async () => {
      expect(await failure([chunk({ tool_calls: [{ index: 0, id: 'c1', type: 'mcp', mcp: { name: 'x' } } as never] })])).toEqual(
        invalidEvent(
          "choices[0].delta.tool_calls[0] is a tool call piece of type 'mcp', which fromOpenAIChatCompletions cannot read: only 'function' calls (with function.name and function.arguments) and 'custom' calls (with custom.name and custom.input) are. Map such pieces to one of these before the adapter, or read them from the chunks yourself (raw: true also sends each chunk as RAW).",
        ),
      );
      expect(await failure([customPiece({ id: 'c1', input: 'x' })])).toEqual(
        invalidEvent("choices[0].delta.tool_calls[0] starts a tool call ('c1') without custom.name. The first piece of each call must carry the tool's name (and id); is the stream cut short or reordered?"),
      );
    });
  });

  (haveFixtures ? describe : describe.skip)('DeepSeek thinking mode with a tool call (recorded: vercel-deepseek-reasoning-tool-call.jsonl)', () => {
    it('should send the reasoning back as reasoning_content on the assistant message with the call, with toOpenAIChatMessages reasoningContent: true', async () => {
      const inputs: Input[] = readFileSync(join(fixturesDir, 'openai-chat-completions', 'vercel-deepseek-reasoning-tool-call.jsonl'), 'utf8')
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line));
      const run = await runWithOracle(from(inputs).pipe(fromOpenAIChatCompletions(), toAgui({ threadId: 't1', runId: 'r1' })) as Observable<Event>);
      const thought = inputs.map((input) => (input === '[DONE]' ? '' : (input.choices[0]?.delta.reasoning_content ?? ''))).join('');
      const id = (inputs[0] as ChatCompletionChunk).id;
      expect(thought).toMatch(/^The user/);
      expect(run.messages).toEqual([
        { id: `${id}-reasoning`, role: 'reasoning', content: thought },
        { id, role: 'assistant', toolCalls: [expect.objectContaining({ type: 'function', function: expect.objectContaining({ name: expect.any(String) }) })] },
      ]);
      const call = (run.messages[1] as { toolCalls: { id: string; function: { name: string; arguments: string } }[] }).toolCalls[0];
      const warnings: string[] = [];
      const history = [{ id: 'u1', role: 'user' as const, content: 'What is the weather?' }, ...run.messages, { id: 't1', role: 'tool' as const, toolCallId: call.id, content: '{"temp":20}' }];
      expect(toOpenAIChatMessages(history, { reasoningContent: true, onWarning: (warning) => void warnings.push(warning) })).toEqual([
        { role: 'user', content: 'What is the weather?' },
        { role: 'assistant', content: null, reasoning_content: thought, tool_calls: [{ id: call.id, type: 'function', function: call.function }] },
        { role: 'tool', tool_call_id: call.id, content: '{"temp":20}' },
      ]);
      expect(warnings).toEqual([]);
    });
  });

  describe('content parts (Mistral)', () => {
    const parts = (...content: ChatCompletionContentPart[]) => chunk({ content });
    const noText = (where: string) =>
      `fromOpenAIChatCompletions dropped a 'text' content part without a 'text' string (${where}): it carries nothing to show. Later 'text' parts without text in this stream are dropped without another warning.`;
    const noParts = (where: string, thinking: string) =>
      `fromOpenAIChatCompletions dropped a 'thinking' content part without parts (${where}): its 'thinking' is ${thinking}, where a list of text parts such as [{ type: 'text', text: 'Hi' }] was expected. Later 'thinking' parts without parts in this stream are dropped without another warning.`;
    const thinking = (...texts: string[]): ChatCompletionContentPart => ({ type: 'thinking', thinking: texts.map((piece) => ({ type: 'text' as const, text: piece })) });

    it('should send text parts as text and the text parts of thinking as reasoning, in their order', async () => {
      expect(
        await adapt([
          chunk({ role: 'assistant', content: '' }),
          parts(thinking('Boils', ' lower')),
          parts(thinking(' up high.'), { type: 'text', text: 'About' }),
          chunk({ content: ' 90' }),
          parts({ type: 'text', text: ' °C.' }, { type: 'text', text: '' }),
          finish('stop'),
        ]),
      ).toEqual([reasoning('Boils'), reasoning(' lower'), reasoning(' up high.'), text('About'), text(' 90'), text(' °C.')]);
    });

    it('should read a thinking given as a string, send nothing for empty or absent pieces, and tell onDiagnostic of parts without content', async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      expect(
        await adapt(
          [parts({ type: 'thinking', thinking: 'so' } as unknown as ChatCompletionContentPart), parts({ type: 'thinking', thinking: [] }), parts({ type: 'text' } as ChatCompletionContentPart), chunk({ content: [] })],
          { onDiagnostic },
        ),
      ).toEqual([reasoning('so')]);
      expect(messages).toEqual([noParts('choices[0].delta.content[0]', 'an array of 0'), noText('choices[0].delta.content[0]')]);
    });

    it('should drop a text part without text, a thinking part without parts and a part of an unknown type, each kind told once per stream, and empty text silently', async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      const inputs: Input[] = [
        parts({ type: 'text', text: 'Hi' }),
        parts({ type: 'text', text: '' }, { type: 'text' } as ChatCompletionContentPart),
        parts({ type: 'text', text: null } as unknown as ChatCompletionContentPart),
        parts({ type: 'thinking', thinking: [{ type: 'text' } as never] }),
        parts({ type: 'thinking' } as unknown as ChatCompletionContentPart),
        parts({ type: 'thinking', thinking: null } as unknown as ChatCompletionContentPart, { type: 'thinking', thinking: [] }),
        parts({ type: 'thinking', thinking: '' } as unknown as ChatCompletionContentPart, thinking('')),
        parts({ type: 'audio_chunk', data: 'AA' } as never, { type: 'text', text: ' there' }),
        parts({ type: 'audio_chunk', data: 'BB' } as never),
        finish('stop'),
      ];
      const adapted$ = from(inputs).pipe(fromOpenAIChatCompletions({ onDiagnostic }));
      expect(await collect(adapted$)).toEqual([text('Hi'), text(' there')]);
      expect(messages).toEqual([
        noText('choices[0].delta.content[1]'),
        noParts('choices[0].delta.content[0]', 'undefined'),
        "fromOpenAIChatCompletions dropped a 'audio_chunk' content part (choices[0].delta.content[0]): it has no AG-UI text or reasoning form, as only 'text' parts and the text of 'thinking' parts are read. Later 'audio_chunk' parts of this stream are dropped without another warning.",
      ]);
      const run = await runWithOracle(from(inputs).pipe(fromOpenAIChatCompletions({ onDiagnostic: () => undefined }), toAgui({ threadId: 't1', runId: 'r1' })));
      expect(run.messages).toEqual([{ id: 'cmpl-1', role: 'assistant', content: 'Hi there' }]);
      expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
    });

    it('should drop parts without a text form, telling onDiagnostic once per type per subscription', async () => {
      const { onDiagnostic, messages } = diagnosticsSink();
      const inputs: Input[] = [
        parts({ type: 'text', text: 'See' }, { type: 'reference', reference_ids: [1] }),
        parts({ type: 'thinking', thinking: [{ type: 'reference', reference_ids: [2] }, { type: 'text', text: 'hm' }] }),
        parts({ type: 'image_url', image_url: 'https://example.com/a.png' }, { type: 'text', text: ' this.' }),
      ];
      const adapted$ = from(inputs).pipe(fromOpenAIChatCompletions({ onDiagnostic }));
      expect(await collect(adapted$)).toEqual([text('See'), reasoning('hm'), text(' this.')]);
      expect(messages).toEqual([
        "fromOpenAIChatCompletions dropped a 'reference' content part (choices[0].delta.content[1]): it has no AG-UI text or reasoning form, as only 'text' parts and the text of 'thinking' parts are read. Later 'reference' parts of this stream are dropped without another warning.",
        "fromOpenAIChatCompletions dropped a 'image_url' content part (choices[0].delta.content[0]): it has no AG-UI text or reasoning form, as only 'text' parts and the text of 'thinking' parts are read. Later 'image_url' parts of this stream are dropped without another warning.",
      ]);
      // A second subscription is a new stream: it reports again.
      await collect(adapted$);
      expect(messages).toHaveLength(4);
    });

    it.each([
      ['content that is neither a string nor an array', { content: 42 }, "choices[0].delta.content is number 42, but it must be a string or an array of content parts such as [{ type: 'text', text: 'Hi' }]."],
      ['a part that is not an object', { content: ['Hi'] }, `choices[0].delta.content[0] is "Hi", but it must be an object such as { type: 'text', text: 'Hi' }.`],
      ['a part without a string type', { content: [{ text: 'Hi' }] }, "choices[0].delta.content[0] has 'type: undefined', but a content part's type must be a string such as 'text' or 'thinking'."],
      ['a text part whose text is not a string', { content: [{ type: 'text', text: 7 }] }, 'choices[0].delta.content[0].text is number 7, but it must be a string.'],
      [
        'a thinking that is not an array',
        { content: [{ type: 'thinking', thinking: { text: 'a' } }] },
        "choices[0].delta.content[0].thinking is an object, but it must be an array of content parts such as [{ type: 'text', text: 'Hi' }].",
      ],
      ['a thinking part without a type', { content: [{ type: 'thinking', thinking: [{ text: 'a' }] }] }, "choices[0].delta.content[0].thinking[0] has 'type: undefined', but a content part's type must be a string such as 'text' or 'thinking'."],
    ])('should fail with INVALID_EVENT on %s', async (_name, delta, detail) => {
      expect(await failure([chunk({ content: 'ok' }), chunk(delta as ChatCompletionChunkDelta)])).toEqual(invalidEvent(detail));
    });

    it('should build the reasoning and the answer in the official client', async () => {
      const events$: Observable<Event> = from<Input[]>([parts(thinking('Low pressure.')), parts({ type: 'text', text: 'About 90 °C.' }), finish('stop')]).pipe(
        fromOpenAIChatCompletions(),
        toAgui({ threadId: 't1', runId: 'r1' }),
      );
      const run = await runWithOracle(events$);
      expect(run.messages.map((message) => [message.role, message.id, (message as { content?: string }).content])).toEqual([
        ['reasoning', 'cmpl-1-reasoning', 'Low pressure.'],
        ['assistant', 'cmpl-1', 'About 90 °C.'],
      ]);
    });
  });

  describe('a tool call cut by finish_reason length', () => {
    it('should fail with INCOMPLETE_STREAM naming the call, after its text, pieces and usage', async () => {
      const inputs: Input[] = [
        chunk({ content: 'Filing.' }),
        toolPiece(0, { id: 'call-1', name: 'file_report', args: '{"title": "Q3' }),
        toolPiece(0, { args: ' review", "body": "Rev' }),
        finish('length'),
        usageChunk({ prompt_tokens: 9, completion_tokens: 20, total_tokens: 29 }),
        '[DONE]',
      ];
      const events: AgentEvent[] = [];
      const error = await errorOf(collect(from(inputs).pipe(fromOpenAIChatCompletions(), tap((event) => events.push(event)))));
      expect(error).toEqual(lengthCut("tool call 'call-1' (file_report), so its arguments are"));
      expect(events).toEqual([
        text('Filing.'),
        callStart('call-1', 'file_report', '{"title": "Q3'),
        callArgs('call-1', ' review", "body": "Rev'),
        tokenUsage({ inputTokens: 9, outputTokens: 20, totalTokens: 29, model: 'gpt-test' }),
      ]);
    });

    it('should name only the calls the cut went through, and each of them', async () => {
      const two = await failure([
        toolPiece(0, { id: 'call-a', name: 'one', args: '{"a": 1}' }),
        toolPiece(1, { id: 'call-b', name: 'two', args: '{"b": [' }),
        toolPiece(2, { id: 'call-c', name: 'three', args: '' }),
        finish('length'),
      ]);
      expect(two).toEqual(lengthCut("tool calls 'call-b' (two), 'call-c' (three), so their arguments are"));
    });

    it('should fail when the next completion begins, before its first event', async () => {
      const events: AgentEvent[] = [];
      const error = await errorOf(
        collect(from<Input[]>([toolPiece(0, { id: 'call-1', name: 'f', args: '{' }), finish('length'), chunk({ content: 'next' }, { id: 'cmpl-2' })]).pipe(fromOpenAIChatCompletions(), tap((event) => events.push(event)))),
      );
      expect(error).toEqual(lengthCut("tool call 'call-1' (f), so its arguments are"));
      expect(events).toEqual([callStart('call-1', 'f', '{')]);
    });

    it('should read the legacy function_call the same way', async () => {
      const error = await errorOf(adapt([chunk({ function_call: { name: 'lookup', arguments: '{"id":' } }), finish('length')], { generateId: sequentialIds('fn-') }));
      expect(error).toEqual(lengthCut("tool call 'fn-1' (lookup), so its arguments are"));
    });

    it('should keep a call whose arguments are whole', async () => {
      expect(await adapt([toolPiece(0, { id: 'call-1', name: 'f', args: '{"a":' }), toolPiece(0, { args: ' 1} ' }), finish('length'), '[DONE]'])).toEqual([
        callStart('call-1', 'f', '{"a":'),
        callArgs('call-1', ' 1} '),
      ]);
      // Text cut by length, with no call, is kept as before.
      expect(await adapt([chunk({ content: 'The storm hit' }), finish('length'), '[DONE]'])).toEqual([text('The storm hit')]);
    });

    it('should fail a call still streaming when the source completes with no finish_reason, and keep a whole one', async () => {
      const events: AgentEvent[] = [];
      const error = await errorOf(
        collect(from<Input[]>([chunk({ content: 'Filing.' }), toolPiece(0, { id: 'call-1', name: 'file_report', args: '{"title": "Q3' })]).pipe(fromOpenAIChatCompletions(), tap((event) => events.push(event)))),
      );
      expect(error).toEqual(
        new AguiRxError(
          'INCOMPLETE_STREAM',
          "fromOpenAIChatCompletions: the stream ended before its finish_reason inside tool call 'call-1' (file_report), so its arguments are incomplete JSON and the call must not run. The text before it is kept. The connection was probably cut: retry the request, and check that the whole response body is read.",
        ),
      );
      expect(events).toEqual([text('Filing.'), callStart('call-1', 'file_report', '{"title": "Q3')]);
      // Some compatible servers send no finish_reason at all: a whole call is kept.
      expect(await adapt([toolPiece(0, { id: 'call-1', name: 'f', args: '{"a": 1}' }), '[DONE]'])).toEqual([callStart('call-1', 'f', '{"a": 1}')]);
    });

    it('should end the run with RUN_ERROR carrying the usage, and leave what was streamed of the call in the client', async () => {
      const events$: Observable<Event> = from<Input[]>([
        chunk({ content: 'Filing.' }),
        toolPiece(0, { id: 'call-1', name: 'file_report', args: '{"title": "Q3' }),
        finish('length'),
        usageChunk({ prompt_tokens: 9, completion_tokens: 20, total_tokens: 29 }),
        '[DONE]',
      ]).pipe(fromOpenAIChatCompletions(), toAgui({ threadId: 't1', runId: 'r1' }));
      const run = await runWithOracle(events$);
      expect(run.events.at(-1)).toMatchObject({
        type: EventType.RUN_ERROR,
        code: 'INCOMPLETE_STREAM',
        message: lengthCut("tool call 'call-1' (file_report), so its arguments are").message,
        usage: [{ inputTokens: 9, outputTokens: 20, totalTokens: 29, model: 'gpt-test' }],
      });
      expect(run.messages).toEqual([
        expect.objectContaining({ role: 'assistant', id: 'cmpl-1', content: 'Filing.', toolCalls: [{ id: 'call-1', type: 'function', function: { name: 'file_report', arguments: '{"title": "Q3' } }] }),
      ]);
    });
  });

  describe('a tool call whose arguments are not JSON at a finish the model gave', () => {
    const broken = (reason: string, which: string, must = 'the call must') =>
      new AguiRxError(
        'INCOMPLETE_STREAM',
        `fromOpenAIChatCompletions: the model said its output was finished (finish_reason: ${reason}), but the arguments of ${which} are not valid JSON, so ${must} not run. The text before it is kept. Retry the request; if it keeps happening, the model (or server) writes broken arguments for this tool: simplify its parameters or use another model.`,
      );
    const usage = { inputTokens: 9, outputTokens: 20, totalTokens: 29, model: 'gpt-test' };

    it('should end in RUN_ERROR naming the call at finish_reason tool_calls, after the text, pieces and usage', async () => {
      const inputs: Input[] = [
        chunk({ content: 'Filing.' }),
        toolPiece(0, { id: 'call-1', name: 'file_report', args: '{"title": ' }),
        toolPiece(0, { args: '"Q3"' }),
        finish('tool_calls'),
        usageChunk({ prompt_tokens: 9, completion_tokens: 20, total_tokens: 29 }),
        '[DONE]',
      ];
      const events: AgentEvent[] = [];
      const error = await errorOf(collect(from(inputs).pipe(fromOpenAIChatCompletions(), tap((event) => events.push(event)))));
      expect(error).toEqual(broken('tool_calls', "tool call 'call-1' (file_report)"));
      expect(events).toEqual([text('Filing.'), callStart('call-1', 'file_report', '{"title": '), callArgs('call-1', '"Q3"'), tokenUsage(usage)]);
      const run = await runWithOracle(from(inputs).pipe(fromOpenAIChatCompletions(), toAgui({ threadId: 't1', runId: 'r1' })));
      expect(run.events.at(-1)).toEqual({ type: EventType.RUN_ERROR, code: 'INCOMPLETE_STREAM', message: broken('tool_calls', "tool call 'call-1' (file_report)").message, usage: [usage] });
      expect(run.messages).toEqual([
        expect.objectContaining({ role: 'assistant', id: 'cmpl-1', content: 'Filing.', toolCalls: [{ id: 'call-1', type: 'function', function: { name: 'file_report', arguments: '{"title": "Q3"' } }] }),
      ]);
    });

    it('should say so for stop and the legacy function_call too, naming only the broken calls', async () => {
      expect(
        await failure([
          toolPiece(0, { id: 'call-a', name: 'one', args: '{"a": 1}' }),
          toolPiece(1, { id: 'call-b', name: 'two', args: '{"b": [' }),
          toolPiece(2, { id: 'call-c', name: 'three', args: 'not json' }),
          finish('stop'),
          '[DONE]',
        ]),
      ).toEqual(broken('stop', "tool calls 'call-b' (two), 'call-c' (three)", 'the calls must'));
      expect(await errorOf(adapt([chunk({ function_call: { name: 'lookup', arguments: '{"id":' } }), finish('function_call')], { generateId: sequentialIds('fn-') }))).toEqual(
        broken('function_call', "tool call 'fn-1' (lookup)"),
      );
    });

    it('should take a call with empty arguments as a call without arguments, and fail when the next completion begins', async () => {
      expect(await adapt([toolPiece(0, { id: 'call-1', name: 'now' }), finish('tool_calls'), '[DONE]'])).toEqual([callStart('call-1', 'now')]);
      const events: AgentEvent[] = [];
      const error = await errorOf(
        collect(from<Input[]>([toolPiece(0, { id: 'call-1', name: 'f', args: '{' }), finish('tool_calls'), chunk({ content: 'next' }, { id: 'cmpl-2' })]).pipe(fromOpenAIChatCompletions(), tap((event) => events.push(event)))),
      );
      expect(error).toEqual(broken('tool_calls', "tool call 'call-1' (f)"));
      expect(events).toEqual([callStart('call-1', 'f', '{')]);
    });

    it('should say content_filter cut the call, as length does', async () => {
      expect(await failure([toolPiece(0, { id: 'call-1', name: 'f', args: '{"a": "' }), finish('content_filter'), '[DONE]'])).toEqual(
        new AguiRxError(
          'INCOMPLETE_STREAM',
          "fromOpenAIChatCompletions: the model's output was cut by the provider's content filter (finish_reason: content_filter) inside tool call 'call-1' (f), so its arguments are incomplete JSON and the call must not run. The text before it is kept. Rephrase the request (or check the content filter settings) and retry it.",
        ),
      );
    });
  });

  describe('text between the argument pieces of one call', () => {
    it('should keep every piece on the one call, whatever text or reasoning comes between them', async () => {
      const inputs: Input[] = [
        toolPiece(0, { id: 'call-1', name: 'f', args: '{"a":' }),
        chunk({ content: 'x' }),
        chunk({ reasoning_content: 'hm' }),
        toolPiece(0, { args: '1}' }),
        finish('tool_calls'),
        '[DONE]',
      ];
      const events = await adapt(inputs);
      expect(events).toEqual([callStart('call-1', 'f', '{"a":'), text('x'), reasoning('hm'), callArgs('call-1', '1}')]);
      // The adapter never closes or re-keys the call: every piece names the one id.
      const ids = events.filter((event) => event.type === EventType.TOOL_CALL_CHUNK).map((event) => (event as { toolCallId: string }).toolCallId);
      expect(new Set(ids)).toEqual(new Set(['call-1']));
      // Whatever the downstream tracker makes of the text between, the client gets one call with the whole arguments.
      const run = await runWithOracle(from(inputs).pipe(fromOpenAIChatCompletions(), toAgui({ threadId: 't1', runId: 'r1' })));
      const calls = run.messages.flatMap((message) => (message.role === 'assistant' ? (message.toolCalls ?? []) : []));
      expect(calls).toEqual([{ id: 'call-1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }]);
      expect(run.messages.map((message) => [message.role, (message as { content?: string }).content ?? ''])).toEqual(
        expect.arrayContaining([['reasoning', 'hm']]),
      );
    });
  });

  describe('usage', () => {
    it('should map every count of the usage-only final chunk, with the model', async () => {
      expect(
        await adapt([
          chunk({ content: 'Hi' }),
          finish('stop'),
          usageChunk(
            {
              prompt_tokens: 1290,
              completion_tokens: 402,
              total_tokens: 1692,
              prompt_tokens_details: { cached_tokens: 1024, audio_tokens: 0 },
              completion_tokens_details: { reasoning_tokens: 384, audio_tokens: 0 },
            },
            { model: 'o4-mini' },
          ),
          '[DONE]',
        ]),
      ).toEqual([text('Hi'), tokenUsage({ inputTokens: 1290, outputTokens: 402, totalTokens: 1692, reasoningTokens: 384, cachedInputTokens: 1024, model: 'o4-mini' })]);
    });

    it('should read usage on a chunk with choices, as DeepSeek sends it', async () => {
      expect(
        await adapt([
          chunk({ content: 'Hi' }, { usage: null }),
          chunk({ content: '' }, { finish: 'stop', usage: { prompt_tokens: 21, completion_tokens: 24, total_tokens: 45, completion_tokens_details: { reasoning_tokens: 14 } } }),
        ]),
      ).toEqual([text('Hi'), tokenUsage({ inputTokens: 21, outputTokens: 24, totalTokens: 45, reasoningTokens: 14, model: 'gpt-test' })]);
    });

    describe("Groq's x_groq.usage", () => {
      // Groq's stream: its usage only in the last chunk's x_groq, beside its timings.
      const groq: Input[] = [
        chunk({ role: 'assistant', content: '' }, { id: 'chatcmpl-g', x_groq: { id: 'req_01' } }),
        chunk({ content: 'Hello' }, { id: 'chatcmpl-g' }),
        finish('stop', {
          id: 'chatcmpl-g',
          model: 'llama-3.3-70b-versatile',
          x_groq: { id: 'req_01', usage: { queue_time: 0.02, prompt_tokens: 12, prompt_time: 0.001, completion_tokens: 5, completion_time: 0.01, total_tokens: 17, total_time: 0.011 } as ChatCompletionUsage },
        }),
        '[DONE]',
      ];

      it('should read the last chunk’s x_groq.usage as the completion’s usage, which the client puts on RUN_FINISHED', async () => {
        expect(await adapt(groq)).toEqual([text('Hello', 'chatcmpl-g'), tokenUsage({ inputTokens: 12, outputTokens: 5, totalTokens: 17, model: 'llama-3.3-70b-versatile' })]);
        const run = await runWithOracle(from(groq).pipe(fromOpenAIChatCompletions(), toAgui({ threadId: 'thread-1', runId: 'run-1' })));
        expect(run.messages).toEqual([{ id: 'chatcmpl-g', role: 'assistant', content: 'Hello' }]);
        expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, usage: [{ inputTokens: 12, outputTokens: 5, totalTokens: 17, model: 'llama-3.3-70b-versatile' }] });
      });

      it('should prefer a top-level usage, and name x_groq.usage in the error of a bad count', async () => {
        expect(await adapt([usageChunk({ prompt_tokens: 3 }, { x_groq: { usage: { prompt_tokens: 99 } } })])).toEqual([tokenUsage({ inputTokens: 3, model: 'gpt-test' })]);
        expect(await failure([finish('stop', { x_groq: { usage: { prompt_tokens: -1 } } })])).toEqual(
          invalidEvent('x_groq.usage.prompt_tokens is number -1, but token counts must be non-negative integers.'),
        );
      });
    });

    it('should omit counts that are absent or null, and the model when unnamed', async () => {
      expect(await adapt([usageChunk({ prompt_tokens: 7, completion_tokens: null as never, prompt_tokens_details: null }, { model: '' })])).toEqual([tokenUsage({ inputTokens: 7 })]);
      const [event] = await adapt([usageChunk({ completion_tokens: 3 }, { model: undefined })]);
      expect(Object.entries((event as { usage: object }).usage)).toEqual([['outputTokens', 3]]);
    });

    it.each([
      ['a negative count', { completion_tokens: -1 }, 'usage.completion_tokens is number -1'],
      ['a fraction', { total_tokens: 1.5 }, 'usage.total_tokens is number 1.5'],
      ['a count sent as a string', { prompt_tokens: '12' as never }, 'usage.prompt_tokens is "12"'],
      ['a detail that is not a count', { completion_tokens_details: { reasoning_tokens: 'x' as never } }, 'usage.completion_tokens_details.reasoning_tokens is "x"'],
    ])('should fail with INVALID_EVENT naming the field for %s', async (_name, usage, described) => {
      expect(await failure([usageChunk(usage as never)])).toEqual(
        new AguiRxError('INVALID_EVENT', `fromOpenAIChatCompletions received a malformed chat.completion.chunk: ${described}, but token counts must be non-negative integers.`),
      );
    });

    it('should fail with PROVIDER_ERROR for an error beside choices, and for an error given as a string', async () => {
      const withChoices = (await failure([{ id: 'c', choices: [], error: { message: 'bad', code: 'server_error' } } as never])) as AguiRxError;
      expect([withChoices.code, withChoices.message]).toEqual([
        'PROVIDER_ERROR',
        "The model provider failed mid-stream: bad (server_error). Retry the request; if it keeps failing, check the request and the provider's status.",
      ]);
      const asString = (await failure([{ error: 'rate limited' } as never])) as AguiRxError;
      expect([asString.code, asString.message]).toEqual([
        'PROVIDER_ERROR',
        "The model provider failed mid-stream: rate limited. Retry the request; if it keeps failing, check the request and the provider's status.",
      ]);
    });

    it.each([['"0"'], ['1.5'], ['-1']])('should fail with INVALID_EVENT for a choice index of %s', async (index) => {
      expect(await failure([{ id: 'c', choices: [{ index: JSON.parse(index), delta: { content: 'hi' } }] } as never])).toEqual(
        invalidEvent(`choices[0].index is ${index === '"0"' ? '"0"' : `number ${index}`}, but it must be a non-negative integer.`),
      );
    });

    it('should send nothing for usage without counts', async () => {
      expect(await adapt([usageChunk({}), chunk({ content: 'a' }, { usage: null })])).toEqual([text('a')]);
    });

    it("should count only a completion's last report, as some servers repeat running totals", async () => {
      expect(
        await adapt([
          chunk({ content: 'a' }, { usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } }),
          chunk({ content: 'b' }, { usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } }),
          chunk({ content: 'c' }, { id: 'cmpl-2', usage: { prompt_tokens: 9, completion_tokens: 1, total_tokens: 10 } }),
        ]),
      ).toEqual([
        text('a'),
        text('b'),
        tokenUsage({ inputTokens: 5, outputTokens: 2, totalTokens: 7, model: 'gpt-test' }),
        text('c', 'cmpl-2'),
        tokenUsage({ inputTokens: 9, outputTokens: 1, totalTokens: 10, model: 'gpt-test' }),
      ]);
    });

    it('should land on RUN_FINISHED under toAgui', async () => {
      const events = await collect(
        from<Input[]>([chunk({ content: 'Hi' }), finish('stop'), usageChunk({ prompt_tokens: 9, completion_tokens: 1, total_tokens: 10 }), '[DONE]']).pipe(
          fromOpenAIChatCompletions(),
          toAgui({ threadId: 't1', runId: 'r1' }),
        ),
      );
      expect(terminals(events)).toEqual([
        expect.objectContaining({ type: EventType.RUN_FINISHED, usage: [{ inputTokens: 9, outputTokens: 1, totalTokens: 10, model: 'gpt-test' }] }),
      ]);
    });
  });

  describe('chunks that carry nothing to read', () => {
    it("should ignore Azure's filter-only chunk", async () => {
      const filterOnly = bad({
        choices: [],
        created: 0,
        id: '',
        model: '',
        object: '',
        prompt_filter_results: [{ prompt_index: 0, content_filter_results: { hate: { filtered: false, severity: 'safe' } } }],
      });
      expect(await adapt([filterOnly, chunk({ content: 'Hi' }), finish('stop')], { generateId: () => 'minted' })).toEqual([text('Hi')]);
    });

    it("should read only the chosen choice of an n > 1 stream", async () => {
      const of3 = (index: number, content: string) => ({ ...chunk({ content }), choices: [{ index, delta: { content }, finish_reason: null }] });
      const inputs: Input[] = [of3(0, 'zero'), of3(1, 'one'), of3(2, 'two'), of3(1, '!'), usageChunk({ prompt_tokens: 3 })];
      expect(await adapt(inputs)).toEqual([text('zero'), tokenUsage({ inputTokens: 3, model: 'gpt-test' })]);
      expect(await adapt(inputs, { choice: 1 })).toEqual([text('one'), text('!'), tokenUsage({ inputTokens: 3, model: 'gpt-test' })]);
      expect(await adapt(inputs, { choice: 3 })).toEqual([tokenUsage({ inputTokens: 3, model: 'gpt-test' })]);
    });

    it('should find choices without index by their position', async () => {
      const unnumbered = { ...chunk({}), choices: [{ delta: { content: 'a' } }, { delta: { content: 'b' } }] } as unknown as ChatCompletionChunk;
      expect(await adapt([unnumbered], { choice: 1 })).toEqual([text('b')]);
    });

    it("should accept '[DONE]', also with the spaces SSE data may keep, and end nothing with it", async () => {
      expect(await adapt(['[DONE]', bad(' [DONE]  '), chunk({ content: 'after' })])).toEqual([text('after')]);
    });
  });

  describe('bad input', () => {
    it('should refuse a choice option that is not a non-negative integer, at call time', () => {
      for (const choice of [-1, 1.5, Number.NaN, '0' as unknown as number]) {
        expect(() => fromOpenAIChatCompletions({ choice })).toThrow(AguiRxError);
      }
      expect(() => fromOpenAIChatCompletions({ choice: -1 })).toThrow(
        "fromOpenAIChatCompletions got choice: number -1, but choice must be a non-negative integer: the 'index' of one of the n choices requested (0 for the first).",
      );
    });

    it('should say how to parse SSE data when it gets a string or another non-object', async () => {
      const hint = `where a chat.completion.chunk object (or '[DONE]') was expected. Parse each server-sent event's data first: parseSSE(), map((message) => (message.data === '[DONE]' ? '[DONE]' : JSON.parse(message.data))).`;
      expect(await failure([bad('{"id":"x","choices":[]}')])).toEqual(new AguiRxError('INVALID_EVENT', `fromOpenAIChatCompletions received "{\\"id\\":\\"x\\",\\"choices\\":[]}" ${hint}`));
      expect(await failure([bad(null)])).toEqual(new AguiRxError('INVALID_EVENT', `fromOpenAIChatCompletions received null ${hint}`));
      expect(await failure([bad(7)])).toEqual(new AguiRxError('INVALID_EVENT', `fromOpenAIChatCompletions received number 7 ${hint}`));
      expect(await failure([bad([chunk({})])])).toEqual(new AguiRxError('INVALID_EVENT', `fromOpenAIChatCompletions received an array of 1 ${hint}`));
    });

    it.each([
      [
        'choices that are not an array',
        { id: 'x', choices: {} },
        "it has 'choices: an object', not an 'choices' array. Is this a Chat Completions stream (stream: true)? Responses API and other providers' events need their own adapter.",
      ],
      ['a choice that is not an object', { id: 'x', choices: [null] }, "choices[0] is null, but it must be an object such as { index: 0, delta: { content: 'Hi' } }."],
      ['a delta that is not an object', { id: 'x', choices: [{ index: 0, delta: 'Hi' }] }, `choices[0].delta is "Hi", but it must be an object such as { content: 'Hi' }.`],
      [
        'non-string content',
        { id: 'x', choices: [{ index: 0, delta: { content: 42 } }] },
        "choices[0].delta.content is number 42, but it must be a string or an array of content parts such as [{ type: 'text', text: 'Hi' }].",
      ],
      ['a non-string refusal', { id: 'x', choices: [{ index: 0, delta: { refusal: {} } }] }, 'choices[0].delta.refusal is an object, but it must be a string.'],
      [
        'non-string reasoning_content',
        { id: 'x', choices: [{ index: 0, delta: { reasoning_content: ['a'] } }] },
        'choices[0].delta.reasoning_content is an array of 1, but it must be a string.',
      ],
      ['tool_calls that are not an array', { id: 'x', choices: [{ index: 0, delta: { tool_calls: {} } }] }, 'choices[0].delta.tool_calls is an object, but it must be an array of tool call pieces.'],
      [
        'a tool call piece that is not an object',
        { id: 'x', choices: [{ index: 0, delta: { tool_calls: ['call'] } }] },
        `choices[0].delta.tool_calls[0] is "call", but it must be an object such as { index: 0, function: { arguments: '…' } }.`,
      ],
      [
        'a tool call index that is not an integer',
        { id: 'x', choices: [{ index: 0, delta: { tool_calls: [{ index: '0', function: { name: 'f' } }] } }] },
        `choices[0].delta.tool_calls[0].index is "0", but a tool call's index must be an integer.`,
      ],
      [
        'a tool call function that is not an object',
        { id: 'x', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: 'f' }] } }] },
        `choices[0].delta.tool_calls[0].function is "f", but it must be an object such as { name: 'search', arguments: '{}' }.`,
      ],
      [
        'non-string arguments',
        { id: 'x', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'c', function: { name: 'f', arguments: { a: 1 } } }] } }] },
        'choices[0].delta.tool_calls[0].function.arguments is an object, but it must be a string.',
      ],
      [
        'a first tool call piece without a name',
        { id: 'x', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call-1', function: { arguments: '{}' } }] } }] },
        "choices[0].delta.tool_calls[0] starts a tool call ('call-1') without function.name. The first piece of each call must carry the tool's name (and id); is the stream cut short or reordered?",
      ],
      ['a non-string id', { id: 12, choices: [{ index: 0, delta: { content: 'a' } }] }, 'id is number 12, but it must be a string.'],
    ])('should fail with INVALID_EVENT on %s', async (_name, input, detail) => {
      expect(await failure([chunk({ content: 'ok' }), bad(input)])).toEqual(invalidEvent(detail));
    });

    it('should fail with PROVIDER_ERROR, in the provider’s words, on an error sent mid-stream', async () => {
      const error = await failure([chunk({ content: 'Hal' }), bad({ error: { message: 'The server had an error while processing your request.', type: 'server_error', code: null } })]);
      expect(error).toEqual(
        new AguiRxError(
          'PROVIDER_ERROR',
          "The model provider failed mid-stream: The server had an error while processing your request. (server_error). Retry the request; if it keeps failing, check the request and the provider's status.",
        ),
      );
      expect((error as AguiRxError).code).toBe('PROVIDER_ERROR');
    });

    it('should become RUN_ERROR under toAgui, after closing the text so far', async () => {
      const { onDiagnostic } = diagnosticsSink();
      const out$: Observable<Event> = from<Input[]>([chunk({ content: 'Hal' }), bad({ id: 'x', choices: [{ index: 0, delta: { content: 5 } }] })]).pipe(
        fromOpenAIChatCompletions(),
        toAgui({ threadId: 't1', runId: 'r1', onDiagnostic }),
      );
      const events = await collect(out$);
      expect(events.map((event) => event.type)).toEqual([
        EventType.RUN_STARTED,
        EventType.TEXT_MESSAGE_START,
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TEXT_MESSAGE_END,
        EventType.RUN_ERROR,
      ]);
      expect(events[events.length - 1]).toMatchObject({
        code: 'INVALID_EVENT',
        message: "fromOpenAIChatCompletions received a malformed chat.completion.chunk: choices[0].delta.content is number 5, but it must be a string or an array of content parts such as [{ type: 'text', text: 'Hi' }].",
      });
    });
  });

  describe('through toAgui and the official client', () => {
    it('should build one assistant message with its reasoning, text and parallel tool calls', async () => {
      const inputs: Input[] = [
        chunk({ role: 'assistant', content: null, reasoning_content: '' }),
        chunk({ reasoning_content: 'Two tools.' }),
        chunk({ content: 'On it.' }),
        toolPiece(1, { id: 'call-a', name: 'heat' }),
        toolPiece(2, { id: 'call-b', name: 'kettle' }),
        toolPiece(2, { args: '{"on":true}' }),
        toolPiece(1, { args: '{"c":21}' }),
        finish('tool_calls'),
        usageChunk({ prompt_tokens: 40, completion_tokens: 12, total_tokens: 52 }),
        '[DONE]',
      ];
      const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
      const run = await runWithOracle(from(inputs).pipe(fromOpenAIChatCompletions(), toAgui({ threadId: 'thread-1', runId: 'run-1', onDiagnostic })));
      expect(diagnostics).toEqual([]);
      expect(run.messages).toEqual([
        expect.objectContaining({ id: 'cmpl-1-reasoning', role: 'reasoning', content: 'Two tools.' }),
        expect.objectContaining({
          id: 'cmpl-1',
          role: 'assistant',
          content: 'On it.',
          toolCalls: [
            { id: 'call-a', type: 'function', function: { name: 'heat', arguments: '{"c":21}' } },
            { id: 'call-b', type: 'function', function: { name: 'kettle', arguments: '{"on":true}' } },
          ],
        }),
      ]);
      expect(run.events[run.events.length - 1]).toMatchObject({ type: EventType.RUN_FINISHED, usage: [{ inputTokens: 40, outputTokens: 12, totalTokens: 52 }] });
    });

    it('should give each completion of one stream its own assistant message', async () => {
      const inputs: Input[] = [
        toolPiece(0, { id: 'call-a', name: 'search', args: '{}' }),
        finish('tool_calls'),
        chunk({ content: 'Found it.' }, { id: 'cmpl-2' }),
        finish('stop', { id: 'cmpl-2' }),
      ];
      const run = await runWithOracle(from(inputs).pipe(fromOpenAIChatCompletions(), toAgui({ threadId: 'thread-1', runId: 'run-1', onDiagnostic: () => undefined })));
      expect(run.messages).toEqual([
        expect.objectContaining({ id: 'cmpl-1', role: 'assistant', toolCalls: [{ id: 'call-a', type: 'function', function: { name: 'search', arguments: '{}' } }] }),
        expect.objectContaining({ id: 'cmpl-2', role: 'assistant', content: 'Found it.' }),
      ]);
    });
  });

  it('should give the results its doc example promises', () => {
    const logged: string[] = [];
    of<(ChatCompletionChunk | '[DONE]')[]>(
      { id: 'c1', choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: null }] },
      { id: 'c1', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
      { id: 'c1', model: 'gpt-4o', choices: [], usage: { prompt_tokens: 9, completion_tokens: 1, total_tokens: 10 } },
      '[DONE]',
    )
      .pipe(fromOpenAIChatCompletions())
      .subscribe((event) => logged.push(JSON.stringify(event)));
    expect(logged.join(', ')).toBe(
      '{"type":"TEXT_MESSAGE_CHUNK","messageId":"c1","delta":"Hi"}, {"type":"TOKEN_USAGE","usage":{"inputTokens":9,"outputTokens":1,"totalTokens":10,"model":"gpt-4o"}}',
    );
  });

  describe('raw', () => {
    it('should send each chunk as RAW before the events made from it, when asked', async () => {
      const first = { id: 'c1', choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: null }] } as ChatCompletionChunk;
      expect(await adapt([first, '[DONE]'], { raw: true })).toEqual([
        { type: EventType.RAW, event: first, source: 'openai-chat' },
        { type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'c1', delta: 'Hi' },
        { type: EventType.RAW, event: '[DONE]', source: 'openai-chat' },
      ]);
    });

    it('should send no RAW events by default', async () => {
      const events = await adapt([{ id: 'c1', choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: null }] } as ChatCompletionChunk]);
      expect(events.some((event) => event.type === EventType.RAW)).toBe(false);
    });
  });
});
