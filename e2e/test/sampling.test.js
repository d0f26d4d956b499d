// extract_structured asks the calling client's model (issue 16, acceptance
// 3): no model endpoint is configured, the client declared sampling, and
// of the five fixture product pages only /products/noprice lacks a
// property (its price). That page's question reaches the client as
// sampling/createMessage; the client's handler answers with canned JSON;
// the run fills the price from it and counts the call in its metrics:
//   - TypeScript SDK 1.32, MCP 2025-11-25 Tasks: the client calls
//     tasks/result and receives the request related to the task;
//   - the same SDK, a synchronous call (options.mode "sync"): the request
//     arrives during the call;
//   - TypeScript SDK v2 with @modelcontextprotocol/ext-tasks, MCP
//     2026-07-28: the task is input_required, tasks/get lists the request
//     in inputRequests and tasks/update carries the answer.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { connectV2, scratchDir, startServe } from '../lib/daemon.js';
import { startGoFixture } from '../lib/gofixture.js';

const chromiumMissing = !process.env.CI && !existsSync('/usr/bin/chromium') && !process.env.BROWSERTASK_BROWSER
  ? 'Chromium not found at /usr/bin/chromium (set CI to make this a failure)' : false;

const RELATED_TASK = 'io.modelcontextprotocol/related-task';

const SCHEMA = {
  type: 'object',
  required: ['name', 'price', 'currency'],
  properties: {
    name: { type: 'string' },
    price: { type: 'number' },
    currency: { type: 'string' },
    rating: { type: 'number' },
  },
};

const PAGES = ['/products/jsonld', '/products/microdata', '/products/og', '/products/noprice'];

// The canned answer of the client's model.
function cannedResult(model) {
  return { role: 'assistant', model, stopReason: 'endTurn', content: { type: 'text', text: '{"price": 4500}' } };
}

function structuredArgs(fixture, mode) {
  return {
    templateId: 'extract_structured',
    inputs: { urls: PAGES.map(p => fixture.url(p)), concurrency: 2, instruction: 'prices in yen' },
    options: { outputSchema: SCHEMA, ...(mode ? { mode } : {}) },
  };
}

// assertSampledRun checks the finished run: every page filled, the price
// of the page without one from the client's model, one model call.
function assertSampledRun(run, fixture) {
  assert.equal(run.status, 'succeeded', JSON.stringify(run));
  assert.deepEqual(run.result.summary, { total: 4, succeeded: 4, failed: 0, promptTokens: 0, completionTokens: 0, modelCalls: 1 });
  const noprice = run.result.items.find(i => i.url === fixture.url('/products/noprice'));
  assert.deepEqual(noprice.object, { name: 'Mystery Box', price: 4500, currency: 'JPY', rating: 4 });
  assert.equal(run.metrics.modelCalls, 1, JSON.stringify(run.metrics));
  assert.equal(run.inputRequest ?? null, null);
}

// assertOneQuestion checks what the client's model was asked: the page
// without a price, the instruction, and nothing of the other pages.
function assertOneQuestion(asked, fixture) {
  assert.equal(asked.length, 1, JSON.stringify(asked));
  const text = asked[0].messages.map(m => m.content.text).join('\n');
  assert.match(text, new RegExp(fixture.url('/products/noprice').replace(/[.?]/g, '\\$&')));
  assert.match(text, /prices in yen/);
  assert.match(text, /price/);
  for (const other of ['Trail Runner', 'Aqua Bottle', 'Studio Headphones']) {
    assert.ok(!text.includes(other), `the question holds ${other}, a page with nothing missing`);
  }
  assert.ok(asked[0].maxTokens > 0);
}

