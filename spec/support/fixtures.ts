import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Where the shared recorded streams live, beside the project's clone. */
export const fixturesDir = resolve(__dirname, '../../../shared/fixtures');

/** Whether the shared fixtures are present (they are not in a user's own clone). */
export const haveFixtures = existsSync(fixturesDir);

/** The files of one fixture folder with the given suffixes, sorted. */
export function fixtureFiles(folder: string, suffixes: readonly string[]): string[] {
  const dir = join(fixturesDir, folder);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => suffixes.some((suffix) => name.endsWith(suffix)))
    .sort();
}

/**
 * The events of a recorded AG-UI stream (a JSON array, or JSON lines), with the UTF-8 BOM
 * dropped and the recorder's own `_`-prefixed fields stripped.
 */
export function readAguiRecording(folder: string, name: string): Record<string, unknown>[] {
  const text = readFileSync(join(fixturesDir, folder, name), 'utf8').replace(/^\uFEFF/, '');
  const events: Record<string, unknown>[] = name.endsWith('.jsonl')
    ? text.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line))
    : JSON.parse(text);
  return events.map((event) => Object.fromEntries(Object.entries(event).filter(([key]) => !key.startsWith('_'))));
}
