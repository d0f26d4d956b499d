// Run a browsertask template as a 2026-07-28 task from TypeScript SDK v2
// (@modelcontextprotocol/client 2.4) with @modelcontextprotocol/ext-tasks
// 0.2.2, over stdio.
//
//   npm install @modelcontextprotocol/client@2.4.0 @modelcontextprotocol/ext-tasks@0.2.2
//   node ext-tasks-client.mjs https://example.com/ https://example.org/
//
// BROWSERTASK_BIN names the binary (default: browsertask on PATH);
// BROWSERTASK_ARGS adds flags to `browsertask mcp` (e.g. "--db /tmp/bt.db").
//
// The quirk: SDK v2's client decodes every 2026-07-28 result with its own
// schemas, and a tool call the server turns into a task answers with
// resultType "task", which that decoder rejects. ext-tasks therefore sends
// its requests on a raw path beside the client (options.rawDispatch: one
// JSON-RPC request in, {kind: 'result', result} or {kind: 'error', error}
// out) and frames them itself (options.v2RequestFraming: the negotiated
// protocol version, clientInfo and capabilities it puts in each request's
// _meta). Without both, createTaskSessionFromClient throws "requires
// options.rawDispatch and options.v2RequestFraming". rawDispatch below is
// those few lines: it writes on the client's transport and takes the
// answers to its own ids before the client sees them.
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { createTaskSessionFromClient } from '@modelcontextprotocol/ext-tasks/client';

const urls = process.argv.slice(2);
if (urls.length === 0) {
  console.error('usage: node ext-tasks-client.mjs URL...');
  process.exit(2);
}

const clientInfo = { name: 'ext-tasks-example', version: '1.0.0' };
const capabilities = {};
const client = new Client(clientInfo, { capabilities, versionNegotiation: { mode: { pin: '2026-07-28' } } });
const transport = new StdioClientTransport({
  command: process.env.BROWSERTASK_BIN ?? 'browsertask',
  args: ['mcp', '--http=off', ...(process.env.BROWSERTASK_ARGS ?? '').split(' ').filter(Boolean)],
});
await client.connect(transport);

// rawDispatch: answers to our own request ids never reach the client.
const pending = new Map();
let lastId = 0;
const clientOnMessage = transport.onmessage;
transport.onmessage = (message, extra) => {
  const settle = typeof message?.id === 'string' && !('method' in message) && pending.get(message.id);
  if (!settle) return clientOnMessage?.(message, extra);
  pending.delete(message.id);
  settle(message.error ? { kind: 'error', error: message.error } : { kind: 'result', result: message.result });
};
const rawDispatch = (request, options = {}) => new Promise((resolve, reject) => {
  const id = `raw-${++lastId}`;
  pending.set(id, resolve);
  options.signal?.addEventListener('abort', () => { pending.delete(id); reject(options.signal.reason); }, { once: true });
  transport.send({ ...request, jsonrpc: '2.0', id }).catch(err => { pending.delete(id); reject(err); });
});

const session = createTaskSessionFromClient(client, {
  endpointId: 'browsertask',
  rawDispatch,
  v2RequestFraming: { protocolVersion: client.getNegotiatedProtocolVersion(), clientInfo, clientCapabilities: capabilities },
});

try {
  // options.mode "async" makes the run a task at once.
  const execution = await session.callTool('run_task_template',
    { templateId: 'batch_extract_pages', inputs: { urls }, options: { mode: 'async' } },
    { task: { preference: 'require' } });
  console.error(`task ${execution.handle.taskId} started`);
  const { outcome } = await execution.settle();
  if (outcome.status !== 'completed') throw new Error(`task ${outcome.status}: ${outcome.error?.message ?? ''}`);
  const run = outcome.result.structuredContent;
  console.log(JSON.stringify({ runId: run.runId, status: run.status, summary: run.result.summary }));
} finally {
  await session.close().catch(() => {});
  await client.close().catch(() => {});
}
