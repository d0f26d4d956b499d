// MCP 2026-07-28 and the Tasks extension (io.modelcontextprotocol/tasks)
// through the official TypeScript SDK v2 client (@modelcontextprotocol/client
// 2.4.0) and @modelcontextprotocol/ext-tasks 0.2.2, against the built binary
// over Streamable HTTP and stdio; the same client in 'auto' and 'legacy'
// (2025-11-25 Tasks) negotiation; a task across kill -9; and the MCP
// Inspector 2.12 CLI (issue 10, acceptance 2).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';

import { baseFlags, binary, connectV2, scratchDir, startServe } from '../lib/daemon.js';
import { startFixture } from '../lib/fixture.js';
import { waitFor } from '../lib/assertions.js';
import { runInspector } from '../lib/inspector.js';

const chromiumMissing = !process.env.CI && !existsSync('/usr/bin/chromium') && !process.env.BROWSERTASK_BROWSER
  ? 'Chromium not found at /usr/bin/chromium (set CI to make this a failure)' : false;

const V2 = '2026-07-28';
const TASKS_EXT = 'io.modelcontextprotocol/tasks';
const INVALID_PARAMS = -32602;
const METHOD_NOT_FOUND = -32601;
const UNKNOWN_TASK = 'run_00000000-0000-4000-8000-000000000000';
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
const TERMINAL = ['completed', 'failed', 'cancelled'];

// Short shutdown grace and leases so a killed daemon's run is recovered fast.
const crashFlags = ['--shutdown-grace-ms', '200', '--lease-ms', '2000', '--heartbeat-ms', '300',
  '--recovery-interval-ms', '300', '--poll-ms', '100'];

// Task results are decoded with ext-tasks' default result codec
// (CallToolResultV2Schema): the result inlined in a completed task must
// carry resultType "complete" like any 2026-07-28 result.

// v2Request frames a raw 2026-07-28 request as the ext-tasks client does:
// the per-request _meta envelope declaring the Tasks extension.
function v2Request(conn, method, params = {}) {
  return {
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': V2,
        'io.modelcontextprotocol/clientInfo': { name: 'browsertask-e2e-v2', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXT]: {} } },
      },
    },
  };
}

// rawTask sends tasks/<op> {taskId} with the Mcp-Name header.
function rawTask(conn, op, taskId) {
  return conn.raw(v2Request(conn, `tasks/${op}`, { taskId }), { headers: { 'Mcp-Name': taskId } });
}

// withoutMeta drops the result's _meta (server info) for exact comparisons.
function withoutMeta(result) {
  const { _meta, ...rest } = result;
  return rest;
}

// createdTask returns the CreateTaskResult ext-tasks received for taskId.
function createdTask(conn, taskId) {
  const ex = conn.exchanges.find(e => e.request.method === 'tools/call' && e.response.result?.taskId === taskId);
  assert.ok(ex, `no tools/call answered with task ${taskId}`);
  return ex.response.result;
}

function assertCreateTaskResult(res, { status = 'working' } = {}) {
  assert.equal(res.resultType, 'task');
  assert.match(res.taskId, /^run_[0-9a-f-]{36}$/);
  assert.equal(res.status, status);
  assert.match(res.createdAt, RFC3339);
  assert.match(res.lastUpdatedAt, RFC3339);
  assert.equal(res.ttlMs, 30000, 'ttlMs is the run TTL of baseFlags');
  assert.equal(res.pollIntervalMs, 200, 'pollIntervalMs is --task-poll-interval-ms of baseFlags');
}

// pollTask polls tasks/get through the ext-tasks controller until the task
// is terminal; it returns the last TaskView and every status seen.
async function pollTask(conn, taskId, ms = 60000) {
  const controller = conn.session.task(taskId);
  const seen = [];
  const deadline = Date.now() + ms;
  for (;;) {
    const view = await controller.snapshot();
    seen.push(view.status);
    if (TERMINAL.includes(view.status)) return { view, seen };
    if (Date.now() > deadline) throw new Error(`task ${taskId} still ${view.status} after ${ms} ms`);
    await new Promise(r => setTimeout(r, view.suggestedPollIntervalMs ?? 500));
  }
}

