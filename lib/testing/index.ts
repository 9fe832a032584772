/**
 * agui-rx/testing: helpers to test an AG-UI pipeline (`import … from 'agui-rx/testing'`).
 *
 * - {@link aguiMarbles}: event factories with deterministic ids for RxJS `TestScheduler` marble tests;
 * - {@link expectAgui} and the jest matcher {@link toBeWellFormedAgui}: is a stream well-formed AG-UI?
 * - {@link runWithOfficialClient}: what the official `@ag-ui/client` builds from a stream
 *   (`@ag-ui/client` is an optional peer dependency, loaded only by this function).
 *
 * Nothing here imports a test framework: the module loads under jest, Vitest, `node:test` or none.
 *
 * @packageDocumentation
 */
export {
  aguiMarbles,
  sequentialIds,
  type AguiMarbles,
  type AguiMarblesOptions,
  type AguiMarblesRunOptions,
  type EventFields,
  type ReasoningMarbles,
  type TextMarbles,
  type ToolCallMarbles,
} from './aguiMarbles.js';
export { AguiStreamError, checkAguiStream, expectAgui, type AguiEventsInput, type AguiExpectation, type AguiStreamCheck } from './expectAgui.js';
export { toBeWellFormedAgui, type AguiMatcherContext, type AguiMatcherResult, type AguiMatchers } from './toBeWellFormedAgui.js';
export { runWithOfficialClient, type OfficialClientRun, type RunWithOfficialClientOptions } from './runWithOfficialClient.js';
