/**
 * Auth and multi-tenant use: the handler's `context(request)` turns the request into the caller
 * (user, tenant) before anything is read or run; the agent gets it as `ctx.context`, the run
 * broker's `authorize` as `context`. A throw with `status: 401` (as `http-errors`' `createError(401, …)`
 * makes) is answered 401 with its message; browsers on another origin are let in by `cors`; an
 * unexpected failure reaches `onError` (your logger) and, in production, the client sees only its
 * reference.
 *
 *     npm run build && npx tsc -p docs/examples && node .scratch/examples/auth-context.js
 *
 * then POST a RunAgentInput to http://localhost:8000/agent with `Authorization: Bearer alice-token`.
 */
import express, { type Express } from 'express';
import type { IncomingMessage, Server } from 'node:http';
import { createAguiHandler, type AguiAgent } from 'agui-rx';
import { weatherAgent } from './agent.js';

/** Who calls: the signed-in user and the tenant whose data the agent may touch. */
export interface Caller {
  userId: string;
  tenantId: string;
}

/** Bearer tokens and whom they stand for (your session store or JWT verification). */
const tokens = new Map<string, Caller>([['alice-token', { userId: 'alice', tenantId: 'acme' }]]);

/** An error the handler answers with its status and message (what `http-errors` makes, without the dependency). */
const httpError = (status: number, message: string) => Object.assign(new Error(message), { status, expose: true });

/** The handler's `context`: the caller, or 401 before the body is read. */
export function callerOf(request: IncomingMessage): Caller {
  const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
  const caller = token === undefined ? undefined : tokens.get(token);
  if (caller === undefined) throw httpError(401, 'Sign in first: send Authorization: Bearer <token>.');
  return caller;
}

/** The agent, per tenant: a real one would pick the tenant's data and model key from `ctx.context`. */
export const tenantAgent: AguiAgent<Caller> = (input, ctx) => {
  // `ctx.context` is a Caller, always there: with a Context type, the handler requires the `context` option that makes it.
  const forwardedProps = { ...input.forwardedProps, tenantId: ctx.context.tenantId };
  return weatherAgent({ ...input, forwardedProps }, ctx);
};

/** The app: the agent on POST /agent for signed-in callers, callable from the web app's origin. */
export function createApp(): Express {
  const app = express();
  app.use(express.json({ limit: '1mb' }));
  const handle = createAguiHandler(tenantAgent, {
    context: callerOf,
    cors: { origins: ['http://localhost:3000'], credentials: true },
    onError: (error, { reference, runId, request }) => console.error(`[${reference}] run ${runId} (${request.headers['user-agent']}):`, error),
  });
  // OPTIONS too: Express answers an OPTIONS it has no route for itself, without CORS headers.
  app.route('/agent').post(handle).options(handle);
  return app;
}

/** Listens on `port` (0 = any free port) and resolves once the server accepts connections. */
export function start(port = Number(process.env.PORT ?? 8000)): Promise<Server> {
  const app = createApp();
  return new Promise((resolve) => {
    const server = app.listen(port, () => resolve(server));
  });
}

if (process.argv[1]?.endsWith('auth-context.js')) void start().then(() => console.log(`AG-UI agent on http://localhost:${process.env.PORT ?? 8000}/agent (Authorization: Bearer alice-token)`));
