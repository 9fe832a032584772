import { EventType } from '@ag-ui/core';
import { from, mergeMap, Observable, of, retry, take } from 'rxjs';
import type { TestScheduler } from 'rxjs/testing';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import type { DiagnosticHandler } from '../../lib/protocol/diagnostics.js';
import { AguiRxError } from '../../lib/protocol/errors.js';
import { mapRunLifecycle } from '../../operators/mapRunLifecycle.js';
import { openMessageStartContentEnd } from '../../operators/openMessageStartContentEnd.js';
import { toolCallCorrelator } from '../../operators/toolCallCorrelator.js';
import { collect, createTestScheduler, diagnosticsSink, sequentialIds, typesOf } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

type Fields = Record<string, unknown>;

// Event builders: inputs and expected outputs are plain objects, compared with toEqual.
const ev = (type: EventType, fields: Fields = {}) => ({ type, ...fields }) as unknown as AgentEvent;
const chunk = (fields: Fields) => ev(EventType.TOOL_CALL_CHUNK, fields);
const start = (toolCallId: string, toolCallName: string, parentMessageId?: string, fields: Fields = {}) =>
  ev(EventType.TOOL_CALL_START, { toolCallId, toolCallName, ...(parentMessageId === undefined ? {} : { parentMessageId }), ...fields });
const args = (toolCallId: string, delta: string, fields: Fields = {}) => ev(EventType.TOOL_CALL_ARGS, { toolCallId, delta, ...fields });
const end = (toolCallId: string, fields: Fields = {}) => ev(EventType.TOOL_CALL_END, { toolCallId, ...fields });
const result = (toolCallId: string, content: unknown, fields: Fields = {}) => ev(EventType.TOOL_CALL_RESULT, { toolCallId, content, ...fields });
const textStart = (messageId: string, fields: Fields = { role: 'assistant' }) => ev(EventType.TEXT_MESSAGE_START, { messageId, ...fields });
const runFinished = (fields: Fields = {}) => ev(EventType.RUN_FINISHED, fields);

/** The operator under test with deterministic ids (`id-1`, `id-2`, …). */
const correlate = (onDiagnostic?: DiagnosticHandler) => toolCallCorrelator({ generateId: sequentialIds(), onDiagnostic: onDiagnostic ?? diagnosticsSink().onDiagnostic });

/** An AguiRxError `INVALID_EVENT` with exactly this message (jest compares Errors by message only). */
const invalidEvent = (message: string) => expect.objectContaining({ constructor: AguiRxError, code: 'INVALID_EVENT', message });

/** Tool call ids started and not answered, read off an output stream. */
const unansweredCalls = (events: readonly AgentEvent[]) => {
  const answered = new Set(events.filter((e) => e.type === EventType.TOOL_CALL_RESULT).map((e) => (e as { toolCallId: string }).toolCallId));
  return events.filter((e) => e.type === EventType.TOOL_CALL_START).map((e) => (e as { toolCallId: string }).toolCallId).filter((id) => !answered.has(id));
};

