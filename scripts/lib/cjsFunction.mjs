// The banner and footer that make a bundle's text one function of CommonJS's five arguments, shared by the
// bundles the bin compiles with V8's code cache (scripts/build-light.mjs, scripts/build-probe.mjs;
// packages/cli/src/entry.ts, loadLightBundle). The bin compiles the text as it reads it (`new vm.Script`)
// and calls the function it evaluates to, with no wrapped copy to build; `require()` (the --debug path)
// still runs it: inside Node's own wrapper `arguments` is the module's, at a script's top level it is absent.

/** The arguments Node's CommonJS loader gives a module, in its order. */
const CJS_ARGUMENTS = 'exports, require, module, __filename, __dirname';

/**
 * The bundle's first line: the function's head, strict mode (as the ES modules it is made from were: the
 * directive must come first in the function's body), then `prelude` (one line of JavaScript).
 */
export function cjsFunctionBanner(prelude) {
  return `(f=>typeof arguments=='object'?f.apply(this,arguments):f)(function(${CJS_ARGUMENTS}){'use strict';${prelude}`;
}

/** The bundle's last line: the function's end. */
export const CJS_FUNCTION_FOOTER = '});';
