import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defer, from, map, mergeMap, of, retry, take, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { parseSSE, type SSEMessage } from '../../../lib/transports/parseSSE.js';
import { AguiRxError } from '../../../lib/protocol/errors.js';
import { fixturesDir } from '../../support/fixtures.js';
import { collect, createTestScheduler, diagnosticsSink } from '../../support/helpers.js';

/** One value map for a marble test's inputs and outputs, as RxJS's own specs use. */
type Marbles = Record<string, any>;

const encoder = new TextEncoder();

/** The messages of a stream delivered in the given chunks, and the diagnostics it caused. */
async function parse(chunks: readonly (string | Uint8Array)[]): Promise<{ messages: SSEMessage[]; diagnostics: string[] }> {
  const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
  const messages = await collect(from(chunks).pipe(parseSSE({ onDiagnostic })));
  return { messages, diagnostics };
}

/** The messages of a stream delivered as one string. */
async function parseText(text: string): Promise<SSEMessage[]> {
  return (await parse([text])).messages;
}

/** `bytes` cut at the given offsets. */
function cut(bytes: Uint8Array, offsets: readonly number[]): Uint8Array[] {
  const bounds = [0, ...offsets, bytes.length];
  return bounds.slice(1).map((end, i) => bytes.subarray(bounds[i], end));
}

// A stream with every feature: BOM, comments, CRLF, CR, event, id, retry, multi-line data, multi-byte text.
const sample =
  '\uFEFF: connected\r\n\r\n' +
  'event: delta\r\nid: 7\r\ndata: {"text":"Grüße, €5 😀"}\r\n\r\n' +
  'retry: 3000\rdata: line one\rdata:line two\r\r' +
  ': ping\n\n' +
  'data: {"padded":true}   \n\n' +
  'id\nevent: done\ndata: [DONE]\n\n';

const sampleMessages: SSEMessage[] = [
  { event: 'delta', data: '{"text":"Grüße, €5 😀"}', id: '7' },
  { data: 'line one\nline two', id: '7' },
  { data: '{"padded":true}   ', id: '7' },
  { event: 'done', data: '[DONE]' },
];

