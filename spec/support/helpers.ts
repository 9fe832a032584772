import type { Event } from '@ag-ui/core';
import { TestScheduler } from 'rxjs/testing';
import { firstValueFrom, toArray, type Observable } from 'rxjs';
import type { AguiDiagnostic } from '../../lib/protocol/diagnostics.js';

/** An error as the specs compare it: jest's toEqual sees only an Error's message, so class and code are spelled out. */
function errorFields(error: unknown): unknown {
  return error instanceof Error ? { class: error.constructor.name, name: error.name, code: (error as { code?: unknown }).code, message: error.message } : error;
}

/**
 * A fresh TestScheduler that compares with jest's deep equality; where the expected notification
 * is an Error, the actual one must match its class, code and message too.
 */
export function createTestScheduler(): TestScheduler {
  type Frame = { notification?: { kind?: string; error?: unknown } };
  const isErrorFrame = (frame: unknown): frame is Frame => (frame as Frame | undefined)?.notification?.kind === 'E';
  const spelledOut = (frame: Frame) => ({ ...frame, notification: { ...frame.notification, error: errorFields(frame.notification!.error) } });
  return new TestScheduler((actual, expected) => {
    if (Array.isArray(actual) && Array.isArray(expected)) {
      const pairs = expected.map((frame, index) =>
        isErrorFrame(frame) && frame.notification!.error instanceof Error && isErrorFrame(actual[index]) ? [spelledOut(actual[index]), spelledOut(frame)] : [actual[index], frame],
      );
      return expect([...pairs.map(([a]) => a), ...actual.slice(expected.length)]).toEqual(pairs.map(([, e]) => e));
    }
    expect(actual).toEqual(expected);
  });
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

/** The error a finite observable fails with, or undefined when it completes. */
export function errorOf(events: Promise<unknown>): Promise<unknown> {
  return events.then(
    () => undefined,
    (error: unknown) => error,
  );
}

/**
 * Waits until `check` yields a value `accept`s, for state outside this process that sends no event
 * (a redis-server's INFO, a child server's /stats, a client's reconnection): the one polling loop
 * of the specs. Rejects after `timeoutMs` naming `what` and the last value seen.
 */
export async function pollUntil<T>(
  check: () => T | Promise<T>,
  accept: (value: T) => boolean,
  { timeoutMs = 10_000, intervalMs = 20, what = 'the condition' }: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what} (last seen: ${JSON.stringify(value)?.slice(0, 200)}).`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
