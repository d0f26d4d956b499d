// MCP 2025-11-25 Tasks through the official TypeScript SDK client, against
// the built binary over stdio and over Streamable HTTP (issue 3, acceptance
// 1, 2, 3, 4, 7 and 9).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';

import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

import { connectHTTP, connectStdio, scratchDir, startServe } from '../lib/daemon.js';
import { startFixture } from '../lib/fixture.js';
import {
  IMMEDIATE_RESPONSE, RELATED_TASK, assertTask, pollUntilTerminal, rejectsWith, waitFor,
} from '../lib/assertions.js';

// The browser template needs Chromium: without it the test is skipped,
// except in CI (env CI set) where it must run.
const chromiumMissing = !process.env.CI && !existsSync('/usr/bin/chromium') && !process.env.BROWSERTASK_BROWSER
  ? 'Chromium not found at /usr/bin/chromium (set CI to make this a failure)' : false;

const INVALID_PARAMS = -32602;
const METHOD_NOT_FOUND = -32601;

// echoTask creates a dev_echo task with a raw task-augmented tools/call.
async function echoTask(client, inputs, task = { ttl: 60000 }) {
  return client.request({
    method: 'tools/call',
    params: { name: 'run_task_template', arguments: { templateId: 'dev_echo', inputs }, task },
  }, CreateTaskResultSchema);
}

