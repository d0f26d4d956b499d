// Helpers to build and run the browsertask binary as a black box: over
// Streamable HTTP (`browsertask serve`) and over stdio (`browsertask mcp`).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

// Flags every test daemon gets: the browserless dev_echo template, fast
// task polling, and a run TTL below the ttl the tests request, so the
// granted ttl is the requested one.
export const baseFlags = ['--dev-templates', '--task-poll-interval-ms', '200', '--run-ttl-ms', '30000', '--log-level', 'info'];

let builtBinary;

// binary returns the path of the binary under test: BROWSERTASK_BIN, or a
// fresh `go build` of the repository into a temporary directory.
export function binary() {
  if (process.env.BROWSERTASK_BIN) return process.env.BROWSERTASK_BIN;
  if (!builtBinary) {
    const dir = mkdtempSync(path.join(tmpdir(), 'browsertask-e2e-bin-'));
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    const bin = path.join(dir, 'browsertask');
    execFileSync('go', ['build', '-o', bin, '.'], { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'] });
    builtBinary = bin;
  }
  return builtBinary;
}

// scratchDir makes a temporary directory removed when the process exits.
export function scratchDir(prefix = 'browsertask-e2e-') {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// startServe runs `browsertask serve` on a free loopback port and resolves
// once it prints its MCP URL. stop(signal) ends it and waits for the exit.
export async function startServe({ db, flags = [] }) {
  const proc = spawn(binary(), ['serve', '--addr', '127.0.0.1:0', '--db', db, ...baseFlags, ...flags], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env },
  });
  let log = '';
  const exited = new Promise(resolve => proc.on('exit', (code, signal) => resolve({ code, signal })));
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`browsertask serve did not start:\n${log}`)), 30000);
    proc.stderr.on('data', chunk => {
      log += chunk;
      const m = /listening: MCP (http:\/\/\S+\/mcp)/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    proc.on('exit', code => {
      clearTimeout(timer);
      reject(new Error(`browsertask serve exited with ${code}:\n${log}`));
    });
    proc.on('error', err => {
      clearTimeout(timer);
      reject(err);
    });
  });
  return {
    url,
    proc,
    log: () => log,
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      const timer = setTimeout(() => proc.kill('SIGKILL'), 20000);
      const res = await exited;
      clearTimeout(timer);
      return res;
    },
  };
}

// newClient returns an SDK client (Tasks support is built into the SDK's
// client: client.experimental.tasks).
function newClient() {
  return new Client({ name: 'browsertask-e2e', version: '1.0.0' }, { capabilities: {} });
}

// connectHTTP connects a new client session to a running daemon.
export async function connectHTTP(url) {
  const client = newClient();
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

// connectStdio starts `browsertask mcp` over stdio on db and connects.
export async function connectStdio({ db, flags = [] }) {
  const client = newClient();
  const transport = new StdioClientTransport({
    command: binary(),
    args: ['mcp', '--db', db, '--http=off', ...baseFlags, ...flags],
    stderr: 'pipe',
    env: { ...process.env },
  });
  let log = '';
  transport.stderr?.on('data', chunk => { log += chunk; });
  await client.connect(transport);
  client.daemonLog = () => log;
  return client;
}

// connectV2 connects the TypeScript SDK v2 client (@modelcontextprotocol/client)
// to a running daemon (url) or to `browsertask mcp` over stdio (db, flags),
// with versionNegotiation mode: {pin: '2026-07-28'}, 'auto' or 'legacy'; and
// wraps it in an @modelcontextprotocol/ext-tasks session (endpointId names
// the server for serialized task references). The SDK's 2026-07-28 result
// decoder rejects resultType "task", so ext-tasks needs a raw request path
// beside the client (its rawDispatch option): raw() sends one JSON-RPC request
// on the client's transport (the HTTP transport derives MCP-Protocol-Version,
// Mcp-Method and Mcp-Name from the body) and answers {kind: 'result', result}
// or {kind: 'error', error}. onInputRequest (optional) answers a task's
// input requests (ext-tasks delivers the answer with tasks/update);
// capabilities (optional) are the client capabilities it declares, on
// every request (e.g. {sampling: {}}). sent lists
// every message the client wrote;
// exchanges every raw request with its response.
export async function connectV2({ url, db, flags = [], mode = { pin: '2026-07-28' }, endpointId = 'browsertask-e2e', onInputRequest, capabilities = {} }) {
  const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
  const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
  const { createTaskSessionFromClient } = await import('@modelcontextprotocol/ext-tasks/client');
  const clientInfo = { name: 'browsertask-e2e-v2', version: '1.0.0' };
  const client = new Client(clientInfo, { capabilities, versionNegotiation: { mode } });
  let log = '';
  let transport;
  if (url) {
    transport = new StreamableHTTPClientTransport(new URL(url));
  } else {
    transport = new StdioClientTransport({
      command: binary(),
      args: ['mcp', '--db', db, '--http=off', ...baseFlags, ...flags],
      stderr: 'pipe',
      env: { ...process.env },
    });
    transport.stderr?.on('data', chunk => { log += chunk; });
  }
  const sent = [];
  const send = transport.send.bind(transport);
  transport.send = (message, options) => { sent.push(structuredClone(message)); return send(message, options); };
  await client.connect(transport);

  const pending = new Map();
  const exchanges = [];
  let next = 0;
  const onmessage = transport.onmessage;
  transport.onmessage = (msg, extra) => {
    if (msg && typeof msg.id === 'string' && pending.has(msg.id) && !('method' in msg)) {
      const settle = pending.get(msg.id);
      pending.delete(msg.id);
      settle(msg.error ? { kind: 'error', error: msg.error } : { kind: 'result', result: msg.result });
      return;
    }
    onmessage?.(msg, extra);
  };
  const raw = async (request, options = {}) => {
    const id = `e2e-raw-${++next}`;
    const message = { ...request, jsonrpc: '2.0', id };
    const answer = new Promise((resolve, reject) => {
      pending.set(id, resolve);
      options.signal?.addEventListener('abort', () => { pending.delete(id); reject(options.signal.reason); }, { once: true });
    });
    const headers = options.context?.headers ?? options.headers;
    let httpStatus;
    try {
      await transport.send(message, headers ? { headers } : undefined);
    } catch (err) {
      // The SDK's HTTP transport hands over a JSON-RPC error body only with
      // HTTP 400; 2026-07-28 answers e.g. -32601 with HTTP 404.
      let body;
      try { body = JSON.parse(err?.data?.text); } catch { /* not JSON-RPC */ }
      if (body?.id !== id || !body.error) { pending.delete(id); throw err; }
      pending.delete(id);
      httpStatus = err.data.status;
      const response = { kind: 'error', error: body.error };
      exchanges.push({ request: message, headers: headers ?? {}, response, httpStatus });
      return response;
    }
    const response = await answer;
    exchanges.push({ request: message, headers: headers ?? {}, response, httpStatus });
    return response;
  };
  const modern = client.getProtocolEra() === 'modern';
  const session = createTaskSessionFromClient(client, {
    endpointId,
    ...(onInputRequest ? { onInputRequest } : {}),
    ...(modern ? {
      rawDispatch: raw,
      v2RequestFraming: { protocolVersion: client.getNegotiatedProtocolVersion(), clientInfo, clientCapabilities: capabilities },
    } : {}),
  });
  return {
    client,
    transport,
    session,
    raw,
    sent,
    exchanges,
    modern,
    daemonLog: () => log,
    async close() {
      await session.close().catch(() => {});
      await client.close().catch(() => {});
    },
  };
}
