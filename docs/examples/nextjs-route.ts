/**
 * agui-rx as a Next.js App Router route handler: save it as `app/api/agent/route.ts` and point
 * the client (CopilotKit's runtime, or `new HttpAgent({ url: '/api/agent' })`) at `/api/agent`.
 *
 * No `next` import is needed: a route handler is a function from a Web `Request` to a `Response`.
 * Run it with `next dev`; here, spec/docs/examples.spec.ts serves `POST` with node:http and drives
 * it with the official `HttpAgent`.
 */
import { createAguiFetchHandler, toAgui, toSSEResponse } from 'agui-rx';
import { weatherAgent } from './agent.js';

// Stream with the Node.js runtime, and never cache or prerender the route.
export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

const handle = createAguiFetchHandler(weatherAgent);

/**
 * POST /api/agent: the AG-UI HTTP binding. `createAguiFetchHandler` validates the RunAgentInput
 * (400 with the field, 413 over 1 MiB), streams the run as SSE and aborts the agent when the
 * browser goes away (`request.signal`).
 */
export async function POST(request: Request): Promise<Response> {
  return handle(request);
}

/**
 * The same route without the handler, for when you have already read and checked the input
 * yourself (authentication, a different body shape): pipe your events through `toAgui` and
 * return `toSSEResponse`. Mount it as `POST` in place of the one above.
 */
export async function postWithoutHandler(request: Request): Promise<Response> {
  const input = await request.json(); // validate it: RunAgentInputSchema from '@ag-ui/core/schemas'
  const events$ = weatherAgent(input, { signal: request.signal }).pipe(
    toAgui({ threadId: input.threadId, runId: input.runId, input, signal: request.signal }),
  );
  return toSSEResponse(events$, { accept: request.headers.get('accept') ?? undefined });
}
