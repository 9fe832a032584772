import { transformChunks } from '@ag-ui/client';
import { EventType, type BaseEvent } from '@ag-ui/core';
import { Observable, map, mergeMap, of, retry, take } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { AguiRxError } from '../../lib/protocol/errors.js';
import { mapRunLifecycle } from '../../operators/mapRunLifecycle.js';
import { openMessageStartContentEnd } from '../../operators/openMessageStartContentEnd.js';
import { runWithOracle } from '../support/oracle.js';
import { collect, createTestScheduler, diagnosticsSink, sequentialIds, typesOf } from '../support/helpers.js';

type Fields = Record<string, unknown>;

// Input events, as a producer sends them.
const chunk = (delta?: string, fields: Fields = {}) =>
  ({ type: EventType.TEXT_MESSAGE_CHUNK, ...(delta === undefined ? {} : { delta }), ...fields }) as AgentEvent;
const reasoningChunk = (delta?: string, fields: Fields = {}) =>
  ({ type: EventType.REASONING_MESSAGE_CHUNK, ...(delta === undefined ? {} : { delta }), ...fields }) as AgentEvent;
const toolResult = (fields: Fields = {}) =>
  ({ type: EventType.TOOL_CALL_RESULT, toolCallId: 'tc-1', content: '42', ...fields }) as AgentEvent;
const toolStart = (toolCallId: string, fields: Fields = {}) =>
  ({ type: EventType.TOOL_CALL_START, toolCallId, toolCallName: 'search', ...fields }) as AgentEvent;
const invalid = (event: unknown) => event as AgentEvent;

// Events on the wire (and their explicit input twins).
const start = (messageId: string, fields: Fields = {}) => ({ type: EventType.TEXT_MESSAGE_START, messageId, role: 'assistant', ...fields }) as AgentEvent;
const content = (messageId: string, delta: string, fields: Fields = {}) => ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta, ...fields }) as AgentEvent;
const end = (messageId: string, fields: Fields = {}) => ({ type: EventType.TEXT_MESSAGE_END, messageId, ...fields }) as AgentEvent;
const spanStart = (messageId: string, fields: Fields = {}) => ({ type: EventType.REASONING_START, messageId, ...fields }) as AgentEvent;
const spanEnd = (messageId: string, fields: Fields = {}) => ({ type: EventType.REASONING_END, messageId, ...fields }) as AgentEvent;
const reasoningStart = (messageId: string, fields: Fields = {}) =>
  ({ type: EventType.REASONING_MESSAGE_START, messageId, role: 'reasoning', ...fields }) as AgentEvent;
const reasoningContent = (messageId: string, delta: string, fields: Fields = {}) =>
  ({ type: EventType.REASONING_MESSAGE_CONTENT, messageId, delta, ...fields }) as AgentEvent;
const reasoningEnd = (messageId: string, fields: Fields = {}) => ({ type: EventType.REASONING_MESSAGE_END, messageId, ...fields }) as AgentEvent;

// jest's toEqual compares errors by message only: match the class name and code as well.
const invalidEvent = (message: string) => expect.objectContaining({ name: 'AguiRxError', code: 'INVALID_EVENT', message });

