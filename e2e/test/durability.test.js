// A task survives a restart of the daemon, graceful or kill -9: it is a run
// row in SQLite (issue 3, acceptance 6).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';

import { connectHTTP, scratchDir, startServe } from '../lib/daemon.js';
import { RELATED_TASK, waitFor } from '../lib/assertions.js';

// Short shutdown grace and leases so the interrupted run is handed over fast.
const flags = ['--shutdown-grace-ms', '200', '--lease-ms', '2000', '--heartbeat-ms', '300',
  '--recovery-interval-ms', '300', '--poll-ms', '100'];

for (const signal of ['SIGTERM', 'SIGKILL']) {
  test(`6: a task created over HTTP completes after a ${signal} restart, seen from a new session`, async () => {
    const db = path.join(scratchDir(), 'browsertask.db');
    const items = 25;
    let daemon = await startServe({ db, flags });
    let client = await connectHTTP(daemon.url);
    const created = await client.request({
      method: 'tools/call',
      params: { name: 'run_task_template', arguments: { templateId: 'dev_echo', inputs: { items, sleepMs: 100 } }, task: { ttl: 120000 } },
    }, CreateTaskResultSchema);
    const id = created.task.taskId;
    await waitFor('the run to make progress', async () => {
      const r = await client.callTool({ name: 'get_task_run', arguments: { runId: id } });
      return r.structuredContent.progress.doneSteps >= 3;
    }, 10000, 100);
    await client.close().catch(() => {});
    const { signal: got } = await daemon.stop(signal);
    const stoppedAt = Date.now();
    if (signal === 'SIGKILL') assert.equal(got, 'SIGKILL');

    daemon = await startServe({ db, flags });
    try {
      client = await connectHTTP(daemon.url);
      const task = await client.experimental.tasks.getTask(id);
      assert.equal(task.taskId, id);
      assert.ok(['working', 'completed'].includes(task.status), `after restart: ${JSON.stringify(task)}`);
      assert.equal(task.ttl, 120000);
      const res = await client.experimental.tasks.getTaskResult(id, CallToolResultSchema, { timeout: 60000 });
      assert.equal(res._meta[RELATED_TASK].taskId, id);
      const run = res.structuredContent;
      assert.equal(run.status, 'succeeded', JSON.stringify(run));
      assert.deepEqual(run.result, { items });
      assert.ok(run.finishedAt > stoppedAt, 'the run finished after the restart');
      const after = await client.experimental.tasks.getTask(id);
      assert.equal(after.status, 'completed');
      await client.close();
    } finally {
      await daemon.stop();
    }
  });
}
