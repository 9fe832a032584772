import { EventType, type Event } from '@ag-ui/core';
import { of, throwError, concat } from 'rxjs';
import { stateDelta } from '../../operators/stateDelta.js';
import { mapRunLifecycle } from '../../operators/mapRunLifecycle.js';
import { runWithOracle } from '../support/oracle.js';
import { collect } from '../support/helpers.js';

it('scratch', async () => {
  const bad = of({ type: EventType.STATE_SNAPSHOT, snapshot: { a: 1 } }, { type: EventType.STATE_DELTA, delta: [{ op: 'replace', path: '/b', value: 1 }] } as any)
    .pipe(stateDelta(), mapRunLifecycle({ threadId: 'thread-1', runId: 'run-1' }));
  const r = await runWithOracle(bad).then((x) => ({ ok: x }), (e) => ({ err: e }));
  console.log(JSON.stringify(r, null, 1), (r as any).err?.message);
  const proto = of({ type: EventType.STATE_SNAPSHOT, snapshot: { a: 1 } }, { type: EventType.STATE_SNAPSHOT, snapshot: JSON.parse('{"a":1,"__proto__":{"x":1}}') } as any)
    .pipe(stateDelta());
  console.log(JSON.stringify(await collect(proto)));
  const r2 = await runWithOracle(proto.pipe(mapRunLifecycle({ threadId: 'thread-1', runId: 'run-1' })) as any).then((x) => ({ ok: x }), (e) => ({ err: String(e) }));
  console.log(JSON.stringify(r2, null, 1), ({} as any).x);
  const arr = of({ type: EventType.STATE_SNAPSHOT, snapshot: [] }, { type: EventType.STATE_SNAPSHOT, snapshot: {a: 1} } as any).pipe(stateDelta());
  console.log(JSON.stringify(await collect(arr)));
  const nul = of({ type: EventType.STATE_SNAPSHOT, snapshot: {a: 1} }, { type: EventType.STATE_SNAPSHOT, snapshot: null } as any).pipe(stateDelta());
  console.log(await collect(nul).catch(e => e));
  const r3 = await runWithOracle(of({ type: EventType.STATE_SNAPSHOT, snapshot: {a: 1} }, { type: EventType.STATE_SNAPSHOT, snapshot: 5 } as any).pipe(mapRunLifecycle({ threadId: 'thread-1', runId: 'run-1' })) as any).then((x) => ({ ok: x.state }), (e) => ({ err: String(e) }));
  console.log(r3);
});
