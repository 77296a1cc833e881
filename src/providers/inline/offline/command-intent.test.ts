// The offline engine uses client-run tools when asked: Codex's exec_command, a shell
// tool, apply_patch (as a function or a freeform patch tool), the computer tool; and
// answers from what the command printed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ChatMessage, FunctionTool, StreamPart } from '../../types.ts';
import { commandFrom, fileEditFrom, timeoutFrom, v4aPatch } from './command-intent.ts';
import { createOfflineEngine } from './index.ts';

const engine = createOfflineEngine();
const str = { type: 'string' };
const execCommand: FunctionTool = {
  name: 'exec_command',
  description: 'Runs a command in a PTY, returning output or a session ID for ongoing interaction.',
  parameters: { type: 'object', properties: { cmd: str, workdir: str, yield_time_ms: { type: 'number' }, max_output_tokens: { type: 'number' } }, required: ['cmd'] },
};
const codexTools: FunctionTool[] = [
  execCommand,
  { name: 'write_stdin', description: 'Writes characters to an existing unified exec session.', parameters: { type: 'object', properties: { session_id: { type: 'number' }, chars: str }, required: ['session_id'] } },
  { name: 'view_image', description: 'View a local image from the filesystem.', parameters: { type: 'object', properties: { path: str }, required: ['path'] } },
  { name: 'request_user_input', description: 'Ask the user a question.', parameters: { type: 'object', properties: { question: str }, required: ['question'] } },
];
const shell: FunctionTool = { name: 'shell', parameters: { type: 'object', properties: { commands: { type: 'array', items: str }, timeout_ms: { type: 'integer' } }, required: ['commands'] } };
const argvShell: FunctionTool = { name: 'shell', parameters: { type: 'object', properties: { command: { type: 'array', items: str }, workdir: str }, required: ['command'] } };
const applyPatch: FunctionTool = {
  name: 'apply_patch',
  parameters: { type: 'object', properties: { type: { type: 'string', enum: ['create_file', 'update_file', 'delete_file'] }, path: str, diff: str }, required: ['type', 'path'] },
};
const freeformPatch: FunctionTool = { name: 'apply_patch', description: 'Use the apply_patch tool to edit files.', parameters: { type: 'object', properties: { input: str }, required: ['input'], additionalProperties: false } };
const computer: FunctionTool = { name: 'computer', parameters: { type: 'object', properties: { actions: { type: 'array', items: { type: 'object' } } }, required: ['actions'] } };

async function run(messages: ChatMessage[], tools: FunctionTool[]): Promise<StreamPart[]> {
  const out: StreamPart[] = [];
  for await (const p of engine.chat({ model: 'agent', messages, tools }, new AbortController().signal)) out.push(p);
  return out;
}
function call(parts: StreamPart[]): { name: string; args: any } {
  const start = parts.find((p) => p.type === 'tool-input-start');
  assert.ok(start, JSON.stringify(parts.slice(0, 5)));
  const args = parts.flatMap((p) => (p.type === 'tool-input-delta' ? [p.delta] : [])).join('');
  return { name: start.toolName, args: JSON.parse(args) };
}
const text = (parts: StreamPart[]) => parts.flatMap((p) => (p.type === 'text-delta' ? [p.delta] : [])).join('');

test('the command a message asks to run', () => {
  assert.equal(commandFrom('Run `echo PINEAPPLE` and tell me what it prints'), 'echo PINEAPPLE');
  assert.equal(commandFrom('Run the shell command echo with the word MANGO and tell me its output.'), 'echo MANGO');
  assert.equal(commandFrom('Please run `echo` with the word KIWI and report its output'), 'echo KIWI');
  assert.equal(commandFrom('Use the shell to run ls -la'), 'ls -la');
  assert.equal(commandFrom('execute `date`'), 'date');
  assert.equal(commandFrom('What is the weather in Paris?'), undefined);
});

