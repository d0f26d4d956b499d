// Small assertion helpers shared by the e2e tests.
import assert from 'node:assert/strict';

export const RELATED_TASK = 'io.modelcontextprotocol/related-task';
export const IMMEDIATE_RESPONSE = 'io.modelcontextprotocol/model-immediate-response';

// rejectsWith asserts that promise fails with a JSON-RPC error code (and a
// message containing msgPart, when given).
export async function rejectsWith(promise, code, msgPart) {
  await assert.rejects(promise, err => {
    assert.equal(err.code, code, `want JSON-RPC ${code}, got ${err.code}: ${err.message}`);
    if (msgPart) assert.ok(err.message.includes(msgPart), `message ${JSON.stringify(err.message)} lacks ${JSON.stringify(msgPart)}`);
    return true;
  });
}

// assertTask checks the shape of a Task object.
export function assertTask(task, { taskId, status, ttl } = {}) {
  assert.equal(typeof task.taskId, 'string');
  if (taskId) assert.equal(task.taskId, taskId);
  if (status) assert.equal(task.status, status, `task ${task.taskId}: ${JSON.stringify(task)}`);
  if (ttl !== undefined) assert.equal(task.ttl, ttl);
  for (const k of ['createdAt', 'lastUpdatedAt']) {
    assert.match(task[k], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/, `${k} is RFC 3339 UTC`);
  }
  assert.equal(typeof task.pollInterval, 'number');
}

// waitFor polls cond until it returns a truthy value or time runs out.
export async function waitFor(what, cond, ms = 10000, every = 50) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(r => setTimeout(r, every));
  }
}

// pollUntilTerminal polls tasks/get at the task's pollInterval and returns
// every status seen.
export async function pollUntilTerminal(client, taskId, ms = 60000) {
  const seen = [];
  const deadline = Date.now() + ms;
  for (;;) {
    const t = await client.experimental.tasks.getTask(taskId);
    seen.push(t.status);
    if (['completed', 'failed', 'cancelled'].includes(t.status)) return { task: t, seen };
    if (Date.now() > deadline) throw new Error(`task ${taskId} still ${t.status}`);
    await new Promise(r => setTimeout(r, t.pollInterval ?? 1000));
  }
}
