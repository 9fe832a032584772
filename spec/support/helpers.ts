import type { Event } from '@ag-ui/core';
import { TestScheduler } from 'rxjs/testing';
import { firstValueFrom, toArray, type Observable } from 'rxjs';
import type { AguiDiagnostic } from '../../lib/diagnostics.js';

/** A fresh TestScheduler that compares with jest's deep equality. */
export function createTestScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

/** A deterministic id generator: `${prefix}1`, `${prefix}2`, … (fresh counter per call). */
export function sequentialIds(prefix = 'id-'): () => string {
  let n = 0;
  return () => `${prefix}${++n}`;
}

/** Every value of a finite observable, as an array. */
export function collect<T>(events$: Observable<T>): Promise<T[]> {
  return firstValueFrom(events$.pipe(toArray()));
}

/** A diagnostics sink for specs: the messages it received. */
export function diagnosticsSink(): { onDiagnostic: (d: AguiDiagnostic) => void; messages: string[] } {
  const messages: string[] = [];
  return { onDiagnostic: (d) => void messages.push(d.message), messages };
}

/** The event types of a stream, in order (for compact assertions). */
export function typesOf(events: readonly { type: string }[]): string[] {
  return events.map((event) => event.type);
}

/** The terminal events of a stream. */
export function terminals(events: readonly Event[]): Event[] {
  return events.filter((event) => event.type === 'RUN_FINISHED' || event.type === 'RUN_ERROR');
}