// echoTask starts a dev_echo run as a task through ext-tasks. On 2026-07-28
// the server decides: options.mode "async" makes it a task at once; on
// 2025-11-25 ext-tasks asks for one with params.task.
async function echoTask(conn, inputs) {
  const args = { templateId: 'dev_echo', inputs, ...(conn.modern ? { options: { mode: 'async' } } : {}) };
  return conn.session.callTool('run_task_template', args, {
    task: { preference: 'require', retentionMs: 30000 },
  });
}

async function callTool(conn, name, args) {
  const res = await conn.client.callTool({ name, arguments: args });
  assert.equal(res.isError ?? false, false, `${name}: ${JSON.stringify(res)}`);
  return res.structuredContent;
}

// The fields of a batch_extract_pages result that do not depend on the run.
function pagesOf(run) {
  return { summary: run.result.summary, pages: run.result.pages };
}

describe('Tasks extension over HTTP, SDK v2 client pinned to 2026-07-28', () => {
  let daemon;
  let fixture;
  let conn;

  before(async () => {
    fixture = await startFixture();
    daemon = await startServe({ db: path.join(scratchDir(), 'browsertask.db') });
    conn = await connectV2({ url: daemon.url });
    assert.equal(conn.client.getProtocolEra(), 'modern');
    assert.equal(conn.client.getNegotiatedProtocolVersion(), V2);
    assert.deepEqual(conn.client.getServerCapabilities().extensions?.[TASKS_EXT], {});
    assert.equal(conn.session.capabilities.execution, true);
    assert.equal(conn.session.capabilities.cancellation, true);
    assert.ok(!conn.sent.some(m => m.method === 'initialize'), 'a pinned 2026-07-28 client never sends initialize');
  });

  after(async () => {
    await conn?.close();
    await daemon?.stop();
    await fixture?.close();
  });

  test('2.1: batch_extract_pages on 50 pages as a task: tasks/get polls to completed; the inlined result equals a sync call\'s', { skip: chromiumMissing }, async () => {
    const n = 50;
    const urls = Array.from({ length: n }, (_, i) => fixture.url(`/page/${i + 1}?delay=20`));
    const inputs = { urls, fields: { name: '#name', price: '.price' }, concurrency: 5 };

    const execution = await conn.session.callTool('run_task_template',
      { templateId: 'batch_extract_pages', inputs, options: { mode: 'async' } },
      { task: { preference: 'require' } });
    assert.equal(execution.kind, 'task');
    const id = execution.handle.taskId;
    assertCreateTaskResult(createdTask(conn, id));
    const create = conn.exchanges.find(e => e.request.method === 'tools/call');
    assert.deepEqual(create.request.params._meta['io.modelcontextprotocol/clientCapabilities'].extensions, { [TASKS_EXT]: {} });

    const { outcome, lastTask } = await execution.settle();
    assert.equal(outcome.status, 'completed', `outcome: ${outcome.error?.message}`);
    assert.equal(lastTask.taskId, id);
    assert.equal(lastTask.status, 'completed');
    const gets = conn.exchanges.filter(e => e.request.method === 'tasks/get' && e.request.params.taskId === id);
    assert.ok(gets.length >= 2, `tasks/get polls: ${gets.length}`);
    for (const g of gets) assert.equal(g.headers['Mcp-Name'], id, 'tasks/get carries Mcp-Name: <taskId>');
    const statuses = gets.map(g => g.response.result.status);
    assert.ok(statuses.includes('working'), `statuses: ${statuses}`);
    const last = gets.at(-1).response.result;
    assert.equal(last.resultType, 'complete');
    assert.equal(last.taskId, id);
    assert.equal(last.status, 'completed');
    assert.deepEqual(last.result, outcome.result, 'ext-tasks hands over tasks/get\'s inlined result');

    const taskResult = outcome.result;
    assert.equal(taskResult.isError ?? false, false);
    const taskRun = taskResult.structuredContent;
    assert.equal(taskRun.runId, id);
    assert.equal(taskRun.status, 'succeeded');
    assert.deepEqual(JSON.parse(taskResult.content[1].text), taskRun);
    assert.match(taskResult.content[0].text, /^batch_extract_pages succeeded: /);
    assert.deepEqual(taskRun.result.summary, { total: n, succeeded: n, failed: 0 });
    assert.deepEqual(taskRun.result.pages.map(p => p.title), urls.map((_, i) => `Page ${i + 1}`));
    assert.deepEqual(taskRun.result.pages.map(p => p.fields), urls.map((_, i) => ({ name: `Item ${i + 1}`, price: `${i + 1}.00` })));

    // The same inputs in a sync call (a complete result the SDK decodes itself).
    const sync = await conn.client.callTool({
      name: 'run_task_template',
      arguments: { templateId: 'batch_extract_pages', inputs, options: { mode: 'sync' } },
    }, { timeout: 120000 });
    assert.equal(sync.isError ?? false, false);
    const syncRun = sync.structuredContent;
    assert.notEqual(syncRun.runId, id);
    assert.equal(syncRun.status, taskRun.status);
    assert.equal(syncRun.templateId, taskRun.templateId);
    assert.equal(syncRun.templateVersion, taskRun.templateVersion);
    assert.deepEqual(syncRun.progress, taskRun.progress);
    assert.deepEqual(pagesOf(syncRun), pagesOf(taskRun));
    // The inlined result is a 2026-07-28 result (resultType "complete");
    // the SDK hands the sync answer over without its envelope fields.
    assert.equal(taskResult.resultType, 'complete');
    const fields = r => Object.keys(r).filter(k => k !== '_meta' && k !== 'resultType').sort();
    assert.deepEqual(fields(taskResult), fields(sync));
    for (let i = 1; i <= n; i++) assert.equal(fixture.fetchCount(`/page/${i}`), 2, `/page/${i}: once per run`);
  });

  test('2.2: tasks/cancel on a running task acks {resultType: "complete"} twice; tasks/get reads cancelled; unknown taskId is -32602', async () => {
    const execution = await echoTask(conn, { items: 200, sleepMs: 100 });
    assert.equal(execution.kind, 'task');
    const id = execution.handle.taskId;
    assertCreateTaskResult(createdTask(conn, id));
    await waitFor('the run to start', async () => (await callTool(conn, 'get_task_run', { runId: id })).status === 'running', 10000, 100);

    await conn.session.cancelTask(id);
    const cancels = () => conn.exchanges.filter(e => e.request.method === 'tasks/cancel' && e.request.params.taskId === id);
    assert.equal(cancels().length, 1);
    assert.equal(cancels()[0].headers['Mcp-Name'], id);
    assert.deepEqual(withoutMeta(cancels()[0].response.result), { resultType: 'complete' });

    const got = await rawTask(conn, 'get', id);
    assert.equal(got.kind, 'result');
    assert.equal(got.result.resultType, 'complete');
    assert.equal(got.result.taskId, id);
    assert.equal(got.result.status, 'cancelled');
    assert.equal(got.result.result, undefined, 'a cancelled task has no result');
    const view = await conn.session.task(id).snapshot();
    assert.equal(view.status, 'cancelled');
    const outcome = await execution.result();
    assert.equal(outcome.status, 'cancelled');
    const run = await callTool(conn, 'get_task_run', { runId: id });
    assert.equal(run.status, 'canceled');
    assert.equal(run.error.errorCode, 'RUN_CANCELED');
    assert.ok(run.progress.doneSteps < 200, `the run stopped early: ${JSON.stringify(run.progress)}`);

    // Idempotent: a second cancel gets the same ack, the task stays cancelled.
    const again = await rawTask(conn, 'cancel', id);
    assert.equal(again.kind, 'result', JSON.stringify(again));
    assert.deepEqual(withoutMeta(again.result), { resultType: 'complete' });
    await conn.session.cancelTask(id);
    assert.deepEqual(withoutMeta(cancels().at(-1).response.result), { resultType: 'complete' });
    assert.equal((await conn.session.task(id).snapshot()).status, 'cancelled');

    // Unknown taskId: JSON-RPC -32602, through ext-tasks and raw.
    await assert.rejects(conn.session.task(UNKNOWN_TASK).snapshot(), err => {
      assert.equal(err.code, INVALID_PARAMS, `${err.name}: ${err.message}`);
      return true;
    });
    for (const op of ['get', 'cancel']) {
      const res = await rawTask(conn, op, UNKNOWN_TASK);
      assert.equal(res.kind, 'error', `tasks/${op}: ${JSON.stringify(res)}`);
      assert.equal(res.error.code, INVALID_PARAMS, `tasks/${op}: ${JSON.stringify(res.error)}`);
    }
    // 2025-11-25 methods do not exist on 2026-07-28 (-32601, over HTTP with
    // status 404 as 2026-07-28 maps it).
    for (const method of ['tasks/result', 'tasks/list']) {
      const res = await conn.raw(v2Request(conn, method, method === 'tasks/result' ? { taskId: id } : {}));
      assert.equal(res.kind, 'error', `${method}: ${JSON.stringify(res)}`);
      assert.equal(res.error.code, METHOD_NOT_FOUND, `${method}: ${JSON.stringify(res.error)}`);
      assert.equal(conn.exchanges.at(-1).httpStatus, 404, method);
    }
  });
});

