// Compiles src/ to plain JavaScript for `npm start`: one output file per source file
// (worker entries stay where their pools look for them), relative `.ts` imports
// rewritten to `.js`. Running compiled code instead of loading through tsx spares every
// request the loader's wrappers (esbuild's keepNames makes a defineProperty call for
// each closure created) and costs well under a second here.
//
// The output goes to .build/<hash of the sources>/: a start whose sources are unchanged
// reuses it, and two starts building at once each write their own temporary folder and
// the first rename wins, so neither ever runs a half-written tree.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const src = path.join(root, 'src');
const outRoot = path.join(root, '.build');

function sourceFiles(dir) {
  const found = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...sourceFiles(full));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.test-support.ts') && !entry.name.endsWith('.d.ts')) found.push(full);
  }
  return found.sort();
}

/** Builds (or finds) the compiled tree; returns the path of its main.js. */
export async function buildOnce() {
  const files = sourceFiles(src);
  const hash = createHash('sha256');
  for (const file of files) hash.update(path.relative(src, file)).update('\0').update(fs.readFileSync(file)).update('\0');
  const dir = path.join(outRoot, hash.digest('hex').slice(0, 16));
  const main = path.join(dir, 'main.js');
  if (fs.existsSync(main)) return main;
  fs.mkdirSync(outRoot, { recursive: true });
  const temp = fs.mkdtempSync(path.join(outRoot, 'tmp-'));
  try {
    const esbuild = await import('esbuild'); // only when there is something to build
    await esbuild.build({
      entryPoints: files,
      outdir: temp,
      outbase: src,
      bundle: true, // with every import external (below): one file per source, imports resolved by the plugin
      platform: 'node',
      format: 'esm',
      target: 'node20',
      sourcemap: 'linked',
      logLevel: 'warning',
      plugins: [
        {
          name: 'relative-ts-to-js',
          setup(b) {
            b.onResolve({ filter: /.*/ }, (args) => {
              if (args.kind === 'entry-point') return undefined;
              return { path: args.path.startsWith('.') ? args.path.replace(/\.ts$/, '.js') : args.path, external: true };
            });
          },
        },
      ],
    });
    await esbuild.stop(); // its service process is of no further use to a server
    // A package.json beside the output so Node reads the .js files as ES modules.
    fs.writeFileSync(path.join(temp, 'package.json'), '{"type":"module"}\n');
    try {
      fs.renameSync(temp, dir);
    } catch (err) {
      if (!fs.existsSync(main)) throw err; // another start finished the same tree first
      fs.rmSync(temp, { recursive: true, force: true });
    }
  } catch (err) {
    fs.rmSync(temp, { recursive: true, force: true });
    throw err;
  }
  // Older trees are of no further use; keep the one just made (another start may be
  // running an older one: its files are already loaded, apart from workers it may yet
  // start, so only trees older than a day are removed).
  const dayAgo = Date.now() - 86_400_000;
  for (const name of fs.readdirSync(outRoot)) {
    const full = path.join(outRoot, name);
    if (full !== dir && fs.statSync(full).mtimeMs < dayAgo) fs.rmSync(full, { recursive: true, force: true });
  }
  return main;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  console.log(await buildOnce());
}
