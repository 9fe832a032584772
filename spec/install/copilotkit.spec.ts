import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createTempProject, itWithRegistry, registryReachable, type TempProject } from '../support/install.js';

// Pinned, so that CI installs the same tree every time; docs/versions.md names them.
const COPILOTKIT_RUNTIME = '1.75.0';
const COPILOTKIT_CLIENT = '0.0.59'; // the exact @ag-ui/client @copilotkit/runtime 1.75.0 depends on

const online = registryReachable();
const itOnline = itWithRegistry(online, `agui-rx next to @copilotkit/runtime@${COPILOTKIT_RUNTIME}`);

const app = `
import { CopilotRuntime } from '@copilotkit/runtime';
import { EventType } from '@ag-ui/core';
import { toAgui, type AguiAgent } from 'agui-rx';
import { InProcessAgent, ResumableHttpAgent } from 'agui-rx/client';
import { of } from 'rxjs';

const hello: AguiAgent = () => of({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Hi' });
const runtime = new CopilotRuntime({
  agents: {
    inProcess: new InProcessAgent(hello, { capabilities: { tools: { supported: true } } }),
    remote: new ResumableHttpAgent({ url: 'https://example.com/agent' }),
  },
});
const events = of({ type: EventType.TEXT_MESSAGE_CHUNK, delta: 'Hi' } as const).pipe(toAgui({ threadId: 't', runId: 'r' }));
export { runtime, events };
`;

const run = `
const { InProcessAgent } = require('agui-rx/client');
const { of } = require('rxjs');
const agent = new InProcessAgent(() => of({ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta: 'Hi' }), { threadId: 't' });
agent.runAgent().then(() => console.log(require('@ag-ui/client/package.json').version, JSON.stringify(agent.messages)));
`;

describe('agui-rx next to CopilotKit', () => {
  let project: TempProject | undefined;
  beforeAll(() => {
    if (online) {
      project = createTempProject({ '@copilotkit/runtime': COPILOTKIT_RUNTIME, '@ag-ui/client': COPILOTKIT_CLIENT, rxjs: '7.8.2', '@types/node': '20.19.43' });
    }
  }, 600_000);
  afterAll(() => project?.remove());

  itOnline(`should install next to @copilotkit/runtime ${COPILOTKIT_RUNTIME} with its @ag-ui/client ${COPILOTKIT_CLIENT}, one copy of the client`, () => {
    // A peer range without 0.0.59 fails this install with ERESOLVE (createTempProject throws).
    const nested = ['@copilotkit/runtime', 'agui-rx'].filter((name) => existsSync(join(project!.dir, 'node_modules', name, 'node_modules', '@ag-ui', 'client')));
    expect(nested).toEqual([]);
  });

  itOnline("should type-check a CopilotRuntime whose agents are agui-rx's InProcessAgent and ResumableHttpAgent", () => {
    expect(project!.typecheck({ 'app.ts': app })).toBe('');
  }, 120_000);

  itOnline(`should run an InProcessAgent with @ag-ui/client ${COPILOTKIT_CLIENT}, from require() and import`, () => {
    const expected = `${COPILOTKIT_CLIENT} [{"id":"m1","role":"assistant","content":"Hi"}]`;
    expect(project!.node(['-e', run])).toBe(expected);
    const esm = run.replace("const { InProcessAgent } = require('agui-rx/client');\nconst { of } = require('rxjs');", "import { InProcessAgent } from 'agui-rx/client';\nimport { of } from 'rxjs';\nimport { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);");
    expect(project!.node(['--input-type=module', '-e', esm])).toBe(expected);
  }, 60_000);
});
