import { annotationKey, droppedAnnotation } from '../../../lib/adapters/responsesAnnotations.js';

describe('responsesAnnotations', () => {
  it('should know an annotation by what it says, whatever the order of its fields', () => {
    const url = { type: 'url_citation', url: 'https://tides.example', title: 'Tides', start_index: 1, end_index: 9 };
    expect(annotationKey({ end_index: 9, start_index: 1, title: 'Tides', url: 'https://tides.example', type: 'url_citation' })).toBe(annotationKey(url));
    expect(annotationKey({ nested: { b: [1, { d: 2, c: 3 }], a: null } })).toBe(annotationKey({ nested: { a: null, b: [1, { c: 3, d: 2 }] } }));
  });

  it('should tell apart annotations that say something else: another place, source or type', () => {
    const url = { type: 'url_citation', url: 'https://tides.example', title: 'Tides', start_index: 1, end_index: 9 };
    const keys = [url, { ...url, end_index: 10 }, { ...url, url: 'https://other.example' }, { ...url, type: 'file_citation' }, { ...url, title: undefined }, { ...url, extra: [1] }, { ...url, extra: ['1'] }].map(annotationKey);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('should name what an annotation cites in the same words, whatever the order of its fields', () => {
    const said = droppedAnnotation({ url: 'https://tides.example', type: 'url_citation', title: 'Tides', end_index: 9, start_index: 1 }, 'msg_1', 0);
    expect(said).toBe(droppedAnnotation({ type: 'url_citation', end_index: 9, start_index: 1, title: 'Tides', url: 'https://tides.example' }, 'msg_1', 0));
    expect(said).toContain(`dropped a url_citation annotation (title "Tides", url "https://tides.example") on characters 1 to 9 of message 'msg_1' (content part 0): `);
  });

  it('should say what an annotation without type, text fields or place is, and where it was', () => {
    expect(droppedAnnotation({ start_index: 3 }, 'msg_1', 2)).toBe(
      "fromOpenAIResponses dropped an annotation on message 'msg_1' (content part 2): AG-UI has no citation event, so the client gets the text without it. To show citations, pass raw: true and read them from the RAW events (response.output_text.annotation.added, or the output of response.completed), then send them yourself (a CUSTOM event, or links in the text).",
    );
  });
});
