// agent_task with the client's model (issue 32, acceptance 3, through MCP
// sampling): no model endpoint is configured and the TypeScript SDK 1.32
// client declared sampling, so every turn of the agent reaches the client
// as sampling/createMessage. The client's "model" is a script keyed on the
// page snapshot in the prompt (lib/agent_scripts.js); wrong references, a
// missing snapshot or a state the script does not know fail the run. The
// five fixture tasks run as 2025-11-25 tasks (tasks/result relays the
// requests, so the run may wait for a person between turns):
//   - sign in with a one-time code: the person gives the code through the
//     client's elicitation handler (a form, related to the task);
//   - search and paginate to fill a schema (also as a synchronous call,
//     and over stdio);
//   - a multi-page form and a checkout: the person confirms the
//     side-effecting click through the elicitation handler; the shop
//     counts one application, one order;
//   - a takeover: the model asks for one; the person, through the
//     dashboard's HTTP endpoints, watches the live view, clicks the human
//     check in it and presses Done (lib/person.js).
// The checkout runs once more with the TypeScript SDK v2 and
// @modelcontextprotocol/ext-tasks (MCP 2026-07-28): the model's turns and
// the person's yes are both inputRequests of tasks/get, answered by
// tasks/update.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { pageOf, TASKS } from '../lib/agent_scripts.js';
import { baseFlags, binary, connectHTTP, connectV2, scratchDir, startServe } from '../lib/daemon.js';
import { LOGIN_PASSWORD, OTP_CODE, startGoFixture } from '../lib/gofixture.js';
import { clickLikeAPerson, fixtureCounts, HUMAN_BUTTON, pressDone, watchForWheel } from '../lib/person.js';

const chromiumMissing = !process.env.CI && !existsSync('/usr/bin/chromium') && !process.env.BROWSERTASK_BROWSER
  ? 'Chromium not found at /usr/bin/chromium (set CI to make this a failure)' : false;

const RELATED_TASK = 'io.modelcontextprotocol/related-task';

// agentClient is an SDK 1.32 client declaring sampling and form
// elicitation: its sampling handler is task's scripted model, its
// elicitation handler the person (person(params) returns the content to
// accept with, or undefined to decline). prompts, unscripted and elicited
// record what it was asked.
function agentClient(task, person = () => undefined) {
  const model = TASKS[task].script();
  const rec = { prompts: [], unscripted: [], elicited: [] };
  const client = new Client({ name: 'browsertask-e2e-agent', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: { form: {} } } });
  client.setRequestHandler(CreateMessageRequestSchema, async req => {
    const prompt = req.params.messages.map(textOf).join('\n');
    rec.prompts.push({ params: req.params, prompt });
    const reply = model(pageOf(prompt));
    if (!reply) {
      rec.unscripted.push(prompt);
      throw new Error('the scripted model does not know this state');
    }
    return { role: 'assistant', model: 'e2e-scripted', stopReason: 'endTurn', content: { type: 'text', text: JSON.stringify(reply) } };
  });
  client.setRequestHandler(ElicitRequestSchema, async req => {
    rec.elicited.push(req.params);
    const content = person(req.params);
    return content === undefined ? { action: 'decline' } : { action: 'accept', content };
  });
  return { client, rec };
}

// textOf is the text of a sampling message (one content block or a list).
function textOf(m) {
  return (Array.isArray(m.content) ? m.content : [m.content]).map(c => c?.text ?? '').join('\n');
}

// taskArgs is run_task_template's arguments for task on fixture.
function taskArgs(fixture, task, options = {}) {
  const t = TASKS[task];
  return { templateId: 'agent_task', inputs: { goal: t.goal, startUrl: fixture.url(t.start) }, options: { outputSchema: t.schema, ...options } };
}