describe('extract_structured fills what is missing with the client\'s model (sampling)', { skip: chromiumMissing }, () => {
  let daemon;
  let fixture;

  before(async () => {
    fixture = await startGoFixture();
    daemon = await startServe({ db: path.join(scratchDir(), 'browsertask.db') });
  });

  after(async () => {
    await daemon?.stop();
    await fixture?.close();
  });

  // v1Client connects SDK 1.32 declaring sampling; asked collects the
  // requests its model received.
  async function v1Client(asked) {
    const client = new Client({ name: 'browsertask-e2e-sampling', version: '1.0.0' }, { capabilities: { sampling: {} } });
    client.setRequestHandler(CreateMessageRequestSchema, async req => {
      asked.push(req.params);
      return cannedResult('e2e-canned-v1');
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
    return client;
  }

  test('2025-11-25 task, SDK 1.32: tasks/result relays sampling/createMessage related to the task', async () => {
    const asked = [];
    const client = await v1Client(asked);
    try {
      const stream = client.experimental.tasks.callToolStream(
        { name: 'run_task_template', arguments: structuredArgs(fixture) },
        CallToolResultSchema, { task: { ttl: 60000 }, timeout: 120000 });
      let result;
      let taskId;
      for await (const msg of stream) {
        if (msg.type === 'taskCreated') taskId = msg.task.taskId;
        if (msg.type === 'error') throw msg.error;
        if (msg.type === 'result') result = msg.result;
      }
      assert.ok(taskId, 'no task was created');
      assertOneQuestion(asked, fixture);
      assert.equal(asked[0]._meta?.[RELATED_TASK]?.taskId, taskId);
      assert.equal(result.isError ?? false, false, JSON.stringify(result));
      assertSampledRun(result.structuredContent, fixture);
      const items = result.structuredContent.result.items;
      assert.equal(items.length, 4);
    } finally {
      await client.close();
    }
  });

  test('2025-11-25 synchronous call, SDK 1.32: the request arrives during the call', async () => {
    const asked = [];
    const client = await v1Client(asked);
    try {
      const res = await client.callTool({ name: 'run_task_template', arguments: structuredArgs(fixture, 'sync') },
        CallToolResultSchema, { timeout: 120000 });
      assert.equal(res.isError ?? false, false, JSON.stringify(res));
      assertOneQuestion(asked, fixture);
      assert.equal(asked[0]._meta?.[RELATED_TASK], undefined);
      assertSampledRun(res.structuredContent, fixture);
    } finally {
      await client.close();
    }
  });

  test('2026-07-28, SDK v2 + ext-tasks: tasks/get lists sampling/createMessage, tasks/update answers it', async () => {
    const asked = [];
    const conn = await connectV2({
      url: daemon.url,
      capabilities: { sampling: {} },
      onInputRequest: async (request, context) => {
        asked.push({ request, context });
        return cannedResult('e2e-canned-v2');
      },
    });
    try {
      const exec = await conn.session.callTool('run_task_template', structuredArgs(fixture, 'async'), {
        task: { preference: 'require', retentionMs: 60000 },
      });
      assert.equal(exec.kind, 'task');
      const taskId = exec.handle.taskId;
      await exec.settle();
      assert.equal(asked.length, 1, JSON.stringify(asked));
      const { request, context } = asked[0];
      assert.equal(request.kind, 'sampling');
      assert.equal(context.delivery, 'task-update');
      assert.equal(context.taskId, taskId);
      assertOneQuestion([request.params], fixture);
      const waiting = conn.exchanges.find(e => e.request.method === 'tasks/get' && e.response.result?.status === 'input_required');
      assert.ok(waiting, 'no tasks/get answered input_required');
      const [key] = Object.keys(waiting.response.result.inputRequests);
      assert.equal(waiting.response.result.inputRequests[key].method, 'sampling/createMessage');
      const update = conn.sent.find(m => m.method === 'tasks/update');
      assert.ok(update, 'the answer did not travel as tasks/update');
      assert.equal(update.params.inputResponses[key].model, 'e2e-canned-v2');
      const view = await conn.session.task(taskId).snapshot();
      assert.equal(view.status, 'completed', JSON.stringify(view.raw));
      assertSampledRun(view.raw.result.structuredContent, fixture);
    } finally {
      await conn.close();
    }
  });
});