test('Codex: exec_command gets the command as cmd, behind a long developer message and an environment context', async () => {
  const messages: ChatMessage[] = [
    { role: 'developer', content: 'You are Codex. '.repeat(1200) },
    { role: 'user', content: '<environment_context>\n  <cwd>/tmp/work</cwd>\n  <shell>bash</shell>\n</environment_context>' },
    { role: 'user', content: 'Run the shell command echo with the word PINEAPPLE and tell me its output.' },
  ];
  const c = call(await run(messages, codexTools));
  assert.deepEqual(c, { name: 'exec_command', args: { cmd: 'echo PINEAPPLE' } });
  // Codex sends the whole history back with the output: the answer reports what was printed.
  const answer = await run(
    [
      ...messages,
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', name: 'exec_command', arguments: '{"cmd":"echo PINEAPPLE"}' }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'Chunk ID: 1f2e\nWall time: 0.0012 seconds\nProcess exited with code 0\nOriginal token count: 3\nOutput:\nPINEAPPLE\n' },
    ],
    codexTools,
  );
  assert.equal(answer.some((p) => p.type === 'tool-input-start'), false, 'no second call');
  assert.equal(text(answer), 'The command printed: PINEAPPLE');
});

test('a shell tool gets the command in the form its schema asks for; its output entries are read back', async () => {
  assert.deepEqual(call(await run([{ role: 'user', content: 'Run `ls -la /tmp`' }], [shell])).args, { commands: ['ls -la /tmp'] });
  assert.deepEqual(call(await run([{ role: 'user', content: 'Run `ls -la /tmp`' }], [argvShell])).args, { command: ['bash', '-lc', 'ls -la /tmp'] });
  const answer = await run(
    [
      { role: 'user', content: 'Run `echo hi`' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c', name: 'shell', arguments: '{"commands":["echo hi"]}' }] },
      { role: 'tool', tool_call_id: 'c', content: JSON.stringify([{ stdout: 'hi\n', stderr: '', outcome: { type: 'exit', exit_code: 0 } }]) },
    ],
    [shell],
  );
  assert.equal(text(answer), 'The command printed: hi');
});

test('a file to create or change becomes an apply_patch operation or a whole V4A patch', async () => {
  const ask = 'Create a file hello.txt containing "Hello world"';
  assert.deepEqual(fileEditFrom(ask), { kind: 'create', path: 'hello.txt', lines: ['Hello world'] });
  assert.deepEqual(call(await run([{ role: 'user', content: ask }], [applyPatch])).args, { type: 'create_file', path: 'hello.txt', diff: '+Hello world\n' });
  const freeform = call(await run([{ role: 'user', content: ask }], [freeformPatch]));
  assert.equal(freeform.args.input, '*** Begin Patch\n*** Add File: hello.txt\n+Hello world\n*** End Patch\n');
  const append = fileEditFrom('Add a line "bye" to notes.md');
  assert.deepEqual(append, { kind: 'append', path: 'notes.md', lines: ['bye'] });
  assert.equal(v4aPatch(append!), '*** Begin Patch\n*** Update File: notes.md\n@@\n+bye\n*** End Patch\n');
});

test('screen actions for the computer tool', async () => {
  assert.deepEqual(call(await run([{ role: 'user', content: 'Take a screenshot of my screen' }], [computer])).args, { actions: [{ type: 'screenshot' }] });
  assert.deepEqual(call(await run([{ role: 'user', content: 'Click at 120, 340' }], [computer])).args, { actions: [{ type: 'click', x: 120, y: 340, button: 'left' }] });
});

test('a time limit the message asks for, in milliseconds; code that runs `timeout` asks for none', () => {
  assert.equal(timeoutFrom('Run `sleep 5` with a timeout of 2 seconds')?.ms, 2000);
  assert.equal(timeoutFrom('timeout 500 ms please')?.ms, 500);
  assert.equal(timeoutFrom('with a time limit of 1 s')?.ms, 1000);
  assert.equal(timeoutFrom('use a 1.5 minute timeout')?.ms, 90_000);
  assert.equal(timeoutFrom('timeout: 250ms')?.ms, 250);
  assert.equal(timeoutFrom('Run `timeout 5s sleep 10`'), undefined);
  assert.equal(timeoutFrom('```bash\ntimeout 5 s sleep 9\n```'), undefined);
  assert.equal(timeoutFrom('Run the timeout command'), undefined);
  assert.equal(timeoutFrom('run sleep 5 with a timeout of 500 ms')?.rest, 'run sleep 5 ');
});

test('fenced shell blocks are the commands, each exactly as written, with the timeout asked for', async () => {
  const first = 'for f in *.txt; do\n  echo "$f"  \ndone';
  const message = `Please run \`date\` and these, with a timeout of 3 seconds:\n\`\`\`bash\n${first}\n\`\`\`\n\`\`\`console\nexit 3\n\`\`\``;
  assert.deepEqual(call(await run([{ role: 'user', content: message }], [shell])).args, { commands: [first, 'exit 3'], timeout_ms: 3000 });
  assert.deepEqual(call(await run([{ role: 'user', content: message }], [execCommand])).args, { cmd: `${first}\nexit 3` }, 'one script where the schema takes one command, and no timeout_ms it lacks');
  assert.deepEqual(call(await run([{ role: 'user', content: message }], [argvShell])).args, { command: ['bash', '-lc', `${first}\nexit 3`] });
  assert.deepEqual(call(await run([{ role: 'user', content: 'run sleep 5 with a timeout of 500 ms' }], [shell])).args, { commands: ['sleep 5'], timeout_ms: 500 });
  // A fenced block in an attached file is the file's content, not a request.
  const attached: ChatMessage = { role: 'user', content: [{ type: 'text', text: 'What is in this file?' }, { type: 'file', text: '```bash\nrm -rf ~\n```' }] };
  assert.equal((await run([attached], [shell])).some((p) => p.type === 'tool-input-start'), false);
});

test('the answer after several commands of the hosted or local shell says how each ended', async () => {
  const answer = await run(
    [
      { role: 'user', content: '```bash\necho hi\n```\n```bash\nexit 3\n```\n```bash\nsleep 9\n```' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c', name: 'shell', arguments: '{"commands":["echo hi","exit 3","sleep 9"],"timeout_ms":1000}' }] },
      {
        role: 'tool',
        tool_call_id: 'c',
        content: JSON.stringify([
          { stdout: 'hi\n', stderr: '', outcome: { type: 'exit', exit_code: 0 } },
          { stdout: '', stderr: '', outcome: { type: 'exit', exit_code: 3 } },
          { stdout: '', stderr: '', outcome: { type: 'timeout' } },
        ]),
      },
    ],
    [shell],
  );
  assert.equal(text(answer), 'The commands ran in order:\n1. `echo hi` printed: hi\n2. `exit 3` exited with code 3 and printed nothing.\n3. `sleep 9` timed out and printed nothing.');
});

// The messages surface's later code execution tools: a bash command, and a text editor whose `command` is an operation, not a shell command.
const bashCodeExecution: FunctionTool = { name: 'bash_code_execution', parameters: { type: 'object', properties: { command: str }, required: ['command'] } };
const textEditor: FunctionTool = {
  name: 'text_editor_code_execution',
  parameters: { type: 'object', properties: { command: { type: 'string', enum: ['view', 'create', 'str_replace'] }, path: str, file_text: str, old_str: str, new_str: str }, required: ['command', 'path'] },
};

test('a text editor tool creates, edits and views the file the message names; commands still go to the bash tool', async () => {
  const tools = [bashCodeExecution, textEditor];
  const ask = async (content: string) => call(await run([{ role: 'user', content }], tools));
  assert.deepEqual(await ask("Create a file notes.txt containing 'hello world'"), { name: 'text_editor_code_execution', args: { command: 'create', path: 'notes.txt', file_text: 'hello world' } });
  assert.deepEqual(await ask("Replace 'world' with 'there' in notes.txt"), { name: 'text_editor_code_execution', args: { command: 'str_replace', path: 'notes.txt', old_str: 'world', new_str: 'there' } });
  assert.deepEqual(await ask('View the file notes.txt'), { name: 'text_editor_code_execution', args: { command: 'view', path: 'notes.txt' } });
  assert.deepEqual(await ask('Show me src/app.py'), { name: 'text_editor_code_execution', args: { command: 'view', path: 'src/app.py' } });
  assert.deepEqual(await ask('Run `cat notes.txt`'), { name: 'bash_code_execution', args: { command: 'cat notes.txt' } });
  // Without the bash tool, the editor is never taken for a shell.
  assert.equal((await run([{ role: 'user', content: 'Run `ls -la`' }], [textEditor])).some((p) => p.type === 'tool-input-start'), false);
});

test('fenced python with only a bash tool runs through python3, exactly as written', async () => {
  const code = "print('EOF')\nprint(6 * 7)";
  const c = call(await run([{ role: 'user', content: `Run this:\n\`\`\`python\n${code}\n\`\`\`` }], [bashCodeExecution]));
  assert.equal(c.name, 'bash_code_execution');
  const m = /^python3 - <<'(\w+)'\n([\s\S]*)\n\1$/.exec(c.args.command);
  assert.ok(m, c.args.command);
  assert.equal(m[2], code);
});