// runAsTask calls run_task_template as a 2025-11-25 task and follows it
// to its end (tasks/result relays the sampling and elicitation requests);
// onTask(taskId) is called once the task exists. It answers the task id
// and the run (from the result, or get_task_run when the task failed).
async function runAsTask(client, args, onTask = () => {}) {
  const stream = client.experimental.tasks.callToolStream({ name: 'run_task_template', arguments: args },
    CallToolResultSchema, { task: { ttl: 60000 }, timeout: 120000 });
  let taskId;
  let result;
  let error;
  for await (const msg of stream) {
    if (msg.type === 'taskCreated') {
      taskId = msg.task.taskId;
      onTask(taskId);
    }
    if (msg.type === 'error') error = msg.error;
    if (msg.type === 'result') result = msg.result;
  }
  assert.ok(taskId, `no task was created: ${error}`);
  if (result) {
    assert.equal(result.isError ?? false, false, JSON.stringify(result));
    return { taskId, run: result.structuredContent };
  }
  const got = await client.callTool({ name: 'get_task_run', arguments: { runId: taskId } });
  return { taskId, run: got.structuredContent, error };
}

// assertDone checks the finished run of task: succeeded with the expected
// answer, every turn a sampling request related to the task, all scripted.
function assertDone(task, { taskId, run }, rec) {
  const t = TASKS[task];
  assert.deepEqual(rec.unscripted, [], 'the scripted model was shown a state it does not know');
  assert.equal(run.status, 'succeeded', JSON.stringify(run));
  assert.deepEqual(run.result.answer, t.answer);
  assert.equal(run.metrics.modelCalls, t.turns, JSON.stringify(run.metrics));
  assert.equal(rec.prompts.length, t.turns);
  assert.match(rec.prompts[0].params.systemPrompt, /Reply with ONE JSON object/);
  for (const { params } of rec.prompts) assert.equal(params._meta?.[RELATED_TASK]?.taskId, taskId);
  assert.equal(run.inputRequest ?? null, null);
}

