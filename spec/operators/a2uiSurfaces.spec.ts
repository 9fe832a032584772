import { EventType, type ActivityMessage } from '@ag-ui/core';
import { Observable, mergeMap, of, retry, take } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { a2uiSurfaces, type A2uiMessage } from '../../operators/a2uiSurfaces.js';
import { activityDelta } from '../../operators/activityDelta.js';
import { toAgui } from '../../operators/toAgui.js';
import { createTestScheduler, diagnosticsSink, typesOf } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

/** The snapshot a2uiSurfaces sends for `surfaceId` after `operations`. */
const snap = (surfaceId: string, ...operations: unknown[]): AgentEvent => ({
  type: EventType.ACTIVITY_SNAPSHOT,
  messageId: `a2ui-surface-${surfaceId}`,
  activityType: 'a2ui-surface',
  content: { a2ui_operations: operations },
  replace: true,
});

const create = (surfaceId: string): A2uiMessage => ({ version: 'v1.0', createSurface: { surfaceId, catalogId: 'https://a2ui.org/catalog/standard.json' } });
const components = (surfaceId: string, text: string): A2uiMessage => ({ version: 'v1.0', updateComponents: { surfaceId, components: [{ id: 'root', component: 'Text', text }] } });
const data = (surfaceId: string, value: unknown): A2uiMessage => ({ version: 'v1.0', updateDataModel: { surfaceId, path: '/guests', value } });
const remove = (surfaceId: string): A2uiMessage => ({ version: 'v1.0', deleteSurface: { surfaceId } });

