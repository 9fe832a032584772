// The conversation history a request of the serving items may carry (a client posts its whole
// conversation with each run): `n` messages, user and assistant in turn, about 300 characters each.
export const historyOf = (n) =>
  Array.from({ length: n }, (_, i) => ({ id: `h${i}`, role: i % 2 === 0 ? 'user' : 'assistant', content: `Message ${i} of the conversation: ${'the quick brown fox jumps over the lazy dog, '.repeat(6)}` }));
