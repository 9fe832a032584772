import { isIndex, type Fields } from './readers.js';

/**
 * The annotations of OpenAI Responses text parts (`url_citation`, `file_citation`,
 * `container_file_citation`, `file_path`): AG-UI has no event for them, so `fromOpenAIResponses`
 * drops them, and reports the first of each type. Not part of the public API.
 */

/**
 * The diagnostic of a dropped annotation: its type, what it cites (its text fields in name order,
 * the same whatever order a server sends them in: `container_id`, `file_id`, `filename`, `title`,
 * `url` …), the text it is on, why it is dropped and what to do instead.
 */
export function droppedAnnotation(annotation: Fields, messageId: string, contentIndex: number): string {
  const type = typeof annotation.type === 'string' && annotation.type !== '' ? `a ${annotation.type} annotation` : 'an annotation';
  const cites = Object.keys(annotation)
    .sort()
    .filter((field) => field !== 'type' && typeof annotation[field] === 'string' && annotation[field] !== '')
    .map((field) => `${field} ${JSON.stringify(annotation[field])}`);
  const { start_index: start, end_index: end, index } = annotation;
  const span = isIndex(start) && isIndex(end) ? `characters ${start} to ${end} of ` : isIndex(index) ? `character ${index} of ` : '';
  return (
    `fromOpenAIResponses dropped ${type}${cites.length === 0 ? '' : ` (${cites.join(', ')})`} on ${span}message '${messageId}' (content part ${contentIndex}): ` +
    'AG-UI has no citation event, so the client gets the text without it. To show citations, pass raw: true and read them from the RAW events ' +
    '(response.output_text.annotation.added, or the output of response.completed), then send them yourself (a CUSTOM event, or links in the text). ' +
    `Later ${typeof annotation.type === 'string' && annotation.type !== '' ? annotation.type : 'such'} annotations of this run are dropped without another warning.`
  );
}