test('2.3: a 50-page task survives kill -9: a new process resumes it without fetching checkpointed pages again', { skip: chromiumMissing }, async () => {
  const n = 50;
  const fixture = await startFixture();
  const db = path.join(scratchDir(), 'browsertask.db');
  let daemon = await startServe({ db, flags: crashFlags });
  let conn;
  try {
    conn = await connectV2({ url: daemon.url });
    const urls = Array.from({ length: n }, (_, i) => fixture.url(`/page/${i + 1}?delay=400`));
    const execution = await conn.session.callTool('run_task_template',
      { templateId: 'batch_extract_pages', inputs: { urls, concurrency: 2 }, options: { mode: 'async' } },
      { task: { preference: 'require' } });
    assert.equal(execution.kind, 'task');
    const id = execution.handle.taskId;
    const reference = execution.serializeReference();
    assert.deepEqual(reference, { endpointId: 'browsertask-e2e', generation: 'v2', taskId: id, originalOperation: 'tools/call' });
    await execution.detach();

    // Pages whose item event (written with the page's checkpoint) was read
    // before the kill.
    const doneBeforeKill = await waitFor('6 pages checkpointed', async () => {
      const { events } = await callTool(conn, 'get_task_run_events', { runId: id });
      const done = events.filter(e => e.type === 'item' && e.data.status === 'succeeded').map(e => e.data.key);
      return done.length >= 6 ? done : null;
    }, 40000, 100);
    const view = await conn.session.task(id).snapshot();
    assert.equal(view.status, 'working');
    await conn.close();
    conn = undefined;
    const { signal } = await daemon.stop('SIGKILL');
    assert.equal(signal, 'SIGKILL');
    const killedAt = Date.now();

    daemon = await startServe({ db, flags: crashFlags });
    conn = await connectV2({ url: daemon.url });
    const resumed = await conn.session.resumeTask(reference, {});
    assert.equal(resumed.kind, 'task');
    assert.equal(resumed.handle.taskId, id);
    const statuses = [];
    const { outcome } = await resumed.settle({ onEvent: e => { if (e.type === 'task') statuses.push(e.task.status); } });
    assert.equal(outcome.status, 'completed', `outcome: ${outcome.error?.message}`);
    assert.equal(statuses.at(-1), 'completed');
    const run = outcome.result.structuredContent;
    assert.equal(run.runId, id);
    assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
    assert.ok(run.finishedAt > killedAt, 'the run finished after the kill');
    assert.deepEqual(run.result.summary, { total: n, succeeded: n, failed: 0 });
    assert.deepEqual(run.result.pages.map(p => p.url), urls);
    assert.deepEqual(run.result.pages.map(p => p.title), urls.map((_, i) => `Page ${i + 1}`));
    assert.ok(run.result.pages.every(p => p.httpStatus === 200 && p.error === null));

    // Every item event before the second attempt started was checkpointed by
    // the killed process; it includes what was seen before the kill.
    const { events } = await callTool(conn, 'get_task_run_events', { runId: id, limit: 1000 });
    const attempts = events.filter(e => e.type === 'status' && e.data.status === 'running').map(e => e.data.attempt);
    assert.deepEqual(attempts, [1, 2], `running attempts: ${JSON.stringify(events.filter(e => e.type === 'status'))}`);
    const second = events.findIndex(e => e.type === 'status' && e.data.status === 'running' && e.data.attempt === 2);
    const checkpointed = events.slice(0, second).filter(e => e.type === 'item' && e.data.status === 'succeeded').map(e => e.data.key);
    for (const key of doneBeforeKill) assert.ok(checkpointed.includes(key), `${key} was reported done before the kill`);
    assert.ok(checkpointed.length < n, `the kill left pages to do (${checkpointed.length} done)`);
    for (const key of checkpointed) {
      const p = new URL(key).pathname;
      assert.equal(fixture.fetchCount(p), 1, `${p} was checkpointed before the kill and must not be fetched again`);
    }
    for (let i = 1; i <= n; i++) assert.ok(fixture.fetchCount(`/page/${i}`) >= 1, `/page/${i} fetched`);
    console.log(`kill -9: ${doneBeforeKill.length} pages seen done before the kill, ${checkpointed.length} checkpointed by the killed process; refetched after restart: ${
      urls.map(u => new URL(u).pathname).filter(p => fixture.fetchCount(p) > 1).join(', ') || 'none'}`);
  } finally {
    await conn?.close();
    await daemon.stop();
    await fixture.close();
  }
});

