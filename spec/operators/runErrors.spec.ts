import { EventType, type Event, type RunErrorEvent } from '@ag-ui/core';
import { Observable, concat, of, throwError, type Observable as Obs } from 'rxjs';
import type { AgentEvent } from '../../lib/protocol/agentEvent.js';
import { AguiRxError } from '../../lib/protocol/errors.js';
import { INTERNAL_ERROR, defaultErrorMessages, logRunError, type RunErrorReport } from '../../lib/protocol/runErrors.js';
import { mapRunLifecycle } from '../../operators/mapRunLifecycle.js';
import { toAgui } from '../../operators/toAgui.js';
import { collect } from '../support/helpers.js';
import { runWithOracle } from '../support/oracle.js';

const run = { threadId: 'thread-1', runId: 'run-1' };
const secret = 'connect ECONNREFUSED 10.0.0.5:5432 (db password=hunter2)';
const dbError = () => Object.assign(new Error(secret), { code: 'ECONNREFUSED' });
const failing = (error: unknown): Obs<AgentEvent> => concat(of<AgentEvent>({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'Hi' }), throwError(() => error));

function reports() {
  const calls: { error: unknown; report: RunErrorReport }[] = [];
  return { calls, onError: (error: unknown, report: RunErrorReport) => void calls.push({ error, report }) };
}

const runError = (events: Event[]) => events.find((event) => event.type === EventType.RUN_ERROR) as RunErrorEvent;