describe('agent_task with the client\'s model (sampling): the five fixture tasks', { skip: chromiumMissing }, () => {
  let daemon;
  let fixture;
  let base;

  before(async () => {
    fixture = await startGoFixture();
    daemon = await startServe({ db: path.join(scratchDir(), 'browsertask.db') });
    base = new URL(daemon.url).origin;
  });

  after(async () => {
    await daemon?.stop();
    await fixture?.close();
  });

  test('sign in with a one-time code the person gives through the client (SDK 1.32 task, Streamable HTTP)', async () => {
    const { client, rec } = agentClient('otp', p => (p.message === 'The one-time code we sent you?' ? { value: OTP_CODE } : undefined));
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
    try {
      const before = await fixtureCounts(fixture);
      const done = await runAsTask(client, taskArgs(fixture, 'otp'));
      assertDone('otp', done, rec);
      // One secret question, as a form with one string field, for the task.
      assert.equal(rec.elicited.length, 1, JSON.stringify(rec.elicited));
      assert.deepEqual(Object.keys(rec.elicited[0].requestedSchema.properties), ['value']);
      assert.equal(rec.elicited[0]._meta?.[RELATED_TASK]?.taskId, done.taskId);
      const after = await fixtureCounts(fixture);
      assert.equal(after.otpSubmissions - before.otpSubmissions, 1);
      // The code never reached the model, the password is not in the run.
      for (const { prompt } of rec.prompts) assert.ok(!prompt.includes(OTP_CODE), 'a prompt holds the one-time code');
      assert.ok(!JSON.stringify(done.run).includes(LOGIN_PASSWORD), 'the run holds the password');
      assert.ok(!JSON.stringify(done.run).includes(OTP_CODE), 'the run holds the one-time code');
    } finally {
      await client.close();
    }
  });

  test('search and paginate to fill a schema (SDK 1.32 task, Streamable HTTP)', async () => {
    const { client, rec } = agentClient('search');
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
    try {
      const before = await fixtureCounts(fixture, ['/agent/catalog']);
      const done = await runAsTask(client, taskArgs(fixture, 'search'));
      assertDone('search', done, rec);
      assert.deepEqual(rec.elicited, []);
      // The start page, then three pages of results.
      const after = await fixtureCounts(fixture, ['/agent/catalog']);
      assert.equal(after.hits['/agent/catalog'] - before.hits['/agent/catalog'], 4);
      assert.equal(done.run.result.replaySteps.startUrl, fixture.url('/agent/catalog'));
    } finally {
      await client.close();
    }
  });

  test('a multi-page form whose submission the person confirms (SDK 1.32 task, Streamable HTTP)', async () => {
    const { client, rec } = agentClient('form', p => ('confirm' in (p.requestedSchema?.properties ?? {}) ? { confirm: true } : undefined));
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
    try {
      const before = await fixtureCounts(fixture);
      const done = await runAsTask(client, taskArgs(fixture, 'form'));
      assertDone('form', done, rec);
      assert.equal(rec.elicited.length, 1, JSON.stringify(rec.elicited));
      assert.match(rec.elicited[0].message, /"Submit application"/);
      const after = await fixtureCounts(fixture);
      assert.equal(after.applications - before.applications, 1);
    } finally {
      await client.close();
    }
  });

  test('a checkout that asks before paying: one order, after the person said yes (SDK 1.32 task, Streamable HTTP)', async () => {
    const { client, rec } = agentClient('checkout', p => ('confirm' in (p.requestedSchema?.properties ?? {}) ? { confirm: true } : undefined));
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
    try {
      const before = await fixtureCounts(fixture);
      assert.equal(before.orders, 0, 'another test placed an order');
      const done = await runAsTask(client, taskArgs(fixture, 'checkout'));
      assertDone('checkout', done, rec);
      assert.equal(rec.elicited.length, 1, JSON.stringify(rec.elicited));
      assert.match(rec.elicited[0].message, /click "Place order"/);
      assert.deepEqual(Object.keys(rec.elicited[0].requestedSchema.properties), ['confirm']);
      // The question came before the order: the model's second turn, after
      // the yes, is the first to see it placed.
      assert.ok(!rec.prompts[0].prompt.includes('Order placed'));
      const after = await fixtureCounts(fixture);
      assert.equal(after.orders, 1);
    } finally {
      await client.close();
    }
  });

  test('a task that needs a takeover: the person clicks in the live view and presses Done (SDK 1.32 task, Streamable HTTP)', async () => {
    const { client, rec } = agentClient('takeover');
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
    const watcher = await connectHTTP(daemon.url);
    let person;
    let personError;
    try {
      const before = await fixtureCounts(fixture, ['/human-check/next']);
      const done = await runAsTask(client, taskArgs(fixture, 'takeover'), taskId => {
        person = (async () => {
          const view = await watchForWheel(base, taskId, '/human-check');
          // The run waits for this takeover, at the live view's address.
          const got = await watcher.callTool({ name: 'get_task_run', arguments: { runId: taskId } });
          const ir = got.structuredContent.inputRequest;
          assert.equal(ir?.kind, 'takeover', JSON.stringify(got.structuredContent));
          assert.equal(ir.url, `${base}/runs/${taskId}#live`);
          await clickLikeAPerson(base, view, HUMAN_BUTTON);
          await pressDone(base, taskId, ir.requestId);
          return { view, ir };
        })().catch(async err => {
          personError = err;
          await watcher.callTool({ name: 'cancel_task_run', arguments: { runId: taskId } }).catch(() => {});
        });
      });
      await person;
      if (personError) throw personError;
      assertDone('takeover', done, rec);
      // The takeover's URL-mode elicitation is not sent to a client that
      // declared forms only: the person acted on the dashboard.
      assert.deepEqual(rec.elicited, []);
      // The person's click changed the page: the model's next turn saw the
      // check passed, and the page behind it opened once.
      assert.match(pageOf(rec.prompts[1].prompt), /Verified/);
      const after = await fixtureCounts(fixture, ['/human-check/next']);
      assert.equal(after.hits['/human-check/next'] - before.hits['/human-check/next'], 1);
    } finally {
      await watcher.close();
      await client.close();
    }
  });

  test('a checkout that asks before paying, SDK v2 + ext-tasks (2026-07-28): turns and the yes travel as tasks/update', async () => {
    const model = TASKS.checkout.script();
    const prompts = [];
    const elicited = [];
    const unscripted = [];
    const conn = await connectV2({
      url: daemon.url,
      capabilities: { sampling: {}, elicitation: { form: {} } },
      onInputRequest: async request => {
        if (request.kind === 'elicitation') {
          elicited.push(request.params);
          return 'confirm' in (request.params.requestedSchema?.properties ?? {}) ? { action: 'accept', content: { confirm: true } } : { action: 'decline' };
        }
        const prompt = request.params.messages.map(textOf).join('\n');
        prompts.push(prompt);
        const reply = model(pageOf(prompt));
        if (!reply) {
          unscripted.push(prompt);
          throw new Error('the scripted model does not know this state');
        }
        return { role: 'assistant', model: 'e2e-scripted-v2', stopReason: 'endTurn', content: { type: 'text', text: JSON.stringify(reply) } };
      },
    });
    try {
      const before = await fixtureCounts(fixture);
      const exec = await conn.session.callTool('run_task_template', taskArgs(fixture, 'checkout', { mode: 'async' }), {
        task: { preference: 'require', retentionMs: 60000 },
      });
      assert.equal(exec.kind, 'task');
      const taskId = exec.handle.taskId;
      await exec.settle();
      const view = await conn.session.task(taskId).snapshot();
      assert.deepEqual(unscripted, []);
      assert.equal(view.status, 'completed', JSON.stringify(view.raw));
      const run = view.raw.result.structuredContent;
      assert.equal(run.status, 'succeeded', JSON.stringify(run));
      const after = await fixtureCounts(fixture);
      assert.equal(after.orders - before.orders, 1);
      assert.deepEqual(run.result.answer, { order: `Order placed #${after.orders}` });
      assert.equal(run.metrics.modelCalls, 2, JSON.stringify(run.metrics));
      assert.equal(prompts.length, 2);
      assert.equal(elicited.length, 1, JSON.stringify(elicited));
      assert.match(elicited[0].message, /click "Place order"/);
      // Every answer (two turns, one yes) went back as tasks/update.
      const updates = conn.sent.filter(m => m.method === 'tasks/update' && m.params.taskId === taskId);
      const responses = updates.flatMap(u => Object.values(u.params.inputResponses ?? {}));
      assert.equal(responses.filter(r => r.model === 'e2e-scripted-v2').length, 2, JSON.stringify(updates));
      assert.equal(responses.filter(r => r.content?.confirm === true).length, 1, JSON.stringify(updates));
    } finally {
      await conn.close();
    }
  });

  test('search and paginate as a synchronous call: each turn arrives during the call (SDK 1.32, Streamable HTTP)', async () => {
    const { client, rec } = agentClient('search');
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
    try {
      const res = await client.callTool({ name: 'run_task_template', arguments: taskArgs(fixture, 'search', { mode: 'sync' }) },
        CallToolResultSchema, { timeout: 120000 });
      assert.equal(res.isError ?? false, false, JSON.stringify(res));
      const run = res.structuredContent;
      assert.deepEqual(rec.unscripted, []);
      assert.equal(run.status, 'succeeded', JSON.stringify(run));
      assert.deepEqual(run.result.answer, TASKS.search.answer);
      assert.equal(rec.prompts.length, 4);
      assert.equal(run.metrics.modelCalls, 4, JSON.stringify(run.metrics));
      assert.equal(run.result.replaySteps.startUrl, fixture.url('/agent/catalog'));
    } finally {
      await client.close();
    }
  });

  test('search and paginate over stdio (SDK 1.32 task, `browsertask mcp`)', async () => {
    const { client, rec } = agentClient('search');
    const transport = new StdioClientTransport({
      command: binary(),
      args: ['mcp', '--db', path.join(scratchDir(), 'stdio.db'), '--http=off', ...baseFlags],
      stderr: 'pipe',
      env: { ...process.env },
    });
    let log = '';
    transport.stderr?.on('data', chunk => { log += chunk; });
    await client.connect(transport);
    try {
      const done = await runAsTask(client, taskArgs(fixture, 'search'));
      assert.equal(done.run.status, 'succeeded', `${JSON.stringify(done.run)}\n${log}`);
      assertDone('search', done, rec);
    } finally {
      await client.close();
    }
  });
});
