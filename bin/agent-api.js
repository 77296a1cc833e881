#!/usr/bin/env node
// The package's command line: `npx agent-api <command>`. Loads the TypeScript sources
// through tsx, as `npm start` does.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
