#!/usr/bin/env node
// The package's command line: `node bin/agent-api.js <command>` (or `npm run -s cli -- <command>`). Loads the TypeScript sources
// through tsx, as `npm start` does.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
