// `npm start`: compiles src/ to plain JavaScript once per change of the sources
// (scripts/build.mjs, well under a second) and runs that. Where the checkout cannot be
// written, the sources run through tsx instead, as the tests run them.
import { pathToFileURL } from 'node:url';
import { buildOnce } from './build.mjs';

let main;
try {
  main = await buildOnce();
} catch (err) {
  console.error(`agent-api: could not compile src/ into .build/ (${err instanceof Error ? err.message : String(err)}); running the sources through tsx`);
}
if (main) {
  await import(pathToFileURL(main).href);
} else {
  (await import('tsx/esm/api')).register();
  await import('../src/main.ts');
}