describe('parseSSE', () => {
  let testScheduler: TestScheduler;

  beforeEach(() => {
    testScheduler = createTestScheduler();
  });

  describe('as an operator', () => {
    it('should dispatch each message at its blank line, also when it arrives in pieces', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const values: Marbles = {
          a: 'data: {"x"',
          b: ':1}\n\nda',
          c: 'ta: [DONE]\n\n',
          m: { data: '{"x":1}' },
          d: { data: '[DONE]' },
        };
        // prettier-ignore
        const e1 =  cold('--a-----b------c--|', values);
        // prettier-ignore
        const e1subs =   '^-----------------!';
        // prettier-ignore
        const expected = '--------m------d--|';

        expectObservable(e1.pipe(parseSSE())).toBe(expected, values);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should pass the source error on, without the message it interrupted', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
        const error = new Error('socket hang up');
        const values: Marbles = { a: 'data: one\n\n', b: 'data: tw', m: { data: 'one' } };
        // prettier-ignore
        const e1 =  cold('--a--b--#', values, error);
        // prettier-ignore
        const e1subs =   '^-------!';
        // prettier-ignore
        const expected = '--m-----#';

        expectObservable(e1.pipe(parseSSE({ onDiagnostic }))).toBe(expected, values, error);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
        testScheduler.flush();
        // The error says what happened: no diagnostic on top of it.
        expect(diagnostics).toEqual([]);
      }));

    it('should complete when the source is empty', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        // prettier-ignore
        const e1 = cold<string>('|   ');
        // prettier-ignore
        const e1subs =          '(^!)';
        // prettier-ignore
        const expected =        '|   ';

        expectObservable(e1.pipe(parseSSE())).toBe(expected);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should not complete when the source never completes', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        // prettier-ignore
        const e1 = cold<string>('-');
        // prettier-ignore
        const e1subs =          '^';
        // prettier-ignore
        const expected =        '-';

        expectObservable(e1.pipe(parseSSE())).toBe(expected);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should pass an immediate source error on', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        // prettier-ignore
        const e1 = cold<string>('#   ');
        // prettier-ignore
        const e1subs =          '(^!)';
        // prettier-ignore
        const expected =        '#   ';

        expectObservable(e1.pipe(parseSSE())).toBe(expected);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should allow unsubscribing early and explicitly', () =>
      testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
        const values: Marbles = { a: 'data: one\n\n', b: 'data: two\n\n', m: { data: 'one' } };
        // prettier-ignore
        const e1 =   hot('--a----b----|', values);
        // prettier-ignore
        const unsub =    '-----!       ';
        // prettier-ignore
        const e1subs =   '^----!       ';
        // prettier-ignore
        const expected = '--m---       ';

        expectObservable(e1.pipe(parseSSE()), unsub).toBe(expected, values);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should not break unsubscription chains when unsubscribed explicitly', () =>
      testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
        const values: Marbles = { a: 'data: one\n\n', b: 'data: two\n\n', m: { data: 'one' } };
        // prettier-ignore
        const e1 =   hot('--a----b----|', values);
        // prettier-ignore
        const unsub =    '-----!       ';
        // prettier-ignore
        const e1subs =   '^----!       ';
        // prettier-ignore
        const expected = '--m---       ';

        const result = e1.pipe(
          mergeMap((chunk) => of(chunk)),
          parseSSE(),
          map((message) => message),
          mergeMap((message) => of(message)),
        );

        expectObservable(result, unsub).toBe(expected, values);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should stop a synchronous source when take has what it needs', () =>
      testScheduler.run(({ expectObservable }) => {
        const values: Marbles = { m: { data: 'one' }, n: { data: 'two' } };
        // prettier-ignore
        const expected = '(mn|)';

        let chunksRead = 0;
        const source$ = from(['data: one\n\ndata: two\n\ndata: three\n\n', 'data: four\n\n']).pipe(map((chunk) => (chunksRead++, chunk)));

        expectObservable(source$.pipe(parseSSE(), take(2))).toBe(expected, values);
        testScheduler.flush();
        expect(chunksRead).toBe(1);
      }));

    it('should keep state per subscription: a late subscriber does not see the start of a message', () =>
      testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
        const values: Marbles = { a: 'data: one\n', b: 'data: two\n\n', m: { data: 'one\ntwo' }, n: { data: 'two' } };
        // prettier-ignore
        const e1 =   hot('--a----b----|', values);
        // prettier-ignore
        const sub2 =     '----^        ';
        // prettier-ignore
        const e1subs = [ '^-----------!',
                         '----^-------!'];
        // prettier-ignore
        const expected1 = '-------m----|';
        // prettier-ignore
        const expected2 = '-------n----|';

        const result = e1.pipe(parseSSE());

        expectObservable(result).toBe(expected1, values);
        expectObservable(result, sub2).toBe(expected2, values);
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    it('should start afresh on retry: a message cut by the error does not leak into the next attempt', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const values: Marbles = { a: 'event: lost\ndata: cut', b: 'data: again\n\n', m: { data: 'again' } };
        // prettier-ignore
        const first =  cold('-a-#          ', values);
        // prettier-ignore
        const second = cold('   -b-|       ', values);
        // prettier-ignore
        const firstSubs =   '^--!          ';
        // prettier-ignore
        const secondSubs =  '---^--!       ';
        // prettier-ignore
        const expected =    '----m-|       ';

        let attempt = 0;
        const source$ = defer(() => (attempt++ === 0 ? first : second));

        expectObservable(source$.pipe(parseSSE(), retry(1))).toBe(expected, values);
        expectSubscriptions(first.subscriptions).toBe(firstSubs);
        expectSubscriptions(second.subscriptions).toBe(secondSubs);
      }));

    it('should discard an event the stream cut short, and report it', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
        const values: Marbles = { a: 'data: whole\n\n', b: 'data: {"half":', m: { data: 'whole' } };
        // prettier-ignore
        const e1 =  cold('--a--b--|', values);
        // prettier-ignore
        const expected = '--m-----|';

        expectObservable(e1.pipe(parseSSE({ onDiagnostic }))).toBe(expected, values);
        testScheduler.flush();
        expect(diagnostics).toEqual([
          'Discarded an incomplete server-sent event at the end of the stream ("data: {\\"half\\":"): the stream ended before the blank line that dispatches it, and the SSE rules (which EventSource follows) drop such an event. Either the server (or a proxy) cut the response short, or the stream was saved without its last blank line, as SDK recordings often are: end every event with a blank line.',
        ]);
      }));

    it('should fail with INVALID_EVENT on a chunk that is neither text nor bytes', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values: Marbles = { a: 'data: one\n\n', b: 42 as unknown as string, m: { data: 'one' } };
        const error = new AguiRxError(
          'INVALID_EVENT',
          "parseSSE received number 42 where a chunk of an event stream was expected. Pass the response body's chunks: strings or Uint8Array bytes (for a fetch Response, response.body; for Node, the IncomingMessage).",
        );
        // prettier-ignore
        const e1 =  cold('--a--b--|', values);
        // prettier-ignore
        const expected = '--m--#   ';

        expectObservable(e1.pipe(parseSSE())).toBe(expected, values, error);
      }));
  });

  describe('the WHATWG parsing rules', () => {
    it('should skip one leading BOM, in text and in bytes, and only at the very start', async () => {
      expect(await parseText('\uFEFFdata: a\n\n')).toEqual([{ data: 'a' }]);
      expect((await parse([encoder.encode('\uFEFFdata: a\n\n')])).messages).toEqual([{ data: 'a' }]);
      // The BOM split from the rest of the stream.
      expect((await parse([encoder.encode('\uFEFF').subarray(0, 2), encoder.encode('\uFEFF').subarray(2), 'data: a\n\n'])).messages).toEqual([{ data: 'a' }]);
      expect((await parse(['', '\uFEFF', 'data: a\n\n'])).messages).toEqual([{ data: 'a' }]);
      // A second BOM is part of the first field's name, which is then unknown.
      expect(await parseText('\uFEFF\uFEFFdata: a\n\ndata: b\n\n')).toEqual([{ data: 'b' }]);
      // Inside a value it is kept.
      expect(await parseText('data: \uFEFFa\n\n')).toEqual([{ data: '\uFEFFa' }]);
    });

    it('should end lines at LF, CRLF and CR alike', async () => {
      const expected = [{ event: 'e', data: 'a\nb' }];
      expect(await parseText('event: e\ndata: a\ndata: b\n\n')).toEqual(expected);
      expect(await parseText('event: e\r\ndata: a\r\ndata: b\r\n\r\n')).toEqual(expected);
      expect(await parseText('event: e\rdata: a\rdata: b\r\r')).toEqual(expected);
      expect(await parseText('event: e\rdata: a\r\ndata: b\n\r')).toEqual(expected);
    });

    it('should count a CR and an LF split across chunks as one line end', async () => {
      // Were the LF a line end of its own, the blank line would dispatch 'a' alone.
      expect((await parse(['data: a\r', '\ndata: b\r', '\n\r', '\n'])).messages).toEqual([{ data: 'a\nb' }]);
      expect((await parse(['data: a\r', '', '\ndata: b\r\n\r\n'])).messages).toEqual([{ data: 'a\nb' }]);
      // A CR at the end of a chunk followed by anything else is a line end by itself.
      expect((await parse(['data: a\r', 'data: b\r', '\r'])).messages).toEqual([{ data: 'a\nb' }]);
    });

    it('should join multi-line data with LF and drop only the last LF', async () => {
      expect(await parseText('data: {"a":\ndata: 1,\ndata: "b": 2}\n\n')).toEqual([{ data: '{"a":\n1,\n"b": 2}' }]);
      expect(await parseText('data:\ndata\ndata: x\n\n')).toEqual([{ data: '\n\nx' }]);
    });

    it('should remove exactly one space after the colon, and split at the first colon', async () => {
      expect(await parseText('data:x\n\n')).toEqual([{ data: 'x' }]);
      expect(await parseText('data: x\n\n')).toEqual([{ data: 'x' }]);
      expect(await parseText('data:  x\n\n')).toEqual([{ data: ' x' }]);
      expect(await parseText('data:\tx\n\n')).toEqual([{ data: '\tx' }]);
      expect(await parseText('data: a: b:c\n\n')).toEqual([{ data: 'a: b:c' }]);
    });

    it('should read a line without a colon as a field with an empty value', async () => {
      expect(await parseText('data\n\n')).toEqual([{ data: '' }]);
      expect(await parseText('data\ndata\n\n')).toEqual([{ data: '\n' }]);
      expect(await parseText('event\ndata: x\n\n')).toEqual([{ data: 'x' }]);
    });

    it('should dispatch an empty data line as an empty message', async () => {
      expect(await parseText('data: \n\n')).toEqual([{ data: '' }]);
      expect(await parseText('data:\n\n')).toEqual([{ data: '' }]);
    });

    it('should dispatch nothing for a block without data, and forget its event type', async () => {
      expect(await parseText('event: ping\n\n')).toEqual([]);
      expect(await parseText('event: ping\n\ndata: x\n\n')).toEqual([{ data: 'x' }]);
      expect(await parseText('\n\n\n\ndata: x\n\n\n\n')).toEqual([{ data: 'x' }]);
    });

    it('should set the event type per message', async () => {
      expect(await parseText('event: a\ndata: 1\n\ndata: 2\n\nevent: c\nevent: d\ndata: 3\n\n')).toEqual([
        { event: 'a', data: '1' },
        { data: '2' },
        { event: 'd', data: '3' },
      ]);
      expect(await parseText('data: 1\nevent: late\n\n')).toEqual([{ event: 'late', data: '1' }]);
    });

    it('should carry the last event id over to later messages until an id line changes it', async () => {
      expect(await parseText('id: 1\ndata: a\n\ndata: b\n\nid: 2\n\ndata: c\n\nid\ndata: d\n\nid: 3\ndata: e\n\nid: \ndata: f\n\n')).toEqual([
        { data: 'a', id: '1' },
        { data: 'b', id: '1' },
        // A block with only an id dispatches nothing, but sets the id.
        { data: 'c', id: '2' },
        // An empty id clears it.
        { data: 'd' },
        { data: 'e', id: '3' },
        { data: 'f' },
      ]);
    });

    it('should mark the messages whose own block set the id with ownId, when asked, and only then', async () => {
      const text = 'id: 1\ndata: a\n\ndata: b\n\nid: 2\n\ndata: c\n\nid: 3\ndata: d\n\nid: \ndata: e\n\nid: 4\u00005\ndata: f\n\n';
      const messages = await collect(from([text]).pipe(parseSSE({ flagOwnIds: true })));
      expect(messages).toEqual([
        { data: 'a', id: '1', ownId: true },
        // Carried over: the same id, not its own.
        { data: 'b', id: '1' },
        // An id-only block sets the id for later messages; they did not carry it themselves.
        { data: 'c', id: '2' },
        { data: 'd', id: '3', ownId: true },
        // An empty id clears the id, in the message's own block.
        { data: 'e', ownId: true },
        // An id holding U+0000 is ignored: not the message's own.
        { data: 'f' },
      ]);
      expect(await parseText(text)).toEqual([{ data: 'a', id: '1' }, { data: 'b', id: '1' }, { data: 'c', id: '2' }, { data: 'd', id: '3' }, { data: 'e' }, { data: 'f' }]);
    });

    it('should ignore an id that holds U+0000', async () => {
      expect(await parseText('id: 1\ndata: a\n\nid: 2\u00003\ndata: b\n\n')).toEqual([
        { data: 'a', id: '1' },
        { data: 'b', id: '1' },
      ]);
    });

    it('should ignore retry, unknown fields, field names in another case, and comments', async () => {
      expect(await parseText(': hello\nretry: 1000\nretry: soon\nfoo: bar\nData: no\nDATA: no\n:data: no\ndata: yes\n: bye\n\n')).toEqual([{ data: 'yes' }]);
    });

    it('should keep trailing and inner spaces in data: the consumer trims or parses', async () => {
      const [message] = await parseText('data: {"a": 1}   \n\ndata: [DONE] \n\n');
      expect(message).toEqual({ data: '{"a": 1}   ' });
      expect(JSON.parse(message.data)).toEqual({ a: 1 });
      expect(await parseText('data: {"a": 1}   \n\ndata: [DONE] \n\n')).toEqual([{ data: '{"a": 1}   ' }, { data: '[DONE] ' }]);
    });

    it('should keep non-ASCII text whole when its bytes are split across chunks', async () => {
      const bytes = encoder.encode('data: Grüße € 😀 𝄞\n\n');
      for (let offset = 1; offset < bytes.length; offset++) {
        expect((await parse(cut(bytes, [offset]))).messages).toEqual([{ data: 'Grüße € 😀 𝄞' }]);
      }
      // One byte at a time.
      expect((await parse(cut(bytes, [...bytes.keys()].slice(1)))).messages).toEqual([{ data: 'Grüße € 😀 𝄞' }]);
    });

    it('should give the same messages for a stream cut at every byte offset, and at every pair of offsets', async () => {
      const bytes = encoder.encode(sample);
      expect((await parse([sample])).messages).toEqual(sampleMessages);
      expect((await parse([bytes])).messages).toEqual(sampleMessages);
      for (let offset = 0; offset <= bytes.length; offset++) {
        const { messages, diagnostics } = await parse(cut(bytes, [offset]));
        expect({ offset, messages }).toEqual({ offset, messages: sampleMessages });
        expect(diagnostics).toEqual([]);
      }
      for (let first = 1; first < bytes.length; first += 3) {
        for (let second = first; second < bytes.length; second += 5) {
          expect({ first, second, messages: (await parse(cut(bytes, [first, second]))).messages }).toEqual({ first, second, messages: sampleMessages });
        }
      }
    });

    it('should give the same messages for the stream cut into text chunks at every offset', async () => {
      for (let offset = 0; offset <= sample.length; offset++) {
        expect({ offset, messages: (await parse([sample.slice(0, offset), sample.slice(offset)])).messages }).toEqual({ offset, messages: sampleMessages });
      }
    });

    it('should accept Node Buffers and text and byte chunks mixed', async () => {
      expect((await parse([Buffer.from('data: a'), 'b\n', encoder.encode('\n')])).messages).toEqual([{ data: 'ab' }]);
    });

    it('should turn bytes left incomplete before a text chunk, or at the end, into U+FFFD', async () => {
      const euro = encoder.encode('€');
      expect((await parse(['data: ', euro.subarray(0, 2), 'x\n\n'])).messages).toEqual([{ data: '\uFFFDx' }]);
      const { messages, diagnostics } = await parse([encoder.encode('data: a\n\ndata: '), euro.subarray(0, 1)]);
      expect(messages).toEqual([{ data: 'a' }]);
      expect(diagnostics).toHaveLength(1);
    });

    it('should dispatch nothing at the end for an event without its blank line, and report only real data', async () => {
      expect(await parse(['data: a\n\ndata: b\n'])).toEqual({
        messages: [{ data: 'a' }],
        diagnostics: [expect.stringContaining('Discarded an incomplete server-sent event at the end of the stream ("b\\n")')],
      });
      expect(await parse(['data: a\n\ndata: b'])).toEqual({
        messages: [{ data: 'a' }],
        diagnostics: [expect.stringContaining('("data: b")')],
      });
      // A trailing comment or a lone event type is no lost data.
      expect(await parse(['data: a\n\n: bye'])).toEqual({ messages: [{ data: 'a' }], diagnostics: [] });
      expect(await parse(['data: a\n\n'])).toEqual({ messages: [{ data: 'a' }], diagnostics: [] });
    });
  });

  const dart = join(fixturesDir, 'ag-ui', 'dart-sdk-sse-streams.handwritten.txt');

  (existsSync(dart) ? describe : describe.skip)(
    `the Dart SDK's hand-written SSE streams${existsSync(dart) ? '' : ' (skipped: ../shared/fixtures is absent)'}`,
    () => {
      /** The file's `## ` sections, each an event stream of its own. */
      const sections = (): Map<string, string> => {
        const parts = readFileSync(dart, 'utf8').split(/^## (.*)\n/m);
        const result = new Map<string, string>();
        for (let i = 1; i < parts.length; i += 2) result.set(parts[i], parts[i + 1]);
        return result;
      };

      const event = (fields: Record<string, unknown>) => ({ data: JSON.stringify(fields) });

      it('should find the sections', () => {
        expect([...sections().keys()]).toEqual([
          'Simple Text Message Stream',
          'Tool Call Stream',
          'Heartbeat and Comments',
          'Multi-line Data Fields',
          'With Event IDs and Retry',
          'Malformed Examples',
          'Empty Lines and Spacing',
          'Unicode and Special Characters',
        ]);
      });

      it.each([
        [
          'Simple Text Message Stream',
          [
            event({ type: 'RUN_STARTED', threadId: 'thread_01', runId: 'run_01' }),
            event({ type: 'TEXT_MESSAGE_START', messageId: 'msg_01', role: 'assistant' }),
            event({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'msg_01', delta: 'Hello, ' }),
            event({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'msg_01', delta: 'how can I help you today?' }),
            event({ type: 'TEXT_MESSAGE_END', messageId: 'msg_01' }),
            event({ type: 'RUN_FINISHED', threadId: 'thread_01', runId: 'run_01' }),
          ],
        ],
        [
          'Tool Call Stream',
          [
            event({ type: 'RUN_STARTED', threadId: 'thread_02', runId: 'run_02' }),
            event({ type: 'TOOL_CALL_START', toolCallId: 'tool_01', toolCallName: 'search' }),
            event({ type: 'TOOL_CALL_ARGS', toolCallId: 'tool_01', delta: '{"query":' }),
            event({ type: 'TOOL_CALL_ARGS', toolCallId: 'tool_01', delta: '"AG-UI"}' }),
            event({ type: 'TOOL_CALL_END', toolCallId: 'tool_01' }),
            event({ type: 'RUN_FINISHED', threadId: 'thread_02', runId: 'run_02' }),
          ],
        ],
        [
          'Heartbeat and Comments',
          [
            event({ type: 'RUN_STARTED', threadId: 'thread_03', runId: 'run_03' }),
            event({ type: 'TEXT_MESSAGE_START', messageId: 'msg_02' }),
            event({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'msg_02', delta: 'Test' }),
            event({ type: 'TEXT_MESSAGE_END', messageId: 'msg_02' }),
            event({ type: 'RUN_FINISHED', threadId: 'thread_03', runId: 'run_03' }),
          ],
        ],
        ['Multi-line Data Fields', [{ data: '{"type":"STATE_SNAPSHOT",\n"snapshot":{\n"count":42,\n"name":"test"}}' }]],
        [
          'With Event IDs and Retry',
          [
            { event: 'message', ...event({ type: 'TEXT_MESSAGE_START', messageId: 'msg_03' }), id: 'evt_001' },
            { ...event({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'msg_03', delta: 'Message with ID' }), id: 'evt_002' },
            { ...event({ type: 'TEXT_MESSAGE_END', messageId: 'msg_03' }), id: 'evt_003' },
          ],
        ],
        [
          'Malformed Examples',
          [
            { data: 'not valid json' },
            event({ type: 'UNKNOWN_EVENT_TYPE' }),
            event({ type: 'TEXT_MESSAGE_START' }),
            { data: '' },
            { data: '{"incomplete":' },
          ],
        ],
        [
          'Empty Lines and Spacing',
          [event({ type: 'RUN_STARTED', threadId: 'thread_04', runId: 'run_04' }), event({ type: 'RUN_FINISHED', threadId: 'thread_04', runId: 'run_04' })],
        ],
        [
          // The file ends without the blank line after the last event: the spec discards that event.
          'Unicode and Special Characters',
          [
            event({ type: 'TEXT_MESSAGE_START', messageId: 'msg_04' }),
            event({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'msg_04', delta: 'Hello 你好 🌟 €' }),
            event({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'msg_04', delta: 'Special: "quotes", \\backslash\\, \ttab' }),
          ],
        ],
      ] as [string, SSEMessage[]][])('should parse the section "%s"', async (name, expected) => {
        const text = sections().get(name)!;
        const { messages, diagnostics } = await parse([text]);
        expect(messages).toEqual(expected);
        // The same, byte by byte.
        const bytes = encoder.encode(text);
        expect((await parse(cut(bytes, [...bytes.keys()].slice(1)))).messages).toEqual(expected);
        expect(diagnostics).toEqual(
          name === 'Unicode and Special Characters' ? [expect.stringContaining('Discarded an incomplete server-sent event at the end of the stream')] : [],
        );
      });
    },
  );

  it('should give the results its doc example promises', async () => {
    const logged: string[] = [];
    const source$: Observable<string> = of('event: delta\ndata: {"n":', '1}\r\n\r\n: ping\n\ndata: [DONE]\n\n');
    source$.pipe(parseSSE()).subscribe((message) => logged.push(JSON.stringify(message)));
    expect(logged.join(', ')).toBe('{"event":"delta","data":"{\\"n\\":1}"}, {"data":"[DONE]"}');
  });
});