describe('openMessageStartContentEnd', () => {
  let testScheduler: TestScheduler;

  beforeEach(() => {
    testScheduler = createTestScheduler();
  });

  it('should turn text chunks into START, CONTENT and END', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions, flush }) => {
      const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
      const values = { a: chunk('Hel'), b: chunk('lo'), S: start('id-1'), C: content('id-1', 'Hel'), D: content('id-1', 'lo'), E: end('id-1') };
      // prettier-ignore
      const e1 =  cold('--a----b----|   ', values);
      // prettier-ignore
      const e1subs =   '^-----------!   ';
      // prettier-ignore
      const expected = '--(SC)-D----(E|)';

      expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds(), onDiagnostic }))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
      flush();
      expect(diagnostics).toEqual([]);
    }));

  it('should close the open message in the same frame before passing the source error on', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const error = new Error('model request failed');
      const values = { a: chunk('Hi'), S: start('id-1'), C: content('id-1', 'Hi'), E: end('id-1') };
      // prettier-ignore
      const e1 =  cold('--a----#   ', values, error);
      // prettier-ignore
      const e1subs =   '^------!   ';
      // prettier-ignore
      const expected = '--(SC)-(E#)';

      expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds() }))).toBe(expected, values, error);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should complete when the source is empty', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 = cold<AgentEvent>('|   ');
      // prettier-ignore
      const e1subs =              '(^!)';
      // prettier-ignore
      const expected =            '|   ';

      expectObservable(e1.pipe(openMessageStartContentEnd())).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should not complete when the source never completes', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 = cold<AgentEvent>('-');
      // prettier-ignore
      const e1subs =              '^';
      // prettier-ignore
      const expected =            '-';

      expectObservable(e1.pipe(openMessageStartContentEnd())).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should pass an immediate source error on', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 = cold<AgentEvent>('#   ');
      // prettier-ignore
      const e1subs =              '(^!)';
      // prettier-ignore
      const expected =            '#   ';

      expectObservable(e1.pipe(openMessageStartContentEnd())).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should allow unsubscribing early and explicitly, sending nothing on teardown', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      const values = { a: chunk('Hel'), b: chunk('lo'), S: start('id-1'), C: content('id-1', 'Hel'), D: content('id-1', 'lo') };
      // prettier-ignore
      const e1 =   hot('--a----b----|', values);
      // prettier-ignore
      const unsub =    '---------!   ';
      // prettier-ignore
      const e1subs =   '^--------!   ';
      // prettier-ignore
      const expected = '--(SC)-D--   ';

      expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds() })), unsub).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should not break unsubscription chains when unsubscribed explicitly', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      const values = { a: chunk('Hel'), b: chunk('lo'), S: start('id-1'), C: content('id-1', 'Hel'), D: content('id-1', 'lo') };
      // prettier-ignore
      const e1 =   hot('--a----b----|', values);
      // prettier-ignore
      const unsub =    '---------!   ';
      // prettier-ignore
      const e1subs =   '^--------!   ';
      // prettier-ignore
      const expected = '--(SC)-D--   ';

      const result = e1.pipe(
        mergeMap((event) => of(event)),
        openMessageStartContentEnd({ generateId: sequentialIds() }),
        map((event) => event),
        mergeMap((event) => of(event)),
      );

      expectObservable(result, unsub).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should stop a synchronous source when take has what it needs', () =>
    testScheduler.run(({ expectObservable }) => {
      const values = { a: chunk('a'), b: chunk('b'), S: start('id-1'), C: content('id-1', 'a'), D: content('id-1', 'b') };
      // prettier-ignore
      const expected = '(SCD|)';

      // No END leaks after take has completed.
      const result = of(values.a, values.b, chunk('c'), chunk('d')).pipe(openMessageStartContentEnd({ generateId: sequentialIds() }), take(3));

      expectObservable(result).toBe(expected, values);
    }));

  it('should keep state per subscription: fresh ids from a shared generator, no END leaking across', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      const values = {
        a: chunk('Hel'),
        b: chunk('lo'),
        S: start('id-1'),
        C: content('id-1', 'Hel'),
        D: content('id-1', 'lo'),
        E: end('id-1'),
        T: start('id-2'),
        U: content('id-2', 'lo'),
        F: end('id-2'),
      };
      // prettier-ignore
      const e1 =   hot('--a----b------|   ', values);
      // prettier-ignore
      const sub2 =     '-----^            ';
      // prettier-ignore
      const e1subs = [ '^-------------!   ',
                       '-----^--------!   '];
      // prettier-ignore
      const expected1 = '--(SC)-D------(E|)';
      // prettier-ignore
      const expected2 = '-------(TU)---(F|)';

      const result = e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds() }));

      expectObservable(result).toBe(expected1, values);
      expectObservable(result, sub2).toBe(expected2, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should start from a fresh state when retried', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions, flush }) => {
      const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
      // A fresh state lets the retried attempt use 'm1' again; a shared one would remap it.
      const values = { a: chunk('Hi', { messageId: 'm1' }), S: start('m1'), C: content('m1', 'Hi'), E: end('m1') };
      // prettier-ignore
      const e1 =  cold('--a------#             ', values);
      // prettier-ignore
      const e1subs = [ '^--------!             ',
                       '---------^--------!    '];
      // prettier-ignore
      const expected = '--(SC)---E-(SC)---(E#)';

      expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds(), onDiagnostic }), retry(1))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
      flush();
      expect(diagnostics).toEqual([]);
    }));

  it('should emit every output in the frame of the input that caused it', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      const values = {
        a: chunk('A', { messageId: 'm1' }),
        b: chunk('B', { messageId: 'm1' }),
        c: chunk('C', { messageId: 'm2' }),
        r: toolResult({ messageId: 'tr-1' }),
        S: start('m1'),
        C: content('m1', 'A'),
        D: content('m1', 'B'),
        E: end('m1'),
        F: start('m2'),
        G: content('m2', 'C'),
        H: end('m2'),
      };
      // prettier-ignore
      const e1 =   hot('--a-----b--c------r-----|', values);
      // prettier-ignore
      const expected = '--(SC)--D--(EFG)--(Hr)--|';

      expectObservable(e1.pipe(openMessageStartContentEnd())).toBe(expected, values);
    }));

  it('should close the open message when the source completes', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const values = { a: chunk('Hi', { messageId: 'm1' }), S: start('m1'), C: content('m1', 'Hi'), E: end('m1') };
      // prettier-ignore
      const e1 =  cold('--a---|    ', values);
      // prettier-ignore
      const expected = '--(SC)(E|)';

      expectObservable(e1.pipe(openMessageStartContentEnd())).toBe(expected, values);
    }));

  it('should send the END that transformChunks of @ag-ui/client leaves out for of(TEXT_MESSAGE_CHUNK)', async () => {
    const source$ = of(chunk('Hi', { messageId: 'm1' }));

    const ours = await collect(source$.pipe(openMessageStartContentEnd()));
    const theirs = await collect((source$ as Observable<BaseEvent>).pipe(transformChunks()));

    expect(ours).toEqual([start('m1'), content('m1', 'Hi'), end('m1')]);
    // The official client's chunk transform never closes a message its source left open.
    expect(typesOf(theirs)).toEqual([EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_CONTENT]);
  });

  it('should mint one id per message for chunks without ids', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const values = {
        a: chunk('A'),
        b: chunk('B'),
        c: chunk('C'),
        r: toolResult({ messageId: 'tr-1' }),
        S: start('id-1'),
        C: content('id-1', 'A'),
        D: content('id-1', 'B'),
        E: end('id-1'),
        F: start('id-2'),
        G: content('id-2', 'C'),
        H: end('id-2'),
      };
      // prettier-ignore
      const e1 =  cold('--a----b--r-----c----|    ', values);
      // prettier-ignore
      const expected = '--(SC)-D--(Er)--(FG)-(H|)';

      expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds() }))).toBe(expected, values);
    }));

  it('should close the open message of the lane when a chunk brings a new id', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const values = {
        a: chunk('A', { messageId: 'm1' }),
        b: chunk('B', { messageId: 'm2' }),
        c: chunk('C'),
        S: start('m1'),
        C: content('m1', 'A'),
        E: end('m1'),
        F: start('m2'),
        G: content('m2', 'B'),
        H: content('m2', 'C'),
        I: end('m2'),
      };
      // prettier-ignore
      const e1 =  cold('--a----b------c---|   ', values);
      // prettier-ignore
      const expected = '--(SC)-(EFG)--H---(I|)';

      expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds() }))).toBe(expected, values);
    }));

  it('should keep a subagent lane and the parent lane open side by side', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const s1 = { subagentRunId: 's1' };
      const values = {
        a: chunk('A1', s1),
        b: chunk('P1'),
        c: chunk('A2', s1),
        d: chunk('P2'),
        S: start('id-1', s1),
        C: content('id-1', 'A1', s1),
        T: start('id-2'),
        U: content('id-2', 'P1'),
        V: content('id-1', 'A2', s1),
        W: content('id-2', 'P2'),
        E: end('id-1', s1),
        F: end('id-2'),
      };
      // prettier-ignore
      const e1 =  cold('--a----b----c--d--|     ', values);
      // prettier-ignore
      const expected = '--(SC)-(TU)-V--W--(EF|)';

      expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds() }))).toBe(expected, values);
    }));

  it('should open nothing and send nothing for empty deltas', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const values = {
        a: chunk(''),
        b: chunk(undefined),
        c: chunk('Hi'),
        d: chunk(''),
        f: reasoningChunk(''),
        S: start('id-1'),
        C: content('id-1', 'Hi'),
        E: end('id-1'),
      };
      // prettier-ignore
      const e1 =  cold('--a--b--c----d--f--|   ', values);
      // prettier-ignore
      const expected = '--------(SC)-------(E|)';

      // No id is minted for the empty chunks, and the empty reasoning chunk does not close the text.
      expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds() }))).toBe(expected, values);
    }));

  it('should pass explicit START, CONTENT and END through as the same objects', async () => {
    const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
    const events = [start('m1'), content('m1', 'Hi'), end('m1')];

    const output = await collect(of(...events).pipe(openMessageStartContentEnd({ onDiagnostic })));

    expect(output).toHaveLength(3);
    output.forEach((event, i) => expect(event).toBe(events[i]));
    expect(diagnostics).toEqual([]);
  });

  it('should track an explicit START so that a chunk without id continues its message', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const values = { a: start('m1'), b: chunk('more'), C: content('m1', 'more'), E: end('m1') };
      // prettier-ignore
      const e1 =  cold('--a--b--|   ', values);
      // prettier-ignore
      const expected = '--a--C--(E|)';

      expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds() }))).toBe(expected, values);
    }));

  it('should never send CONTENT on an id whose END was sent: it reopens the message with START under its id first, and says so', () =>
    testScheduler.run(({ cold, expectObservable, flush }) => {
      const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
      const values = {
        a: start('m1'),
        b: content('m1', 'first'),
        c: end('m1'),
        d: content('m1', 'second'),
        e: content('m1', 'third'),
        f: end('m1'),
      };
      // prettier-ignore
      const e1 =  cold('--a--b--c--d------e--f--|', values);
      // prettier-ignore
      const expected = '--a--b--c--(ad)---e--f--|';

      expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds(), onDiagnostic }))).toBe(expected, values);
      flush();
      expect(diagnostics).toEqual([
        "TEXT_MESSAGE_CONTENT for message 'm1', which was already ended: it was reopened with TEXT_MESSAGE_START under its id, and the client appends to it. Send TEXT_MESSAGE_START before the content of a message you continue.",
      ]);
    }));

  it('should reopen an ended message under its id for a START of the same role, without a diagnostic (AG-UI: the client appends)', () =>
    testScheduler.run(({ cold, expectObservable, flush }) => {
      const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
      const values = { a: start('m1'), b: content('m1', 'first'), c: end('m1'), d: content('m1', ' second') };
      // prettier-ignore
      const e1 =  cold('--a--b--c--a--d--c--|', values);
      // prettier-ignore
      const expected = '--a--b--c--a--d--c--|';

      expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds(), onDiagnostic }))).toBe(expected, values);
      flush();
      expect(diagnostics).toEqual([]);
    }));

  it('should give a START that reuses an ended message id under another role a new minted id, and say so', () =>
    testScheduler.run(({ cold, expectObservable, flush }) => {
      const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
      const values = {
        a: start('m1', { role: 'user' }),
        b: content('m1', 'question'),
        c: end('m1'),
        d: start('m1'),
        e: content('m1', 'answer'),
        S: start('id-1'),
        T: content('id-1', 'answer'),
        U: end('id-1'),
      };
      // prettier-ignore
      const e1 =  cold('--a--b--c--d--e--c--|', values);
      // prettier-ignore
      const expected = '--a--b--c--S--T--U--|';

      expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds(), onDiagnostic }))).toBe(expected, values);
      flush();
      expect(diagnostics).toEqual([
        "TEXT_MESSAGE_START reuses message id 'm1', which was already ended as a text message with role 'user' of the parent agent; it was sent as a new message 'id-1'. Use a new messageId for each message.",
      ]);
    }));

  it('should reopen an ended message under its id for a chunk that reuses it, without a diagnostic', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const values = {
        a: chunk('A', { messageId: 'm1' }),
        r: toolResult({ messageId: 'tr-1' }),
        b: chunk('B', { messageId: 'm1' }),
        S: start('m1'),
        C: content('m1', 'A'),
        E: end('m1'),
        U: content('m1', 'B'),
      };
      // prettier-ignore
      const e1 =  cold('--a----r----b----|   ', values);
      // prettier-ignore
      const expected = '--(SC)-(Er)-(SU)-(E|)';

      expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds(), onDiagnostic: () => undefined }))).toBe(expected, values);
    }));

  it('should not reopen a message sent under a minted id for a START of the producer that names that id: another message, under a new id, and say so', () =>
    testScheduler.run(({ cold, expectObservable, flush }) => {
      const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
      // The producer's ids come from a counter that generateId's overlap: its 'id-1' is not the message minted 'id-1'.
      const values = {
        a: chunk('A'),
        r: toolResult({ messageId: 'tr-1' }),
        b: start('id-1'),
        c: content('id-1', 'B'),
        d: end('id-1'),
        S: start('id-1'),
        C: content('id-1', 'A'),
        E: end('id-1'),
        T: start('id-2'),
        U: content('id-2', 'B'),
        V: end('id-2'),
      };
      // prettier-ignore
      const e1 =  cold('--a----r----b--c--d--|', values);
      // prettier-ignore
      const expected = '--(SC)-(Er)-T--U--V--|';

      expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds(), onDiagnostic }))).toBe(expected, values);
      flush();
      expect(diagnostics).toEqual([
        "TEXT_MESSAGE_START reuses message id 'id-1', which this run minted for a text message sent without an id (generateId makes ids the producer also uses); it was sent as a new message 'id-2'. Use a new messageId for each message.",
      ]);
    }));

  it("should reopen a text message under its id after a reasoning message used the id: the producer's id names one message per kind", () =>
    testScheduler.run(({ cold, expectObservable, flush }) => {
      const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
      const values = {
        a: chunk('Hi', { messageId: 'm1' }),
        r: reasoningChunk('think', { messageId: 'm1' }),
        b: chunk(' more', { messageId: 'm1' }),
        S: start('m1'),
        C: content('m1', 'Hi'),
        E: end('m1'),
        P: spanStart('id-1'),
        Q: reasoningStart('id-1'),
        R: reasoningContent('id-1', 'think'),
        X: reasoningEnd('id-1'),
        Y: spanEnd('id-1'),
        U: content('m1', ' more'),
      };
      // prettier-ignore
      const e1 =  cold('--a------r------b---------|       ', values);
      // prettier-ignore
      const expected = '--(SC)---(EPQR)-(XYSU)----(E|)';

      expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds(), onDiagnostic }))).toBe(expected, values);
      flush();
      expect(diagnostics).toEqual([]);
    }));

  it("should make a tool call's parentMessageId follow the text message it names when that message went out under a fresh id, and only an assistant message", () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const toolChunk = (parentMessageId: string) => ({ type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'f', parentMessageId, delta: '{}' }) as AgentEvent;
      const values = {
        r: reasoningChunk('think', { messageId: 'x' }),
        a: chunk('Calling', { messageId: 'x' }),
        k: toolChunk('x'),
        u: start('y'),
        v: end('y'),
        w: start('y', { role: 'user' }),
        l: toolChunk('y'),
        P: spanStart('x'),
        Q: reasoningStart('x'),
        R: reasoningContent('x', 'think'),
        X: reasoningEnd('x'),
        Y: spanEnd('x'),
        S: start('id-1'),
        C: content('id-1', 'Calling'),
        K: toolChunk('id-1'),
        E: end('id-1'),
        W: start('id-2', { role: 'user' }),
        F: end('id-2'),
      };
      // prettier-ignore
      const e1 =  cold('--r------a------k--u------v--w--l--|', values);
      // prettier-ignore
      const expected = '--(PQR)--(XYSC)-K--(Eu)---v--W--l--(F|)';

      // The producer's 'y' names a user message under 'id-2' too, which is no parent: the call keeps its assistant 'y'.
      expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds(), onDiagnostic: () => undefined }))).toBe(expected, values);
    }));

  it("should keep a tool call's parent id for the text that names it, and give a reasoning message or a subagent's text under it another id", () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const toolChunk = (parentMessageId: string) => ({ type: EventType.TOOL_CALL_CHUNK, toolCallId: 'c1', toolCallName: 'f', parentMessageId, delta: '{}' }) as AgentEvent;
      const values = {
        k: toolChunk('x'),
        r: reasoningChunk('think', { messageId: 'x' }),
        s: chunk('sub', { messageId: 'x', subagentRunId: 's1' }),
        e: end('x', { subagentRunId: 's1' }),
        a: chunk('Done', { messageId: 'x' }),
        P: spanStart('id-1'),
        Q: reasoningStart('id-1'),
        R: reasoningContent('id-1', 'think'),
        X: reasoningEnd('id-1'),
        Y: spanEnd('id-1'),
        T: start('id-2', { subagentRunId: 's1' }),
        U: content('id-2', 'sub', { subagentRunId: 's1' }),
        V: end('id-2', { subagentRunId: 's1' }),
        S: start('x'),
        C: content('x', 'Done'),
        E: end('x'),
      };
      // prettier-ignore
      const e1 =  cold('--k--r------s------e--a--------|', values);
      // prettier-ignore
      const expected = '--k--(PQR)--(TU)---V--(XYSC)---(E|)';

      expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds(), onDiagnostic: () => undefined }))).toBe(expected, values);
    }));

  it('should reopen a message whose id was replaced for a START under the producer id, and not for one under its wire id', () =>
    testScheduler.run(({ cold, expectObservable, flush }) => {
      const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
      // The producer's second 'm1' (another role) goes out as 'id-1'; its 'id-1' later is a message of its own.
      const values = {
        a: start('m1', { role: 'user' }),
        b: content('m1', 'question'),
        c: end('m1'),
        d: start('m1'),
        e: content('m1', 'A'),
        f: content('m1', 'B'),
        g: start('id-1'),
        h: content('id-1', 'C'),
        i: end('id-1'),
        S: start('id-1'),
        T: content('id-1', 'A'),
        U: end('id-1'),
        W: content('id-1', 'B'),
        X: start('id-2'),
        Y: content('id-2', 'C'),
        Z: end('id-2'),
      };
      // prettier-ignore
      const e1 =  cold('--a--b--c--d--e--c--d--f--c--g--h--i--|', values);
      // prettier-ignore
      const expected = '--a--b--c--S--T--U--S--W--U--X--Y--Z--|';

      expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds(), onDiagnostic }))).toBe(expected, values);
      flush();
      expect(diagnostics).toEqual([
        "TEXT_MESSAGE_START reuses message id 'm1', which was already ended as a text message with role 'user' of the parent agent; it was sent as a new message 'id-1'. Use a new messageId for each message.",
        "TEXT_MESSAGE_START reuses message id 'id-1', which was already ended as a text message with role 'assistant' of the parent agent; it was sent as a new message 'id-2'. Use a new messageId for each message.",
      ]);
    }));

  it('should give a reasoning chunk that reuses an ended text message id a new minted id', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const values = {
        a: chunk('A', { messageId: 'm1' }),
        r: toolResult({ messageId: 'tr-1' }),
        b: { type: EventType.REASONING_MESSAGE_CHUNK, messageId: 'm1', delta: 'hmm' } as AgentEvent,
        S: start('m1'),
        C: content('m1', 'A'),
        E: end('m1'),
        P: { type: EventType.REASONING_START, messageId: 'id-1' } as AgentEvent,
        Q: { type: EventType.REASONING_MESSAGE_START, messageId: 'id-1', role: 'reasoning' } as AgentEvent,
        R: { type: EventType.REASONING_MESSAGE_CONTENT, messageId: 'id-1', delta: 'hmm' } as AgentEvent,
        T: { type: EventType.REASONING_MESSAGE_END, messageId: 'id-1' } as AgentEvent,
        U: { type: EventType.REASONING_END, messageId: 'id-1' } as AgentEvent,
      };
      // prettier-ignore
      const e1 =  cold('--a----r----b-----|    ', values);
      // prettier-ignore
      const expected = '--(SC)-(Er)-(PQR)-(TU|)';

      expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds(), onDiagnostic: () => undefined }))).toBe(expected, values);
    }));

  it('should drop a duplicate START, with a diagnostic', () =>
    testScheduler.run(({ cold, expectObservable, flush }) => {
      const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
      const values = { a: start('m1'), b: start('m1'), c: content('m1', 'x'), E: end('m1') };
      // prettier-ignore
      const e1 =  cold('--a--b--c--|   ', values);
      // prettier-ignore
      const expected = '--a-----c--(E|)';

      expectObservable(e1.pipe(openMessageStartContentEnd({ onDiagnostic }))).toBe(expected, values);
      flush();
      expect(diagnostics).toEqual(["Dropped a second TEXT_MESSAGE_START for message 'm1', which is already open. Send one START per message."]);
    }));

  it('should drop an END with nothing open, with a diagnostic', () =>
    testScheduler.run(({ cold, expectObservable, flush }) => {
      const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
      const values = { a: end('m1'), b: end('m2', { subagentRunId: 's1' }), c: start('m3'), d: end('m3'), e: end('m3') };
      // prettier-ignore
      const e1 =  cold('--a--b--c--d--e--|', values);
      // prettier-ignore
      const expected = '--------c--d-----|';

      expectObservable(e1.pipe(openMessageStartContentEnd({ onDiagnostic }))).toBe(expected, values);
      flush();
      expect(diagnostics).toEqual([
        "Dropped TEXT_MESSAGE_END for message 'm1': no such message is open in the parent agent. End a message once, after its START.",
        "Dropped TEXT_MESSAGE_END for message 'm2': no such message is open in subagent 's1'. End a message once, after its START.",
        "Dropped TEXT_MESSAGE_END for message 'm3': no such message is open in the parent agent. End a message once, after its START.",
      ]);
    }));

  it('should end the turn of its lane on TOOL_CALL_RESULT, so that text after it is a new message', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const s1 = { subagentRunId: 's1' };
      const values = {
        a: chunk('P1'),
        b: chunk('S1', s1),
        r: toolResult({ messageId: 'tr-1', ...s1 }),
        c: chunk('S2', s1),
        d: chunk('P2'),
        S: start('id-1'),
        C: content('id-1', 'P1'),
        T: start('id-2', s1),
        U: content('id-2', 'S1', s1),
        V: end('id-2', s1),
        W: start('id-3', s1),
        X: content('id-3', 'S2', s1),
        Y: content('id-1', 'P2'),
        E: end('id-1'),
        Z: end('id-3', s1),
      };
      // prettier-ignore
      const e1 =  cold('--a----b----r----c----d--|     ', values);
      // prettier-ignore
      const expected = '--(SC)-(TU)-(Vr)-(WX)-Y--(EZ|)';

      // The subagent's result closes only the subagent's message: the parent's text goes on.
      expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds() }))).toBe(expected, values);
    }));

  it.each([
    ['STEP_STARTED', { type: EventType.STEP_STARTED, stepName: 'plan' }],
    ['STEP_FINISHED', { type: EventType.STEP_FINISHED, stepName: 'plan' }],
  ])('should close the open messages of its lane before passing %s through', (_name, event) =>
    testScheduler.run(({ cold, expectObservable }) => {
      const s1 = { subagentRunId: 's1' };
      const values = {
        a: chunk('P'),
        b: chunk('S', s1),
        x: event as AgentEvent,
        S: start('id-1'),
        C: content('id-1', 'P'),
        T: start('id-2', s1),
        U: content('id-2', 'S', s1),
        E: end('id-1'),
        V: end('id-2', s1),
      };
      // prettier-ignore
      const e1 =  cold('--a----b----x---|    ', values);
      // prettier-ignore
      const expected = '--(SC)-(TU)-(Ex)(V|)';

      expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds() }))).toBe(expected, values);
    }),
  );

  it.each([
    ['SUBAGENT_FINISHED', { type: EventType.SUBAGENT_FINISHED, subagentRunId: 's1' }],
    ['SUBAGENT_ERROR', { type: EventType.SUBAGENT_ERROR, subagentRunId: 's1', message: 'subagent failed' }],
  ])('should close the open messages of the subagent lane only before passing %s through', (_name, event) =>
    testScheduler.run(({ cold, expectObservable }) => {
      const s1 = { subagentRunId: 's1' };
      const values = {
        a: chunk('P'),
        b: chunk('S', s1),
        x: event as AgentEvent,
        S: start('id-1'),
        C: content('id-1', 'P'),
        T: start('id-2', s1),
        U: content('id-2', 'S', s1),
        V: end('id-2', s1),
        E: end('id-1'),
      };
      // prettier-ignore
      const e1 =  cold('--a----b----x---|    ', values);
      // prettier-ignore
      const expected = '--(SC)-(TU)-(Vx)(E|)';

      expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds() }))).toBe(expected, values);
    }),
  );

  it.each([
    ['RUN_STARTED', { type: EventType.RUN_STARTED }],
    ['RUN_FINISHED', { type: EventType.RUN_FINISHED }],
    ['RUN_ERROR', { type: EventType.RUN_ERROR, message: 'boom' }],
    ['MESSAGES_SNAPSHOT', { type: EventType.MESSAGES_SNAPSHOT, messages: [] }],
  ])('should close the open messages of every lane before passing %s through', (_name, event) =>
    testScheduler.run(({ cold, expectObservable }) => {
      const s1 = { subagentRunId: 's1' };
      const values = {
        a: chunk('P'),
        b: chunk('S', s1),
        x: event as AgentEvent,
        S: start('id-1'),
        C: content('id-1', 'P'),
        T: start('id-2', s1),
        U: content('id-2', 'S', s1),
        E: end('id-1'),
        V: end('id-2', s1),
      };
      // prettier-ignore
      const e1 =  cold('--a----b----x----|  ', values);
      // prettier-ignore
      const expected = '--(SC)-(TU)-(EVx)|';

      expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds() }))).toBe(expected, values);
    }),
  );

  it('should close open reasoning, but not open text, on TOOL_CALL_START', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const values = {
        r: reasoningChunk('think'),
        t: toolStart('tc-1'),
        a: chunk('Hi'),
        u: toolStart('tc-2'),
        R: spanStart('id-1'),
        S: reasoningStart('id-1'),
        C: reasoningContent('id-1', 'think'),
        E: reasoningEnd('id-1'),
        F: spanEnd('id-1'),
        T: start('id-2'),
        U: content('id-2', 'Hi'),
        V: end('id-2'),
      };
      // prettier-ignore
      const e1 =  cold('--r-----t-----a----u--|   ', values);
      // prettier-ignore
      const expected = '--(RSC)-(EFt)-(TU)-u--(V|)';

      expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds() }))).toBe(expected, values);
    }));

  describe('reasoning', () => {
    it('should turn reasoning chunks into a reasoning span and message, closed at the end', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: reasoningChunk('Let me'),
          b: reasoningChunk(' think'),
          R: spanStart('id-1'),
          S: reasoningStart('id-1'),
          C: reasoningContent('id-1', 'Let me'),
          D: reasoningContent('id-1', ' think'),
          E: reasoningEnd('id-1'),
          F: spanEnd('id-1'),
        };
        // prettier-ignore
        const e1 =  cold('--a------b--|    ', values);
        // prettier-ignore
        const expected = '--(RSC)--D--(EF|)';

        expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds() }))).toBe(expected, values);
      }));

    it('should close reasoning when text starts, and text when reasoning starts', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: reasoningChunk('hmm'),
          b: chunk('Answer'),
          c: reasoningChunk('more'),
          R: spanStart('id-1'),
          S: reasoningStart('id-1'),
          C: reasoningContent('id-1', 'hmm'),
          E: reasoningEnd('id-1'),
          F: spanEnd('id-1'),
          T: start('id-2'),
          U: content('id-2', 'Answer'),
          V: end('id-2'),
          W: spanStart('id-3'),
          X: reasoningStart('id-3'),
          Y: reasoningContent('id-3', 'more'),
          G: reasoningEnd('id-3'),
          H: spanEnd('id-3'),
        };
        // prettier-ignore
        const e1 =  cold('--a-----b------c------|   ', values);
        // prettier-ignore
        const expected = '--(RSC)-(EFTU)-(VWXY)-(GH|)';

        expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds() }))).toBe(expected, values);
      }));

    it('should pass REASONING_ENCRYPTED_VALUE through unchanged, closing nothing', async () => {
      const encrypted = { type: EventType.REASONING_ENCRYPTED_VALUE, subtype: 'message', entityId: 'id-1', encryptedValue: 'opaque' } as AgentEvent;

      const output = await collect(of(reasoningChunk('x'), encrypted, reasoningChunk('y')).pipe(openMessageStartContentEnd({ generateId: sequentialIds() })));

      expect(output[3]).toBe(encrypted);
      expect(output).toEqual([
        spanStart('id-1'),
        reasoningStart('id-1'),
        reasoningContent('id-1', 'x'),
        encrypted,
        reasoningContent('id-1', 'y'),
        reasoningEnd('id-1'),
        spanEnd('id-1'),
      ]);
    });

    it('should track explicit REASONING_START and REASONING_END', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: spanStart('span-1'),
          b: reasoningChunk('x'),
          c: spanEnd('span-1'),
          d: spanStart('span-2'),
          S: reasoningStart('id-1'),
          C: reasoningContent('id-1', 'x'),
          E: reasoningEnd('id-1'),
          F: spanEnd('span-2'),
        };
        // prettier-ignore
        const e1 =  cold('--a--b----c----d--|   ', values);
        // prettier-ignore
        const expected = '--a--(SC)-(Ec)-d--(F|)';

        // The chunk opens its message inside the explicit span (no second REASONING_START).
        expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds() }))).toBe(expected, values);
      }));

    it('should drop a duplicate REASONING_START and a REASONING_END for no open span, with diagnostics', () =>
      testScheduler.run(({ cold, expectObservable, flush }) => {
        const { onDiagnostic, messages: diagnostics } = diagnosticsSink();
        const values = { a: spanStart('span-1'), b: spanStart('span-1'), c: spanEnd('span-9'), F: spanEnd('span-1') };
        // prettier-ignore
        const e1 =  cold('--a--b--c--|   ', values);
        // prettier-ignore
        const expected = '--a--------(F|)';

        expectObservable(e1.pipe(openMessageStartContentEnd({ onDiagnostic }))).toBe(expected, values);
        flush();
        expect(diagnostics).toEqual([
          "Dropped a second REASONING_START for span 'span-1', which is already open.",
          "Dropped REASONING_END for span 'span-9': no such span is open in the parent agent.",
        ]);
      }));
  });

  describe('bad input', () => {
    it('should error with INVALID_EVENT on a non-string delta, after closing what is open', () =>
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const values = { a: chunk('Hi'), b: invalid({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 42 }), S: start('id-1'), C: content('id-1', 'Hi'), E: end('id-1') };
        // prettier-ignore
        const e1 =  cold('--a----b--|  ', values);
        // prettier-ignore
        const e1subs =   '^------!     ';
        // prettier-ignore
        const expected = '--(SC)-(E#)  ';

        expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds() }))).toBe(
          expected,
          values,
          invalidEvent("TEXT_MESSAGE_CHUNK has 'delta: number 42', but 'delta' must be a string."),
        );
        expectSubscriptions(e1.subscriptions).toBe(e1subs);
      }));

    // A null messageId on a chunk used to be an error; it is now read as absent (the field is optional there).
    it('should read a null messageId of a chunk as absent, minting the id, with one diagnostic', () => {
      const sink = diagnosticsSink();
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: invalid({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: null, delta: 'Hi' }),
          b: invalid({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: null, delta: '!' }),
          S: start('id-1'),
          C: content('id-1', 'Hi'),
          D: content('id-1', '!'),
          E: end('id-1'),
        };
        // prettier-ignore
        const e1 =  cold('--a---b--|', values);
        // prettier-ignore
        const expected = '--(SC)D--(E|)';

        expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds(), onDiagnostic: sink.onDiagnostic }))).toBe(expected, values);
      });
      expect(sink.messages).toEqual([
        "TEXT_MESSAGE_CHUNK has 'messageId: null': read as absent, here and in the rest of the run. Omit an optional field rather than sending null (Python: exclude_none=True).",
      ]);
    });

    it('should send a message with an empty messageId under a minted id, and the producer\'s later events under \'\' to it, with one diagnostic', () => {
      const sink = diagnosticsSink();
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: chunk('Hi', { messageId: '' }),
          b: chunk('!', { messageId: '' }),
          s: start(''),
          c: content('', 'again'),
          e: end(''),
          S: start('id-1'),
          C: content('id-1', 'Hi'),
          D: content('id-1', '!'),
          E: end('id-1'),
          G: content('id-1', 'again'),
        };
        // prettier-ignore
        const e1 =  cold('--a-----b-----e-----s-----c-----e-----|', values);
        // prettier-ignore
        const expected = '--(SC)--D-----E-----S-----G-----E-----|';

        expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds(), onDiagnostic: sink.onDiagnostic }))).toBe(expected, values);
      });
      expect(sink.messages).toEqual([
        "TEXT_MESSAGE_CHUNK has an empty messageId: it was sent as message 'id-1', and the producer's later events under '' go to it (the client reads an empty id as none, and would put a tool call of the message in a message of its own). Give each message a non-empty id, or leave messageId out of chunks.",
      ]);
    });

    it('should error with INVALID_EVENT on a null messageId where one is required', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = { a: invalid({ type: EventType.TEXT_MESSAGE_START, messageId: null, role: 'assistant' }) };
        // prettier-ignore
        const e1 =  cold('--a--|', values);
        // prettier-ignore
        const expected = '--#   ';

        expectObservable(e1.pipe(openMessageStartContentEnd())).toBe(
          expected,
          undefined,
          invalidEvent("TEXT_MESSAGE_START has 'messageId: null', but 'messageId' must be a string: omit an optional field rather than sending null."),
        );
      }));

    it('should error with INVALID_EVENT on a null event, after closing what is open', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = { a: chunk('Hi'), b: invalid(null), S: start('id-1'), C: content('id-1', 'Hi'), E: end('id-1') };
        // prettier-ignore
        const e1 =  cold('--a----b--|', values);
        // prettier-ignore
        const expected = '--(SC)-(E#)';

        expectObservable(e1.pipe(openMessageStartContentEnd({ generateId: sequentialIds() }))).toBe(
          expected,
          values,
          invalidEvent("Received null where an AG-UI event object was expected. Emit objects such as { type: 'TEXT_MESSAGE_CHUNK', delta: 'Hi' }."),
        );
      }));

    it('should error with INVALID_EVENT on an event without type', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = { a: invalid({ delta: 'Hi' }) };
        // prettier-ignore
        const e1 =  cold('--a--|', values);
        // prettier-ignore
        const expected = '--#   ';

        expectObservable(e1.pipe(openMessageStartContentEnd())).toBe(
          expected,
          undefined,
          invalidEvent("Received an event without a string 'type' (got undefined). Every event needs a type, e.g. 'TEXT_MESSAGE_CHUNK'."),
        );
      }));

    it('should error with INVALID_EVENT on content tagged with another subagent than its message\'s, after closing it', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const s1 = { subagentRunId: 's1' };
        const values = {
          a: chunk('A', { messageId: 'm1', ...s1 }),
          b: chunk('B', { messageId: 'm1', subagentRunId: 's2' }),
          S: start('m1', s1),
          C: content('m1', 'A', s1),
          E: end('m1', s1),
        };
        // prettier-ignore
        const e1 =  cold('--a----b--|', values);
        // prettier-ignore
        const expected = '--(SC)-(E#)';

        expectObservable(e1.pipe(openMessageStartContentEnd())).toBe(
          expected,
          values,
          invalidEvent(
            "TEXT_MESSAGE_CHUNK for message 'm1' comes from subagent 's2', but that message is open as a text message of subagent 's1'. Give each message its own id, and set the same subagentRunId on every event of a message.",
          ),
        );
      }));

    // AG-UI spec 1.1, Subagents, Ownership: an untagged continuation continues whatever its opener owns.
    it('should continue a subagent\'s message from an untagged chunk, CONTENT or END that names it, tagged as its opener', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const s1 = { subagentRunId: 's1' };
        const values = {
          a: chunk('A', { messageId: 'm1', ...s1 }),
          b: chunk('B', { messageId: 'm1' }),
          c: content('m1', 'C'),
          d: end('m1'),
          S: start('m1', s1),
          A: content('m1', 'A', s1),
          B: content('m1', 'B', s1),
          C: content('m1', 'C', s1),
          E: end('m1', s1),
        };
        // prettier-ignore
        const e1 =  cold('--a----b--c--d--|', values);
        // prettier-ignore
        const expected = '--(SA)-B--C--E--|';

        expectObservable(e1.pipe(openMessageStartContentEnd())).toBe(expected, values);
      }));

    it('should reject with an AguiRxError whose code is INVALID_EVENT', async () => {
      const events$ = of(invalid({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 42 })).pipe(openMessageStartContentEnd());

      await expect(collect(events$)).rejects.toThrow(AguiRxError);
      await expect(collect(events$)).rejects.toMatchObject({
        code: 'INVALID_EVENT',
        message: "TEXT_MESSAGE_CHUNK has 'delta: number 42', but 'delta' must be a string.",
      });
    });
  });

  describe('conformance', () => {
    const run = (...events: AgentEvent[]) =>
      runWithOracle(
        of(...events).pipe(
          openMessageStartContentEnd({ generateId: sequentialIds(), onDiagnostic: () => undefined }),
          mapRunLifecycle({ threadId: 'thread-1', runId: 'run-1' }),
        ),
      );

    it('should build one assistant message from plain text chunks', async () => {
      const { messages } = await run(chunk('Hel'), chunk('lo'), chunk(', world'));

      expect(messages).toEqual([{ id: 'id-1', role: 'assistant', content: 'Hello, world' }]);
    });

    it('should build a reasoning message and an assistant message', async () => {
      const { messages } = await run(reasoningChunk('The user '), reasoningChunk('greets me.'), chunk('Hi'), chunk(' there'));

      expect(messages).toEqual([
        { id: 'id-1', role: 'reasoning', content: 'The user greets me.' },
        { id: 'id-2', role: 'assistant', content: 'Hi there' },
      ]);
    });

    it('should build two assistant messages around a tool result', async () => {
      const { messages } = await run(
        chunk('Let me '),
        chunk('check.'),
        toolStart('tc-1', { parentMessageId: 'id-1' }),
        { type: EventType.TOOL_CALL_ARGS, toolCallId: 'tc-1', delta: '{"q":"answer"}' },
        { type: EventType.TOOL_CALL_END, toolCallId: 'tc-1' },
        toolResult({ messageId: 'tr-1', toolCallId: 'tc-1', content: '42' }),
        chunk('It is '),
        chunk('42.'),
      );

      expect(messages.map((message) => [message.id, message.role, message.content])).toEqual([
        ['id-1', 'assistant', 'Let me check.'],
        ['tr-1', 'tool', '42'],
        ['id-2', 'assistant', 'It is 42.'],
      ]);
      expect(messages[0]).toMatchObject({ toolCalls: [{ id: 'tc-1', type: 'function', function: { name: 'search', arguments: '{"q":"answer"}' } }] });
    });

    it('should build one message per lane when a subagent interleaves with the parent', async () => {
      const s1 = { subagentRunId: 's1' };
      const { messages } = await run(chunk('Sub ', s1), chunk('Parent '), chunk('agent', s1), chunk('agent'));

      expect(messages).toEqual([
        { id: 'id-1', role: 'assistant', content: 'Sub agent', subagentRunId: 's1' },
        { id: 'id-2', role: 'assistant', content: 'Parent agent' },
      ]);
    });

    it('should reopen the message, so the client appends, when content or a START reuses an ended id', async () => {
      const { messages } = await run(start('m1'), content('m1', 'first'), end('m1'), content('m1', ' second'), content('m1', ' try'), end('m1'), start('m1'), content('m1', '!'));

      expect(messages).toEqual([{ id: 'm1', role: 'assistant', content: 'first second try!' }]);
    });

    it('should build two messages when the producer names a message with an id minted for an earlier one sent without an id', async () => {
      const { messages } = await run(chunk('first'), toolResult({ messageId: 'tr-1' }), start('id-1'), content('id-1', 'second'), end('id-1'));

      expect(messages.filter((message) => message.role === 'assistant')).toEqual([
        { id: 'id-1', role: 'assistant', content: 'first' },
        { id: 'id-2', role: 'assistant', content: 'second' },
      ]);
    });

    it('should build a second message when a START reuses an ended id under another role', async () => {
      const { messages } = await run(start('m1', { role: 'user' }), content('m1', 'question'), end('m1'), start('m1'), content('m1', 'answer'));

      expect(messages).toEqual([
        { id: 'm1', role: 'user', content: 'question' },
        { id: 'id-1', role: 'assistant', content: 'answer' },
      ]);
    });
  });
});