for (const kind of ['stdio', 'http']) {
  describe(`Tasks over ${kind}`, () => {
    let client;
    let daemon;
    let fixture;
    const statusNotes = [];

    before(async () => {
      const dir = scratchDir();
      const db = path.join(dir, 'browsertask.db');
      fixture = await startFixture();
      if (kind === 'stdio') {
        client = await connectStdio({ db });
      } else {
        daemon = await startServe({ db });
        client = await connectHTTP(daemon.url);
      }
      client.setNotificationHandler(TaskStatusNotificationSchema, n => statusNotes.push(n.params));
      const caps = client.getServerCapabilities();
      assert.deepEqual(caps.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } });
      const { tools } = await client.listTools();
      const run = tools.find(t => t.name === 'run_task_template');
      assert.deepEqual(run.execution, { taskSupport: 'optional' });
      for (const t of tools) if (t.name !== 'run_task_template') assert.equal(t.execution, undefined, t.name);
    });

    after(async () => {
      await client?.close();
      await daemon?.stop();
      await fixture?.close();
    });

    test('1+9: callToolStream on batch_extract_pages yields taskCreated, taskStatus, the terminal Run; progress increases', { skip: chromiumMissing }, async () => {
      const n = 6;
      const urls = Array.from({ length: n }, (_, i) => fixture.url(`/page/${i + 1}?delay=250`));
      const progress = [];
      const stream = client.experimental.tasks.callToolStream(
        {
          name: 'run_task_template',
          arguments: {
            templateId: 'batch_extract_pages',
            inputs: { urls, fields: { name: '#name', price: '.price' }, concurrency: 1 },
          },
        },
        CallToolResultSchema,
        { task: { ttl: 60000 }, onprogress: p => progress.push(p) },
      );
      const types = [];
      let created;
      let result;
      for await (const msg of stream) {
        types.push(msg.type);
        if (msg.type === 'taskCreated') created = msg.task;
        if (msg.type === 'result') result = msg.result;
        if (msg.type === 'error') assert.fail(`stream error: ${msg.error.message}`);
      }
      assert.equal(types[0], 'taskCreated');
      assert.equal(types.at(-1), 'result');
      assert.ok(types.filter(t => t === 'taskStatus').length >= 1, `types: ${types}`);
      assertTask(created, { status: 'working', ttl: 60000 });
      const run = result.structuredContent;
      assert.equal(run.runId, created.taskId);
      assert.equal(run.status, 'succeeded');
      assert.equal(result.isError ?? false, false);
      assert.equal(run.result.summary.total, n);
      assert.equal(run.result.summary.succeeded, n);
      assert.deepEqual(run.result.pages.map(p => p.fields.name), urls.map((_, i) => `Item ${i + 1}`));
      assert.equal(result._meta[RELATED_TASK].taskId, created.taskId);

      // Progress notifications for the task's life, after the CreateTaskResult too.
      await waitFor('final progress', () => progress.at(-1)?.progress === n, 5000);
      assert.ok(progress.length >= 2, `progress: ${JSON.stringify(progress)}`);
      for (let i = 1; i < progress.length; i++) {
        assert.ok(progress[i].progress > progress[i - 1].progress, `not increasing: ${JSON.stringify(progress)}`);
      }
      assert.equal(progress.at(-1).total, n);
      console.log(`${kind}: ${progress.length} progress notifications: ${progress.map(p => p.progress).join(', ')} of ${n}`);
    });

    test('2: raw tools/call with task {ttl: 60000} → CreateTaskResult; getTask polls to completed; getTaskResult has related-task', async () => {
      const created = await echoTask(client, { items: 5, sleepMs: 100 });
      assertTask(created.task, { status: 'working', ttl: 60000 });
      const id = created.task.taskId;
      assert.equal(created.task.pollInterval, 200);
      assert.match(created._meta[IMMEDIATE_RESPONSE], new RegExp(id));
      const { task, seen } = await pollUntilTerminal(client, id);
      assertTask(task, { taskId: id, status: 'completed', ttl: 60000 });
      assert.ok(seen.includes('working'), `statuses seen: ${seen}`);
      const res = await client.experimental.tasks.getTaskResult(id, CallToolResultSchema);
      assert.equal(res._meta[RELATED_TASK].taskId, id);
      assert.equal(res.isError ?? false, false);
      assert.equal(res.structuredContent.status, 'succeeded');
      assert.equal(res.structuredContent.mode, 'sync');
      assert.deepEqual(res.structuredContent.result, { items: 5 });
      assert.deepEqual(JSON.parse(res.content[1].text), res.structuredContent);
      assert.match(res.content[0].text, /^dev_echo succeeded/, 'the first block is the one-line summary');
      if (kind === 'stdio') {
        const note = await waitFor('notifications/tasks/status', () => statusNotes.find(s => s.taskId === id && s.status === 'completed'), 3000);
        assertTask(note, { taskId: id, status: 'completed', ttl: 60000 });
      }
    });

    test('3: tasks/result blocks while working; a concurrent tasks/get answers meanwhile', async () => {
      const created = await echoTask(client, { items: 15, sleepMs: 100 });
      const id = created.task.taskId;
      let settledAt = 0;
      const resultP = client.experimental.tasks.getTaskResult(id, CallToolResultSchema).then(r => { settledAt = Date.now(); return r; });
      await new Promise(r => setTimeout(r, 150));
      const t0 = Date.now();
      const t = await client.experimental.tasks.getTask(id);
      const getAnsweredAt = Date.now();
      assert.equal(t.status, 'working');
      assert.equal(settledAt, 0, 'tasks/result answered before the task ended');
      assert.ok(getAnsweredAt - t0 < 1000, `tasks/get took ${getAnsweredAt - t0} ms`);
      const res = await resultP;
      assert.ok(settledAt > getAnsweredAt);
      assert.equal(res.structuredContent.status, 'succeeded');
      assert.equal(res._meta[RELATED_TASK].taskId, id);
      const after = await client.experimental.tasks.getTask(id);
      assert.equal(after.status, 'completed');
    });

    test('4: tasks/cancel and the protocol errors', async () => {
      const slow = await echoTask(client, { items: 100, sleepMs: 100 });
      const id = slow.task.taskId;
      const cancelled = await client.experimental.tasks.cancelTask(id);
      assertTask(cancelled, { taskId: id, status: 'cancelled' });
      const run = await client.callTool({ name: 'get_task_run', arguments: { runId: id } });
      assert.equal(run.structuredContent.status, 'canceled');
      assert.equal(run.structuredContent.error.errorCode, 'RUN_CANCELED');
      const res = await client.experimental.tasks.getTaskResult(id, CallToolResultSchema);
      assert.equal(res.isError, true);
      assert.equal(res.structuredContent.error.errorCode, 'RUN_CANCELED');

      const done = await echoTask(client, { items: 1 });
      await client.experimental.tasks.getTaskResult(done.task.taskId, CallToolResultSchema);
      await rejectsWith(client.experimental.tasks.cancelTask(done.task.taskId), INVALID_PARAMS,
        "Cannot cancel task: already in terminal status 'completed'");
      await rejectsWith(client.experimental.tasks.cancelTask(id), INVALID_PARAMS,
        "Cannot cancel task: already in terminal status 'cancelled'");

      const unknown = 'run_00000000-0000-4000-8000-000000000000';
      await rejectsWith(client.experimental.tasks.getTask(unknown), INVALID_PARAMS, 'Failed to retrieve task: Task not found');
      await rejectsWith(client.experimental.tasks.getTaskResult(unknown, CallToolResultSchema), INVALID_PARAMS, 'Task not found');
      await rejectsWith(client.experimental.tasks.cancelTask(unknown), INVALID_PARAMS, 'Task not found');
      await rejectsWith(client.experimental.tasks.listTasks('not-a-cursor'), INVALID_PARAMS, 'cursor');
      await rejectsWith(client.request({
        method: 'tools/call',
        params: { name: 'get_task_run', arguments: { runId: id }, task: { ttl: 60000 } },
      }, CallToolResultSchema), METHOD_NOT_FOUND);
      // Argument errors before any run: -32602 carrying the contract's error object.
      await assert.rejects(echoTask(client, { items: 0 }), err => {
        assert.equal(err.code, INVALID_PARAMS);
        assert.equal(err.data.errorCode, 'INVALID_PARAMETER');
        assert.ok(err.data.message && err.data.recovery);
        return true;
      });
    });

    test('7: a failed run → task failed with the error message; tasks/result isError with {errorCode, message, recovery}', async () => {
      const stream = client.experimental.tasks.callToolStream(
        { name: 'run_task_template', arguments: { templateId: 'dev_echo', inputs: { items: 2, sleepMs: 50, fail: true } } },
        CallToolResultSchema,
        { task: { ttl: 60000 } },
      );
      let id;
      let last;
      for await (const msg of stream) {
        if (msg.type === 'taskCreated') id = msg.task.taskId;
        last = msg;
      }
      assert.equal(last.type, 'error', 'callToolStream ends with an error for a failed task');
      const task = await client.experimental.tasks.getTask(id);
      const run = await client.callTool({ name: 'get_task_run', arguments: { runId: id } });
      assert.equal(run.structuredContent.status, 'failed');
      assertTask(task, { taskId: id, status: 'failed' });
      assert.equal(task.statusMessage, run.structuredContent.error.message);
      const res = await client.experimental.tasks.getTaskResult(id, CallToolResultSchema);
      assert.equal(res.isError, true);
      assert.equal(res._meta[RELATED_TASK].taskId, id);
      const err = res.structuredContent.error;
      assert.equal(err.errorCode, 'STEP_EXECUTION_FAILED');
      assert.equal(err.message, task.statusMessage);
      assert.ok(err.recovery.length > 0);
    });
  });
}
