import { droppedAnnotation } from '../../../lib/adapters/responsesAnnotations.js';

describe('responsesAnnotations', () => {
  it('should name what an annotation cites in the same words, whatever the order of its fields', () => {
    const said = droppedAnnotation({ url: 'https://tides.example', type: 'url_citation', title: 'Tides', end_index: 9, start_index: 1 }, 'msg_1', 0);
    expect(said).toBe(droppedAnnotation({ type: 'url_citation', end_index: 9, start_index: 1, title: 'Tides', url: 'https://tides.example' }, 'msg_1', 0));
    expect(said).toContain(`dropped a url_citation annotation (title "Tides", url "https://tides.example") on characters 1 to 9 of message 'msg_1' (content part 0): `);
  });

  it('should say what an annotation without type, text fields or place is, and where it was', () => {
    expect(droppedAnnotation({ start_index: 3 }, 'msg_1', 2)).toBe(
      "fromOpenAIResponses dropped an annotation on message 'msg_1' (content part 2): AG-UI has no citation event, so the client gets the text without it. To show citations, pass raw: true and read them from the RAW events (response.output_text.annotation.added, or the output of response.completed), then send them yourself (a CUSTOM event, or links in the text). Later such annotations of this run are dropped without another warning.",
    );
  });
});
