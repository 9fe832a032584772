import { EventType, type Message, type ResumeEntry } from '@ag-ui/core';
import { defer, from, map, mergeMap, of, retry, take } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { fromOpenAIResponses, type ResponseObject, type ResponseStreamEvent, type ResponseUsage } from '../../../lib/adapters/fromOpenAIResponses.js';
import type { AgentEvent } from '../../../lib/protocol/agentEvent.js';
import { AguiRxError } from '../../../lib/protocol/errors.js';
import { toOpenAIResponsesInput } from '../../../lib/converters/toOpenAIResponsesInput.js';
import { toAgui } from '../../../operators/toAgui.js';
import { collect, createTestScheduler, diagnosticsSink, errorOf, sequentialIds } from '../../support/helpers.js';
import { runWithOracle } from '../../support/oracle.js';

/** One value map for a marble test's inputs and outputs, as RxJS's own specs use. */
type Marbles = Record<string, any>;

// Provider events, as a Responses API stream sends them.
const response = (fields: Partial<ResponseObject> = {}): ResponseObject => ({ id: 'resp_1', object: 'response', status: 'in_progress', model: 'gpt-test', output: [], ...fields });
const created = (fields: Partial<ResponseObject> = {}): ResponseStreamEvent => ({ type: 'response.created', response: response(fields) });
const inProgress = (fields: Partial<ResponseObject> = {}): ResponseStreamEvent => ({ type: 'response.in_progress', response: response(fields) });
const completed = (usage?: ResponseUsage, fields: Partial<ResponseObject> = {}): ResponseStreamEvent => ({
  type: 'response.completed',
  response: response({ status: 'completed', ...(usage === undefined ? {} : { usage }), ...fields }),
});
const messageAdded = (output_index: number, id = 'msg_1'): ResponseStreamEvent => ({
  type: 'response.output_item.added',
  output_index,
  item: { type: 'message', id, role: 'assistant', status: 'in_progress', content: [] },
});
const messageDone = (output_index: number, textParts: string[], id = 'msg_1'): ResponseStreamEvent => ({
  type: 'response.output_item.done',
  output_index,
  item: { type: 'message', id, role: 'assistant', status: 'completed', content: textParts.map((text) => ({ type: 'output_text' as const, text, annotations: [] })) },
});
const textDelta = (output_index: number, delta: string, content_index = 0, item_id = 'msg_1'): ResponseStreamEvent => ({ type: 'response.output_text.delta', item_id, output_index, content_index, delta });
const textDone = (output_index: number, text: string, content_index = 0): ResponseStreamEvent => ({ type: 'response.output_text.done', item_id: 'msg_1', output_index, content_index, text });
const callAdded = (output_index: number, call_id: string, name: string, args = '', id = `fc_${output_index}`): ResponseStreamEvent => ({
  type: 'response.output_item.added',
  output_index,
  item: { type: 'function_call', id, call_id, name, arguments: args, status: 'in_progress' },
});
const callDone = (output_index: number, call_id: string, name: string, args: string): ResponseStreamEvent => ({
  type: 'response.output_item.done',
  output_index,
  item: { type: 'function_call', id: `fc_${output_index}`, call_id, name, arguments: args, status: 'completed' },
});
const argsDelta = (output_index: number, delta: string, item_id = `fc_${output_index}`): ResponseStreamEvent => ({ type: 'response.function_call_arguments.delta', item_id, output_index, delta });
const argsDone = (output_index: number, args: string): ResponseStreamEvent => ({ type: 'response.function_call_arguments.done', item_id: `fc_${output_index}`, output_index, arguments: args });
const reasoningAdded = (output_index: number, id = 'rs_1'): ResponseStreamEvent => ({ type: 'response.output_item.added', output_index, item: { type: 'reasoning', id, summary: [] } });
const summaryDelta = (output_index: number, delta: string, summary_index = 0, item_id = 'rs_1'): ResponseStreamEvent => ({
  type: 'response.reasoning_summary_text.delta',
  item_id,
  output_index,
  summary_index,
  delta,
});
const reasoningDone = (output_index: number, summary: string[], encrypted_content?: string | null, id = 'rs_1'): ResponseStreamEvent => ({
  type: 'response.output_item.done',
  output_index,
  item: { type: 'reasoning', id, summary: summary.map((text) => ({ type: 'summary_text' as const, text })), ...(encrypted_content === undefined ? {} : { encrypted_content }) },
});
const annotationAdded = (output_index: number, annotation: Record<string, unknown>, annotation_index: number, item_id = 'msg_1'): ResponseStreamEvent => ({
  type: 'response.output_text.annotation.added',
  item_id,
  output_index,
  content_index: 0,
  annotation_index,
  annotation,
});
const bad = (value: unknown) => value as ResponseStreamEvent;

// Agent events out.
const text = (delta: string, messageId = 'resp_1'): AgentEvent => ({ type: EventType.TEXT_MESSAGE_CHUNK, messageId, delta });
const reasoning = (delta: string, messageId = 'rs_1'): AgentEvent => ({ type: EventType.REASONING_MESSAGE_CHUNK, messageId, delta });
const encrypted = (encryptedValue: string, entityId = 'rs_1'): AgentEvent => ({ type: EventType.REASONING_ENCRYPTED_VALUE, subtype: 'message', entityId, encryptedValue });
const callStart = (toolCallId: string, toolCallName: string, delta?: string, parentMessageId = 'resp_1', metadata?: Record<string, unknown>): AgentEvent => ({
  type: EventType.TOOL_CALL_CHUNK,
  toolCallId,
  toolCallName,
  parentMessageId,
  ...(delta === undefined ? {} : { delta }),
  ...(metadata === undefined ? {} : { metadata }),
});
/** The mark a tool item's call carries, for toOpenAIResponsesInput: its item type, and an MCP item's server label. */
const mark = (type: string, server_label?: string) => ({ openai: server_label === undefined ? { type } : { type, server_label } });
const callArgs = (toolCallId: string, delta: string): AgentEvent => ({ type: EventType.TOOL_CALL_CHUNK, toolCallId, delta });
const tokenUsage = (usage: Record<string, unknown>): AgentEvent => ({ type: 'TOKEN_USAGE', usage }) as AgentEvent;

/** The diagnostic of a dropped text annotation, the first of its type (`what` names it: 'a url_citation annotation (…)'). */
const droppedAnnotation = (what: string, where: string) =>
  `fromOpenAIResponses dropped ${what} on ${where}: AG-UI has no citation event, so the client gets the text without it. To show citations, pass raw: true and read them from the RAW events (response.output_text.annotation.added, or the output of response.completed), then send them yourself (a CUSTOM event, or links in the text). Later ${/^a (\S+) annotation/.exec(what)?.[1] ?? 'such'} annotations of this run are dropped without another warning.`;

/** The error of a stream cut outside any tool call. */
const endedEarly = (when: string) =>
  `fromOpenAIResponses: the stream ended ${when}, so the model's output may be cut short. The text before it is kept. The connection was probably cut: retry the request, and check that the whole response body is read.`;
const invalidEvent = (detail: string) => new AguiRxError('INVALID_EVENT', `fromOpenAIResponses received a malformed Responses API event: ${detail}`);

/** Every event the adapter makes of the given inputs. */
function adapt(inputs: readonly ResponseStreamEvent[], options?: Parameters<typeof fromOpenAIResponses>[0]): Promise<AgentEvent[]> {
  return collect(from(inputs).pipe(fromOpenAIResponses(options)));
}

/** The events the adapter makes of the given inputs, and the diagnostics it reports. */
async function adaptReporting(inputs: readonly ResponseStreamEvent[], options?: Parameters<typeof fromOpenAIResponses>[0]): Promise<{ events: AgentEvent[]; diagnostics: string[] }> {
  const { onDiagnostic, messages } = diagnosticsSink();
  const events = await adapt(inputs, { ...options, onDiagnostic });
  return { events, diagnostics: messages };
}

/** The error the adapter fails with on the given inputs. */
async function failure(inputs: readonly ResponseStreamEvent[]): Promise<unknown> {
  return errorOf(adapt(inputs));
}

/** What the official client makes of the adapter's output under toAgui: its messages, the run's last event, and what the adapter reported. */
async function throughClient(inputs: readonly ResponseStreamEvent[]) {
  const sink = diagnosticsSink();
  const run = await runWithOracle(from(inputs).pipe(fromOpenAIResponses({ onDiagnostic: sink.onDiagnostic }), toAgui({ threadId: 'thread-1', runId: 'run-1' })));
  return { messages: run.messages, last: run.events[run.events.length - 1] as Record<string, unknown>, diagnostics: sink.messages };
}