describe('a2uiSurfaces', () => {
  let testScheduler: TestScheduler;

  beforeEach(() => {
    testScheduler = createTestScheduler();
  });

  const c = create('s');
  const u = components('s', 'Hello');
  const m = data('s', 2);
  const d = remove('s');
  const x = { version: 'v1.0', note: 'no operation' } as unknown as A2uiMessage;
  const values = { c, u, m, d, x };
  const expectedValues = {
    A: snap('s', c),
    B: snap('s', c, u),
    C: snap('s', c, u, m),
    D: snap('s', c, u, m, d),
    E: snap('s', c, u, d),
  };
  const quiet = () => ({ onDiagnostic: () => undefined });

  it('should send every message of the surface so far in each snapshot', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--c--u--m--|', values);
      // prettier-ignore
      const e1subs =  '^----------!';
      // prettier-ignore
      const expected ='--A--B--C--|';

      expectObservable(e1.pipe(a2uiSurfaces())).toBe(expected, expectedValues);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should raise an error when the source raises an error', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--c--u--#', values);
      // prettier-ignore
      const e1subs =  '^-------!';
      // prettier-ignore
      const expected ='--A--B--#';

      expectObservable(e1.pipe(a2uiSurfaces())).toBe(expected, expectedValues);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should complete with an empty source', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold<A2uiMessage>('|');
      // prettier-ignore
      const e1subs =   '(^!)';
      // prettier-ignore
      const expected = '|';

      expectObservable(e1.pipe(a2uiSurfaces())).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should not complete with a never source', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold<A2uiMessage>('-');
      // prettier-ignore
      const e1subs =   '^';
      // prettier-ignore
      const expected = '-';

      expectObservable(e1.pipe(a2uiSurfaces())).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should raise an error with a throw source', () =>
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  cold<A2uiMessage>('#');
      // prettier-ignore
      const e1subs =   '(^!)';
      // prettier-ignore
      const expected = '#';

      expectObservable(e1.pipe(a2uiSurfaces())).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should allow unsubscribing early and explicitly', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--c--u--m--|', values);
      // prettier-ignore
      const unsub =   '------!     ';
      // prettier-ignore
      const e1subs =  '^-----!     ';
      // prettier-ignore
      const expected ='--A--B-     ';

      expectObservable(e1.pipe(a2uiSurfaces()), unsub).toBe(expected, expectedValues);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should not break unsubscription chains when unsubscribed explicitly', () =>
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--c--u--m--|', values);
      // prettier-ignore
      const unsub =   '------!     ';
      // prettier-ignore
      const e1subs =  '^-----!     ';
      // prettier-ignore
      const expected ='--A--B-     ';

      const result = e1.pipe(
        mergeMap((message) => of(message)),
        a2uiSurfaces(),
        mergeMap((event) => of(event)),
      );

      expectObservable(result, unsub).toBe(expected, expectedValues);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    }));

  it('should give the first events of a synchronous source and complete when take ends the output', () => {
    let subscriptions = 0;
    let emitted = 0;
    const synchronousObservable = new Observable<A2uiMessage>((subscriber) => {
      subscriptions++;
      subscriber.next(c);
      for (let count = 0; !subscriber.closed && count < 10; count++) {
        emitted++;
        subscriber.next(components('s', `text ${count}`));
      }
    });

    testScheduler.run(({ expectObservable }) => {
      // prettier-ignore
      const expected = '(AB|)';

      expectObservable(synchronousObservable.pipe(a2uiSurfaces(), take(2))).toBe(expected, { A: snap('s', c), B: snap('s', c, components('s', 'text 0')) });
    });

    expect(subscriptions).toBe(1);
    expect(emitted).toBe(1);
  });

  it('should keep separate surfaces for each subscription and start over when retried', () =>
    testScheduler.run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      // prettier-ignore
      const e1 =  hot('--c--u--m--|', values);
      // prettier-ignore
      const sub2 =    '----^-------';
      // prettier-ignore
      const expected1='--A--B--C--|';
      // prettier-ignore
      const expected2='-----F--G--|';

      const result = e1.pipe(a2uiSurfaces());
      expectObservable(result).toBe(expected1, expectedValues);
      // The late subscriber never saw createSurface: its surface holds only what it saw.
      expectObservable(result, sub2).toBe(expected2, { F: snap('s', u), G: snap('s', u, m) });

      // prettier-ignore
      const e2 =  cold('--c--u--#       ', values);
      // prettier-ignore
      const e2subs = ['^-------!        ',
                      '--------^-------!'];
      // prettier-ignore
      const expected3= '--A--B----A--B--#';

      expectObservable(e2.pipe(a2uiSurfaces(), retry(1))).toBe(expected3, expectedValues);
      expectSubscriptions(e2.subscriptions).toBe(e2subs);
    }));

  it('should emit in the same frame as the message that caused it, in order', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      // prettier-ignore
      const e1 =  hot('--(cu)--m--|', values);
      // prettier-ignore
      const expected ='--(AB)--C--|';

      expectObservable(e1.pipe(a2uiSurfaces())).toBe(expected, expectedValues);
    }));

  it('should drop a deleted surface after its snapshot and start over when it is created again', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      // prettier-ignore
      const e1 =  hot('--c--u--d--c--u--|', values);
      // prettier-ignore
      const expected ='--A--B--E--A--B--|';

      expectObservable(e1.pipe(a2uiSurfaces())).toBe(expected, expectedValues);
    }));

  it('should keep each surface to its own messages', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      const c2 = create('t');
      const u2 = components('t', 'Other');
      // prettier-ignore
      const e1 =  hot('--c--a--u--b--d--b--|', { ...values, a: c2, b: u2 });
      // prettier-ignore
      const expected ='--A--P--B--Q--E--R--|';

      expectObservable(e1.pipe(a2uiSurfaces())).toBe(expected, { ...expectedValues, P: snap('t', c2), Q: snap('t', c2, u2), R: snap('t', c2, u2, u2) });
    }));

  it('should carry v0.8 messages the same way', () =>
    testScheduler.run(({ hot, expectObservable }) => {
      const v08 = {
        u: { surfaceUpdate: { surfaceId: 'main', components: [{ id: 'root', component: { Text: { text: { literalString: 'Hi' } } } }] } },
        m: { dataModelUpdate: { surfaceId: 'main', contents: [{ key: 'name', valueString: 'Ana' }] } },
        b: { beginRendering: { surfaceId: 'main', root: 'root' } },
        d: { deleteSurface: { surfaceId: 'main' } },
      } as Record<string, A2uiMessage>;
      // prettier-ignore
      const e1 =  hot('--u--m--b--d--u--|', v08);
      // prettier-ignore
      const expected ='--A--B--C--D--A--|';

      expectObservable(e1.pipe(a2uiSurfaces())).toBe(expected, {
        A: snap('main', v08.u),
        B: snap('main', v08.u, v08.m),
        C: snap('main', v08.u, v08.m, v08.b),
        D: snap('main', v08.u, v08.m, v08.b, v08.d),
      });
    }));

  it('should leave out messages that name no surface and report each', () => {
    const sink = diagnosticsSink();
    const bad = [
      x,
      null,
      'createSurface',
      [],
      { createSurface: { catalogId: 'standard' } },
      { updateComponents: { surfaceId: '' } },
      { updateDataModel: null },
      { createSurface: { surfaceId: 's' }, deleteSurface: { surfaceId: 's' } },
    ] as unknown as A2uiMessage[];

    testScheduler.run(({ hot, expectObservable }) => {
      // prettier-ignore
      const e1 =  hot('--c--(ijklmnop)--u--|', { c, u, ...Object.fromEntries(bad.map((message, index) => ['ijklmnop'[index], message])) });
      // prettier-ignore
      const expected ='--A--------------B--|';

      expectObservable(e1.pipe(a2uiSurfaces(sink))).toBe(expected, expectedValues);
    });

    const rule = 'Each A2UI message needs exactly one operation key (createSurface, updateComponents, updateDataModel, deleteSurface; v0.8: surfaceUpdate, dataModelUpdate, beginRendering) whose value has a \'surfaceId\'.';
    expect(sink.messages).toEqual(
      [
        'it has no operation key',
        'got null instead of a message object',
        'got "createSurface" instead of a message object',
        'got an array of 0 instead of a message object',
        "its 'createSurface' has 'surfaceId: undefined', not a non-empty string",
        `its 'updateComponents' has 'surfaceId: ""', not a non-empty string`,
        "its 'updateDataModel' has 'surfaceId: undefined', not a non-empty string",
        'it has 2 operation keys (createSurface, deleteSurface)',
      ].map((why) => `A2UI message left out: ${why}. ${rule}`),
    );
  });

  describe('conformance', () => {
    const run = (messages: A2uiMessage[], withDelta = false) =>
      runWithOracle(
        of(...messages).pipe(a2uiSurfaces(quiet()), withDelta ? activityDelta() : (source) => source, toAgui({ threadId: 'thread-1', runId: 'run-1' })),
      );
    const activity = (surfaceId: string, ...operations: unknown[]): ActivityMessage => ({
      id: `a2ui-surface-${surfaceId}`,
      role: 'activity',
      activityType: 'a2ui-surface',
      content: { a2ui_operations: operations },
    });

    it('should build one activity message per surface with every message of it', async () => {
      const t = create('t');
      const result = await run([c, t, u, x, m, components('t', 'Bye')]);

      expect(result.messages).toEqual([activity('s', c, u, m), activity('t', t, components('t', 'Bye'))]);
      // toAgui's activityDelta sends later snapshots of a surface as patches when they are smaller.
      expect(typesOf(result.events)).toEqual([
        EventType.RUN_STARTED,
        EventType.ACTIVITY_SNAPSHOT,
        EventType.ACTIVITY_SNAPSHOT,
        EventType.ACTIVITY_DELTA,
        EventType.ACTIVITY_DELTA,
        EventType.ACTIVITY_DELTA,
        EventType.RUN_FINISHED,
      ]);
    });

    it('should start a surface over when it is deleted then created again', async () => {
      const result = await run([c, u, d, c, components('s', 'Again')]);

      expect(result.messages).toEqual([activity('s', c, components('s', 'Again'))]);
    });

    it('should give deltas the client applies when piped into activityDelta', async () => {
      const messages = [c, u, m, data('s', 3), components('s', 'Goodbye'), d, c, u];
      const plain = await run(messages);
      const diffed = await run(messages, true);

      expect(diffed.messages).toEqual(plain.messages);
      expect(diffed.messages).toEqual([activity('s', c, u)]);
      expect(typesOf(diffed.events).filter((type) => type === EventType.ACTIVITY_DELTA).length).toBeGreaterThanOrEqual(4);
    });
  });
});
