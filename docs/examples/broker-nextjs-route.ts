/**
 * agui-rx as a Next.js App Router route with a run broker: save it as
 * `app/agent/[[...path]]/route.ts`. The optional catch-all sends `/agent` and everything under it
 * here; the request's URL is whole, so the handler's `basePath` is '/agent'.
 *
 * The broker lives in the server process's memory: one per process (a module-level constant), and
 * on a platform that runs many instances (serverless, several containers), a Redis store shared by
 * all of them (`createRedisRunStore` from `agui-rx/broker/redis`). A run keeps going after its
 * response ends, so the route needs a long-lived Node.js server (`next start`, a container), not a
 * function that is frozen when its response completes.
 */
import { createAguiFetchHandler, createRunBroker } from 'agui-rx';
import { weatherAgent } from './agent.js';
import { authorizeBySession } from './broker-auth.js';

// Stream with the Node.js runtime, and never cache or prerender the route.
export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

const broker = createRunBroker({ authorize: authorizeBySession });
const handle = createAguiFetchHandler(weatherAgent, { broker, basePath: '/agent' });

/** GET /agent/threads/<threadId>/runs/<runId>/events: a run's events after `Last-Event-ID`, then live. */
export async function GET(request: Request): Promise<Response> {
  return handle(request);
}

/** POST /agent (start or attach), /agent/connect (rebuild the thread), /agent/threads/<threadId>/runs/<runId>/stop (cancel). */
export async function POST(request: Request): Promise<Response> {
  return handle(request);
}