describe('toolCallCorrelator', () => {
  let testScheduler: TestScheduler;

  beforeEach(() => {
    testScheduler = createTestScheduler();
  });

  it('should turn tool call chunks and a result into START, ARGS, END and RESULT', () => {
    const sink = diagnosticsSink();
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const values = {
        a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{"q":' }),
        b: chunk({ toolCallId: 'c1', delta: '"rxjs"}' }),
        r: result('c1', { hits: 3 }),
        S: start('c1', 'search', 'id-1'),
        A: args('c1', '{"q":'),
        B: args('c1', '"rxjs"}'),
        E: end('c1'),
        R: result('c1', '{"hits":3}', { messageId: 'id-2' }),
      };
      // prettier-ignore
      const e1 =  cold('--a------b--r-------|', values);
      // prettier-ignore
      const e1subs =   '^-------------------!';
      // prettier-ignore
      const expected = '--(SA)---B--(ER)----|';

      expectObservable(e1.pipe(correlate(sink.onDiagnostic))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
    expect(sink.messages).toEqual([]);
  });

  it('should close open calls (ARGS "{}" for those without arguments) in the frame of the source error, before it', () => {
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const values = {
        a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{"q":1}' }),
        b: chunk({ toolCallId: 'c2', toolCallName: 'lookup' }),
        S: start('c1', 'search', 'id-1'),
        A: args('c1', '{"q":1}'),
        T: start('c2', 'lookup', 'id-1'),
        E: end('c1'),
        X: args('c2', '{}'),
        F: end('c2'),
      };
      // prettier-ignore
      const e1 =  cold('--a------b------#', values);
      // prettier-ignore
      const e1subs =   '^---------------!';
      // prettier-ignore
      const expected = '--(SA)---T------(EXF#)';

      expectObservable(e1.pipe(correlate())).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should complete with an empty source', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold<AgentEvent>('|');
      // prettier-ignore
      const e1subs =   '(^!)';
      // prettier-ignore
      const expected = '|';

      expectObservable(e1.pipe(correlate())).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should not complete with a never source', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold<AgentEvent>('-');
      // prettier-ignore
      const e1subs =   '^';
      // prettier-ignore
      const expected = '-';

      expectObservable(e1.pipe(correlate())).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should error with a throw source', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold<AgentEvent>('#');
      // prettier-ignore
      const e1subs =   '(^!)';
      // prettier-ignore
      const expected = '#';

      expectObservable(e1.pipe(correlate())).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should allow unsubscribing early and explicitly, emitting nothing at teardown', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const values = {
        a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{"q":' }),
        b: chunk({ toolCallId: 'c1', delta: '1}' }),
        r: result('c1', 'ok'),
        S: start('c1', 'search', 'id-1'),
        A: args('c1', '{"q":'),
        B: args('c1', '1}'),
      };
      // prettier-ignore
      const e1 =  cold('--a------b------r--|', values);
      // prettier-ignore
      const unsub =    '-------------!';
      // prettier-ignore
      const e1subs =   '^------------!';
      // prettier-ignore
      const expected = '--(SA)---B----';

      expectObservable(e1.pipe(correlate()), unsub).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should not break unsubscription chains when the result is unsubscribed explicitly', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      const values = {
        a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{"q":' }),
        b: chunk({ toolCallId: 'c1', delta: '1}' }),
        r: result('c1', 'ok'),
        S: start('c1', 'search', 'id-1'),
        A: args('c1', '{"q":'),
        B: args('c1', '1}'),
      };
      // prettier-ignore
      const e1 =   hot('--a------b------r--|', values);
      // prettier-ignore
      const unsub =    '-------------!';
      // prettier-ignore
      const e1subs =   '^------------!';
      // prettier-ignore
      const expected = '--(SA)---B----';

      const result$ = e1.pipe(
        mergeMap((x) => of(x)),
        correlate(),
        mergeMap((x) => of(x)),
      );

      expectObservable(result$, unsub).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should stop listening to a synchronous observable when unsubscribed', () => {
    const sink = diagnosticsSink();
    const sideEffects: number[] = [];
    const emitted: AgentEvent[] = [];
    // After the first chunk, each event would be reported (an END with nothing open) if it were still handled.
    const source$ = new Observable<AgentEvent>((subscriber) => {
      for (let i = 0; !subscriber.closed && i < 5; i++) {
        sideEffects.push(i);
        subscriber.next(i === 0 ? chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{' }) : end(`c${i + 8}`));
      }
    });

    source$.pipe(correlate(sink.onDiagnostic), take(2)).subscribe((event) => emitted.push(event));

    expect(sideEffects).toEqual([0]);
    expect(emitted).toEqual([start('c1', 'search', 'id-1'), args('c1', '{')]);
    expect(sink.messages).toEqual([]);
  });

  it('should keep state per subscription: two subscriptions do not share calls or turns', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const values = {
        a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}' }),
        S: start('c1', 'search', 'id-1'),
        T: start('c1', 'search', 'id-2'),
        A: args('c1', '{}'),
        E: end('c1'),
      };
      // prettier-ignore
      const e1 =  cold('--a-----|', values);
      // prettier-ignore
      const e1subs =   '^-------!';
      // prettier-ignore
      const expected1 = '--(SA)--(E|)';
      // prettier-ignore
      const expected2 = '--(TA)--(E|)';

      // One operator instance, two subscribers: each sees call 'c1' as new (a shared
      // state would remap the second one), and each turn mints its own parent.
      const result$ = e1.pipe(correlate());
      expectObservable(result$).toBe(expected1, values);
      expectObservable(result$).toBe(expected2, values);
      expectSubscriptions(e1.subscriptions).toBe([e1subs, e1subs]);
    }));

  it('should start afresh when retried', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const values = {
        a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}' }),
        S: start('c1', 'search', 'id-1'),
        T: start('c1', 'search', 'id-2'),
        A: args('c1', '{}'),
        E: end('c1'),
      };
      // prettier-ignore
      const e1 =  cold('--a-----#', values);
      // prettier-ignore
      const e1subs =  ['^-------!',
                       '--------^-------!'];
      // prettier-ignore
      const expected = '--(SA)--E-(TA)--(E#)';

      expectObservable(e1.pipe(correlate(), retry(1))).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should emit in the frame of the input that caused it: START and ARGS with the first chunk, END and RESULT with the result', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      const values = {
        x: chunk({ toolCallId: 'c0', toolCallName: 'ignored', delta: '{}' }),
        a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{"q":' }),
        b: chunk({ toolCallId: 'c1', delta: '1}' }),
        r: result('c1', 'ok', { messageId: 'tm1' }),
        S: start('c1', 'search', 'id-1'),
        A: args('c1', '{"q":'),
        B: args('c1', '1}'),
        E: end('c1'),
        R: result('c1', 'ok', { messageId: 'tm1' }),
      };
      // prettier-ignore
      const e1 =   hot('-x-^-a-----b--r-----|', values);
      // prettier-ignore
      const expected =    '--(SA)--B--(ER)--|';

      expectObservable(e1.pipe(correlate())).toBe(expected, values);
    }));

  it('should keep two open calls with interleaved argument chunks apart', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const values = {
        a: chunk({ toolCallId: 'cA', toolCallName: 'search', delta: '{"q":' }),
        b: chunk({ toolCallId: 'cB', toolCallName: 'lookup', delta: '{"id":' }),
        c: chunk({ toolCallId: 'cA', delta: '"x"}' }),
        d: chunk({ toolCallId: 'cB', delta: '7}' }),
        S: start('cA', 'search', 'id-1'),
        A: args('cA', '{"q":'),
        T: start('cB', 'lookup', 'id-1'),
        B: args('cB', '{"id":'),
        C: args('cA', '"x"}'),
        D: args('cB', '7}'),
        E: end('cA'),
        F: end('cB'),
      };
      // prettier-ignore
      const e1 =  cold('--a------b------c--d--|', values);
      // prettier-ignore
      const expected = '--(SA)---(TB)---C--D--(EF|)';

      expectObservable(e1.pipe(correlate())).toBe(expected, values);
    }));

  it('should send START, ARGS and END for a call whose whole arguments arrive in one chunk', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const values = {
        a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{"q":"rxjs"}' }),
        b: chunk({ toolCallId: 'c2', toolCallName: 'lookup', delta: '{"id":7}' }),
        S: start('c1', 'search', 'id-1'),
        A: args('c1', '{"q":"rxjs"}'),
        T: start('c2', 'lookup', 'id-1'),
        B: args('c2', '{"id":7}'),
        E: end('c1'),
        F: end('c2'),
      };
      // prettier-ignore
      const e1 =  cold('--a------b------|', values);
      // prettier-ignore
      const expected = '--(SA)---(TB)---(EF|)';

      expectObservable(e1.pipe(correlate())).toBe(expected, values);
    }));

  it('should send ARGS "{}" before END for a call that got no arguments (an empty delta is none)', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const values = {
        a: chunk({ toolCallId: 'c1', toolCallName: 'ping' }),
        b: chunk({ toolCallId: 'c1', delta: '' }),
        r: result('c1', 'pong'),
        S: start('c1', 'ping', 'id-1'),
        X: args('c1', '{}'),
        E: end('c1'),
        R: result('c1', 'pong', { messageId: 'id-2' }),
      };
      // prettier-ignore
      const e1 =  cold('--a--b--r-------|', values);
      // prettier-ignore
      const expected = '--S-----(XER)---|';

      expectObservable(e1.pipe(correlate())).toBe(expected, values);
    }));

  it('should omit optional fields rather than send them undefined', async () => {
    const output = await collect(from([chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}' })]).pipe(correlate()));

    expect(output).toStrictEqual([
      { type: EventType.TOOL_CALL_START, toolCallId: 'c1', toolCallName: 'search', parentMessageId: 'id-1' },
      { type: EventType.TOOL_CALL_ARGS, toolCallId: 'c1', delta: '{}' },
      { type: EventType.TOOL_CALL_END, toolCallId: 'c1' },
    ]);
  });

  describe('parentMessageId', () => {
    it('should be the last assistant TEXT_MESSAGE_START of the turn', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          t: textStart('m1'),
          c: ev(EventType.TEXT_MESSAGE_CONTENT, { messageId: 'm1', delta: 'Let me look.' }),
          n: ev(EventType.TEXT_MESSAGE_END, { messageId: 'm1' }),
          a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}' }),
          S: start('c1', 'search', 'm1'),
          A: args('c1', '{}'),
          E: end('c1'),
        };
        // prettier-ignore
        const e1 =  cold('--t--c--n--a------|', values);
        // prettier-ignore
        const expected = '--t--c--n--(SA)---(E|)';

        expectObservable(e1.pipe(correlate())).toBe(expected, values);
      }));

    it('should not be a user message, and should be a TEXT_MESSAGE_START without role', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          u: textStart('u1', { role: 'user' }),
          a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}' }),
          m: textStart('m2', {}),
          b: chunk({ toolCallId: 'c2', toolCallName: 'lookup', delta: '{}' }),
          S: start('c1', 'search', 'id-1'),
          A: args('c1', '{}'),
          E: end('c1'),
          T: start('c2', 'lookup', 'm2'),
          B: args('c2', '{}'),
          F: end('c2'),
        };
        // prettier-ignore
        const e1 =  cold('--u--a------m-----b------|', values);
        // prettier-ignore
        const expected = '--u--(SA)---(Em)--(TB)---(F|)';

        expectObservable(e1.pipe(correlate())).toBe(expected, values);
      }));

    it('should be minted once per turn without text, shared by its parallel calls, and minted again after a result', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}' }),
          b: chunk({ toolCallId: 'c2', toolCallName: 'lookup', delta: '{}' }),
          r: result('c1', 'ok'),
          s: result('c2', 'ok'),
          c: chunk({ toolCallId: 'c3', toolCallName: 'search', delta: '{}' }),
          S: start('c1', 'search', 'id-1'),
          A: args('c1', '{}'),
          T: start('c2', 'lookup', 'id-1'),
          B: args('c2', '{}'),
          E: end('c1'),
          R: result('c1', 'ok', { messageId: 'id-2' }),
          F: end('c2'),
          Q: result('c2', 'ok', { messageId: 'id-3' }),
          U: start('c3', 'search', 'id-4'),
          C: args('c3', '{}'),
          G: end('c3'),
        };
        // prettier-ignore
        const e1 =  cold('--a------b------r------s------c------|', values);
        // prettier-ignore
        const expected = '--(SA)---(TB)---(ER)---(FQ)---(UC)---(G|)';

        expectObservable(e1.pipe(correlate())).toBe(expected, values);
      }));

    it('should be minted again after a step boundary ends the turn', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          t: textStart('m1'),
          a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}' }),
          x: ev(EventType.STEP_FINISHED, { stepName: 'think' }),
          b: chunk({ toolCallId: 'c2', toolCallName: 'lookup', delta: '{}' }),
          S: start('c1', 'search', 'm1'),
          A: args('c1', '{}'),
          E: end('c1'),
          T: start('c2', 'lookup', 'id-1'),
          B: args('c2', '{}'),
          F: end('c2'),
        };
        // prettier-ignore
        const e1 =  cold('--t--a------x------b------|', values);
        // prettier-ignore
        const expected = '--t--(SA)---(Ex)---(TB)---(F|)';

        expectObservable(e1.pipe(correlate())).toBe(expected, values);
      }));

    it('should be the chunk\'s own parentMessageId when it has one', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          t: textStart('m1'),
          a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}', parentMessageId: 'p9' }),
          b: chunk({ toolCallId: 'c2', toolCallName: 'lookup', delta: '{}' }),
          S: start('c1', 'search', 'p9'),
          A: args('c1', '{}'),
          T: start('c2', 'lookup', 'm1'),
          B: args('c2', '{}'),
          E: end('c1'),
          F: end('c2'),
        };
        // prettier-ignore
        const e1 =  cold('--t--a------b------|', values);
        // prettier-ignore
        const expected = '--t--(SA)---(TB)---(EF|)';

        expectObservable(e1.pipe(correlate())).toBe(expected, values);
      }));

    it('should read an empty parentMessageId as none, as the client does: the turn\'s message, else a minted one', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}', parentMessageId: '' }),
          t: textStart('m1'),
          b: chunk({ toolCallId: 'c2', toolCallName: 'lookup', delta: '{}', parentMessageId: '' }),
          S: start('c1', 'search', 'id-1'),
          A: args('c1', '{}'),
          E: end('c1'),
          T: start('c2', 'lookup', 'm1'),
          B: args('c2', '{}'),
          F: end('c2'),
        };
        // prettier-ignore
        const e1 =  cold('--a------t------b------|', values);
        // prettier-ignore
        const expected = '--(SA)---(Et)---(TB)---(F|)';

        expectObservable(e1.pipe(correlate())).toBe(expected, values);
      }));

    it('should make a chunk\'s own parentMessageId the turn\'s message when the turn had none', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}', parentMessageId: 'p9' }),
          b: chunk({ toolCallId: 'c2', toolCallName: 'lookup', delta: '{}' }),
          S: start('c1', 'search', 'p9'),
          A: args('c1', '{}'),
          T: start('c2', 'lookup', 'p9'),
          B: args('c2', '{}'),
          E: end('c1'),
          F: end('c2'),
        };
        // prettier-ignore
        const e1 =  cold('--a------b------|', values);
        // prettier-ignore
        const expected = '--(SA)---(TB)---(EF|)';

        expectObservable(e1.pipe(correlate())).toBe(expected, values);
      }));
  });

  describe('closing', () => {
    const boundaries: [string, AgentEvent][] = [
      ['TEXT_MESSAGE_START', textStart('m1')],
      ['a non-empty TEXT_MESSAGE_CONTENT', ev(EventType.TEXT_MESSAGE_CONTENT, { messageId: 'm0', delta: 'Hi' })],
      ['a non-empty TEXT_MESSAGE_CHUNK', ev(EventType.TEXT_MESSAGE_CHUNK, { delta: 'Hi' })],
      ['REASONING_START', ev(EventType.REASONING_START, { messageId: 'r1' })],
      ['a non-empty REASONING_MESSAGE_CHUNK', ev(EventType.REASONING_MESSAGE_CHUNK, { delta: 'hmm' })],
      ['STEP_STARTED', ev(EventType.STEP_STARTED, { stepName: 'tools' })],
      ['STEP_FINISHED', ev(EventType.STEP_FINISHED, { stepName: 'tools' })],
      ['RUN_ERROR', ev(EventType.RUN_ERROR, { message: 'boom' })],
      ['MESSAGES_SNAPSHOT', ev(EventType.MESSAGES_SNAPSHOT, { messages: [] })],
    ];
    for (const [name, boundary] of boundaries) {
      it(`should close the lane's open call at ${name}`, () =>
        testScheduler.run(({ cold, expectObservable }) => {
          const values = {
            a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{"q":1}' }),
            x: boundary,
            S: start('c1', 'search', 'id-1'),
            A: args('c1', '{"q":1}'),
            E: end('c1'),
          };
          // prettier-ignore
          const e1 =  cold('--a------x---|', values);
          // prettier-ignore
          const expected = '--(SA)---(Ex)|';

          expectObservable(e1.pipe(correlate())).toBe(expected, values);
        }));
    }

    const passing: [string, AgentEvent][] = [
      ['an empty TEXT_MESSAGE_CONTENT', ev(EventType.TEXT_MESSAGE_CONTENT, { messageId: 'm0', delta: '' })],
      ['an empty TEXT_MESSAGE_CHUNK', ev(EventType.TEXT_MESSAGE_CHUNK, { delta: '' })],
      ['TEXT_MESSAGE_END', ev(EventType.TEXT_MESSAGE_END, { messageId: 'm0' })],
      ['STATE_SNAPSHOT', ev(EventType.STATE_SNAPSHOT, { snapshot: { n: 1 } })],
      ['CUSTOM', ev(EventType.CUSTOM, { name: 'x', value: 1 })],
    ];
    for (const [name, event] of passing) {
      it(`should pass ${name} through without closing the open call`, () =>
        testScheduler.run(({ cold, expectObservable }) => {
          const values = {
            a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{"q":' }),
            x: event,
            b: chunk({ toolCallId: 'c1', delta: '1}' }),
            S: start('c1', 'search', 'id-1'),
            A: args('c1', '{"q":'),
            B: args('c1', '1}'),
            E: end('c1'),
          };
          // prettier-ignore
          const e1 =  cold('--a------x--b--|', values);
          // prettier-ignore
          const expected = '--(SA)---x--B--(E|)';

          expectObservable(e1.pipe(correlate())).toBe(expected, values);
        }));
    }

    // Models interleave text or reasoning with a call's arguments, and the official client applies
    // the fragments whatever comes between: an END there would cut the call.
    const interleaved: [string, AgentEvent][] = [
      ['TEXT_MESSAGE_START', textStart('m1')],
      ['a non-empty TEXT_MESSAGE_CONTENT', ev(EventType.TEXT_MESSAGE_CONTENT, { messageId: 'm0', delta: 'Hi' })],
      ['a non-empty TEXT_MESSAGE_CHUNK', ev(EventType.TEXT_MESSAGE_CHUNK, { delta: 'Hi' })],
      ['REASONING_START', ev(EventType.REASONING_START, { messageId: 'r1' })],
      ['REASONING_MESSAGE_START', ev(EventType.REASONING_MESSAGE_START, { messageId: 'r1', role: 'reasoning' })],
      ['a non-empty REASONING_MESSAGE_CHUNK', ev(EventType.REASONING_MESSAGE_CHUNK, { delta: 'hmm' })],
    ];
    for (const [name, event] of interleaved) {
      it(`should keep a call whose arguments are incomplete JSON open at ${name}, the later fragments (with or without id) in it, and close it at the next ${name} once complete`, () => {
        const sink = diagnosticsSink();
        testScheduler.run(({ cold, expectObservable }) => {
          const values = {
            a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{"q":' }),
            x: event,
            b: chunk({ delta: '"rx' }),
            c: chunk({ toolCallId: 'c1', delta: 'js"}' }),
            S: start('c1', 'search', 'id-1'),
            A: args('c1', '{"q":'),
            B: args('c1', '"rx'),
            C: args('c1', 'js"}'),
            E: end('c1'),
          };
          // prettier-ignore
          const e1 =  cold('--a------x--b--c--x-----|', values);
          // prettier-ignore
          const expected = '--(SA)---x--B--C--(Ex)--|';

          expectObservable(e1.pipe(correlate(sink.onDiagnostic))).toBe(expected, values);
        });
        expect(sink.messages).toEqual([]);
      });
    }

    it('should keep a call open across step events while its arguments are incomplete JSON, and close it at a step once they are complete', () => {
      const sink = diagnosticsSink();
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: chunk({ toolCallId: 'c1', toolCallName: 'calc', delta: '{"expression": "4' }),
          f: ev(EventType.STEP_FINISHED, { stepName: 'agent' }),
          s: ev(EventType.STEP_STARTED, { stepName: 'agent' }),
          b: chunk({ toolCallId: 'c1', delta: '2 * 7"}' }),
          S: start('c1', 'calc', 'id-1'),
          A: args('c1', '{"expression": "4'),
          B: args('c1', '2 * 7"}'),
          E: end('c1'),
        };
        // prettier-ignore
        const e1 =  cold('--a------f--s--b--f-----|', values);
        // prettier-ignore
        const expected = '--(SA)---f--s--B--(Ef)--|';

        expectObservable(e1.pipe(correlate(sink.onDiagnostic))).toBe(expected, values);
      });
      expect(sink.messages).toEqual([]);
    });

    it('should keep a started call with no arguments open across a step event instead of closing it with "{}"', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: start('c1', 'calc', 'm1'),
          s: ev(EventType.STEP_STARTED, { stepName: 'agent' }),
          b: args('c1', '{"expression": "42"}'),
          e: end('c1'),
          A: args('c1', '{"expression": "42"}'),
        };
        // prettier-ignore
        const e1 =  cold('--a--s--b--e--|', values);
        // prettier-ignore
        const expected = '--a--s--A--e--|';

        expectObservable(e1.pipe(correlate())).toBe(expected, values);
      }));

    it('should close open calls at RUN_FINISHED, before it', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{"q":1}' }),
          b: chunk({ toolCallId: 'c2', toolCallName: 'ping' }),
          f: runFinished(),
          S: start('c1', 'search', 'id-1'),
          A: args('c1', '{"q":1}'),
          T: start('c2', 'ping', 'id-1'),
          E: end('c1'),
          X: args('c2', '{}'),
          F: end('c2'),
          Z: runFinished({ outcome: { type: 'success', pendingToolCallIds: ['c1', 'c2'] } }),
        };
        // prettier-ignore
        const e1 =  cold('--a------b--f---------|', values);
        // prettier-ignore
        const expected = '--(SA)---T--(EXFZ)----|';

        expectObservable(e1.pipe(correlate())).toBe(expected, values);
      }));

    it('should close open calls when the source completes, before completing', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{"q":1}' }),
          b: chunk({ toolCallId: 'c2', toolCallName: 'ping' }),
          S: start('c1', 'search', 'id-1'),
          A: args('c1', '{"q":1}'),
          T: start('c2', 'ping', 'id-1'),
          E: end('c1'),
          X: args('c2', '{}'),
          F: end('c2'),
        };
        // prettier-ignore
        const e1 =  cold('--a------b--|', values);
        // prettier-ignore
        const expected = '--(SA)---T--(EXF|)';

        expectObservable(e1.pipe(correlate())).toBe(expected, values);
      }));
  });

  describe('cut arguments', () => {
    const cutMessage = (calls: string, verb: string) =>
      `The run ended with ${calls} waiting for a result, but ${verb} not complete JSON, so the call must not run. The text before it is kept. The agent's output was probably cut (an output limit, or a dropped connection): retry the run, and check that the agent sends each call's whole arguments before the run ends.`;
    const incompleteStream = (message: string) => expect.objectContaining({ constructor: AguiRxError, code: 'INCOMPLETE_STREAM', message });

    it('should end a call left with incomplete JSON when the source completes, then error INCOMPLETE_STREAM naming it', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{"q": "trains to' }),
          S: start('c1', 'search', 'id-1'),
          A: args('c1', '{"q": "trains to'),
          E: end('c1'),
        };
        // prettier-ignore
        const e1 =  cold('--a---|', values);
        // prettier-ignore
        const expected = '--(SA)(E#)';

        expectObservable(e1.pipe(correlate())).toBe(expected, values, incompleteStream(cutMessage(`tool call 'c1' (search, arguments ending "{\\"q\\": \\"trains to")`, 'its arguments are')));
      }));

    it('should error INCOMPLETE_STREAM instead of RUN_FINISHED when ended calls wait with arguments that are not JSON, naming each', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: start('c1', 'search', 'm1'),
          b: args('c1', '{"q":'),
          e: end('c1'),
          c: chunk({ toolCallId: 'c2', toolCallName: 'calc', delta: '[1, 2' }),
          d: chunk({ toolCallId: 'c3', toolCallName: 'ok', delta: '{"fine": true}' }),
          f: runFinished(),
          S: start('c2', 'calc', 'm1'),
          A: args('c2', '[1, 2'),
          T: start('c3', 'ok', 'm1'),
          B: args('c3', '{"fine": true}'),
          E: end('c2'),
          F: end('c3'),
        };
        // prettier-ignore
        const e1 =  cold('--a--b--e--c------d------f--|', values);
        // prettier-ignore
        const expected = '--a--b--e--(SA)---(TB)---(EF#)';

        const calls = `tool calls 'c1' (search, arguments ending "{\\"q\\":"), 'c2' (calc, arguments ending "[1, 2")`;
        expectObservable(e1.pipe(correlate())).toBe(expected, values, incompleteStream(cutMessage(calls, 'their arguments are')));
      }));

    it('should let a cancelled RUN_FINISHED pass, ending the calls its cancel cut, as the run runs none of them', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const cancelled = { ...runFinished(), outcome: { type: 'cancelled' } } as AgentEvent;
        const values = {
          a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{"q": "tra' }),
          b: start('c2', 'calc', 'm1'),
          c: args('c2', '[1, 2'),
          e: end('c2'),
          f: cancelled,
          S: start('c1', 'search', 'id-1'),
          A: args('c1', '{"q": "tra'),
          E: end('c1'),
        };
        // prettier-ignore
        const e1 =  cold('--a----b--c--e--f---|', values);
        // prettier-ignore
        const expected = '--(SA)-b--c--e--(Ef)|';

        expectObservable(e1.pipe(correlate())).toBe(expected, values);
      }));

    it('should let RUN_FINISHED pass when the call with incomplete arguments got its result, or the run failed or restarted', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{"q":' }),
          r: result('c1', 'no hits', { messageId: 't1' }),
          f: runFinished(),
          x: ev(EventType.RUN_ERROR, { message: 'boom' }),
          b: chunk({ toolCallId: 'c2', toolCallName: 'search', delta: '{"q":' }),
          s: ev(EventType.RUN_STARTED, {}),
          S: start('c1', 'search', 'id-1'),
          A: args('c1', '{"q":'),
          E: end('c1'),
          R: result('c1', 'no hits', { messageId: 't1' }),
          F: runFinished({ outcome: { type: 'success' } }),
          T: start('c2', 'search', 'id-2'),
          B: args('c2', '{"q":'),
          G: end('c2'),
        };
        // prettier-ignore
        const e1 =  cold('--a-----r-----f--b-----x---s--f--|', values);
        // prettier-ignore
        const expected = '--(SA)--(ER)--F--(TB)--(Gx)s--F--|';

        expectObservable(e1.pipe(correlate())).toBe(expected, values);
      }));

    it('should read each argument character once however many boundaries come between the fragments (linear, no re-parse)', async () => {
      const parse = jest.spyOn(JSON, 'parse');
      try {
        const pieces = 20_000;
        const input: AgentEvent[] = [chunk({ toolCallId: 'c1', toolCallName: 'list', delta: '{"items": [' })];
        for (let i = 0; i < pieces; i++) {
          input.push(chunk({ toolCallId: 'c1', toolCallName: 'list', delta: `${i > 0 ? ',' : ''}{"n": ${i}}` }));
          input.push(ev(i % 2 === 0 ? EventType.STEP_FINISHED : EventType.TEXT_MESSAGE_CHUNK, i % 2 === 0 ? { stepName: 'agent' } : { delta: '.' }));
        }
        input.push(chunk({ toolCallId: 'c1', delta: ']}' }), runFinished());
        const out = await collect(from(input).pipe(correlate()));
        const sent = out.filter((e) => e.type === EventType.TOOL_CALL_ARGS).map((e) => (e as { delta: string }).delta).join('');
        // One parse, of the closed value at RUN_FINISHED: never one per boundary.
        const parsedChars = parse.mock.calls.reduce((sum, [text]) => sum + String(text).length, 0);
        expect(parse).toHaveBeenCalledTimes(1);
        expect(parsedChars).toBe(sent.length);
        expect(JSON.parse(sent).items).toHaveLength(pieces);
        expect(unansweredCalls(out)).toEqual(['c1']);
      } finally {
        parse.mockRestore();
      }
    });
  });

  describe('chunks without toolCallId', () => {
    it('should continue the lane\'s latest call, or open a call with a minted id when they carry a name', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{"q":' }),
          b: chunk({ delta: '1}' }),
          n: chunk({ toolCallName: 'lookup', delta: '{"id":' }),
          c: chunk({ delta: '7}' }),
          S: start('c1', 'search', 'id-1'),
          A: args('c1', '{"q":'),
          B: args('c1', '1}'),
          T: start('id-2', 'lookup', 'id-1'),
          N: args('id-2', '{"id":'),
          C: args('id-2', '7}'),
          E: end('c1'),
          F: end('id-2'),
        };
        // prettier-ignore
        const e1 =  cold('--a------b--n------c--|', values);
        // prettier-ignore
        const expected = '--(SA)---B--(TN)---C--(EF|)';

        expectObservable(e1.pipe(correlate())).toBe(expected, values);
      }));
  });

  describe('late arguments', () => {
    it('should drop ARGS that arrive after the call ended, and report each through onDiagnostic', () => {
      const sink = diagnosticsSink();
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}' }),
          r: result('c1', 'ok'),
          l: chunk({ toolCallId: 'c1', delta: '"late"' }),
          x: args('c1', 'late'),
          m: chunk({ delta: 'late' }),
          S: start('c1', 'search', 'id-1'),
          A: args('c1', '{}'),
          E: end('c1'),
          R: result('c1', 'ok', { messageId: 'id-2' }),
        };
        // prettier-ignore
        const e1 =  cold('--a------r------l--x--m--|', values);
        // prettier-ignore
        const expected = '--(SA)---(ER)------------|';

        expectObservable(e1.pipe(correlate(sink.onDiagnostic))).toBe(expected, values);
      });
      const dropped = (type: string) =>
        `Dropped ${type} for tool call 'c1': the call already ended (its arguments were closed). Send all arguments before TOOL_CALL_END or the call's result.`;
      expect(sink.messages).toEqual([dropped('TOOL_CALL_CHUNK'), dropped('TOOL_CALL_ARGS'), dropped('TOOL_CALL_CHUNK')]);
    });

    it('should drop ARGS after a call closed by a boundary', () => {
      const sink = diagnosticsSink();
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{"q":1}' }),
          t: textStart('m1'),
          l: chunk({ toolCallId: 'c1', delta: '}' }),
          S: start('c1', 'search', 'id-1'),
          A: args('c1', '{"q":1}'),
          E: end('c1'),
        };
        // prettier-ignore
        const e1 =  cold('--a------t--l--|', values);
        // prettier-ignore
        const expected = '--(SA)---(Et)--|';

        expectObservable(e1.pipe(correlate(sink.onDiagnostic))).toBe(expected, values);
      });
      expect(sink.messages).toEqual([
        "Dropped TOOL_CALL_CHUNK for tool call 'c1': the call already ended (its arguments were closed). Send all arguments before TOOL_CALL_END or the call's result.",
      ]);
    });
  });

  it('should send a call that reuses an ended call\'s id (a chunk with a toolCallName) as a new call with a minted id', () =>
    testScheduler.run(({ cold, expectObservable }) => {
      const values = {
        a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}' }),
        r: result('c1', 'ok'),
        b: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{"again":' }),
        c: chunk({ toolCallId: 'c1', delta: '1}' }),
        s: result('c1', 'ok2'),
        S: start('c1', 'search', 'id-1'),
        A: args('c1', '{}'),
        E: end('c1'),
        R: result('c1', 'ok', { messageId: 'id-2' }),
        T: start('id-3', 'search', 'id-4'),
        B: args('id-3', '{"again":'),
        C: args('id-3', '1}'),
        F: end('id-3'),
        Q: result('id-3', 'ok2', { messageId: 'id-5' }),
      };
      // prettier-ignore
      const e1 =  cold('--a------r------b------c--s------|', values);
      // prettier-ignore
      const expected = '--(SA)---(ER)---(TB)---C--(FQ)---|';

      expectObservable(e1.pipe(correlate())).toBe(expected, values);
    }));

  describe('TOOL_CALL_RESULT', () => {
    it('should mint a messageId when absent, keep a given one, keep strings and content parts, and serialise anything else to JSON text', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const parts = [{ type: 'text', text: 'hi' }];
        const values = {
          a: result('cA', { hits: 3 }),
          b: result('cB', 'plain', { messageId: 'tm1' }),
          c: result('cC', parts),
          d: result('cD', 42),
          e: result('cE', [1, 2]),
          f: result('cF', ''),
          A: result('cA', '{"hits":3}', { messageId: 'id-1' }),
          B: result('cB', 'plain', { messageId: 'tm1' }),
          C: result('cC', parts, { messageId: 'id-2' }),
          D: result('cD', '42', { messageId: 'id-3' }),
          E: result('cE', '[1,2]', { messageId: 'id-4' }),
          F: result('cF', '', { messageId: 'id-5' }),
        };
        // prettier-ignore
        const e1 =  cold('--a--b--c--d--e--f--|', values);
        // prettier-ignore
        const expected = '--A--B--C--D--E--F--|';

        expectObservable(e1.pipe(correlate())).toBe(expected, values);
      }));

    it('should send an Error a tool returned as its text, which JSON would write as {}', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: result('cA', new Error('disk full')),
          b: result('cB', new RangeError('too far')),
          A: result('cA', 'Error: disk full', { messageId: 'id-1' }),
          B: result('cB', 'RangeError: too far', { messageId: 'id-2' }),
        };
        // prettier-ignore
        const e1 =  cold('--a--b--|', values);
        // prettier-ignore
        const expected = '--A--B--|';

        expectObservable(e1.pipe(correlate())).toBe(expected, values);
      }));

    it('should close its open call, END before RESULT, leaving other open calls open', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}' }),
          b: chunk({ toolCallId: 'c2', toolCallName: 'lookup', delta: '{"id":' }),
          r: result('c1', { hits: [] }, { timestamp: 7 }),
          c: chunk({ toolCallId: 'c2', delta: '7}' }),
          S: start('c1', 'search', 'id-1'),
          A: args('c1', '{}'),
          T: start('c2', 'lookup', 'id-1'),
          B: args('c2', '{"id":'),
          E: end('c1'),
          R: result('c1', '{"hits":[]}', { timestamp: 7, messageId: 'id-2' }),
          C: args('c2', '7}'),
          F: end('c2'),
        };
        // prettier-ignore
        const e1 =  cold('--a------b------r------c--|', values);
        // prettier-ignore
        const expected = '--(SA)---(TB)---(ER)---C--(F|)';

        expectObservable(e1.pipe(correlate())).toBe(expected, values);
      }));
  });

  describe('pending tool calls', () => {
    it('should list calls without a result in RUN_FINISHED outcome.pendingToolCallIds, exactly as the stream shows them', async () => {
      const output = await collect(
        from([
          chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}' }),
          chunk({ toolCallId: 'c2', toolCallName: 'lookup', delta: '{}' }),
          chunk({ toolCallName: 'unnamed' }),
          result('c1', 'ok'),
          chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{"page":2}' }),
          ev(EventType.TOOL_CALL_START, { toolCallId: 'c4', toolCallName: 'approve', parentMessageId: 'm9' }),
          result('c4', 'approved'),
          runFinished(),
        ]).pipe(correlate()),
      );

      const expectedPending = unansweredCalls(output);
      const finished = output.filter((e) => e.type === EventType.RUN_FINISHED);
      expect(expectedPending).toEqual(['c2', 'id-2', 'id-4']);
      expect(finished).toEqual([runFinished({ outcome: { type: 'success', pendingToolCallIds: expectedPending } })]);
      expect(typesOf(output).at(-1)).toBe(EventType.RUN_FINISHED);
    });

    it('should add RUN_FINISHED outcome "success" without pendingToolCallIds when every call was answered', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}' }),
          r: result('c1', 'ok'),
          f: runFinished({ result: { done: true } }),
          S: start('c1', 'search', 'id-1'),
          A: args('c1', '{}'),
          E: end('c1'),
          R: result('c1', 'ok', { messageId: 'id-2' }),
          F: runFinished({ result: { done: true }, outcome: { type: 'success' } }),
        };
        // prettier-ignore
        const e1 =  cold('--a------r------f--|', values);
        // prettier-ignore
        const expected = '--(SA)---(ER)---F--|';

        expectObservable(e1.pipe(correlate())).toBe(expected, values);
      }));

    it('should merge its pending calls into an upstream success outcome, and keep interrupt and cancelled outcomes unchanged', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const interrupt = { type: 'interrupt', interrupts: [{ id: 'i1', reason: 'approval', toolCallId: 'c1' }] };
        const cancelled = { type: 'cancelled' };
        const values = {
          a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}' }),
          s: runFinished({ outcome: { type: 'success', pendingToolCallIds: ['x1'] } }),
          i: runFinished({ outcome: interrupt }),
          c: runFinished({ outcome: cancelled }),
          S: start('c1', 'search', 'id-1'),
          A: args('c1', '{}'),
          E: end('c1'),
          T: runFinished({ outcome: { type: 'success', pendingToolCallIds: ['x1', 'c1'] } }),
          I: runFinished({ outcome: interrupt }),
          C: runFinished({ outcome: cancelled }),
        };
        // prettier-ignore
        const e1 =   cold('--a------s---|', values);
        // prettier-ignore
        const e2 =   cold('--a------i---|', values);
        // prettier-ignore
        const e3 =   cold('--a------c---|', values);
        // prettier-ignore
        const expected1 = '--(SA)---(ET)|';
        // prettier-ignore
        const expected2 = '--(SA)---(EI)|';
        // prettier-ignore
        const expected3 = '--(SA)---(EC)|';

        expectObservable(e1.pipe(correlate())).toBe(expected1, values);
        expectObservable(e2.pipe(correlate())).toBe(expected2, values);
        expectObservable(e3.pipe(correlate())).toBe(expected3, values);
      }));

    it('should report in each run only that run\'s pending calls', async () => {
      const output = await collect(
        from([
          ev(EventType.RUN_STARTED, { threadId: 't', runId: 'r1' }),
          chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}' }),
          runFinished({ threadId: 't', runId: 'r1' }),
          ev(EventType.RUN_STARTED, { threadId: 't', runId: 'r2' }),
          chunk({ toolCallId: 'c2', toolCallName: 'lookup', delta: '{}' }),
          runFinished({ threadId: 't', runId: 'r2' }),
        ]).pipe(correlate()),
      );

      const secondRun = output.slice(output.findIndex((e, i) => i > 0 && e.type === EventType.RUN_STARTED));
      const finished = output.filter((e) => e.type === EventType.RUN_FINISHED).map((e) => (e as { outcome?: unknown }).outcome);
      expect(finished).toEqual([
        { type: 'success', pendingToolCallIds: ['c1'] },
        { type: 'success', pendingToolCallIds: unansweredCalls(secondRun) },
      ]);
      expect(unansweredCalls(secondRun)).toEqual(['c2']);
    });
  });

  describe('explicit START / ARGS / END', () => {
    it('should pass them through unchanged', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          s: start('c1', 'search', 'm1', { timestamp: 1, metadata: { source: 'x' } }),
          a: args('c1', '{"q":1}', { timestamp: 2 }),
          e: end('c1', { timestamp: 3 }),
        };
        // prettier-ignore
        const e1 =  cold('--s--a--e--|', values);
        // prettier-ignore
        const expected = '--s--a--e--|';

        expectObservable(e1.pipe(correlate())).toBe(expected, values);
      }));

    it('should track them: ARGS "{}" before an END with no arguments, chunks without id continue them, their parent is the turn\'s, completion closes them', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          s: start('c1', 'approve', 'm1'),
          e: end('c1'),
          t: start('c2', 'search', 'm1'),
          b: chunk({ delta: '{"q":1}' }),
          c: chunk({ toolCallId: 'c3', toolCallName: 'lookup' }),
          X: args('c1', '{}'),
          B: args('c2', '{"q":1}'),
          U: start('c3', 'lookup', 'm1'),
          E: end('c2'),
          Y: args('c3', '{}'),
          F: end('c3'),
        };
        // prettier-ignore
        const e1 =  cold('--s--e-----t--b--c--|', values);
        // prettier-ignore
        const expected = '--s--(Xe)--t--B--U--(EYF|)';

        expectObservable(e1.pipe(correlate())).toBe(expected, values);
      }));

    it('should send an explicit START that reuses an ended call\'s id under a minted id, and map its ARGS, END and RESULT to it', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          s: start('c1', 'search', 'm1'),
          a: args('c1', '{}'),
          e: end('c1'),
          t: start('c1', 'search', 'm1', { timestamp: 4 }),
          b: args('c1', '{"page":2}'),
          f: end('c1'),
          r: result('c1', 'ok'),
          T: start('id-1', 'search', 'm1', { timestamp: 4 }),
          B: args('id-1', '{"page":2}'),
          F: end('id-1'),
          R: result('id-1', 'ok', { messageId: 'id-2' }),
        };
        // prettier-ignore
        const e1 =  cold('--s--a--e--t--b--f--r--|', values);
        // prettier-ignore
        const expected = '--s--a--e--T--B--F--R--|';

        expectObservable(e1.pipe(correlate())).toBe(expected, values);
      }));

    it('should drop a second START for an open call, and an END with nothing open, reporting each', () => {
      const sink = diagnosticsSink();
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          s: start('c1', 'search', 'm1'),
          d: start('c1', 'search', 'm1'),
          a: args('c1', '{}'),
          e: end('c1'),
          f: end('c1'),
          g: end('c9'),
        };
        // prettier-ignore
        const e1 =  cold('--s--d--a--e--f--g--|', values);
        // prettier-ignore
        const expected = '--s-----a--e--------|';

        expectObservable(e1.pipe(correlate(sink.onDiagnostic))).toBe(expected, values);
      });
      expect(sink.messages).toEqual([
        "Dropped a second TOOL_CALL_START for tool call 'c1', which is already open. Send one START per call.",
        "Dropped TOOL_CALL_END for tool call 'c1': no such call is open. End a call once, after its START.",
        "Dropped TOOL_CALL_END for tool call 'c9': no such call is open. End a call once, after its START.",
      ]);
    });
  });

  describe('null and snake_case fields', () => {
    // Was an error ending the run; now read as absent (a TOOL_CALL_CHUNK's toolCallId is optional).
    it('should read a TOOL_CALL_CHUNK with toolCallId null as one without, minting the id, with one diagnostic', () => {
      const sink = diagnosticsSink();
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: chunk({ toolCallId: null, toolCallName: 'search', delta: '{"q":', timestamp: null }),
          b: chunk({ toolCallId: null, delta: '1}' }),
          S: start('id-1', 'search', 'id-2'),
          A: args('id-1', '{"q":'),
          B: args('id-1', '1}'),
          E: end('id-1'),
        };
        // prettier-ignore
        const e1 =  cold('--a---b--|', values);
        // prettier-ignore
        const expected = '--(SA)b--(E|)';
        expectObservable(e1.pipe(correlate(sink.onDiagnostic))).toBe(expected, { ...values, b: values.B });
      });
      expect(sink.messages).toEqual([
        "TOOL_CALL_CHUNK has 'toolCallId: null': read as absent, here and in the rest of the run. Omit an optional field rather than sending null (Python: exclude_none=True).",
        "TOOL_CALL_CHUNK has 'timestamp: null': read as absent, here and in the rest of the run. Omit an optional field rather than sending null (Python: exclude_none=True).",
      ]);
    });

    it('should read snake_case tool call fields as camelCase, and answer the call by its tool_call_id', () => {
      const sink = diagnosticsSink();
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: ev(EventType.TOOL_CALL_START, { tool_call_id: 'c1', tool_call_name: 'search', parent_message_id: 'm1' }),
          b: ev(EventType.TOOL_CALL_ARGS, { tool_call_id: 'c1', delta: '{}' }),
          c: ev(EventType.TOOL_CALL_END, { tool_call_id: 'c1' }),
          r: ev(EventType.TOOL_CALL_RESULT, { message_id: 't1', tool_call_id: 'c1', content: 'ok', role: null }),
          S: start('c1', 'search', 'm1'),
          A: args('c1', '{}'),
          E: end('c1'),
          R: result('c1', 'ok', { messageId: 't1' }),
        };
        // prettier-ignore
        const e1 =  cold('--a--b--c--r--|', values);
        // prettier-ignore
        const expected = '--S--A--E--R--|';
        expectObservable(e1.pipe(correlate(sink.onDiagnostic))).toBe(expected, values);
      });
      expect(sink.messages).toEqual([
        "TOOL_CALL_START names its fields in snake_case ('tool_call_id'): read as AG-UI's camelCase ('toolCallId'), here and in the rest of the run. Send AG-UI's field names (Python: serialise events with their aliases, model_dump(by_alias=True), or with ag_ui's EventEncoder).",
        "TOOL_CALL_RESULT has 'role: null': read as absent, here and in the rest of the run. Omit an optional field rather than sending null (Python: exclude_none=True).",
      ]);
    });
  });

  describe('bad input', () => {
    const open = {
      o: chunk({ toolCallId: 'c0', toolCallName: 'search', delta: '{"q":1}' }),
      O: start('c0', 'search', 'id-1'),
      P: args('c0', '{"q":1}'),
      Q: end('c0'),
    };
    const cases: [string, AgentEvent, string][] = [
      [
        'a TOOL_CALL_CHUNK that opens a call without a toolCallName',
        chunk({ toolCallId: 'c9', delta: '{}' }),
        "TOOL_CALL_CHUNK opens tool call 'c9' without a toolCallName. Put the tool's name on the first chunk of each call.",
      ],
      [
        'a TOOL_CALL_CHUNK with a non-string delta',
        chunk({ toolCallId: 'c0', delta: 42 }),
        "TOOL_CALL_CHUNK has 'delta: number 42', but 'delta' must be a string.",
      ],
      [
        'TOOL_CALL_ARGS for a call never started',
        args('c7', '{}'),
        "TOOL_CALL_ARGS for tool call 'c7', which was never started. Send TOOL_CALL_START (or a TOOL_CALL_CHUNK with a toolCallName) first.",
      ],
      [
        'a TOOL_CALL_RESULT without content',
        ev(EventType.TOOL_CALL_RESULT, { toolCallId: 'c7' }),
        "TOOL_CALL_RESULT for tool call 'c7' has no content. Send the tool's output as a string (or an object to be serialised).",
      ],
      [
        'a TOOL_CALL_RESULT whose content holds a BigInt',
        result('c7', { n: BigInt(1) }),
        "TOOL_CALL_RESULT for tool call 'c7' has content (an object) that cannot be serialised to JSON: Do not know how to serialize a BigInt. Convert BigInts, Maps and Sets, and break cycles before emitting it.",
      ],
      [
        'a TOOL_CALL_RESULT whose content holds a Map, which JSON writes as {}',
        result('c7', { hits: new Map([['a', 1]]) }),
        "TOOL_CALL_RESULT for tool call 'c7' has content (an object) that cannot be serialised to JSON: a Map under key 'hits' (JSON writes it as {}, losing its entries). Convert BigInts, Maps and Sets, and break cycles before emitting it.",
      ],
      [
        'a TOOL_CALL_RESULT whose content is a function',
        result('c7', () => 'done'),
        "TOOL_CALL_RESULT for tool call 'c7' has content (a function) that JSON cannot carry. Send the tool's output as a string, content parts, or plain data.",
      ],
      [
        'a TOOL_CALL_RESULT with toolCallId null',
        ev(EventType.TOOL_CALL_RESULT, { toolCallId: null, content: 'ok' }),
        "TOOL_CALL_RESULT has 'toolCallId: null', but 'toolCallId' must be a string: omit an optional field rather than sending null.",
      ],
    ];
    for (const [name, bad, message] of cases) {
      it(`should error on ${name}, closing open calls first`, () =>
        testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
          const values = { ...open, x: bad };
          // prettier-ignore
          const e1 =  cold('--o------x---|', values);
          // prettier-ignore
          const e1subs =   '^--------!';
          // prettier-ignore
          const expected = '--(OP)---(Q#)';

          expectObservable(e1.pipe(correlate())).toBe(expected, values, invalidEvent(message));
          expectSubscriptions(e1.subscriptions).toBe(e1subs);
        }));
    }

    it('should error on a TOOL_CALL_CHUNK without toolCallId or toolCallName when the lane has had no call', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          s: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}', subagentRunId: 's1' }),
          x: chunk({ delta: '{}' }),
          S: start('c1', 'search', 'id-1', { subagentRunId: 's1' }),
          A: args('c1', '{}', { subagentRunId: 's1' }),
          X: end('c1', { subagentRunId: 's1' }),
        };
        // prettier-ignore
        const e1 =  cold('--s------x---|', values);
        // prettier-ignore
        const expected = '--(SA)---(X#)';

        expectObservable(e1.pipe(correlate())).toBe(
          expected,
          values,
          invalidEvent(
            'TOOL_CALL_CHUNK has no toolCallId and no tool call is open in the parent agent. The first chunk of a call needs a toolCallName (and ideally a toolCallId).',
          ),
        );
      }));

    it('should close a call it has just closed for its result only once when the result content is bad', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const values = {
          a: chunk({ toolCallId: 'c1', toolCallName: 'search' }),
          r: result('c1', { n: BigInt(2) }),
          S: start('c1', 'search', 'id-1'),
          X: args('c1', '{}'),
          E: end('c1'),
        };
        // prettier-ignore
        const e1 =  cold('--a--r--|', values);
        // prettier-ignore
        const expected = '--S--(XE#)';

        expectObservable(e1.pipe(correlate())).toBe(
          expected,
          values,
          invalidEvent(
            "TOOL_CALL_RESULT for tool call 'c1' has content (an object) that cannot be serialised to JSON: Do not know how to serialize a BigInt. Convert BigInts, Maps and Sets, and break cycles before emitting it.",
          ),
        );
      }));
  });

  describe('subagent lanes', () => {
    it('should not close a subagent\'s calls at text in the parent lane, but at text, a step or SUBAGENT_FINISHED in its own', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const s1 = { subagentRunId: 's1' };
        const values = {
          a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{"q":', ...s1 }),
          t: textStart('m1'),
          b: chunk({ toolCallId: 'c1', delta: '1}', ...s1 }),
          u: textStart('m2', { role: 'assistant', ...s1 }),
          c: chunk({ toolCallId: 'c2', toolCallName: 'lookup', ...s1 }),
          f: ev(EventType.SUBAGENT_FINISHED, s1),
          S: start('c1', 'search', 'id-1', s1),
          A: args('c1', '{"q":', s1),
          B: args('c1', '1}', s1),
          E: end('c1', s1),
          T: start('c2', 'lookup', 'm2', s1),
          X: args('c2', '{}', s1),
          F: end('c2', s1),
        };
        // prettier-ignore
        const e1 =  cold('--a------t--b--u------c--f------|', values);
        // prettier-ignore
        const expected = '--(SA)---t--B--(Eu)---T--(XFf)--|';

        expectObservable(e1.pipe(correlate())).toBe(expected, values);
      }));

    it('should mint a parent per lane: a subagent\'s call is not attached to the parent agent\'s message', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const s1 = { subagentRunId: 's1' };
        const values = {
          t: textStart('m1'),
          a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}', ...s1 }),
          b: chunk({ toolCallId: 'c2', toolCallName: 'lookup', delta: '{}' }),
          S: start('c1', 'search', 'id-1', s1),
          A: args('c1', '{}', s1),
          T: start('c2', 'lookup', 'm1'),
          B: args('c2', '{}'),
          E: end('c1', s1),
          F: end('c2'),
        };
        // prettier-ignore
        const e1 =  cold('--t--a------b------|', values);
        // prettier-ignore
        const expected = '--t--(SA)---(TB)---(EF|)';

        expectObservable(e1.pipe(correlate())).toBe(expected, values);
      }));

    // AG-UI spec 1.1, Subagents, Ownership: an untagged continuation continues whatever its opener owns.
    it('should continue a subagent\'s call from an untagged chunk, ARGS or END, tagged as its opener', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const s1 = { subagentRunId: 's1' };
        const values = {
          a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{"q":', ...s1 }),
          b: chunk({ toolCallId: 'c1', delta: '1' }),
          c: args('c1', '}'),
          d: end('c1'),
          S: start('c1', 'search', 'id-1', s1),
          A: args('c1', '{"q":', s1),
          B: args('c1', '1', s1),
          C: args('c1', '}', s1),
          E: end('c1', s1),
        };
        // prettier-ignore
        const e1 =  cold('--a------b--c--d--|', values);
        // prettier-ignore
        const expected = '--(SA)---B--C--E--|';

        expectObservable(e1.pipe(correlate())).toBe(expected, values);
      }));

    it('should error on arguments tagged with another subagent than the call\'s opener', () =>
      testScheduler.run(({ cold, expectObservable }) => {
        const s1 = { subagentRunId: 's1' };
        const values = {
          a: chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{"q":', ...s1 }),
          x: args('c1', '1}', { subagentRunId: 's2' }),
          S: start('c1', 'search', 'id-1', s1),
          A: args('c1', '{"q":', s1),
          E: end('c1', s1),
        };
        // prettier-ignore
        const e2 =  cold('--a------x--|', values);
        // prettier-ignore
        const expected = '--(SA)---(E#)';

        expectObservable(e2.pipe(correlate())).toBe(
          expected,
          values,
          invalidEvent(
            "TOOL_CALL_ARGS for tool call 'c1' comes from subagent 's2', but the call was started by subagent 's1'. Set the same subagentRunId on every event of a call.",
          ),
        );
      }));
  });

  describe('conformance', () => {
    const lifecycle = () => mapRunLifecycle({ threadId: 'thread-1', runId: 'run-1' });
    const assistantCall = (id: string, name: string, argsText: string) => ({ id, type: 'function', function: { name, arguments: argsText } });

    it('should build one assistant message holding parallel calls, each with its exact arguments', async () => {
      const events$ = from([
        chunk({ toolCallId: 'cA', toolCallName: 'search', delta: '{"q":' }),
        chunk({ toolCallId: 'cB', toolCallName: 'lookup', delta: '{"id":' }),
        chunk({ toolCallId: 'cA', delta: '"rxjs"}' }),
        chunk({ toolCallId: 'cB', delta: '7}' }),
      ]).pipe(correlate(), lifecycle());

      const run = await runWithOracle(events$);

      expect(run.messages).toEqual([
        { id: 'id-1', role: 'assistant', toolCalls: [assistantCall('cA', 'search', '{"q":"rxjs"}'), assistantCall('cB', 'lookup', '{"id":7}')] },
      ]);
    });

    it("should put a first chunk's metadata on its START, so that the client keeps it on the call also when the chunk has no arguments", async () => {
      const events$ = from([
        chunk({ toolCallId: 'c1', toolCallName: 'now', metadata: { provider: { kind: 'a' } } }),
        chunk({ toolCallId: 'c2', toolCallName: 'search', delta: '{"q":1}', metadata: { provider: { kind: 'b' } } }),
      ]).pipe(correlate());

      const events = await collect(events$);
      expect(events.filter((event) => event.type === EventType.TOOL_CALL_START)).toEqual([
        start('c1', 'now', 'id-1', { metadata: { provider: { kind: 'a' } } }),
        start('c2', 'search', 'id-1', { metadata: { provider: { kind: 'b' } } }),
      ]);
      const run = await runWithOracle(from(events).pipe(lifecycle()));
      expect(run.messages).toEqual([
        {
          id: 'id-1',
          role: 'assistant',
          toolCalls: [
            { ...assistantCall('c1', 'now', '{}'), metadata: { provider: { kind: 'a' } } },
            { ...assistantCall('c2', 'search', '{"q":1}'), metadata: { provider: { kind: 'b' } } },
          ],
        },
      ]);
    });

    it('should attach calls to the text message of their turn', async () => {
      const events$ = from([
        ev(EventType.TEXT_MESSAGE_CHUNK, { delta: 'Let me ' }),
        ev(EventType.TEXT_MESSAGE_CHUNK, { delta: 'search.' }),
        chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{"q":"rxjs"}' }),
        chunk({ toolCallId: 'c2', toolCallName: 'lookup' }),
      ]).pipe(openMessageStartContentEnd({ generateId: sequentialIds('m-') }), correlate(), lifecycle());

      const run = await runWithOracle(events$);

      expect(run.messages).toEqual([
        { id: 'm-1', role: 'assistant', content: 'Let me search.', toolCalls: [assistantCall('c1', 'search', '{"q":"rxjs"}'), assistantCall('c2', 'lookup', '{}')] },
      ]);
    });

    it('should build tool messages from results, and a new assistant message for the next turn', async () => {
      const events$ = from([
        chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{"q":"rxjs"}' }),
        result('c1', { hits: 3 }),
        ev(EventType.TEXT_MESSAGE_CHUNK, { delta: 'Found 3. Opening one.' }),
        chunk({ toolCallId: 'c2', toolCallName: 'open', delta: '{"n":1}' }),
        result('c2', [{ type: 'text', text: 'page' }]),
      ]).pipe(openMessageStartContentEnd({ generateId: sequentialIds('m-') }), correlate(), lifecycle());

      const run = await runWithOracle(events$);

      expect(run.messages).toEqual([
        { id: 'id-1', role: 'assistant', toolCalls: [assistantCall('c1', 'search', '{"q":"rxjs"}')] },
        { id: 'id-2', role: 'tool', toolCallId: 'c1', content: '{"hits":3}' },
        { id: 'm-1', role: 'assistant', content: 'Found 3. Opening one.', toolCalls: [assistantCall('c2', 'open', '{"n":1}')] },
        { id: 'id-3', role: 'tool', toolCallId: 'c2', content: [{ type: 'text', text: 'page' }] },
      ]);
    });

    it('should keep the stream valid when arguments arrive late: they are dropped, and the arguments sent stay exact', async () => {
      const sink = diagnosticsSink();
      const events$ = from([
        chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{"q":"rxjs"}' }),
        result('c1', 'ok'),
        chunk({ toolCallId: 'c1', delta: ',"late":true' }),
        args('c1', '}'),
      ]).pipe(correlate(sink.onDiagnostic), lifecycle());

      const run = await runWithOracle(events$);

      expect(run.messages).toEqual([
        { id: 'id-1', role: 'assistant', toolCalls: [assistantCall('c1', 'search', '{"q":"rxjs"}')] },
        { id: 'id-2', role: 'tool', toolCallId: 'c1', content: 'ok' },
      ]);
      expect(sink.messages).toHaveLength(2);
    });

    it('should report the calls left without a result as pending, agreeing with the stream the client received', async () => {
      const events$ = from([
        chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{}' }),
        chunk({ toolCallId: 'c2', toolCallName: 'approve', delta: '{"amount":5}' }),
        chunk({ toolCallName: 'confirm' }),
        result('c1', 'ok'),
        runFinished(),
      ]).pipe(correlate(), lifecycle());

      const run = await runWithOracle(events$);

      const received = run.events as unknown as AgentEvent[];
      const finished = received.filter((e) => e.type === EventType.RUN_FINISHED);
      expect(unansweredCalls(received)).toEqual(['c2', 'id-2']);
      expect(finished).toEqual([expect.objectContaining({ outcome: { type: 'success', pendingToolCallIds: ['c2', 'id-2'] } })]);
      expect(run.messages).toEqual([
        { id: 'id-1', role: 'assistant', toolCalls: [assistantCall('c1', 'search', '{}'), assistantCall('c2', 'approve', '{"amount":5}'), assistantCall('id-2', 'confirm', '{}')] },
        { id: 'id-3', role: 'tool', toolCallId: 'c1', content: 'ok' },
      ]);
    });

    it('should keep a subagent\'s calls in its own lane through the client', async () => {
      const s1 = { subagentRunId: 's1' };
      const events$ = from([
        ev(EventType.TEXT_MESSAGE_CHUNK, { delta: 'Delegating.' }),
        chunk({ toolCallId: 'c1', toolCallName: 'search', delta: '{"q":', ...s1 }),
        ev(EventType.TEXT_MESSAGE_CHUNK, { delta: ' Still here.' }),
        chunk({ toolCallId: 'c1', delta: '1}', ...s1 }),
      ]).pipe(openMessageStartContentEnd({ generateId: sequentialIds('m-') }), correlate(), lifecycle());

      const run = await runWithOracle(events$);

      expect(run.messages).toEqual([
        { id: 'm-1', role: 'assistant', content: 'Delegating. Still here.' },
        { id: 'id-1', role: 'assistant', subagentRunId: 's1', toolCalls: [assistantCall('c1', 'search', '{"q":1}')] },
      ]);
    });
  });
});