describe('RUN_ERROR messages and onError (mapRunLifecycle, toAgui)', () => {
  it('should withhold an unknown error\'s message under redact, quoting the reference onError gets', async () => {
    const { calls, onError } = reports();
    const events$ = failing(dbError()).pipe(toAgui({ ...run, errorMessages: 'redact', onError }));
    const events = await collect(events$);
    const terminal = runError(events);
    expect(terminal.message).not.toContain('hunter2');
    expect(terminal.message).not.toContain('10.0.0.5');
    expect(terminal.code).toBe(INTERNAL_ERROR);
    expect(calls).toHaveLength(1);
    expect((calls[0].error as Error).message).toBe(secret);
    expect(calls[0].report).toMatchObject(run);
    expect(calls[0].report.reference).toMatch(/^[\w-]{21}$/);
    expect(terminal.message).toContain(calls[0].report.reference);
    // The oracle accepts the run and builds the message that was open.
    const oracle = await runWithOracle(failing(dbError()).pipe(toAgui({ ...run, errorMessages: 'redact', onError: () => undefined }))).catch((error: Error) => error);
    expect(String(oracle)).not.toContain('hunter2');
  });

  it('should keep the message of the toolkit\'s own errors and of errors marked expose: true under redact', async () => {
    const { calls, onError } = reports();
    const own = await collect(failing(new AguiRxError('PROVIDER_ERROR', 'The provider is overloaded; retry in a minute.')).pipe(toAgui({ ...run, errorMessages: 'redact', onError })));
    expect(runError(own)).toMatchObject({ message: 'The provider is overloaded; retry in a minute.', code: 'PROVIDER_ERROR' });
    const marked = Object.assign(new Error('Your plan allows 10 runs a day.'), { status: 429, expose: true });
    const exposed = await collect(failing(marked).pipe(toAgui({ ...run, errorMessages: 'redact', onError })));
    expect(runError(exposed).message).toBe('Your plan allows 10 runs a day.');
    expect(calls.map((call) => call.error)).toEqual([expect.any(AguiRxError), marked]);
  });

  it('should send every message as it is under expose, and word it with a function policy', async () => {
    const exposed = await collect(failing(dbError()).pipe(toAgui({ ...run, errorMessages: 'expose', onError: () => undefined })));
    expect(runError(exposed)).toMatchObject({ message: secret, code: 'ECONNREFUSED' });
    const worded = await collect(failing(dbError()).pipe(toAgui({ ...run, errorMessages: (_error, reference) => `Sorry (${reference})`, onError: () => undefined })));
    expect(runError(worded).message).toMatch(/^Sorry \([\w-]{21}\)$/);
    expect(runError(worded).code).toBe('ECONNREFUSED');
  });

  it('should redact by default when NODE_ENV is production, and expose otherwise', async () => {
    const before = process.env.NODE_ENV;
    try {
      process.env.NODE_ENV = 'production';
      expect(defaultErrorMessages()).toBe('redact');
      const events = await collect(failing(dbError()).pipe(mapRunLifecycle({ ...run, onError: () => undefined })));
      expect(runError(events).message).not.toContain('hunter2');
      process.env.NODE_ENV = 'development';
      expect(defaultErrorMessages()).toBe('expose');
    } finally {
      process.env.NODE_ENV = before;
    }
  });

  it('should log one console.error line with the reference, code and message when no onError is given', async () => {
    const error = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const events = await collect(failing(dbError()).pipe(toAgui({ ...run, errorMessages: 'redact' })));
      expect(error).toHaveBeenCalledTimes(1);
      const line = String(error.mock.calls[0][0]);
      expect(line).toContain('ECONNREFUSED');
      expect(line).toContain(secret);
      expect(runError(events).message).toContain(line.match(/reference ([\w-]{21})/)![1]);
    } finally {
      error.mockRestore();
    }
  });

  it('should report an upstream RUN_ERROR event once, its message as the agent wrote it', async () => {
    const { calls, onError } = reports();
    const events = await collect(of<AgentEvent>({ type: EventType.RUN_ERROR, message: 'Quota exceeded', code: 'QUOTA' }).pipe(toAgui({ ...run, errorMessages: 'redact', onError })));
    expect(runError(events)).toMatchObject({ message: 'Quota exceeded', code: 'QUOTA' });
    expect(calls).toHaveLength(1);
    expect(calls[0].error).toMatchObject({ code: 'QUOTA', message: 'Quota exceeded' });
  });

  it('should not report a cancelled run nor a finished one', async () => {
    const { calls, onError } = reports();
    const controller = new AbortController();
    const events$ = new Observable<AgentEvent>(() => undefined).pipe(toAgui({ ...run, signal: controller.signal, onError }));
    const done = collect(events$);
    controller.abort();
    await done;
    await collect(of<AgentEvent>({ type: EventType.TEXT_MESSAGE_CHUNK, messageId: 'm1', delta: 'Hi' }).pipe(toAgui({ ...run, onError })));
    expect(calls).toHaveLength(0);
  });

  it('should report a failure once, to the outer layer, when an agent runs toAgui inside another', async () => {
    const inner = reports();
    const outer = reports();
    const events = await collect(failing(dbError()).pipe(toAgui({ ...run, errorMessages: 'expose', onError: inner.onError }), toAgui({ ...run, errorMessages: 'redact', onError: outer.onError })));
    expect(inner.calls).toHaveLength(0);
    expect(outer.calls).toHaveLength(1);
    expect((outer.calls[0].error as Error).message).toBe(secret);
    // The outer layer's policy words it.
    expect(runError(events).message).not.toContain('hunter2');
    expect(runError(events).message).toContain(outer.calls[0].report.reference);
  });

  it('should keep the run going to its RUN_ERROR when onError throws', async () => {
    const error = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const events = await collect(failing(dbError()).pipe(toAgui({ ...run, onError: () => { throw new Error('logger down'); } })));
      expect(events.at(-1)?.type).toBe(EventType.RUN_ERROR);
      expect(String(error.mock.calls[0][0])).toContain('logger down');
    } finally {
      error.mockRestore();
    }
  });

  it('should refuse an errorMessages option it does not know', () => {
    expect(() => mapRunLifecycle({ ...run, errorMessages: 'hide' as never })).toThrow(/errorMessages/);
  });
});

describe('logRunError (the default onError)', () => {
  it('should log one line naming run, reference, code and message, with control characters written as \\xNN', () => {
    const log = jest.spyOn(console, 'error').mockImplementation(() => {});
    try {
      logRunError(Object.assign(new Error('boom\u001b[2J\nforged line'), { code: 'E_X' }), { threadId: 't\u0007', runId: 'r1', reference: 'ref-1' });
      expect(log.mock.calls).toEqual([["[agui-rx] run r1 (thread t\\x07) failed, reference ref-1, code E_X: boom\\x1b[2J\\x0aforged line"]]);
    } finally {
      log.mockRestore();
    }
  });
});
