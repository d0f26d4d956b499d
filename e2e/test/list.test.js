// tasks/list paging through the TypeScript SDK client (issue 3, acceptance 5).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';

import { connectHTTP, scratchDir, startServe } from '../lib/daemon.js';

let daemon;
let client;

before(async () => {
  daemon = await startServe({ db: path.join(scratchDir(), 'browsertask.db') });
  client = await connectHTTP(daemon.url);
});

after(async () => {
  await client?.close();
  await daemon?.stop();
});

function createTask() {
  return client.request({
    method: 'tools/call',
    params: { name: 'run_task_template', arguments: { templateId: 'dev_echo', inputs: { items: 1 } }, task: { ttl: 60000 } },
  }, CreateTaskResultSchema).then(r => r.task.taskId);
}

test('5: tasks/list pages through 120 tasks with nextCursor, newest first, no duplicates or gaps', async () => {
  const created = new Set();
  for (let i = 0; i < 120; i += 10) {
    const ids = await Promise.all(Array.from({ length: 10 }, createTask));
    ids.forEach(id => created.add(id));
  }
  assert.equal(created.size, 120);

  const seen = [];
  const sizes = [];
  let cursor;
  for (;;) {
    const page = await client.experimental.tasks.listTasks(cursor);
    sizes.push(page.tasks.length);
    seen.push(...page.tasks);
    if (sizes.length === 1) {
      // A task created while paging must not shift the next pages.
      await createTask();
    }
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  assert.deepEqual(sizes, [50, 50, 20]);
  const ids = seen.map(t => t.taskId);
  assert.equal(new Set(ids).size, ids.length, 'duplicates');
  assert.deepEqual(new Set(ids), created, 'gaps or strangers');
  for (let i = 1; i < seen.length; i++) {
    const a = seen[i - 1];
    const b = seen[i];
    const older = b.createdAt < a.createdAt || (b.createdAt === a.createdAt && b.taskId < a.taskId);
    assert.ok(older, `not newest first at ${i}: ${JSON.stringify(a)} then ${JSON.stringify(b)}`);
  }
  const first = await client.experimental.tasks.listTasks();
  assert.equal(first.tasks.length, 50);
  assert.ok(!created.has(first.tasks[0].taskId), 'the task created while paging is now the newest');
});
