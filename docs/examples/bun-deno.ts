/**
 * agui-rx on Bun or Deno: both serve a module whose default export has a `fetch(request)` method.
 *
 *     bun run docs/examples/bun-deno.ts        # Bun: serves on http://localhost:3000 (PORT changes it)
 *     deno serve --allow-net docs/examples/bun-deno.ts   # Deno: http://localhost:8000; import 'npm:agui-rx' there
 *
 * Cloudflare Workers take the same default export. No Bun or Deno types are needed: the handler is a
 * plain Web `Request` → `Response` function. spec/docs/examples.spec.ts serves it with node:http and
 * drives it with the official `HttpAgent`.
 */
import { createAguiFetchHandler } from 'agui-rx';
import { weatherAgent } from './agent.js';

const handle = createAguiFetchHandler(weatherAgent);

export default {
  /** Every request: POST a RunAgentInput, get the run as server-sent events; anything else gets 405. */
  fetch(request: Request): Promise<Response> {
    return handle(request);
  },
};
