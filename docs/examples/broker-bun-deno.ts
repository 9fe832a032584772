/**
 * agui-rx on Bun or Deno with a run broker: a module whose default export has a `fetch(request)`
 * method, serving the broker's four routes under /agent (404 elsewhere).
 *
 *     bun run docs/examples/broker-bun-deno.ts                  # or: Bun.serve({ fetch: handle })
 *     deno serve --allow-net docs/examples/broker-bun-deno.ts   # or: Deno.serve(handle); import 'npm:agui-rx' there
 *
 * The process must live on after a response ends, for detached runs to finish: a server, not an
 * edge function that stops with its response.
 */
import { createAguiFetchHandler, createRunBroker } from 'agui-rx';
import { weatherAgent } from './agent.js';
import { authorizeBySession } from './broker-auth.js';

const broker = createRunBroker({ authorize: authorizeBySession });
const handle = createAguiFetchHandler(weatherAgent, { broker, basePath: '/agent' });

export default {
  /** POST /agent, GET /agent/threads/…/events, POST /agent/connect, POST /agent/threads/…/stop. */
  fetch(request: Request): Promise<Response> {
    return handle(request);
  },
};
