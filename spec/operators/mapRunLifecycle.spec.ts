import { Observable, take } from 'rxjs';
import { mapRunLifecycle } from '../../operators/mapRunLifecycle.js';

it('sync take', () => {
  const sideEffects: number[] = [];
  const out: string[] = [];
  const e1 = new Observable<any>((subscriber) => {
    for (let i = 0; !subscriber.closed && i < 10; i++) {
      sideEffects.push(i);
      subscriber.next({ type: 'CUSTOM', name: 'n', value: i });
    }
  });
  e1.pipe(mapRunLifecycle({ threadId: 't', runId: 'r' }), take(3)).subscribe((e) => out.push(e.type));
  console.log(sideEffects, out);
  const s2: number[] = [];
  const e2 = new Observable<any>((subscriber) => {
    for (let i = 0; !subscriber.closed && i < 10; i++) {
      s2.push(i);
      subscriber.next(i === 2 ? { type: 'RUN_FINISHED' } : { type: 'CUSTOM', name: 'n', value: i });
    }
  });
  e2.pipe(mapRunLifecycle({ threadId: 't', runId: 'r' })).subscribe((e) => out.push(e.type));
  console.log(s2, out);
});
