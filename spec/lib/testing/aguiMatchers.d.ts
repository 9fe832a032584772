// Opts the specs into the types of the agui-rx/testing matcher, as docs/testing.md tells users to.
import type { AguiMatchers } from '../../../lib/testing/index.js';

declare global {
  namespace jest {
    interface Matchers<R> extends AguiMatchers<R> {}
  }
}