// 2.4 and 2.5: a short dev_echo task round trip with the v2 client in each
// negotiation mode over both transports.
for (const kind of ['http', 'stdio']) {
  for (const mode of ['auto', 'legacy', { pin: V2 }]) {
    const label = typeof mode === 'string' ? mode : `pinned ${mode.pin}`;
    const num = typeof mode === 'string' ? '2.4' : '2.5';
    test(`${num}: v2 client (${label}) over ${kind}: dev_echo task round trip`, async () => {
      const db = path.join(scratchDir(), 'browsertask.db');
      const daemon = kind === 'http' ? await startServe({ db }) : undefined;
      const conn = await connectV2(kind === 'http' ? { url: daemon.url, mode } : { db, mode });
      try {
        const legacy = mode === 'legacy';
        assert.equal(conn.client.getProtocolEra(), legacy ? 'legacy' : 'modern');
        assert.equal(conn.client.getNegotiatedProtocolVersion(), legacy ? '2025-11-25' : V2);
        const methods = conn.sent.map(m => m.method);
        assert.equal(methods.includes('initialize'), legacy, `sent: ${methods}`);
        if (kind === 'http' && !legacy) assert.equal(methods[0], 'server/discover', `sent: ${methods}`);

        const items = 4;
        const execution = await echoTask(conn, { items, sleepMs: 150 });
        assert.equal(execution.kind, 'task');
        const id = execution.handle.taskId;
        assert.match(id, /^run_[0-9a-f-]{36}$/);
        const { outcome, lastTask } = await execution.settle();
        assert.equal(outcome.status, 'completed', `outcome: ${outcome.error?.message}`);
        assert.equal(lastTask.status, 'completed');
        const run = outcome.result.structuredContent;
        assert.equal(run.runId, id);
        assert.equal(run.status, 'succeeded');
        assert.deepEqual(run.result, { items });
        assert.equal(outcome.result.isError ?? false, false);

        if (legacy) {
          // 2025-11-25 Tasks: params.task on tools/call, then tasks/get and tasks/result.
          const call = conn.sent.find(m => m.method === 'tools/call');
          assert.deepEqual(Object.keys(call.params.task ?? {}), ['ttl'], JSON.stringify(call.params));
          assert.equal(call.params._meta?.['io.modelcontextprotocol/protocolVersion'], undefined);
          const later = conn.sent.map(m => m.method);
          assert.ok(later.includes('tasks/get'), `sent: ${later}`);
          assert.ok(later.includes('tasks/result'), `sent: ${later}`);
          assert.equal(outcome.result._meta?.['io.modelcontextprotocol/related-task']?.taskId, id);
          assert.equal(conn.exchanges.length, 0, 'no 2026-07-28 raw requests on a legacy connection');
          const { tasks } = await conn.session.listTasks();
          assert.ok(tasks.some(t => t.taskId === id && t.status === 'completed'), 'tasks/list has the task');
        } else {
          assertCreateTaskResult(createdTask(conn, id));
          const gets = conn.exchanges.filter(e => e.request.method === 'tasks/get');
          assert.ok(gets.length >= 1);
          const last = gets.at(-1).response.result;
          assert.equal(last.status, 'completed');
          assert.deepEqual(last.result, outcome.result);
          assert.ok(!conn.sent.some(m => m.method === 'tasks/result'), 'no tasks/result on 2026-07-28');
        }
      } finally {
        await conn.close();
        await daemon?.stop();
      }
    });
  }
}