describe('fromOpenAIResponses', () => {
  let testScheduler: TestScheduler;

  beforeEach(() => {
    testScheduler = createTestScheduler();
  });

  describe('as an operator', () => {
    it('should turn text deltas into text chunks, a function call into tool call chunks, and usage into TOKEN_USAGE', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const values: Marbles = {
          c: created(),
          a: messageAdded(0),
          t: textDelta(0, 'Hel'),
          u: textDelta(0, 'lo'),
          f: callAdded(1, 'call_1', 'search'),
          d: argsDelta(1, '{"q":1}'),
          C: completed({ input_tokens: 9, output_tokens: 4, total_tokens: 13 }),
          T: text('Hel'),
          V: text('lo'),
          k: callStart('call_1', 'search'),
          l: callArgs('call_1', '{"q":1}'),
          U: tokenUsage({ inputTokens: 9, outputTokens: 4, totalTokens: 13, model: 'gpt-test' }),
        };
        // prettier-ignore
        const e1 =  cold('--c--a--t--u--f--d--C--|', values);
        // prettier-ignore
        const e1subs =   '^----------------------!';
        // prettier-ignore
        const expected = '--------T--V--k--l--U--|';

        expectObservable(e1.pipe(fromOpenAIResponses())).toBe(expected, values);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should pass a source error on, after what came before', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const error = new Error('ECONNRESET');
        const values: Marbles = { c: created(), t: textDelta(0, 'Hi'), T: text('Hi') };
        // prettier-ignore
        const e1 =  cold('--c--t--#', values, error);
        // prettier-ignore
        const e1subs =   '^-------!';
        // prettier-ignore
        const expected = '-----T--#';

        expectObservable(e1.pipe(fromOpenAIResponses())).toBe(expected, values, error);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should fail with INCOMPLETE_STREAM when the source is empty: a Responses stream always ends a response', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const error = new AguiRxError('INCOMPLETE_STREAM', endedEarly('without any response (no response.created, response.completed, response.incomplete or response.failed)'));
        // prettier-ignore
        const e1 = cold<ResponseStreamEvent>('|   ');
        // prettier-ignore
        const e1subs =                       '(^!)';
        // prettier-ignore
        const expected =                     '#   ';

        expectObservable(e1.pipe(fromOpenAIResponses())).toBe(expected, undefined, error);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should not complete when the source never completes', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        // prettier-ignore
        const e1 = cold<ResponseStreamEvent>('-');
        // prettier-ignore
        const e1subs =                       '^';
        // prettier-ignore
        const expected =                     '-';

        expectObservable(e1.pipe(fromOpenAIResponses())).toBe(expected);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should pass an immediate source error on', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        // prettier-ignore
        const e1 = cold<ResponseStreamEvent>('#   ');
        // prettier-ignore
        const e1subs =                       '(^!)';
        // prettier-ignore
        const expected =                     '#   ';

        expectObservable(e1.pipe(fromOpenAIResponses())).toBe(expected);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should allow unsubscribing early and explicitly, sending nothing on teardown', () =>
      testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
        const values: Marbles = { f: callAdded(0, 'call_1', 'search'), d: argsDelta(0, '{}'), k: callStart('call_1', 'search') };
        // prettier-ignore
        const e1 =   hot('--f----d----|', values);
        // prettier-ignore
        const unsub =    '-----!       ';
        // prettier-ignore
        const e1subs =   '^----!       ';
        // prettier-ignore
        const expected = '--k---       ';

        expectObservable(e1.pipe(fromOpenAIResponses({ generateId: () => 'resp_1' })), unsub).toBe(expected, values);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should not break unsubscription chains when unsubscribed explicitly', () =>
      testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
        const values: Marbles = { a: textDelta(0, 'Hi'), b: textDelta(0, '!'), t: text('Hi', 'id-1') };
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
          fromOpenAIResponses({ generateId: sequentialIds() }),
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
        const source$ = from([created(), textDelta(0, 'a'), textDelta(0, 'b'), textDelta(0, 'c'), completed()]).pipe(map((input) => (read++, input)));

        expectObservable(source$.pipe(fromOpenAIResponses(), take(2))).toBe(expected, values);
        testScheduler.flush();
        expect(read).toBe(3);
      }));

    it('should keep state per subscription: a late subscriber does not continue a call it did not see begin', () =>
      testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
        const values: Marbles = {
          c: created(),
          f: callAdded(0, 'call_1', 'search'),
          d: argsDelta(0, '{}'),
          C: completed(),
          k: callStart('call_1', 'search'),
          l: callArgs('call_1', '{}'),
        };
        const error = invalidEvent("response.completed ends a response whose tool call at output_index 0 was never named: no output item gave its call_id and name, so its arguments cannot be sent. Send response.output_item.added (or .done) with the call's item.");
        // prettier-ignore
        const e1 =   hot('--c--f--d--C--|', values);
        // prettier-ignore
        const sub2 =     '------^        ';
        // prettier-ignore
        const e1subs = [ '^-------------!',
                         '------^----!   '];
        // prettier-ignore
        const expected1 = '-----k--l-----|';
        // prettier-ignore
        const expected2 = '-----------#   ';

        const result = e1.pipe(fromOpenAIResponses());

        expectObservable(result).toBe(expected1, values);
        expectObservable(result, sub2).toBe(expected2, values, error);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should start afresh on retry: the calls of a failed attempt are forgotten', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const values: Marbles = { f: callAdded(0, 'call_1', 'search'), k: callStart('call_1', 'search') };
        // prettier-ignore
        const first =  cold('-f-#      ', values);
        // prettier-ignore
        const second = cold('   -f-#   ', values);
        // prettier-ignore
        const firstSubs =   '^--!      ';
        // prettier-ignore
        const secondSubs =  '---^--!   ';
        // prettier-ignore
        const expected =    '-k--k-#   ';

        let attempt = 0;
        const source$ = defer(() => (attempt++ === 0 ? first : second));

        expectObservable(source$.pipe(fromOpenAIResponses({ generateId: () => 'resp_1' }), retry(1))).toBe(expected, values);
        expectSubscriptions(first.subscriptions).toBe(firstSubs);
        expectSubscriptions(second.subscriptions).toBe(secondSubs);
      }));

    it('should fail with INVALID_EVENT on an event that is not one, after what came before', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const values: Marbles = { c: created(), t: textDelta(0, 'Hi'), b: bad({ id: 'chatcmpl-1', choices: [] }), T: text('Hi') };
        const error = new AguiRxError(
          'INVALID_EVENT',
          "fromOpenAIResponses received an object where a Responses API stream event (an object with a string 'type', such as 'response.output_text.delta') was expected. Parse each server-sent event's data first: parseSSE(), map((message) => JSON.parse(message.data)).",
        );
        // prettier-ignore
        const e1 =  cold('--c--t--b--|', values);
        // prettier-ignore
        const e1subs =   '^-------!   ';
        // prettier-ignore
        const expected = '-----T--#   ';

        expectObservable(e1.pipe(fromOpenAIResponses())).toBe(expected, values, error);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should fail with PROVIDER_ERROR on an error event, after the text it sent', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const values: Marbles = {
          c: created(),
          t: textDelta(0, 'Hi'),
          e: { type: 'error', code: 'server_error', message: 'The server had an error.', param: null },
          T: text('Hi'),
        };
        const error = new AguiRxError(
          'PROVIDER_ERROR',
          "The model provider failed mid-stream: The server had an error. (server_error). Retry the request; if it keeps failing, check the request and the provider's status.",
        );
        // prettier-ignore
        const e1 =  cold('--c--t--e--|', values);
        // prettier-ignore
        const e1subs =   '^-------!   ';
        // prettier-ignore
        const expected = '-----T--#   ';

        expectObservable(e1.pipe(fromOpenAIResponses())).toBe(expected, values, error);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));
  });

  describe('raw', () => {
    it('should send each event as RAW before the events made from it', async () => {
      const inputs = [created(), textDelta(0, 'Hi'), { type: 'response.web_search_call.searching', output_index: 1 }, completed()];
      const raw = (event: unknown): AgentEvent => ({ type: EventType.RAW, event, source: 'openai-responses' });
      expect(await adapt(inputs, { raw: true })).toEqual([raw(inputs[0]), raw(inputs[1]), text('Hi'), raw(inputs[2]), raw(inputs[3])]);
    });

    it('should send the failing event as RAW before the error', async () => {
      const errorEvent: ResponseStreamEvent = { type: 'error', code: 'server_error', message: 'boom' };
      const events: AgentEvent[] = [];
      const error = await new Promise((resolve) => from([errorEvent]).pipe(fromOpenAIResponses({ raw: true })).subscribe({ next: (event) => events.push(event), error: resolve }));
      expect(events).toEqual([{ type: EventType.RAW, event: errorEvent, source: 'openai-responses' }]);
      expect(error).toMatchObject({ code: 'PROVIDER_ERROR' });
    });
  });

  describe('text', () => {
    it('should name the first message of a response after the response, and send nothing for empty deltas', async () => {
      expect(await adapt([created(), messageAdded(0), textDelta(0, ''), textDelta(0, 'Hello'), textDelta(0, ', world'), textDone(0, 'Hello, world'), messageDone(0, ['Hello, world']), completed()])).toEqual([
        text('Hello'),
        text(', world'),
      ]);
    });

    it('should give a second message item of the response a message of its own, named by its item id', async () => {
      expect(
        await adapt([created(), messageAdded(0, 'msg_a'), textDelta(0, 'Working on it.', 0, 'msg_a'), messageAdded(1, 'msg_b'), textDelta(1, 'Done.', 0, 'msg_b'), completed()]),
      ).toEqual([text('Working on it.'), text('Done.', 'msg_b')]);
    });

    it('should send refusal deltas as the assistant text', async () => {
      expect(
        await adapt([created(), messageAdded(0), { type: 'response.refusal.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: "I can't" }, { type: 'response.refusal.done', item_id: 'msg_1', output_index: 0, content_index: 0, refusal: "I can't" }, completed()]),
      ).toEqual([text("I can't")]);
    });

    it('should drop the log probabilities of output_text deltas with one diagnostic per stream, keeping the text the client builds', async () => {
      const logprobs = (token: string) => [{ token, logprob: -0.01, bytes: [72, 105], top_logprobs: [{ token: 'Hello', logprob: -4.6, bytes: [72] }] }];
      const inputs: ResponseStreamEvent[] = [
        created(),
        messageAdded(0),
        { ...textDelta(0, 'Hi'), logprobs: logprobs('Hi') } as ResponseStreamEvent,
        { ...textDelta(0, '!'), logprobs: logprobs('!') } as ResponseStreamEvent,
        { ...textDelta(0, ''), logprobs: [] } as ResponseStreamEvent,
        completed(),
      ];
      const { events, diagnostics } = await adaptReporting(inputs);
      expect(events).toEqual([text('Hi'), text('!')]);
      expect(diagnostics).toEqual([
        'fromOpenAIResponses dropped the log probabilities of the output text (response.output_text.delta.logprobs): AG-UI has no event for them. To read them, pass raw: true and read logprobs from the RAW events. Later log probabilities of this stream are dropped without another warning.',
      ]);
      expect((await throughClient(inputs)).messages).toEqual([{ id: 'resp_1', role: 'assistant', content: 'Hi!' }]);
    });

    it('should keep a refusal part apart from the text before it by a blank line, streamed or whole, in the message the client builds', async () => {
      const refusalText = "I can't help with that.";
      const parts = [
        { type: 'output_text' as const, text: 'Hi', annotations: [] },
        { type: 'refusal' as const, refusal: refusalText },
      ];
      const itemDone: ResponseStreamEvent = { type: 'response.output_item.done', output_index: 0, item: { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: parts } };
      const streamed: ResponseStreamEvent[] = [
        created(),
        messageAdded(0),
        { type: 'response.content_part.added', item_id: 'msg_1', output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } },
        textDelta(0, 'Hi'),
        textDone(0, 'Hi'),
        { type: 'response.content_part.added', item_id: 'msg_1', output_index: 0, content_index: 1, part: { type: 'refusal', refusal: '' } },
        { type: 'response.refusal.delta', item_id: 'msg_1', output_index: 0, content_index: 1, delta: refusalText },
        { type: 'response.refusal.done', item_id: 'msg_1', output_index: 0, content_index: 1, refusal: refusalText },
        { type: 'response.content_part.done', item_id: 'msg_1', output_index: 0, content_index: 1, part: parts[1] },
        itemDone,
        completed(),
      ];
      expect(await adapt(streamed)).toEqual([text('Hi'), text(`\n\n${refusalText}`)]);
      expect(await adapt([created(), messageAdded(0), itemDone, completed()])).toEqual([text('Hi'), text(`\n\n${refusalText}`)]);
      const { messages, diagnostics } = await throughClient(streamed);
      expect(messages).toEqual([{ id: 'resp_1', role: 'assistant', content: `Hi\n\n${refusalText}` }]);
      expect(diagnostics).toEqual([]);
    });

    it('should send text that only arrives whole, in output_text.done, content_part.done or output_item.done', async () => {
      expect(await adapt([created(), messageAdded(0), textDone(0, 'Whole'), completed()])).toEqual([text('Whole')]);
      expect(
        await adapt([created(), messageAdded(0), { type: 'response.content_part.done', item_id: 'msg_1', output_index: 0, content_index: 0, part: { type: 'output_text', text: 'Part' } }, completed()]),
      ).toEqual([text('Part')]);
      expect(await adapt([created(), messageAdded(0), textDone(0, 'Once'), messageDone(0, ['Once']), completed(undefined, { output: [{ type: 'message', id: 'msg_1', content: [{ type: 'output_text', text: 'Once' }] }] })])).toEqual([text('Once')]);
    });

    it('should send the rest of a whole text its deltas began, and a whole text no delta wrote; one that disagrees leaves the streamed text, reported once', async () => {
      const { events, diagnostics } = await adaptReporting([created(), messageAdded(0), textDelta(0, 'Hel'), textDone(0, 'Hello'), messageDone(0, ['Hello', ' there']), completed()]);
      expect(events).toEqual([text('Hel'), text('lo'), text(' there')]);
      expect(diagnostics).toEqual([]);
      const disagreeing = await adaptReporting([created(), messageAdded(0), textDelta(0, 'Hel'), textDone(0, 'Hey!'), messageDone(0, ['Hey!']), completed()]);
      expect(disagreeing.events).toEqual([text('Hel')]);
      expect(disagreeing.diagnostics).toEqual([
        `fromOpenAIResponses kept the streamed text of message 'resp_1' (content part 0): response.output_text.done gives a whole text that differs from what its deltas sent, from character 2 on (streamed "l", whole "y!"). Text already sent cannot be taken back, so the streamed text stands; check the server's stream.`,
      ]);
    });

    it('should never send a later message item text twice when its done events carry another output_index (found by item id)', async () => {
      const { events, diagnostics } = await adaptReporting([
        created(),
        { type: 'response.output_item.added', output_index: 0, item: { type: 'message', id: 'msg_c', role: 'assistant', status: 'in_progress', content: [], phase: 'commentary' } },
        textDelta(0, 'Checking.', 0, 'msg_c'),
        { type: 'response.output_item.added', output_index: 1, item: { type: 'message', id: 'msg_f', role: 'assistant', status: 'in_progress', content: [], phase: 'final_answer' } },
        textDelta(1, 'Done.', 0, 'msg_f'),
        { type: 'response.output_text.done', item_id: 'msg_f', output_index: 7, content_index: 0, text: 'Done.' },
        messageDone(7, ['Done.'], 'msg_f'),
        completed(undefined, {
          output: [
            { type: 'message', id: 'msg_f', content: [{ type: 'output_text', text: 'Done.' }] },
            { type: 'message', id: 'msg_c', content: [{ type: 'output_text', text: 'Checking.' }] },
          ],
        }),
      ]);
      expect(events).toEqual([text('Checking.'), text('Done.', 'msg_f')]);
      expect(diagnostics).toEqual([]);
    });

    it("should fill in from response.completed's output what no event streamed", async () => {
      expect(
        await adapt([
          created(),
          completed(undefined, {
            output: [
              { type: 'message', id: 'msg_1', role: 'assistant', content: [{ type: 'output_text', text: 'Only here' }] },
              { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'search', arguments: '{}' },
            ],
          }),
        ]),
      ).toEqual([text('Only here'), callStart('call_1', 'search', '{}')]);
    });

    it('should keep the text of an incomplete response and send its usage, reporting the reason', async () => {
      const { events, diagnostics } = await adaptReporting([
        created(),
        messageAdded(0),
        textDelta(0, 'The storm hit'),
        { type: 'response.incomplete', response: response({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, usage: { input_tokens: 5, output_tokens: 3 } }) },
      ]);
      expect(events).toEqual([text('The storm hit'), tokenUsage({ inputTokens: 5, outputTokens: 3, model: 'gpt-test' })]);
      expect(diagnostics).toEqual([
        "fromOpenAIResponses: response 'resp_1' is incomplete: the model's output was cut by its token limit (max_output_tokens). The text before the cut is kept and the run ends as usual, its answer cut short. Raise max_output_tokens, or retry the request.",
      ]);
    });

    it('should keep text cut off by the end of the source, and fail with INCOMPLETE_STREAM', async () => {
      const events: AgentEvent[] = [];
      const error = await new Promise((resolve) => from([created(), messageAdded(0), textDelta(0, 'The storm')]).pipe(fromOpenAIResponses()).subscribe({ next: (event) => events.push(event), error: resolve }));
      expect(events).toEqual([text('The storm')]);
      expect(error).toEqual(new AguiRxError('INCOMPLETE_STREAM', endedEarly("before response 'resp_1' did (no response.completed, response.incomplete or response.failed)")));
    });
  });

  describe('reasoning', () => {
    it('should send summary deltas as reasoning named by the reasoning item, its parts a blank line apart', async () => {
      expect(
        await adapt([
          created(),
          reasoningAdded(0),
          summaryDelta(0, '**Plan**'),
          { type: 'response.reasoning_summary_text.done', item_id: 'rs_1', output_index: 0, summary_index: 0, text: '**Plan**' },
          summaryDelta(0, '**Check**', 1),
          { type: 'response.reasoning_summary_part.done', item_id: 'rs_1', output_index: 0, summary_index: 1, part: { type: 'summary_text', text: '**Check** twice' } },
          messageAdded(1),
          textDelta(1, 'Yes'),
          completed(),
        ]),
      ).toEqual([reasoning('**Plan**'), reasoning('\n\n**Check**'), reasoning(' twice'), text('Yes')]);
    });

    it('should send reasoning_text deltas as reasoning', async () => {
      expect(
        await adapt([
          created(),
          reasoningAdded(0),
          { type: 'response.reasoning_text.delta', item_id: 'rs_1', output_index: 0, content_index: 0, delta: 'think' },
          { type: 'response.reasoning_text.delta', item_id: 'rs_1', output_index: 0, content_index: 0, delta: 'ing' },
          { type: 'response.reasoning_text.done', item_id: 'rs_1', output_index: 0, content_index: 0, text: 'thinking' },
          completed(),
        ]),
      ).toEqual([reasoning('think'), reasoning('ing')]);
    });

    it('should read reasoning_text content parts of a reasoning item (LM Studio, OpenRouter), and the answer and call after them', async () => {
      const part = (type: 'response.content_part.added' | 'response.content_part.done', text: string): ResponseStreamEvent => ({ type, item_id: 'rs_1', output_index: 0, content_index: 0, part: { type: 'reasoning_text', text } });
      const { events, diagnostics } = await adaptReporting([
        created(),
        reasoningAdded(0),
        part('response.content_part.added', ''),
        { type: 'response.reasoning_text.delta', item_id: 'rs_1', output_index: 0, content_index: 0, delta: 'Add them.' },
        { type: 'response.reasoning_text.done', item_id: 'rs_1', output_index: 0, content_index: 0, text: 'Add them.' },
        part('response.content_part.done', 'Add them.'),
        messageAdded(1),
        { type: 'response.content_part.added', item_id: 'msg_1', output_index: 1, content_index: 0, part: { type: 'output_text', text: '' } },
        textDelta(1, 'Sum:'),
        callAdded(2, 'call_1', 'add'),
        argsDone(2, '{"a":1}'),
        completed(),
      ]);
      expect(events).toEqual([reasoning('Add them.'), text('Sum:'), callStart('call_1', 'add'), callArgs('call_1', '{"a":1}')]);
      expect(diagnostics).toEqual([]);
      // A reasoning item that only has its parts whole.
      expect(await adapt([created(), part('response.content_part.done', 'Whole thought.'), completed()])).toEqual([reasoning('Whole thought.', 'id-1')].map((event) => ({ ...event, messageId: expect.any(String) })));
    });

    it('should drop a content part with no AG-UI form, reporting its type once', async () => {
      const audio = (output_index: number): ResponseStreamEvent => ({ type: 'response.content_part.done', item_id: 'msg_1', output_index, content_index: 1, part: { type: 'output_audio', data: 'AAAA' } });
      const { events, diagnostics } = await adaptReporting([created(), messageAdded(0), textDelta(0, 'Hi'), audio(0), audio(0), messageDone(0, ['Hi']), completed()]);
      expect(events).toEqual([text('Hi')]);
      expect(diagnostics).toEqual([
        `fromOpenAIResponses dropped a content part of type "output_audio" (response.content_part.done.part): it has no AG-UI form. Text parts (output_text, refusal, reasoning_text, summary_text) are kept.`,
      ]);
    });

    it("should send a reasoning item's encrypted_content as REASONING_ENCRYPTED_VALUE once, after its text, from the done item", async () => {
      const { events, diagnostics } = await adaptReporting([
        created(),
        // An added item's value encrypts an earlier state of the reasoning; the done item's replaces it.
        { type: 'response.output_item.added', output_index: 0, item: { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAA-added' } },
        summaryDelta(0, 'Plan: call weather'),
        reasoningDone(0, ['Plan: call weather'], 'gAAAA-done'),
        callAdded(1, 'call_1', 'get_weather'),
        argsDone(1, '{"city":"Oslo"}'),
        // The completed output repeats the item, re-encrypted: nothing more is sent.
        completed(undefined, {
          output: [
            { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Plan: call weather' }], encrypted_content: 'gAAAA-final' },
            { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}', status: 'completed' },
          ],
        }),
      ]);
      expect(events).toEqual([reasoning('Plan: call weather'), encrypted('gAAAA-done'), callStart('call_1', 'get_weather'), callArgs('call_1', '{"city":"Oslo"}')]);
      expect(diagnostics).toEqual([]);
      // Only in the completed output; only in the added item (no whole item came): sent when the response ends.
      expect(await adapt([created(), reasoningAdded(0), summaryDelta(0, 'Hm'), completed(undefined, { output: [{ type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Hm' }], encrypted_content: 'gAAAA-final' }] })])).toEqual([
        reasoning('Hm'),
        encrypted('gAAAA-final'),
      ]);
      expect(await adapt([created(), { type: 'response.output_item.added', output_index: 0, item: { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAA-added' } }, summaryDelta(0, 'Hm'), completed()])).toEqual([
        reasoning('Hm'),
        encrypted('gAAAA-added'),
      ]);
    });

    it('should open the reasoning message of an item with encrypted content and an empty summary, and send nothing for one with neither', async () => {
      expect(await adapt([created(), reasoningAdded(0), reasoningDone(0, [], 'gAAAA-1'), messageAdded(1), textDelta(1, 'Sunny.'), completed()])).toEqual([
        { type: EventType.REASONING_MESSAGE_START, messageId: 'rs_1', role: 'reasoning' },
        encrypted('gAAAA-1'),
        text('Sunny.'),
      ]);
      expect(await adapt([created(), reasoningAdded(0), reasoningDone(0, [], null), reasoningDone(1, [], '', 'rs_2'), completed()])).toEqual([]);
    });

    it('should fill in reasoning that only arrives in output_item.done', async () => {
      expect(
        await adapt([created(), reasoningAdded(0), { type: 'response.output_item.done', output_index: 0, item: { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'A' }, { type: 'summary_text', text: 'B' }] } }, completed()]),
      ).toEqual([reasoning('A'), reasoning('\n\nB')]);
    });
  });

  describe('tool calls', () => {
    it('should use call_id as toolCallId and the response as parent, also when the call comes before any text', async () => {
      expect(await adapt([created(), callAdded(0, 'call_1', 'search'), argsDelta(0, '{"q"'), argsDelta(0, ':1}'), argsDone(0, '{"q":1}'), callDone(0, 'call_1', 'search', '{"q":1}'), messageAdded(1, 'msg_2'), textDelta(1, 'Searching.', 0, 'msg_2'), completed()])).toEqual([
        callStart('call_1', 'search'),
        callArgs('call_1', '{"q"'),
        callArgs('call_1', ':1}'),
        text('Searching.', 'msg_2'),
      ]);
    });

    it('should give a call the message its response last wrote as parent', async () => {
      expect(await adapt([created(), messageAdded(0, 'msg_a'), textDelta(0, 'A', 0, 'msg_a'), messageAdded(1, 'msg_b'), textDelta(1, 'B', 0, 'msg_b'), callAdded(2, 'call_1', 'search', '{}'), argsDone(2, '{}'), completed()])).toEqual([
        text('A'),
        text('B', 'msg_b'),
        callStart('call_1', 'search', '{}', 'msg_b'),
      ]);
    });

    it('should keep interleaved argument deltas of two calls apart by output_index', async () => {
      expect(await adapt([created(), callAdded(0, 'call_a', 'one'), callAdded(1, 'call_b', 'two'), argsDelta(0, '{"x"'), argsDelta(1, '{"y"'), argsDelta(0, ':1}'), argsDelta(1, ':2}'), argsDone(1, '{"y":2}'), argsDone(0, '{"x":1}'), completed()])).toEqual([
        callStart('call_a', 'one'),
        callStart('call_b', 'two'),
        callArgs('call_a', '{"x"'),
        callArgs('call_b', '{"y"'),
        callArgs('call_a', ':1}'),
        callArgs('call_b', ':2}'),
      ]);
    });

    it('should send arguments that only arrive whole, in arguments.done or output_item.done', async () => {
      expect(await adapt([created(), callAdded(0, 'call_1', 'search'), argsDone(0, '{"q":1}'), callDone(0, 'call_1', 'search', '{"q":1}'), completed()])).toEqual([callStart('call_1', 'search'), callArgs('call_1', '{"q":1}')]);
      expect(await adapt([created(), callAdded(0, 'call_1', 'search'), callDone(0, 'call_1', 'search', '{"q":1}'), completed()])).toEqual([callStart('call_1', 'search'), callArgs('call_1', '{"q":1}')]);
      expect(await adapt([created(), callAdded(0, 'call_1', 'search'), argsDelta(0, '{"q"'), argsDone(0, '{"q":1}'), completed()])).toEqual([callStart('call_1', 'search'), callArgs('call_1', '{"q"'), callArgs('call_1', ':1}')]);
    });

    it('should hold deltas of a call not yet named until its item names it', async () => {
      expect(await adapt([created(), argsDelta(0, '{"q"'), argsDelta(0, ':1}'), callDone(0, 'call_1', 'search', '{"q":1}'), completed()])).toEqual([callStart('call_1', 'search', '{"q":1}')]);
      // No output item at all: the call keeps a minted id, and its response one too.
      expect(
        await adapt([argsDelta(0, '{}'), { type: 'response.function_call_arguments.done', output_index: 0, arguments: '{}', name: 'ping' }, completed()], { generateId: sequentialIds() }),
      ).toEqual([callStart('id-2', 'ping', '{}', 'id-1')]);
    });
  });

  describe('other tool items', () => {
    const itemDone = (output_index: number, item: Record<string, unknown>): ResponseStreamEvent => ({ type: 'response.output_item.done', output_index, item: item as never });
    const itemAdded = (output_index: number, item: Record<string, unknown>): ResponseStreamEvent => ({ type: 'response.output_item.added', output_index, item: item as never });
    const result = (toolCallId: string, content: string): AgentEvent => ({ type: EventType.TOOL_CALL_RESULT, toolCallId, content });

    it("should stream a custom tool's free text input as {\"input\": …}, named by the tool", async () => {
      const events = await adapt([
        created(),
        itemAdded(0, { type: 'custom_tool_call', id: 'ctc_1', call_id: 'call_c', name: 'run_sql', input: '' }),
        { type: 'response.custom_tool_call_input.delta', item_id: 'ctc_1', output_index: 0, delta: 'SELECT "a"' },
        { type: 'response.custom_tool_call_input.delta', item_id: 'ctc_1', output_index: 0, delta: '\nFROM t' },
        { type: 'response.custom_tool_call_input.done', item_id: 'ctc_1', output_index: 0, input: 'SELECT "a"\nFROM t' },
        itemDone(0, { type: 'custom_tool_call', id: 'ctc_1', call_id: 'call_c', name: 'run_sql', input: 'SELECT "a"\nFROM t', status: 'completed' }),
        completed(),
      ]);
      expect(events).toEqual([callStart('call_c', 'run_sql', '{"input":"', 'resp_1', mark('custom_tool_call')), callArgs('call_c', 'SELECT \\"a\\"'), callArgs('call_c', '\\nFROM t'), callArgs('call_c', '"}')]);
      const args = events.filter((event) => event.type === EventType.TOOL_CALL_CHUNK).map((event) => (event as { delta?: string }).delta ?? '').join('');
      expect(JSON.parse(args)).toEqual({ input: 'SELECT "a"\nFROM t' });
      // Input that only arrives whole.
      expect(await adapt([created(), itemDone(0, { type: 'custom_tool_call', call_id: 'call_c', name: 'note', input: 'hi' }), completed()])).toEqual([callStart('call_c', 'note', '{"input":"hi', 'resp_1', mark('custom_tool_call')), callArgs('call_c', '"}')]);
    });

    it('should make client-executed items pending calls named by their type, their input fields the arguments', async () => {
      const shell = { type: 'local_shell_call', id: 'lsh_1', call_id: 'call_l', action: { type: 'exec', command: ['ls', '-a'], env: {} }, status: 'completed' };
      const patch = { type: 'apply_patch_call', id: 'apc_1', call_id: 'call_p', operation: { type: 'update_file', path: 'a.txt', diff: '@@\n-a\n+b' }, status: 'completed' };
      const computer = { type: 'computer_call', id: 'cu_1', call_id: 'call_u', action: { type: 'click', button: 'left', x: 1, y: 2 }, pending_safety_checks: [], status: 'completed' };
      const search = { type: 'tool_search_call', id: 'ts_1', call_id: 'call_t', execution: 'client', arguments: { query: 'weather' }, status: 'completed' };
      const run = { type: 'shell_call', id: 'sh_1', call_id: 'call_s', action: { commands: ['pwd'], timeout_ms: null, max_output_length: null }, status: 'completed' };
      expect(await adapt([created(), itemAdded(0, { ...shell, status: 'in_progress' }), itemDone(0, shell), itemDone(1, patch), itemDone(2, computer), itemDone(3, search), itemDone(4, run), completed()])).toEqual([
        callStart('call_l', 'local_shell', '{"action":{"type":"exec","command":["ls","-a"],"env":{}}}', 'resp_1', mark('local_shell_call')),
        callStart('call_p', 'apply_patch', '{"operation":{"type":"update_file","path":"a.txt","diff":"@@\\n-a\\n+b"}}', 'resp_1', mark('apply_patch_call')),
        callStart('call_u', 'computer', '{"action":{"type":"click","button":"left","x":1,"y":2},"pending_safety_checks":[]}', 'resp_1', mark('computer_call')),
        callStart('call_t', 'tool_search', '{"query":"weather"}', 'resp_1', mark('tool_search_call')),
        callStart('call_s', 'shell', '{"action":{"commands":["pwd"],"timeout_ms":null,"max_output_length":null}}', 'resp_1', mark('shell_call')),
      ]);
    });

    it('should send the result of a *_output item to the call it answers', async () => {
      expect(
        await adapt([
          created(),
          itemDone(0, { type: 'local_shell_call', id: 'lsh_1', call_id: 'call_l', action: { type: 'exec', command: ['ls'] }, status: 'completed' }),
          itemDone(1, { type: 'local_shell_call_output', id: 'lsh_1', output: 'a.txt', status: 'completed' }),
          itemDone(2, { type: 'shell_call', id: 'sh_1', call_id: 'call_s', action: { commands: ['pwd'] }, status: 'completed' }),
          itemDone(3, { type: 'shell_call_output', id: 'sho_1', call_id: 'call_s', output: [{ stdout: '/w', stderr: '', outcome: { type: 'exit', exit_code: 0 } }], status: 'completed' }),
          itemDone(4, { type: 'function_call_output', id: 'fco_1', call_id: 'call_unknown', output: 'x' }),
          completed(),
        ], { onDiagnostic: () => undefined }),
      ).toEqual([
        callStart('call_l', 'local_shell', '{"action":{"type":"exec","command":["ls"]}}', 'resp_1', mark('local_shell_call')),
        result('call_l', 'a.txt'),
        callStart('call_s', 'shell', '{"action":{"commands":["pwd"]}}', 'resp_1', mark('shell_call')),
        result('call_s', '[{"stdout":"/w","stderr":"","outcome":{"type":"exit","exit_code":0}}]'),
      ]);
    });

    it('should make server-executed items calls with their results', async () => {
      expect(
        await adapt([
          created(),
          itemAdded(0, { type: 'web_search_call', id: 'ws_1', status: 'in_progress' }),
          { type: 'response.web_search_call.completed', output_index: 0, item_id: 'ws_1' },
          itemDone(0, { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'tides' } }),
          itemDone(1, { type: 'mcp_call', id: 'mcp_1', name: 'roll', server_label: 'dice', arguments: '{"sides":6}', output: '4', status: 'completed' }),
          itemDone(2, { type: 'mcp_call', id: 'mcp_2', name: 'roll', server_label: 'dice', arguments: '{}', output: null, error: 'dice lost', status: 'failed' }),
          itemDone(3, { type: 'file_search_call', id: 'fs_1', queries: ['tides'], status: 'completed', results: null }),
          itemDone(4, { type: 'code_interpreter_call', id: 'ci_1', code: 'print(1)', container_id: 'cntr_1', outputs: [{ type: 'logs', logs: '1' }], status: 'completed' }),
          messageAdded(5, 'msg_5'),
          textDelta(5, 'Found it.', 0, 'msg_5'),
          completed(),
        ]),
      ).toEqual([
        callStart('ws_1', 'web_search', '{"action":{"type":"search","query":"tides"}}', 'resp_1', mark('web_search_call')),
        result('ws_1', '{"status":"completed"}'),
        callStart('mcp_1', 'roll', '{"sides":6}', 'resp_1', mark('mcp_call', 'dice')),
        result('mcp_1', '4'),
        callStart('mcp_2', 'roll', '{}', 'resp_1', mark('mcp_call', 'dice')),
        result('mcp_2', 'Error: dice lost'),
        callStart('fs_1', 'file_search', '{"queries":["tides"]}', 'resp_1', mark('file_search_call')),
        result('fs_1', '{"status":"completed"}'),
        callStart('ci_1', 'code_interpreter', '{"code":"print(1)","container_id":"cntr_1"}', 'resp_1', mark('code_interpreter_call')),
        result('ci_1', '{"outputs":[{"type":"logs","logs":"1"}],"status":"completed"}'),
        // Text after the calls is a message item of its own (rule 2).
        text('Found it.', 'msg_5'),
      ]);
    });

    it('should make an MCP approval request a call and end the run with an approval interrupt when the source completes', async () => {
      expect(
        await adapt([
          created(),
          itemDone(0, { type: 'mcp_approval_request', id: 'mcpr_1', name: 'delete_repo', server_label: 'github', arguments: '{"repo":"x"}' }),
          completed(undefined, { output: [{ type: 'mcp_approval_request', id: 'mcpr_1', name: 'delete_repo', server_label: 'github', arguments: '{"repo":"x"}' }] }),
        ]),
      ).toEqual([
        callStart('mcpr_1', 'delete_repo', '{"repo":"x"}', 'resp_1', mark('mcp_approval_request', 'github')),
        {
          type: EventType.RUN_FINISHED,
          outcome: { type: 'interrupt', interrupts: [{ id: 'mcpr_1', reason: 'tool_approval', toolCallId: 'mcpr_1', message: "Approve the call to 'delete_repo' on MCP server 'github'?" }] },
        },
      ]);
    });

    it('should report an item type it has no form for once per run, and send each such item as RAW', async () => {
      const image = (id: string) => ({ type: 'image_generation_call', id, status: 'completed', result: 'AAAA' });
      const { events, diagnostics } = await adaptReporting([created(), itemAdded(0, image('ig_1')), itemDone(0, image('ig_1')), itemDone(1, image('ig_2')), completed(undefined, { output: [image('ig_1'), image('ig_2')] })]);
      expect(events).toEqual([
        { type: EventType.RAW, event: image('ig_1'), source: 'openai-responses' },
        { type: EventType.RAW, event: image('ig_2'), source: 'openai-responses' },
      ]);
      expect(diagnostics).toEqual([
        "fromOpenAIResponses has no AG-UI form for output items of type 'image_generation_call' (the first at output_index 0): each is sent only as a RAW event. Read them from RAW, or from the response itself.",
      ]);
      // With raw: true the item's events already went out as RAW: none is added.
      const withRaw = await adaptReporting([created(), itemDone(0, image('ig_1')), completed()], { raw: true });
      expect(withRaw.events.map((event) => (event as { event: { type: string } }).event.type)).toEqual(['response.created', 'response.output_item.done', 'response.completed']);
      expect(withRaw.diagnostics).toHaveLength(1);
    });
  });

  describe('tool calls cut off', () => {
    const incomplete = (fields: Partial<ResponseObject> = {}): ResponseStreamEvent => ({
      type: 'response.incomplete',
      response: response({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, ...fields }),
    });
    const cutMessage = (name: string, id: string, limit = 'its token limit (max_output_tokens)') =>
      `fromOpenAIResponses: the model's output was cut by ${limit} inside tool call '${id}' (${name}), so its arguments are incomplete JSON and the call must not run. The text before it is kept. Raise max_output_tokens, or retry the request.`;

    /** The events sent before the error, and the error; the adapter reports `diagnostics` and nothing else. */
    async function cut(inputs: ResponseStreamEvent[], diagnostics: string[] = []) {
      const events: AgentEvent[] = [];
      const sink = diagnosticsSink();
      const error = await new Promise((resolve) =>
        from(inputs).pipe(fromOpenAIResponses({ onDiagnostic: sink.onDiagnostic })).subscribe({ next: (event) => events.push(event), error: resolve, complete: () => resolve(undefined) }),
      );
      expect(sink.messages).toEqual(diagnostics);
      return { events, error };
    }
    const incompleteNote = "fromOpenAIResponses: response 'resp_1' is incomplete: the model's output was cut by its token limit (max_output_tokens). The text before the cut is kept and the run ends as usual, its answer cut short. Raise max_output_tokens, or retry the request.";

    it('should keep the text and the arguments streamed, then fail naming the call, when response.incomplete ends a call never done', async () => {
      const { events, error } = await cut([created(), messageAdded(0), textDelta(0, 'Let me look.'), callAdded(1, 'call_1', 'search'), argsDelta(1, '{"q":"ti'), incomplete()]);
      expect(events).toEqual([text('Let me look.'), callStart('call_1', 'search'), callArgs('call_1', '{"q":"ti')]);
      expect(error).toEqual(new AguiRxError('INCOMPLETE_STREAM', cutMessage('search', 'call_1')));
    });

    it('should fail naming a custom tool call cut off, after its input streamed so far', async () => {
      const { events, error } = await cut([
        created(),
        { type: 'response.output_item.added', output_index: 0, item: { type: 'custom_tool_call', id: 'ctc_1', call_id: 'call_c', name: 'run_sql', input: '' } as never },
        { type: 'response.custom_tool_call_input.delta', item_id: 'ctc_1', output_index: 0, delta: 'SELECT' },
        incomplete(),
      ]);
      expect(events).toEqual([callStart('call_c', 'run_sql', '{"input":"', 'resp_1', mark('custom_tool_call')), callArgs('call_c', 'SELECT')]);
      expect(error).toEqual(new AguiRxError('INCOMPLETE_STREAM', cutMessage('run_sql', 'call_c')));
    });

    it('should fail naming a structured tool item cut off (added, or done incomplete), sending nothing of it', async () => {
      const shell = { type: 'local_shell_call', id: 'lsh_1', call_id: 'call_l', action: { type: 'exec', command: ['l'] } };
      expect(await cut([created(), { type: 'response.output_item.added', output_index: 0, item: { ...shell, status: 'in_progress' } as never }, incomplete()])).toEqual({
        events: [],
        error: new AguiRxError('INCOMPLETE_STREAM', cutMessage('local_shell', 'call_l')),
      });
      // An item that says it is incomplete, even in a response that says it completed.
      expect(await cut([created(), { type: 'response.output_item.done', output_index: 0, item: { ...shell, status: 'incomplete' } as never }, completed()])).toEqual({
        events: [],
        error: new AguiRxError('INCOMPLETE_STREAM', cutMessage('local_shell', 'call_l', 'an incomplete response')),
      });
    });

    it('should fail naming a call whose item is done incomplete when the source ends without response.incomplete', async () => {
      const { events, error } = await cut([created(), callAdded(0, 'call_1', 'search'), argsDelta(0, '{"q":'), { type: 'response.output_item.done', output_index: 0, item: { type: 'function_call', id: 'fc_0', call_id: 'call_1', name: 'search', arguments: '{"q":', status: 'incomplete' } }]);
      expect(events).toEqual([callStart('call_1', 'search'), callArgs('call_1', '{"q":')]);
      expect(error).toEqual(new AguiRxError('INCOMPLETE_STREAM', cutMessage('search', 'call_1', 'an incomplete response')));
    });

    it('should not call a response cut after its calls were done a cut call', async () => {
      expect(await cut([created(), callAdded(0, 'call_1', 'search'), argsDone(0, '{}'), incomplete()], [incompleteNote])).toEqual({ events: [callStart('call_1', 'search'), callArgs('call_1', '{}')], error: undefined });
    });
  });

  describe('through toAgui and the official client', () => {
    const itemAdded = (output_index: number, item: Record<string, unknown>): ResponseStreamEvent => ({ type: 'response.output_item.added', output_index, item: item as never });
    const itemDone = (output_index: number, item: Record<string, unknown>): ResponseStreamEvent => ({ type: 'response.output_item.done', output_index, item: item as never });
    const assistant = (id: string, content: string | undefined, toolCalls?: { id: string; name: string; args: string; metadata?: Record<string, unknown> }[]) => ({
      id,
      role: 'assistant',
      ...(content === undefined ? {} : { content }),
      ...(toolCalls === undefined
        ? {}
        : { toolCalls: toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.args }, ...(call.metadata === undefined ? {} : { metadata: call.metadata }) })) }),
    });
    const incompleteEvent = (reason: string, fields: Partial<ResponseObject> = {}): ResponseStreamEvent => ({
      type: 'response.incomplete',
      response: response({ status: 'incomplete', incomplete_details: { reason }, ...fields }),
    });

    it('should drop an output item whose call_id names no call of the stream, naming it, and give each output only to the call it names', async () => {
      const { messages, last, diagnostics } = await throughClient([
        created(),
        callAdded(0, 'call_1', 'lookup'),
        argsDone(0, '{}'),
        itemDone(1, { type: 'function_call_output', id: 'fco_1', call_id: 'call_zzz', output: 'stale' }),
        itemDone(2, { type: 'local_shell_call', id: 'lsh_1', call_id: 'call_l', action: { type: 'exec', command: ['ls'] }, status: 'completed' }),
        // A local shell output names its call by the call item's id.
        itemDone(3, { type: 'local_shell_call_output', id: 'lsh_1', output: 'a.txt', status: 'completed' }),
        itemDone(4, { type: 'shell_call_output', id: 'sho_1', output: 'orphan' }),
        completed(),
      ]);
      expect(messages).toEqual([
        assistant('resp_1', undefined, [
          { id: 'call_1', name: 'lookup', args: '{}' },
          { id: 'call_l', name: 'local_shell', args: '{"action":{"type":"exec","command":["ls"]}}', metadata: mark('local_shell_call') },
        ]),
        { id: expect.any(String), role: 'tool', toolCallId: 'call_l', content: 'a.txt' },
      ]);
      // call_1 is not answered by the stray output: it stays pending for the client.
      expect(last).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'success', pendingToolCallIds: ['call_1'] } });
      expect(diagnostics).toEqual([
        "fromOpenAIResponses dropped a function_call_output item (response.output_item.done.item, output_index 1): it answers tool call 'call_zzz', which no call item of this stream made, so it has no call to attach to (a result without its call would be a tool message the client cannot pair). The results of earlier turns' calls belong in the request's input, not in the stream.",
        "fromOpenAIResponses dropped a shell_call_output item (response.output_item.done.item, output_index 4): it answers tool call 'sho_1', which no call item of this stream made, so it has no call to attach to (a result without its call would be a tool message the client cannot pair). The results of earlier turns' calls belong in the request's input, not in the stream.",
      ]);
    });

    it('should report an item of an unknown type, or an output, added but never done, when its response ends, also a failed one', async () => {
      const inputs = [
        created(),
        itemAdded(0, { type: 'frobnicate_call', id: 'fr_1', status: 'in_progress' }),
        itemAdded(1, { type: 'function_call_output', id: 'fco_1', call_id: 'call_x' }),
        messageAdded(2, 'msg_2'),
        textDelta(2, 'Hi', 0, 'msg_2'),
      ];
      const expected = [
        "fromOpenAIResponses has no AG-UI form for output items of type 'frobnicate_call' (the first at output_index 0): each is sent only as a RAW event. Read them from RAW, or from the response itself.",
        'fromOpenAIResponses dropped a function_call_output item (output_index 1): it was added but never done, so its output is not known and no result is sent.',
      ];
      const done = await throughClient([...inputs, completed()]);
      expect(done.messages).toEqual([assistant('resp_1', 'Hi')]);
      expect(done.last).toMatchObject({ type: EventType.RUN_FINISHED });
      expect(done.diagnostics).toEqual(expected);
      const failed = await throughClient([...inputs, { type: 'response.failed', response: response({ status: 'failed', error: { code: 'server_error', message: 'Boom.' } }) }]);
      expect(failed.messages).toEqual([assistant('resp_1', 'Hi')]);
      expect(failed.last).toMatchObject({ type: EventType.RUN_ERROR, code: 'PROVIDER_ERROR' });
      expect(failed.diagnostics).toEqual(expected);
    });

    it('should report the content of events of unknown types once per type, and not the progress events of tool items whose whole item carries it', async () => {
      const { messages, diagnostics } = await throughClient([
        created(),
        messageAdded(0),
        textDelta(0, 'Hi'),
        { type: 'response.foo.delta', item_id: 'msg_1', output_index: 0, delta: 'secret' },
        { type: 'response.foo.delta', item_id: 'msg_1', output_index: 0, delta: ' more' },
        { type: 'response.some_later_event', output_index: 0, text: 'hello' },
        { type: 'response.mcp_call_arguments.delta', item_id: 'mcp_1', output_index: 1, delta: '{"sides":6}' },
        { type: 'response.code_interpreter_call_code.delta', item_id: 'ci_1', output_index: 2, delta: 'print(1)' },
        { type: 'response.output_text.annotation.added', item_id: 'msg_1', output_index: 0, annotation: {} },
        completed(),
      ]);
      expect(messages).toEqual([assistant('resp_1', 'Hi')]);
      expect(diagnostics).toEqual([
        "fromOpenAIResponses dropped the 'delta' of response.foo.delta events (the first at output_index 0): it does not know this event type, so what they carry is not sent. If the client should see it, map these events to agent events yourself before the adapter.",
        "fromOpenAIResponses dropped the 'text' of response.some_later_event events (the first at output_index 0): it does not know this event type, so what they carry is not sent. If the client should see it, map these events to agent events yourself before the adapter.",
        // An annotation event is a known type: the annotation it adds is reported as such.
        droppedAnnotation('an annotation', "message 'resp_1' (content part 0)"),
      ]);
    });

    it("should send an audio answer's transcript as the response's text, and tell onDiagnostic once per response that its audio was dropped, as fromOpenAIChatCompletions does", async () => {
      const audio = (delta: string): ResponseStreamEvent => ({ type: 'response.audio.delta', delta, sequence_number: 1 } as never);
      const transcript = (delta: string): ResponseStreamEvent => ({ type: 'response.audio.transcript.delta', delta, sequence_number: 2 } as never);
      const spoken = (id: string) => [created({ id }), transcript('Hello'), audio('UklGRiQA'), transcript(', how can I help?'), audio('AABXQVZF'), completed(undefined, { id })];
      const { messages, last, diagnostics } = await throughClient([...spoken('resp_1'), ...spoken('resp_2')]);
      expect(messages).toEqual([assistant('resp_1', 'Hello, how can I help?'), assistant('resp_2', 'Hello, how can I help?')]);
      expect(last).toMatchObject({ type: EventType.RUN_FINISHED });
      const dropped = (id: string) =>
        `fromOpenAIResponses dropped the audio of response '${id}' (response.audio.delta): AG-UI has no event that carries audio in an assistant message, so only its transcript (response.audio.transcript.delta) is sent, as the message's text. To play it, read the response.audio.delta events yourself (raw: true also sends each event as RAW).`;
      expect(diagnostics).toEqual([dropped('resp_1'), dropped('resp_2')]);
    });

    it('should end with RUN_ERROR INCOMPLETE_STREAM when the source completes before the response did, keeping the text', async () => {
      const advice = 'The text before it is kept. The connection was probably cut: retry the request, and check that the whole response body is read.';
      const cut = await throughClient([created(), messageAdded(0), textDelta(0, 'The tide turns at')]);
      expect(cut.messages).toEqual([assistant('resp_1', 'The tide turns at')]);
      expect(cut.last).toMatchObject({
        type: EventType.RUN_ERROR,
        code: 'INCOMPLETE_STREAM',
        message: `fromOpenAIResponses: the stream ended before response 'resp_1' did (no response.completed, response.incomplete or response.failed), so the model's output may be cut short. ${advice}`,
      });
      // The second response of an agent loop, cut: the first stays whole.
      const second = await throughClient([created(), messageAdded(0), textDelta(0, 'One.'), completed(), created({ id: 'resp_2' }), messageAdded(0, 'msg_2'), textDelta(0, 'Two', 0, 'msg_2')]);
      expect(second.messages).toEqual([assistant('resp_1', 'One.'), assistant('resp_2', 'Two')]);
      expect(second.last).toMatchObject({ code: 'INCOMPLETE_STREAM', message: expect.stringContaining("the stream ended before response 'resp_2' did") });
      // An empty body.
      const empty = await throughClient([]);
      expect(empty.messages).toEqual([]);
      expect(empty.last).toMatchObject({ type: EventType.RUN_ERROR, code: 'INCOMPLETE_STREAM', message: expect.stringContaining('the stream ended without any response') });
    });

    it('should key streamed text on item_id, so whole texts under another output_index send nothing twice', async () => {
      const { messages, diagnostics } = await throughClient([
        created(),
        // No output_item.added: the deltas and the done events disagree on output_index.
        textDelta(0, 'Hel', 0, 'msg_1'),
        textDelta(0, 'lo', 0, 'msg_1'),
        { type: 'response.output_text.done', item_id: 'msg_1', output_index: 3, content_index: 0, text: 'Hello' },
        { type: 'response.content_part.done', item_id: 'msg_1', output_index: 3, content_index: 0, part: { type: 'output_text', text: 'Hello' } },
        messageDone(3, ['Hello']),
        completed(undefined, { output: [{ type: 'message', id: 'msg_1', content: [{ type: 'output_text', text: 'Hello' }] }] }),
      ]);
      expect(messages).toEqual([assistant('resp_1', 'Hello')]);
      expect(diagnostics).toEqual([]);
      // A new item id at an index that holds a call is a message of its own, not a malformed call.
      const after = await throughClient([created(), callAdded(0, 'call_1', 'lookup'), argsDone(0, '{}'), textDelta(0, 'Looking.', 0, 'msg_9'), completed()]);
      expect(after.messages).toEqual([assistant('resp_1', undefined, [{ id: 'call_1', name: 'lookup', args: '{}' }]), assistant('msg_9', 'Looking.')]);
    });

    it('should send the rest of a whole text that begins with the streamed one, and keep and report one that does not', async () => {
      const { messages, diagnostics } = await throughClient([
        created(),
        reasoningAdded(0),
        summaryDelta(0, '**Pla'),
        { type: 'response.reasoning_summary_text.done', item_id: 'rs_1', output_index: 0, summary_index: 0, text: '**Plan**' },
        messageAdded(1),
        textDelta(1, 'Hel'),
        { type: 'response.output_text.done', item_id: 'msg_1', output_index: 1, content_index: 0, text: 'Hello' },
        messageAdded(2, 'msg_2'),
        textDelta(2, 'Bye', 0, 'msg_2'),
        { type: 'response.output_text.done', item_id: 'msg_2', output_index: 2, content_index: 0, text: 'Good bye' },
        completed(),
      ]);
      expect(messages).toEqual([{ id: 'rs_1', role: 'reasoning', content: '**Plan**' }, assistant('resp_1', 'Hello'), assistant('msg_2', 'Bye')]);
      expect(diagnostics).toEqual([
        `fromOpenAIResponses kept the streamed text of message 'msg_2' (content part 0): response.output_text.done gives a whole text that differs from what its deltas sent, from character 0 on (streamed "Bye", whole "Good bye"). Text already sent cannot be taken back, so the streamed text stands; check the server's stream.`,
      ]);
    });

    it('should use the content an added item holds when nothing else comes for it, and never send it twice', async () => {
      // Items that arrive whole in output_item.added, with nothing after them.
      const whole = await throughClient([
        created(),
        itemAdded(0, { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Think.' }] }),
        itemAdded(1, { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'All at once.', annotations: [] }] }),
        callAdded(2, 'call_1', 'lookup', '{"city":"Lisbon"}'),
        itemAdded(3, { type: 'custom_tool_call', id: 'ctc_1', call_id: 'call_c', name: 'note', input: 'hi' }),
        completed(),
      ]);
      expect(whole.messages).toEqual([
        { id: 'rs_1', role: 'reasoning', content: 'Think.' },
        assistant('resp_1', 'All at once.', [
          { id: 'call_1', name: 'lookup', args: '{"city":"Lisbon"}' },
          { id: 'call_c', name: 'note', args: '{"input":"hi"}', metadata: mark('custom_tool_call') },
        ]),
      ]);
      expect(whole.diagnostics).toEqual([]);
      // The same content again in deltas and whole texts: sent once.
      const streamed = await throughClient([
        created(),
        itemAdded(0, { type: 'message', id: 'msg_1', role: 'assistant', status: 'in_progress', content: [{ type: 'output_text', text: 'Hi there', annotations: [] }] }),
        { type: 'response.content_part.added', item_id: 'msg_1', output_index: 0, content_index: 0, part: { type: 'output_text', text: 'Hi there' } },
        textDelta(0, 'Hi'),
        textDelta(0, ' there'),
        textDone(0, 'Hi there'),
        messageDone(0, ['Hi there']),
        callAdded(1, 'call_1', 'lookup', '{"a":1}'),
        argsDelta(1, '{"a"'),
        argsDelta(1, ':1}'),
        argsDone(1, '{"a":1}'),
        callDone(1, 'call_1', 'lookup', '{"a":1}'),
        completed(),
      ]);
      expect(streamed.messages).toEqual([assistant('resp_1', 'Hi there', [{ id: 'call_1', name: 'lookup', args: '{"a":1}' }])]);
      expect(streamed.diagnostics).toEqual([]);
    });

    it('should finish an incomplete response whose calls have whole arguments, dropping and naming a server tool still running, and report the reason', async () => {
      const running = await throughClient([
        created(),
        callAdded(0, 'call_1', 'lookup'),
        argsDelta(0, '{"q":1}'),
        itemAdded(1, { type: 'web_search_call', id: 'ws_1', status: 'in_progress' }),
        incompleteEvent('max_output_tokens', { usage: { input_tokens: 9, output_tokens: 4 } }),
      ]);
      expect(running.messages).toEqual([assistant('resp_1', undefined, [{ id: 'call_1', name: 'lookup', args: '{"q":1}' }])]);
      expect(running.last).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'success', pendingToolCallIds: ['call_1'] } });
      expect(running.diagnostics).toEqual([
        "fromOpenAIResponses: response 'resp_1' is incomplete: the model's output was cut by its token limit (max_output_tokens). The text before the cut is kept and the run ends as usual, its answer cut short. It stopped while the server was running web_search_call 'ws_1' (web_search), which is dropped: no result came. Raise max_output_tokens, or retry the request.",
      ]);
      // Arguments done, by function_call_arguments.done or output_item.done: not cut, whatever the reason.
      const done = await throughClient([
        created(),
        messageAdded(0),
        textDelta(0, 'Checking.'),
        callAdded(1, 'call_1', 'lookup'),
        argsDone(1, '{"q":1}'),
        callAdded(2, 'call_2', 'lookup'),
        callDone(2, 'call_2', 'lookup', '{"q":2}'),
        incompleteEvent('content_filter'),
      ]);
      expect(done.messages).toEqual([
        assistant('resp_1', 'Checking.', [
          { id: 'call_1', name: 'lookup', args: '{"q":1}' },
          { id: 'call_2', name: 'lookup', args: '{"q":2}' },
        ]),
      ]);
      expect(done.last).toMatchObject({ type: EventType.RUN_FINISHED });
      expect(done.diagnostics).toEqual([
        "fromOpenAIResponses: response 'resp_1' is incomplete: the model's output was cut by the server (incomplete: content_filter). The text before the cut is kept and the run ends as usual, its answer cut short. Raise max_output_tokens, or retry the request.",
      ]);
      // Arguments really cut: the tool call wording, as before.
      const cut = await throughClient([created(), callAdded(0, 'call_1', 'lookup'), argsDelta(0, '{"q":'), incompleteEvent('max_output_tokens')]);
      expect(cut.last).toMatchObject({
        type: EventType.RUN_ERROR,
        code: 'INCOMPLETE_STREAM',
        message: "fromOpenAIResponses: the model's output was cut by its token limit (max_output_tokens) inside tool call 'call_1' (lookup), so its arguments are incomplete JSON and the call must not run. The text before it is kept. Raise max_output_tokens, or retry the request.",
      });
    });

    it('should give the client the encrypted reasoning, which toOpenAIResponsesInput sends back, also for an empty summary', async () => {
      const rs = { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Plan: call weather' }], encrypted_content: 'gAAAA-1' };
      const fc = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}', status: 'completed' };
      const first = await throughClient([
        created(),
        itemAdded(0, { ...rs, summary: [] }),
        summaryDelta(0, 'Plan: call weather'),
        itemDone(0, rs),
        callAdded(1, 'call_1', 'get_weather'),
        argsDone(1, '{"city":"Oslo"}'),
        itemDone(1, fc),
        completed(undefined, { output: [rs, fc] as never }),
      ]);
      expect(first.messages).toEqual([
        { id: 'rs_1', role: 'reasoning', content: 'Plan: call weather', encryptedValue: 'gAAAA-1' },
        assistant('resp_1', undefined, [{ id: 'call_1', name: 'get_weather', args: '{"city":"Oslo"}' }]),
      ]);
      expect(first.last).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'success', pendingToolCallIds: ['call_1'] } });
      expect(first.diagnostics).toEqual([]);
      // The next turn reasons without a summary (the default without reasoning.summary): its message has no text, only the value.
      const second = await throughClient([
        created({ id: 'resp_2' }),
        itemAdded(0, { type: 'reasoning', id: 'rs_2', summary: [], encrypted_content: 'gAAAA-2-added' }),
        itemDone(0, { type: 'reasoning', id: 'rs_2', summary: [], encrypted_content: 'gAAAA-2' }),
        messageAdded(1, 'msg_2'),
        textDelta(1, 'Sunny in Oslo.', 0, 'msg_2'),
        completed(undefined, { id: 'resp_2' }),
      ]);
      expect(second.messages).toEqual([{ id: 'rs_2', role: 'reasoning', content: '', encryptedValue: 'gAAAA-2' }, assistant('resp_2', 'Sunny in Oslo.')]);
      expect(second.last).toMatchObject({ type: EventType.RUN_FINISHED });
      expect(second.diagnostics).toEqual([]);
      // The thread, converted for the request after it: each reasoning item goes back, by its id, with its summary.
      const warnings: string[] = [];
      const next = toOpenAIResponsesInput(
        [{ id: 'u1', role: 'user', content: 'Weather in Oslo?' }, ...first.messages, { id: 't1', role: 'tool', toolCallId: 'call_1', content: 'sunny' }, ...second.messages],
        { onWarning: (warning) => void warnings.push(warning) },
      );
      expect(warnings).toEqual([]);
      expect(next.input).toEqual([
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather in Oslo?' }] },
        { type: 'reasoning', id: 'rs_1', encrypted_content: 'gAAAA-1', summary: [{ type: 'summary_text', text: 'Plan: call weather' }] },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
        { type: 'reasoning', id: 'rs_2', encrypted_content: 'gAAAA-2', summary: [] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Sunny in Oslo.' }] },
      ]);
    });

    it('should drop every text annotation, keeping the text, and report the first of each type once per run, however many events carry it', async () => {
      const url = { type: 'url_citation', url: 'https://tides.example/oslo', title: 'Oslo tides', start_index: 22, end_index: 37 };
      // Another page cited: a url_citation too, so not reported again (an answer may cite dozens).
      const another = { type: 'url_citation', url: 'https://yr.example/oslo', title: 'Yr', start_index: 0, end_index: 4 };
      const file = { type: 'file_citation', file_id: 'file-abc', filename: 'tides.pdf', index: 21 };
      const container = { type: 'container_file_citation', container_id: 'cntr_1', file_id: 'cfile_1', filename: 'plot.png', start_index: 4, end_index: 12 };
      const path = { type: 'file_path', file_id: 'file-xyz', index: 4 };
      const tides = 'High tide is at 14:05 (tides.example).';
      const plot = 'See plot.png.';
      const part = (text: string, annotations: Record<string, unknown>[]) => ({ type: 'output_text', text, annotations });
      const { messages, last, diagnostics } = await throughClient([
        created(),
        messageAdded(0),
        { type: 'response.content_part.added', item_id: 'msg_1', output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } },
        textDelta(0, tides),
        annotationAdded(0, url, 0),
        annotationAdded(0, file, 1),
        textDone(0, tides),
        { type: 'response.content_part.done', item_id: 'msg_1', output_index: 0, content_index: 0, part: part(tides, [url, file]) as never },
        itemDone(0, { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [part(tides, [url, file])] }),
        // A second message whose annotations come only with its whole item.
        messageAdded(1, 'msg_2'),
        textDelta(1, plot, 0, 'msg_2'),
        itemDone(1, { type: 'message', id: 'msg_2', role: 'assistant', status: 'completed', content: [part(plot, [container, path, another])] }),
        // The completed output repeats them all, one with its fields in another order.
        completed(undefined, {
          output: [
            { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [part(tides, [{ end_index: 37, start_index: 22, title: 'Oslo tides', url: 'https://tides.example/oslo', type: 'url_citation' }, file])] },
            { type: 'message', id: 'msg_2', role: 'assistant', status: 'completed', content: [part(plot, [container, path, another])] },
          ] as never,
        }),
      ]);
      expect(messages).toEqual([assistant('resp_1', tides), assistant('msg_2', plot)]);
      expect(last).toMatchObject({ type: EventType.RUN_FINISHED });
      expect(diagnostics).toEqual([
        droppedAnnotation('a url_citation annotation (title "Oslo tides", url "https://tides.example/oslo")', "characters 22 to 37 of message 'resp_1' (content part 0)"),
        droppedAnnotation('a file_citation annotation (file_id "file-abc", filename "tides.pdf")', "character 21 of message 'resp_1' (content part 0)"),
        droppedAnnotation('a container_file_citation annotation (container_id "cntr_1", file_id "cfile_1", filename "plot.png")', "characters 4 to 12 of message 'msg_2' (content part 0)"),
        droppedAnnotation('a file_path annotation (file_id "file-xyz")', "character 4 of message 'msg_2' (content part 0)"),
      ]);
    });
  });

  describe('id rotation (GitHub Copilot)', () => {
    it('should key items by output_index, so changing item and response ids split nothing', async () => {
      expect(
        await adapt([
          created({ id: 'rot-1' }),
          inProgress({ id: 'rot-2' }),
          { type: 'response.output_item.added', output_index: 0, item: { type: 'reasoning', id: 'rot-3', summary: [] } },
          summaryDelta(0, 'Th', 0, 'rot-4'),
          summaryDelta(0, 'ink', 0, 'rot-5'),
          messageAdded(1, 'rot-6'),
          textDelta(1, 'He', 0, 'rot-7'),
          textDelta(1, 'y', 0, 'rot-8'),
          callAdded(2, 'call_1', 'search', '', 'rot-9'),
          argsDelta(2, '{', 'rot-10'),
          argsDelta(2, '}', 'rot-11'),
          completed(undefined, {
            id: 'rot-12',
            output: [
              { type: 'reasoning', id: 'rot-13', summary: [{ type: 'summary_text', text: 'Think' }] },
              { type: 'message', id: 'rot-14', content: [{ type: 'output_text', text: 'Hey' }] },
              { type: 'function_call', id: 'rot-15', call_id: 'call_1', name: 'search', arguments: '{}' },
            ],
          }),
        ]),
      ).toEqual([reasoning('Th', 'rot-3'), reasoning('ink', 'rot-3'), text('He', 'rot-1'), text('y', 'rot-1'), callStart('call_1', 'search', undefined, 'rot-1'), callArgs('call_1', '{'), callArgs('call_1', '}')]);
    });
  });

  describe('several responses', () => {
    it('should give each response its own message and usage', async () => {
      expect(
        await adapt([
          created(),
          callAdded(0, 'call_1', 'add', '{"a":1}'),
          completed({ input_tokens: 10, output_tokens: 2, total_tokens: 12 }),
          created({ id: 'resp_2' }),
          messageAdded(0, 'msg_2'),
          textDelta(0, '3'),
          completed({ input_tokens: 20, output_tokens: 1, total_tokens: 21, input_tokens_details: { cached_tokens: 8 }, output_tokens_details: { reasoning_tokens: 0 } }, { id: 'resp_2' }),
        ]),
      ).toEqual([
        callStart('call_1', 'add', '{"a":1}'),
        tokenUsage({ inputTokens: 10, outputTokens: 2, totalTokens: 12, model: 'gpt-test' }),
        text('3', 'resp_2'),
        tokenUsage({ inputTokens: 20, outputTokens: 1, totalTokens: 21, reasoningTokens: 0, cachedInputTokens: 8, model: 'gpt-test' }),
      ]);
    });

    it('should not let a later response continue an earlier one at the same output_index', async () => {
      expect(await adapt([created(), messageAdded(0), textDelta(0, 'One'), completed(), created({ id: 'resp_2' }), textDelta(0, 'Two'), completed()])).toEqual([text('One'), text('Two', 'resp_2')]);
    });

    it('should mint a response id when the stream has no response.created', async () => {
      expect(await adapt([textDelta(0, 'Hi'), completed(), textDelta(0, 'Again'), completed()], { generateId: sequentialIds() })).toEqual([text('Hi', 'id-1'), text('Again', 'id-2')]);
    });
  });

  describe('usage', () => {
    it('should send every count response.completed reports, and nothing when it reports none', async () => {
      expect(
        await adapt([
          completed(
            { input_tokens: 19, output_tokens: 105, total_tokens: 124, input_tokens_details: { cached_tokens: 3, cache_write_tokens: 2 }, output_tokens_details: { reasoning_tokens: 44 } },
            { model: 'gpt-5' },
          ),
        ]),
      ).toEqual([tokenUsage({ inputTokens: 19, outputTokens: 105, totalTokens: 124, reasoningTokens: 44, cachedInputTokens: 3, cacheWriteInputTokens: 2, model: 'gpt-5' })]);
      expect(await adapt([completed(undefined, { usage: null })])).toEqual([]);
      expect(await adapt([completed({ input_tokens: 4 }, { model: undefined })])).toEqual([tokenUsage({ inputTokens: 4 })]);
    });
  });

  describe('errors', () => {
    it('should make response.failed a PROVIDER_ERROR, after its usage', async () => {
      const events: AgentEvent[] = [];
      const failed: ResponseStreamEvent = {
        type: 'response.failed',
        response: response({ status: 'failed', error: { code: 'rate_limit_exceeded', message: 'Rate limit reached.' }, usage: { input_tokens: 5, output_tokens: 0 } }),
      };
      const error = await new Promise((resolve) => from([created(), failed]).pipe(fromOpenAIResponses()).subscribe({ next: (event) => events.push(event), error: resolve }));
      expect(events).toEqual([tokenUsage({ inputTokens: 5, outputTokens: 0, model: 'gpt-test' })]);
      expect(error).toEqual(
        new AguiRxError('PROVIDER_ERROR', "The response failed: Rate limit reached. (rate_limit_exceeded). Retry the request; if it keeps failing, check the request and the provider's status."),
      );
      expect(error).toMatchObject({ code: 'PROVIDER_ERROR' });
    });

    it('should read an error event whose fields are nested under error, and one with none', async () => {
      expect(await failure([{ type: 'error', error: { type: 'invalid_request_error', code: 'context_length_exceeded', message: 'Too long.' } }])).toMatchObject({
        code: 'PROVIDER_ERROR',
        message: "The model provider failed mid-stream: Too long. (invalid_request_error, context_length_exceeded). Retry the request; if it keeps failing, check the request and the provider's status.",
      });
      expect(await failure([{ type: 'error' }])).toMatchObject({ code: 'PROVIDER_ERROR', message: expect.stringContaining('mid-stream: no message given.') });
    });

    it('should fail with INCOMPLETE_STREAM when the source ends in the middle of a call', async () => {
      const error = await failure([created(), callAdded(0, 'call_1', 'search'), argsDelta(0, '{"q"')]);
      expect(error).toMatchObject({
        code: 'INCOMPLETE_STREAM',
        message:
          "fromOpenAIResponses: the stream ended before its arguments were complete (no function_call_arguments.done, output_item.done or response.completed) inside tool call 'call_1' (search), so its arguments are incomplete JSON and the call must not run. The text before it is kept. The connection was probably cut: retry the request, and check that the whole response body is read.",
      });
    });

    it('should fail with INCOMPLETE_STREAM, after the usage, when response.incomplete cuts a call off', async () => {
      const events: AgentEvent[] = [];
      const incomplete: ResponseStreamEvent = {
        type: 'response.incomplete',
        response: response({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, usage: { input_tokens: 5, output_tokens: 16 } }),
      };
      const cutItem: ResponseStreamEvent = { type: 'response.output_item.done', output_index: 0, item: { type: 'function_call', id: 'fc_0', call_id: 'call_1', name: 'search', arguments: '{"q":', status: 'incomplete' } };
      const error = await new Promise((resolve) =>
        from([created(), callAdded(0, 'call_1', 'search'), argsDelta(0, '{"q":'), cutItem, incomplete]).pipe(fromOpenAIResponses()).subscribe({ next: (event) => events.push(event), error: resolve }),
      );
      expect(events).toEqual([callStart('call_1', 'search'), callArgs('call_1', '{"q":'), tokenUsage({ inputTokens: 5, outputTokens: 16, model: 'gpt-test' })]);
      expect(error).toEqual(
        new AguiRxError(
          'INCOMPLETE_STREAM',
          "fromOpenAIResponses: the model's output was cut by its token limit (max_output_tokens) inside tool call 'call_1' (search), so its arguments are incomplete JSON and the call must not run. The text before it is kept. Raise max_output_tokens, or retry the request.",
        ),
      );
      expect(error).toMatchObject({ code: 'INCOMPLETE_STREAM' });
    });

    it('should fail with INVALID_EVENT when whole arguments disagree with what the deltas sent', async () => {
      expect(await failure([created(), callAdded(0, 'call_1', 'search'), argsDelta(0, '{"q":1'), argsDone(0, '{"q":2}')])).toEqual(
        invalidEvent(
          `response.function_call_arguments.done has the whole arguments "{\\"q\\":2}" of tool call 'call_1', which do not begin with what its deltas sent ("{\\"q\\":1"). The deltas and the final arguments disagree; is the stream reordered or are events of two streams mixed?`,
        ),
      );
    });

    it('should fail with INVALID_EVENT on malformed fields', async () => {
      expect(await failure([bad({ type: 'response.output_text.delta', output_index: -1, delta: 'x' })])).toEqual(
        invalidEvent("response.output_text.delta.output_index is number -1, but it must be a non-negative integer: the position of the item in the response's output."),
      );
      expect(await failure([bad({ type: 'response.output_text.delta', output_index: 0, delta: 7 })])).toEqual(invalidEvent('response.output_text.delta.delta is number 7, but it must be a string.'));
      expect(await failure([bad({ type: 'response.created', response: 'resp_1' })])).toEqual(invalidEvent('response.created.response is "resp_1", but it must be an object.'));
      expect(await failure([created(), callAdded(0, 'call_1', 'search'), bad({ type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'x' })])).toEqual(invalidEvent('response.output_text.delta is for output_index 0, which holds a tool call, not a message.'));
      expect(await failure([completed({ input_tokens: -1 })])).toEqual(invalidEvent('response.completed.response.usage.input_tokens is number -1, but token counts must be non-negative integers.'));
      expect(await failure([bad(null)])).toMatchObject({ code: 'INVALID_EVENT' });
      expect(await failure([created(), messageAdded(0), bad({ type: 'response.output_text.annotation.added', item_id: 'msg_1', output_index: 0, annotation: 'cite' })])).toEqual(
        invalidEvent(`response.output_text.annotation.added.annotation is "cite", but it must be an object such as { type: 'url_citation', url, title, start_index, end_index }.`),
      );
      expect(await failure([created(), messageDone(0, ['Hi']), bad({ type: 'response.content_part.done', item_id: 'msg_1', output_index: 0, content_index: 0, part: { type: 'output_text', text: 'Hi', annotations: 'none' } })])).toEqual(
        invalidEvent('response.content_part.done.part.annotations is "none", but it must be an array.'),
      );
    });

    it('should throw INVALID_OPTIONS at call time for a generateId that is not a function', () => {
      expect(() => fromOpenAIResponses({ generateId: 'id' as unknown as () => string })).toThrow(
        new AguiRxError('INVALID_OPTIONS', 'fromOpenAIResponses got generateId: "id", but generateId must be a function that returns a fresh id string.'),
      );
    });

    it('should skip events of other types', async () => {
      const { events, diagnostics } = await adaptReporting([
        created(),
        { type: 'response.web_search_call.searching', output_index: 0, item_id: 'ws_1' },
        { type: 'response.output_text.annotation.added', output_index: 1, annotation: {} },
        { type: 'response.content_part.added', output_index: 1, content_index: 0, part: { type: 'output_text', text: '' } },
        { type: 'response.image_generation_call.partial_image', output_index: 2, partial_image_b64: 'AAAA' },
        completed(),
      ]);
      expect(events).toEqual([]);
      // Only the annotation, which has no AG-UI form, is reported.
      expect(diagnostics).toEqual([droppedAnnotation('an annotation', "message 'resp_1' (content part 0)")]);
    });
  });

  describe('round trip through toOpenAIResponsesInput', () => {
    const itemDone = (output_index: number, item: Record<string, unknown>): ResponseStreamEvent => ({ type: 'response.output_item.done', output_index, item: item as never });
    const itemAdded = (output_index: number, item: Record<string, unknown>): ResponseStreamEvent => ({ type: 'response.output_item.added', output_index, item: item as never });
    const nextRequest = (messages: Message[], resume?: ResumeEntry[]) => {
      const warnings: string[] = [];
      const { input } = toOpenAIResponsesInput(messages, { onWarning: (warning) => void warnings.push(warning), ...(resume === undefined ? {} : { resume }) });
      return { input, warnings };
    };

    it("should send a custom tool's call and result back as custom_tool_call and custom_tool_call_output with the raw input text", async () => {
      const call = { type: 'custom_tool_call', id: 'ctc_1', call_id: 'call_c1', name: 'code_exec', input: 'print("hi")\n', status: 'completed' };
      const { messages, last, diagnostics } = await throughClient([
        created(),
        itemAdded(0, { ...call, input: '', status: 'in_progress' }),
        { type: 'response.custom_tool_call_input.delta', output_index: 0, item_id: 'ctc_1', delta: 'print("hi' },
        { type: 'response.custom_tool_call_input.delta', output_index: 0, item_id: 'ctc_1', delta: '")\n' },
        { type: 'response.custom_tool_call_input.done', output_index: 0, item_id: 'ctc_1', input: 'print("hi")\n' },
        itemDone(0, call),
        completed(),
      ]);
      expect(messages).toEqual([
        {
          id: 'resp_1',
          role: 'assistant',
          toolCalls: [{ id: 'call_c1', type: 'function', function: { name: 'code_exec', arguments: '{"input":"print(\\"hi\\")\\n"}' }, metadata: mark('custom_tool_call') }],
        },
      ]);
      expect(last).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'success', pendingToolCallIds: ['call_c1'] } });
      expect(diagnostics).toEqual([]);
      const { input, warnings } = nextRequest([...messages, { id: 't1', role: 'tool', toolCallId: 'call_c1', content: 'hi' }]);
      expect(input).toEqual([
        { type: 'custom_tool_call', call_id: 'call_c1', name: 'code_exec', input: 'print("hi")\n' },
        { type: 'custom_tool_call_output', call_id: 'call_c1', output: 'hi' },
      ]);
      expect(warnings).toEqual([]);
    });

    it('should leave the calls OpenAI ran itself (MCP, code interpreter) out of the next request, one warning each, keeping the text after them', async () => {
      const mcpCall = { type: 'mcp_call', id: 'mcp_1', server_label: 'deepwiki', name: 'ask_question', arguments: '{"repoName":"x/y"}', output: 'It is a repo.', error: null, status: 'completed' };
      const ci = { type: 'code_interpreter_call', id: 'ci_1', code: 'print(1+1)', container_id: 'cntr_1', outputs: [{ type: 'logs', logs: '2\n' }], status: 'completed' };
      const { messages, last, diagnostics } = await throughClient([
        created(),
        itemAdded(0, { ...mcpCall, arguments: '', output: null, status: 'in_progress' }),
        { type: 'response.mcp_call_arguments.delta', output_index: 0, item_id: 'mcp_1', delta: '{"repoName":"x/y"}' },
        itemDone(0, mcpCall),
        itemAdded(1, { ...ci, code: '', outputs: null, status: 'in_progress' }),
        { type: 'response.code_interpreter_call_code.delta', output_index: 1, item_id: 'ci_1', delta: 'print(1+1)' },
        itemDone(1, ci),
        messageAdded(2, 'msg_2'),
        textDelta(2, 'The answer is 2.', 0, 'msg_2'),
        completed(),
      ]);
      expect(messages).toEqual([
        {
          id: 'resp_1',
          role: 'assistant',
          toolCalls: [
            { id: 'mcp_1', type: 'function', function: { name: 'ask_question', arguments: '{"repoName":"x/y"}' }, metadata: mark('mcp_call', 'deepwiki') },
            { id: 'ci_1', type: 'function', function: { name: 'code_interpreter', arguments: '{"code":"print(1+1)","container_id":"cntr_1"}' }, metadata: mark('code_interpreter_call') },
          ],
        },
        { id: expect.any(String), role: 'tool', toolCallId: 'mcp_1', content: 'It is a repo.' },
        { id: expect.any(String), role: 'tool', toolCallId: 'ci_1', content: '{"outputs":[{"type":"logs","logs":"2\\n"}],"status":"completed"}' },
        { id: 'msg_2', role: 'assistant', content: 'The answer is 2.' },
      ]);
      expect(last).toMatchObject({ type: EventType.RUN_FINISHED });
      expect(diagnostics).toEqual([]);
      const { input, warnings } = nextRequest([{ id: 'u1', role: 'user', content: 'What is 1+1?' }, ...messages]);
      // No function_call for a function the request never declared, and no made-up output.
      expect(input).toEqual([
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is 1+1?' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'The answer is 2.' }] },
      ]);
      const leftOut = (call: string, item: string) =>
        `toOpenAIResponsesInput left out server tool call ${call} of assistant message 'resp_1' and its result: OpenAI ran it itself (a ${item} item), and takes it back only as that item with its response's item id, which it finds only in a stored response (with store: false it refuses the item). As a function_call it would name a function the request never declared. What the model wrote after it is kept; to send the whole response, use previous_response_id.`;
      expect(warnings).toEqual([leftOut("'mcp_1' (ask_question)", 'mcp_call'), leftOut("'ci_1' (code_interpreter)", 'code_interpreter_call')]);
    });

    it("should answer an MCP approval request from the next run's resume entries with the request and an mcp_approval_response", async () => {
      const request = { type: 'mcp_approval_request', id: 'mcpr_1', server_label: 'deepwiki', name: 'ask_question', arguments: '{"repoName":"x/y","question":"what?"}' };
      const { messages, last, diagnostics } = await throughClient([created(), itemAdded(0, request), itemDone(0, request), completed(undefined, { output: [request] as never })]);
      expect(messages).toEqual([
        { id: 'resp_1', role: 'assistant', toolCalls: [{ id: 'mcpr_1', type: 'function', function: { name: 'ask_question', arguments: request.arguments }, metadata: mark('mcp_approval_request', 'deepwiki') }] },
      ]);
      const interrupt = { id: 'mcpr_1', reason: 'tool_approval', toolCallId: 'mcpr_1', message: "Approve the call to 'ask_question' on MCP server 'deepwiki'?" };
      expect(last).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'interrupt', interrupts: [interrupt] } });
      expect(diagnostics).toEqual([]);
      // The next run: the user approved it (RunAgentInput.resume answers the interrupt by its id).
      const approved = nextRequest(messages, [{ interruptId: 'mcpr_1', status: 'resolved', payload: { approved: true } }]);
      expect(approved.input).toEqual([
        { type: 'mcp_approval_request', id: 'mcpr_1', server_label: 'deepwiki', name: 'ask_question', arguments: request.arguments },
        { type: 'mcp_approval_response', approval_request_id: 'mcpr_1', approve: true },
      ]);
      // No failed function_call_output is made up for it.
      expect(approved.warnings).toEqual([]);
      const declined = nextRequest(messages, [{ interruptId: 'mcpr_1', status: 'resolved', payload: { approved: false, reason: 'Not that repo.' } }]);
      expect(declined.input[1]).toEqual({ type: 'mcp_approval_response', approval_request_id: 'mcpr_1', approve: false, reason: 'Not that repo.' });
    });
  });
});
