/** Jest runs the specs under spec/ straight from TypeScript (SWC strips types; `tsc` type-checks in `npm test`). */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/spec'],
  testMatch: ['**/*.spec.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  // Sources import siblings with a `.js` suffix, as native ESM needs; jest resolves them to the `.ts` file.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testTimeout: 30000,
  // The specs feed thousands of failing and repaired runs on purpose (fuzz, chaos, bad input): the
  // toolkit's default diagnostics and onError lines would fill the log. Specs that check them spy on
  // the console; `npx jest --silent=false` shows them when debugging.
  silent: true,
};