// 2.6: the MCP Inspector CLI over stdio and over HTTP.
async function inspector(args, home) {
  const { code, out, err } = await runInspector(args, home);
  if (code !== 0) throw new Error(`inspector ${args.join(' ')} exited ${code}:\n${err}\n${out}`);
  try {
    return JSON.parse(out);
  } catch (e) {
    throw new Error(`inspector output is not JSON: ${e.message}\n${out}\n${err}`);
  }
}

describe('2.6: MCP Inspector CLI', () => {
  let daemon;
  let db;
  let home;

  before(async () => {
    home = scratchDir('browsertask-e2e-inspector-');
    db = path.join(scratchDir(), 'browsertask.db');
    daemon = await startServe({ db });
  });

  after(async () => {
    await daemon?.stop();
  });

  const stdioTarget = () => [binary(), 'mcp', '--db', db, '--http=off', ...baseFlags];
  for (const kind of ['stdio', 'http']) {
    for (const era of ['legacy', 'modern']) {
      test(`${kind}, protocol era ${era}: tools/list has run_task_template; get_runtime_profile leads with 2026-07-28`, async () => {
        const target = kind === 'stdio' ? stdioTarget() : ['--transport', 'http', daemon.url];
        const listed = await inspector(['--protocol-era', era, ...target, '--method', 'tools/list'], home);
        const names = listed.result.tools.map(t => t.name);
        for (const name of ['run_task_template', 'get_task_run', 'get_task_run_events', 'cancel_task_run', 'get_runtime_profile']) {
          assert.ok(names.includes(name), `${name} missing from ${names}`);
        }
        const run = listed.result.tools.find(t => t.name === 'run_task_template');
        assert.deepEqual(run.inputSchema.required, ['templateId']);
        if (era === 'legacy') assert.deepEqual(run.execution, { taskSupport: 'optional' });

        const called = await inspector(['--protocol-era', era, ...target, '--method', 'tools/call', '--tool-name', 'get_runtime_profile'], home);
        const profile = called.result.structuredContent;
        assert.equal(called.result.isError ?? false, false);
        assert.equal(profile.protocolVersions[0], V2);
        assert.ok(profile.protocolVersions.includes('2025-11-25'));
        assert.equal(profile.taskPollIntervalMs, 200, 'the profile of the daemon under test (baseFlags)');
        assert.deepEqual(JSON.parse(called.result.content[1].text), profile);
      });
    }
  }
});
