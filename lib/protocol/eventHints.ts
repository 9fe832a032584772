import { EventType } from '@ag-ui/core';

/**
 * What a person most likely meant by an event AG-UI does not describe: the same type written in
 * another case, or a provider's stream event given to the operators without its adapter. Each
 * hint starts with a space, to follow a message; empty when there is none.
 */

// Provider stream event types (from each API's streaming reference), by the adapter that reads them.
const providerTypes: readonly [test: (type: string) => boolean, adapter: string, provider: string][] = [
  [(type) => /^(message_(start|delta|stop)|content_block_(start|delta|stop)|ping)$/.test(type), 'fromAnthropicMessages()', 'an Anthropic Messages'],
  [(type) => type.startsWith('response.'), 'fromOpenAIResponses()', 'an OpenAI Responses'],
  [(type) => /^(text|reasoning|tool-input)-(start|delta|end)$|^(start|finish)-step$|^tool-(call|result|error)$/.test(type), 'fromAiSdkStream()', 'an AI SDK'],
];

const agentTypes = new Set<string>(Object.values(EventType));

/** For an event whose `type` AG-UI does not describe: the AG-UI type it spells in another case, or the adapter that reads it. */
export function hintForUnknownType(type: string): string {
  const spelled = type.toUpperCase().replace(/[-.\s]/g, '_');
  if (spelled !== type && agentTypes.has(spelled)) return ` Did you mean '${spelled}'? AG-UI's event types are written in upper case.`;
  for (const [test, adapter, provider] of providerTypes) {
    if (test(type)) return ` It looks like ${provider} stream event: read the provider's stream with ${adapter} before toAgui.`;
  }
  return '';
}

/** For an event without a string `type`: the adapter that reads it, when it looks like a provider's chunk. */
export function hintForUntyped(event: object): string {
  const fields = event as { object?: unknown; choices?: unknown; event?: unknown };
  // A hint never replaces the error it adds to: a field that throws when read (a hostile getter) gives none.
  try {
    if (fields.object === 'chat.completion.chunk' || Array.isArray(fields.choices)) {
      return ' It looks like an OpenAI Chat Completions chunk: read the provider\'s stream with fromOpenAIChatCompletions() before toAgui.';
    }
    if (typeof fields.event === 'string' && fields.event.startsWith('on_')) return ' It looks like a LangChain stream event: read the stream with fromLangChainStreamEvents() before toAgui.';
  } catch {
    return '';
  }
  return '';
}
